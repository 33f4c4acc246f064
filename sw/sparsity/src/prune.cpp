// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
#include "nmsa/prune.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <random>

namespace nmsa {

namespace {

void require_multiple_of_m(const MatrixF& w, NmPattern p, const char* what) {
  p.validate();
  if (w.cols() % p.m != 0) {
    throw std::invalid_argument(std::string(what) + ": K = " + std::to_string(w.cols()) +
                                " is not a multiple of M = " + std::to_string(p.m));
  }
}

// The selection kernels below work on a block of whole groups at a time: `bits` holds the raw
// IEEE-754 bits of `count` consecutive values (count a multiple of M, at most kBlock), and they
// write, for each value, an all-ones mask if it survives and 0 otherwise. The callers then apply
// the masks in a separate, vectorizable loop. Masks instead of branches matter: which values of a
// group survive is data-dependent and a branch would mispredict half the time. No sort and no
// allocation per group; blocks live on the stack, in L1.
constexpr Eigen::Index kBlock = 1024;  // a multiple of every legal M (M <= 256)

// |v| as an integer whose order is the order of magnitudes: clearing the sign bit of an IEEE-754
// float leaves a value that compares like the magnitude (+0 == -0), with NaN above infinity.
// Integer keys give a strict total order, so exactly N values of a group always survive.
inline std::uint32_t key_of_bits(std::uint32_t bits) { return bits & 0x7fffffffu; }

// 2:4, the common case, as an explicit six-comparison network; written on plain arrays so that
// GCC vectorizes it across groups.
void select_2of4(const std::uint32_t* bits, Eigen::Index count, std::uint32_t* mask) {
  for (Eigen::Index g = 0; g < count / 4; ++g) {
    const std::uint32_t k0 = key_of_bits(bits[4 * g]), k1 = key_of_bits(bits[4 * g + 1]);
    const std::uint32_t k2 = key_of_bits(bits[4 * g + 2]), k3 = key_of_bits(bits[4 * g + 3]);
    // cIJ: the lower index I beats J (ties go to the lower index).
    const std::uint32_t c01 = k0 >= k1, c02 = k0 >= k2, c03 = k0 >= k3;
    const std::uint32_t c12 = k1 >= k2, c13 = k1 >= k3, c23 = k2 >= k3;
    // Position i survives when fewer than 2 others beat it.
    mask[4 * g] = 0u - static_cast<std::uint32_t>(3 - c01 - c02 - c03 < 2);
    mask[4 * g + 1] = 0u - static_cast<std::uint32_t>(c01 + 2 - c12 - c13 < 2);
    mask[4 * g + 2] = 0u - static_cast<std::uint32_t>(c02 + c12 + 1 - c23 < 2);
    mask[4 * g + 3] = 0u - static_cast<std::uint32_t>(c03 + c13 + c23 < 2);
  }
}

// Any N >= 2 with a fixed M: element i survives when fewer than N others beat it (a larger
// magnitude, or an equal one at a lower index).
template <int M>
void select_fixed_m(const std::uint32_t* bits, Eigen::Index count, int n, std::uint32_t* mask) {
  for (Eigen::Index g = 0; g < count / M; ++g) {
    const std::uint32_t* b = bits + g * M;
    for (int i = 0; i < M; ++i) {
      const std::uint32_t key = key_of_bits(b[i]);
      int beaten_by = 0;
      for (int j = 0; j < i; ++j) beaten_by += key_of_bits(b[j]) >= key;
      for (int j = i + 1; j < M; ++j) beaten_by += key_of_bits(b[j]) > key;
      mask[g * M + i] = 0u - static_cast<std::uint32_t>(beaten_by < n);
    }
  }
}

// N = 1 with any M: keep the first largest magnitude.
void select_argmax(const std::uint32_t* bits, Eigen::Index count, int m, std::uint32_t* mask) {
  for (Eigen::Index g = 0; g < count / m; ++g) {
    const std::uint32_t* b = bits + g * m;
    int best = 0;
    for (int i = 1; i < m; ++i) best = key_of_bits(b[i]) > key_of_bits(b[best]) ? i : best;
    for (int i = 0; i < m; ++i) mask[g * m + i] = i == best ? ~0u : 0u;
  }
}

void select_nm(const std::uint32_t* bits, Eigen::Index count, NmPattern p, std::uint32_t* mask) {
  if (p.n == p.m) {
    std::fill(mask, mask + count, ~0u);
  } else if (p.n == 1) {
    select_argmax(bits, count, p.m, mask);
  } else if (p.n == 2 && p.m == 4) {
    select_2of4(bits, count, mask);
  } else {
    // N >= 2 with metadata of at most 8 bits (NmPattern::validate) leaves M in {4, 8, 16}.
    switch (p.m) {
      case 4: select_fixed_m<4>(bits, count, p.n, mask); break;
      case 8: select_fixed_m<8>(bits, count, p.n, mask); break;
      case 16: select_fixed_m<16>(bits, count, p.n, mask); break;
      default: throw std::invalid_argument("prune: pattern " + p.name() + " is not supported");
    }
  }
}

// ---- Permutation search -------------------------------------------------------------------------

// The retained magnitude of one group of M columns (a "stripe"): summed over rows, the N largest
// magnitudes among the M columns. Columns are given as pointers into a column-major copy of |w|
// so that a stripe with one column replaced costs no copy.
class StripeScorer {
 public:
  StripeScorer(NmPattern p, Eigen::Index rows) : p_(p), rows_(rows) {}

  double operator()(const float* const* cols) const {
    if (p_.n == 2 && p_.m == 4) return score_2of4(cols);
    return score_generic(cols);
  }

 private:
  double score_2of4(const float* const* cols) const {
    const float* c0 = cols[0];
    const float* c1 = cols[1];
    const float* c2 = cols[2];
    const float* c3 = cols[3];
    double sum = 0.0;
    for (Eigen::Index r = 0; r < rows_; ++r) {
      // The two largest of four: the larger of the two pair maxima, plus the larger of the
      // smaller pair maximum and the larger pair minimum. The selected values do not depend on
      // the column order, so a stripe's score is a function of its column set.
      const float hi_a = std::max(c0[r], c1[r]);
      const float lo_a = std::min(c0[r], c1[r]);
      const float hi_b = std::max(c2[r], c3[r]);
      const float lo_b = std::min(c2[r], c3[r]);
      const float first = std::max(hi_a, hi_b);
      const float second = std::max(std::min(hi_a, hi_b), std::max(lo_a, lo_b));
      sum += static_cast<double>(first) + static_cast<double>(second);
    }
    return sum;
  }

  double score_generic(const float* const* cols) const {
    const int m = p_.m;
    const int n = p_.n;  // < M: the search returns early for N == M; N >= 2 implies M <= 16
    double sum = 0.0;
    float top[16];
    for (Eigen::Index r = 0; r < rows_; ++r) {
      // Insertion into a descending list of the N largest; summing that list in order makes the
      // score independent of the column order.
      int filled = 0;
      for (int i = 0; i < m; ++i) {
        const float v = cols[i][r];
        int j;
        if (filled < n) {
          j = filled++;
        } else if (v > top[n - 1]) {
          j = n - 1;
        } else {
          continue;
        }
        while (j > 0 && top[j - 1] < v) {
          top[j] = top[j - 1];
          --j;
        }
        top[j] = v;
      }
      double row = 0.0;
      for (int i = 0; i < n; ++i) row += top[i];
      sum += row;
    }
    return sum;
  }

  NmPattern p_;
  Eigen::Index rows_;
};

// Greedy channel swaps between stripes: for every pair of stripes keep
// the best single swap of a column of one with a column of the other and its gain; repeatedly
// apply the best swap over all pairs and refresh only the pairs that involve the two stripes it
// touched.
class ChannelSwapSearch {
 public:
  ChannelSwapSearch(const MatrixF& w, NmPattern p)
      : p_(p),
        rows_(w.rows()),
        k_(w.cols()),
        stripes_(static_cast<int>(w.cols() / p.m)),
        scorer_(p, w.rows()),
        magnitude_(static_cast<std::size_t>(w.size())),
        perm_(static_cast<std::size_t>(w.cols())),
        value_(static_cast<std::size_t>(stripes_)),
        best_(static_cast<std::size_t>(stripes_) * static_cast<std::size_t>(stripes_)) {
    for (Eigen::Index r = 0; r < rows_; ++r) {
      for (Eigen::Index c = 0; c < k_; ++c) {
        float v = std::abs(w(r, c));
        if (std::isnan(v)) v = std::numeric_limits<float>::infinity();
        magnitude_[static_cast<std::size_t>(c * rows_ + r)] = v;
      }
    }
    for (Eigen::Index c = 0; c < k_; ++c) perm_[static_cast<std::size_t>(c)] = static_cast<int>(c);
    double scale = 0.0;
    for (int s = 0; s < stripes_; ++s) {
      value_[static_cast<std::size_t>(s)] = score_stripe(s, -1, -1);
      scale += value_[static_cast<std::size_t>(s)];
    }
    // Gains below this are rounding noise of the double sums, not improvements; requiring a
    // strictly positive margin also guarantees that the descent terminates.
    min_gain_ = std::max(1e-12 * scale, 1e-30);
    for (int a = 0; a < stripes_; ++a) {
      for (int b = a + 1; b < stripes_; ++b) refresh_pair(a, b);
    }
  }

  const std::vector<int>& permutation() const { return perm_; }
  int stripes() const { return stripes_; }
  double min_gain() const { return min_gain_; }

  double total() const {
    double t = 0.0;
    for (double v : value_) t += v;
    return t;
  }

  // Swaps slot i of stripe a with slot j of stripe b and refreshes the affected pairs.
  void swap(int a, int i, int b, int j) {
    std::swap(perm_[pos(a, i)], perm_[pos(b, j)]);
    value_[static_cast<std::size_t>(a)] = score_stripe(a, -1, -1);
    value_[static_cast<std::size_t>(b)] = score_stripe(b, -1, -1);
    refresh_stripe(a);
    refresh_stripe(b);
  }

  struct Move {
    int a, i, b, j;
  };

  // Applies the best swap over all stripe pairs if it gains more than min_gain; logs it.
  bool descend_step(std::vector<Move>* log) {
    double best_gain = min_gain_;
    int best_a = -1;
    int best_b = -1;
    for (int a = 0; a < stripes_; ++a) {
      for (int b = a + 1; b < stripes_; ++b) {
        const PairBest& e = best_[index(a, b)];
        if (e.gain > best_gain) {
          best_gain = e.gain;
          best_a = a;
          best_b = b;
        }
      }
    }
    if (best_a < 0) return false;
    const PairBest e = best_[index(best_a, best_b)];
    swap(best_a, e.slot_a, best_b, e.slot_b);
    if (log != nullptr) log->push_back({best_a, e.slot_a, best_b, e.slot_b});
    return true;
  }

  void descend(std::vector<Move>* log) {
    while (descend_step(log)) {
    }
  }

 private:
  struct PairBest {
    double gain = 0.0;
    int slot_a = 0;
    int slot_b = 0;
  };

  std::size_t pos(int stripe, int slot) const {
    return static_cast<std::size_t>(stripe) * static_cast<std::size_t>(p_.m) +
           static_cast<std::size_t>(slot);
  }
  std::size_t index(int a, int b) const {
    return static_cast<std::size_t>(a) * static_cast<std::size_t>(stripes_) +
           static_cast<std::size_t>(b);
  }
  const float* column(int c) const {
    return magnitude_.data() + static_cast<std::size_t>(c) * static_cast<std::size_t>(rows_);
  }

  // The score of stripe s, with slot `slot` holding column `col` instead if slot >= 0.
  double score_stripe(int s, int slot, int col) const {
    const float* cols[256];
    for (int i = 0; i < p_.m; ++i) cols[i] = column(perm_[pos(s, i)]);
    if (slot >= 0) cols[slot] = column(col);
    return scorer_(cols);
  }

  void refresh_pair(int a, int b) {
    PairBest best;
    best.gain = -std::numeric_limits<double>::infinity();
    const double before = value_[static_cast<std::size_t>(a)] + value_[static_cast<std::size_t>(b)];
    for (int i = 0; i < p_.m; ++i) {
      const int col_a = perm_[pos(a, i)];
      for (int j = 0; j < p_.m; ++j) {
        const int col_b = perm_[pos(b, j)];
        const double gain = score_stripe(a, i, col_b) + score_stripe(b, j, col_a) - before;
        if (gain > best.gain) best = PairBest{gain, i, j};
      }
    }
    best_[index(a, b)] = best;
  }

  void refresh_stripe(int s) {
    for (int o = 0; o < stripes_; ++o) {
      if (o < s) refresh_pair(o, s);
      if (o > s) refresh_pair(s, o);
    }
  }

  NmPattern p_;
  Eigen::Index rows_;
  Eigen::Index k_;
  int stripes_;
  StripeScorer scorer_;
  std::vector<float> magnitude_;  // |w| column-major: column c at [c * rows, (c + 1) * rows)
  std::vector<int> perm_;         // position -> original column
  std::vector<double> value_;     // per stripe: retained magnitude
  std::vector<PairBest> best_;    // [a * stripes + b], a < b: the best swap between a and b
  double min_gain_ = 0.0;
};

}  // namespace

MatrixF prune_nm(const MatrixF& w, NmPattern p) {
  require_multiple_of_m(w, p, "prune");
  MatrixF out(w.rows(), w.cols());
  // Rows are contiguous and K % M == 0, so the whole matrix is one run of groups.
  std::uint32_t bits[kBlock];
  std::uint32_t mask[kBlock];
  for (Eigen::Index start = 0; start < w.size(); start += kBlock) {
    const Eigen::Index count = std::min(kBlock, w.size() - start);
    std::memcpy(bits, w.data() + start, static_cast<std::size_t>(count) * sizeof(float));
    select_nm(bits, count, p, mask);
    for (Eigen::Index i = 0; i < count; ++i) bits[i] &= mask[i];
    std::memcpy(out.data() + start, bits, static_cast<std::size_t>(count) * sizeof(float));
  }
  return out;
}

QuantizedWeights prune_and_quantize(const MatrixF& w, NmPattern p) {
  require_multiple_of_m(w, p, "prune and quantize");
  QuantizedWeights q;
  q.values.resize(w.rows(), w.cols());
  q.scales.resize(static_cast<std::size_t>(w.rows()));
  const Eigen::Index k = w.cols();
  std::uint32_t bits[kBlock];
  std::uint32_t mask[kBlock];
  for (Eigen::Index r = 0; r < w.rows(); ++r) {
    const float* src = w.data() + r * k;
    std::int8_t* dst = q.values.data() + r * k;
    // The largest magnitude of every group survives pruning (N >= 1), so the maximum of the
    // pruned row is the maximum of the input row. The integer maximum of the magnitude keys also
    // flags a non-finite value (a key >= that of infinity).
    std::uint32_t max_key = 0;
    for (Eigen::Index c = 0; c < k; ++c) {
      std::uint32_t b;
      std::memcpy(&b, src + c, sizeof b);
      const std::uint32_t key = key_of_bits(b);
      max_key = key > max_key ? key : max_key;
    }
    float max_magnitude;
    std::memcpy(&max_magnitude, &max_key, sizeof max_magnitude);
    if (!std::isfinite(max_magnitude)) {
      for (Eigen::Index c = 0; c < k; ++c) {
        if (!std::isfinite(src[c])) {
          throw std::invalid_argument("prune and quantize: weight at row " + std::to_string(r) +
                                      ", column " + std::to_string(c) + " is " +
                                      std::to_string(src[c]) + ", not a finite number");
        }
      }
    }
    // The same scale and rounding as quantize_weights_per_channel, so the results are identical.
    const float scale = max_magnitude / 127.0f;
    if (!(scale > 0.0f)) {
      q.scales[static_cast<std::size_t>(r)] = 0.0f;
      std::fill(dst, dst + k, std::int8_t{0});
      continue;
    }
    q.scales[static_cast<std::size_t>(r)] = scale;
    for (Eigen::Index start = 0; start < k; start += kBlock) {
      const Eigen::Index count = std::min(kBlock, k - start);
      std::memcpy(bits, src + start, static_cast<std::size_t>(count) * sizeof(float));
      select_nm(bits, count, p, mask);
      for (Eigen::Index i = 0; i < count; ++i) {
        const std::int8_t v = quantize_to_int8(src[start + i], scale);
        dst[start + i] = static_cast<std::int8_t>(v & static_cast<std::int8_t>(mask[i]));
      }
    }
  }
  return q;
}

double retained_magnitude(const MatrixF& pruned) {
  double sum = 0.0;
  for (Eigen::Index i = 0; i < pruned.size(); ++i) sum += std::abs(double{pruned.data()[i]});
  return sum;
}

double unstructured_retained_magnitude(const MatrixF& w, NmPattern p) {
  require_multiple_of_m(w, p, "unstructured pruning bound");
  const Eigen::Index keep = w.cols() / p.m * p.n;
  if (keep == 0) return 0.0;
  std::vector<float> row(static_cast<std::size_t>(w.cols()));
  double sum = 0.0;
  for (Eigen::Index r = 0; r < w.rows(); ++r) {
    for (Eigen::Index c = 0; c < w.cols(); ++c) {
      row[static_cast<std::size_t>(c)] = std::abs(w(r, c));
    }
    std::nth_element(row.begin(), row.begin() + (keep - 1), row.end(), std::greater<float>());
    for (Eigen::Index c = 0; c < keep; ++c) sum += row[static_cast<std::size_t>(c)];
  }
  return sum;
}

void validate_permutation(const std::vector<int>& perm, Eigen::Index k) {
  if (static_cast<Eigen::Index>(perm.size()) != k) {
    throw std::invalid_argument("permutation: " + std::to_string(perm.size()) +
                                " entries for " + std::to_string(k) + " columns");
  }
  std::vector<bool> seen(perm.size(), false);
  for (std::size_t j = 0; j < perm.size(); ++j) {
    const int c = perm[j];
    if (c < 0 || c >= k) {
      throw std::invalid_argument("permutation: entry " + std::to_string(j) + " = " +
                                  std::to_string(c) + " is outside 0.." + std::to_string(k - 1));
    }
    if (seen[static_cast<std::size_t>(c)]) {
      throw std::invalid_argument("permutation: column " + std::to_string(c) +
                                  " appears twice (again at entry " + std::to_string(j) + ")");
    }
    seen[static_cast<std::size_t>(c)] = true;
  }
}

std::vector<int> invert_permutation(const std::vector<int>& perm) {
  validate_permutation(perm, static_cast<Eigen::Index>(perm.size()));
  std::vector<int> inverse(perm.size());
  for (std::size_t j = 0; j < perm.size(); ++j) {
    inverse[static_cast<std::size_t>(perm[j])] = static_cast<int>(j);
  }
  return inverse;
}

std::vector<int> search_input_permutation(const MatrixF& w, NmPattern p,
                                          const PermutationOptions& options) {
  require_multiple_of_m(w, p, "permutation search");
  if (options.escape_attempts < 0 || options.swaps_per_escape < 1 ||
      !(options.time_budget_s >= 0.0)) {
    throw std::invalid_argument(
        "permutation search: escape_attempts must be >= 0, swaps_per_escape >= 1 and "
        "time_budget_s >= 0");
  }
  std::vector<int> identity(static_cast<std::size_t>(w.cols()));
  for (std::size_t c = 0; c < identity.size(); ++c) identity[c] = static_cast<int>(c);
  if (w.cols() / p.m < 2 || p.n == p.m || w.rows() == 0) return identity;

  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  const auto out_of_time = [&] {
    return options.time_budget_s > 0.0 &&
           std::chrono::duration<double>(Clock::now() - start).count() > options.time_budget_s;
  };

  ChannelSwapSearch search(w, p);
  search.descend(nullptr);
  double best_total = search.total();

  // Escapes from the local optimum: a few random swaps between random stripes, a new descent, and
  // an undo of both unless the total improved. The undo replays the logged swaps backwards, so
  // the search always continues from the best order found.
  std::mt19937_64 rng(options.seed);
  std::uniform_int_distribution<int> pick_stripe(0, search.stripes() - 1);
  std::uniform_int_distribution<int> pick_slot(0, p.m - 1);
  std::vector<ChannelSwapSearch::Move> log;
  for (int attempt = 0; attempt < options.escape_attempts && !out_of_time(); ++attempt) {
    log.clear();
    for (int s = 0; s < options.swaps_per_escape; ++s) {
      const int a = pick_stripe(rng);
      int b = pick_stripe(rng);
      while (b == a) b = pick_stripe(rng);
      const ChannelSwapSearch::Move mv{a, pick_slot(rng), b, pick_slot(rng)};
      search.swap(mv.a, mv.i, mv.b, mv.j);
      log.push_back(mv);
    }
    search.descend(&log);
    const double total = search.total();
    if (total > best_total + search.min_gain()) {
      best_total = total;
    } else {
      for (auto it = log.rbegin(); it != log.rend(); ++it) search.swap(it->a, it->i, it->b, it->j);
    }
  }
  return search.permutation();
}

double PermutationGain::gap_closed() const {
  const double gap = unstructured - plain;
  if (!(gap > 0.0)) return 1.0;
  return (permuted - plain) / gap;
}

PermutationGain evaluate_permutation(const MatrixF& w, NmPattern p, const std::vector<int>& perm) {
  PermutationGain g;
  g.plain = retained_magnitude(prune_nm(w, p));
  g.permuted = retained_magnitude(prune_nm(apply_column_permutation(w, perm), p));
  g.unstructured = unstructured_retained_magnitude(w, p);
  return g;
}

}  // namespace nmsa
