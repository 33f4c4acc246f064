// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
#include "nmsa/mlp.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <numeric>
#include <random>
#include <stdexcept>

#include "dense_stack.hpp"
#include "model_file.hpp"
#include "nmsa/file_io.hpp"
#include "nmsa/int8_mlp.hpp"
#include "nmsa/progress.hpp"

namespace nmsa {

namespace {

constexpr double kPi = 3.14159265358979323846;

// Floats from the raw 64-bit output, not std::uniform_real_distribution, whose algorithm the
// standard leaves to the library: the weights then depend only on the seed.
float uniform01(std::mt19937_64& rng) {
  return static_cast<float>(rng() >> 40) * (1.0f / 16777216.0f);
}

void check_batch(const Mlp& model, const MatrixF& x, const std::vector<std::uint8_t>& labels) {
  if (model.layers.empty()) throw std::invalid_argument("mlp: the model has no layers");
  if (x.cols() != model.layers.front().w.cols()) {
    throw std::invalid_argument("mlp: input has " + std::to_string(x.cols()) +
                                " features, the first layer expects " +
                                std::to_string(model.layers.front().w.cols()));
  }
  if (static_cast<std::size_t>(x.rows()) != labels.size()) {
    throw std::invalid_argument("mlp: " + std::to_string(x.rows()) + " rows but " +
                                std::to_string(labels.size()) + " labels");
  }
  const auto classes = model.layers.back().w.rows();
  for (std::size_t i = 0; i < labels.size(); ++i) {
    if (labels[i] >= classes) {
      throw std::invalid_argument("mlp: label " + std::to_string(labels[i]) + " of row " +
                                  std::to_string(i) + " is not below the " +
                                  std::to_string(classes) + " classes");
    }
  }
}

// z = x W^T + b
MatrixF affine(const MatrixF& x, const MlpLayer& l) {
  MatrixF z = x * l.w.transpose();
  z.rowwise() += l.b.transpose();
  return z;
}

}  // namespace

std::string mlp_layer_name(std::size_t i) { return "fc" + std::to_string(i + 1); }

std::vector<int> Mlp::sizes() const {
  std::vector<int> s;
  if (layers.empty()) return s;
  s.push_back(static_cast<int>(layers.front().w.cols()));
  for (const auto& l : layers) s.push_back(static_cast<int>(l.w.rows()));
  return s;
}

MlpLayer make_he_uniform_layer(int n_out, int k, std::mt19937_64& rng) {
  MlpLayer l;
  l.w.resize(n_out, k);
  const float bound = std::sqrt(6.0f / static_cast<float>(k));
  for (Eigen::Index j = 0; j < l.w.size(); ++j) {
    l.w.data()[j] = (2.0f * uniform01(rng) - 1.0f) * bound;
  }
  l.b = VectorF::Zero(n_out);
  return l;
}

Mlp make_mlp(const std::vector<int>& sizes, std::uint64_t seed) {
  if (sizes.size() < 2) throw std::invalid_argument("make_mlp: need at least two layer sizes");
  for (int s : sizes) {
    if (s <= 0) throw std::invalid_argument("make_mlp: layer size " + std::to_string(s));
  }
  std::mt19937_64 rng(seed);
  Mlp m;
  for (std::size_t i = 0; i + 1 < sizes.size(); ++i) {
    m.layers.push_back(make_he_uniform_layer(sizes[i + 1], sizes[i], rng));
  }
  return m;
}

MatrixF mlp_forward(const Mlp& model, const MatrixF& x) {
  MatrixF a = x;
  for (std::size_t i = 0; i < model.layers.size(); ++i) {
    a = affine(a, model.layers[i]);
    if (i + 1 < model.layers.size()) a = a.cwiseMax(0.0f);
  }
  return a;
}

void dense_stack_forward(const Mlp& model, std::size_t first, const MatrixF& x,
                         std::vector<MatrixF>& acts) {
  const std::size_t n = model.layers.size() - first;
  acts.resize(n + 1);
  acts[0] = x;
  for (std::size_t j = 0; j < n; ++j) {
    acts[j + 1] = affine(acts[j], model.layers[first + j]);
    if (j + 1 < n) acts[j + 1] = acts[j + 1].cwiseMax(0.0f);
  }
}

double softmax_cross_entropy(MatrixF& logits, const std::vector<std::uint8_t>& labels,
                             bool gradient) {
  const Eigen::Index rows = logits.rows();
  // Softmax in place, shifted by the row maximum; the loss in double.
  double loss = 0.0;
  for (Eigen::Index r = 0; r < rows; ++r) {
    auto row = logits.row(r);
    const float mx = row.maxCoeff();
    row.array() -= mx;
    const double lse = std::log(static_cast<double>(row.array().exp().sum()));
    loss += lse - row(labels[static_cast<std::size_t>(r)]);
    row = row.array().exp() / static_cast<float>(std::exp(lse));
  }
  loss /= static_cast<double>(std::max<Eigen::Index>(rows, 1));
  if (!gradient) return loss;
  // softmax - onehot, over the batch mean
  for (Eigen::Index r = 0; r < rows; ++r) logits(r, labels[static_cast<std::size_t>(r)]) -= 1.0f;
  logits /= static_cast<float>(std::max<Eigen::Index>(rows, 1));
  return loss;
}

MatrixF dense_stack_backward(const Mlp& model, std::size_t first,
                             const std::vector<MatrixF>& acts, MatrixF dz, MlpGradients& grads,
                             bool input_gradient) {
  for (std::size_t j = model.layers.size() - first; j-- > 0;) {
    const std::size_t i = first + j;
    grads.dw[i].noalias() = dz.transpose() * acts[j];
    grads.db[i] = dz.colwise().sum().transpose();
    if (j == 0) break;
    MatrixF da = dz * model.layers[i].w;
    // ReLU: acts[j] > 0 exactly where the pre-activation was positive.
    dz = (acts[j].array() > 0.0f).select(da, 0.0f);
  }
  if (!input_gradient) return MatrixF();
  return dz * model.layers[first].w;
}

double mlp_loss(const Mlp& model, const MatrixF& x, const std::vector<std::uint8_t>& labels,
                MlpGradients* grads) {
  check_batch(model, x, labels);
  // acts[i] is the input of layer i; acts.back() the logits.
  std::vector<MatrixF> acts;
  dense_stack_forward(model, 0, x, acts);
  const double loss = softmax_cross_entropy(acts.back(), labels, grads != nullptr);
  if (grads == nullptr) return loss;
  grads->dw.resize(model.layers.size());
  grads->db.resize(model.layers.size());
  MatrixF dz = std::move(acts.back());
  dense_stack_backward(model, 0, acts, std::move(dz), *grads, false);
  return loss;
}

std::vector<std::uint8_t> predict_in_batches(
    const MatrixF& x, int batch_size, const std::function<MatrixF(const MatrixF&)>& logits_of) {
  batch_size = std::max(batch_size, 1);
  std::vector<std::uint8_t> predicted;
  predicted.reserve(static_cast<std::size_t>(x.rows()));
  for (Eigen::Index start = 0; start < x.rows(); start += batch_size) {
    const Eigen::Index n = std::min<Eigen::Index>(batch_size, x.rows() - start);
    for (const std::uint8_t c : predict_classes(logits_of(x.middleRows(start, n)))) {
      predicted.push_back(c);
    }
  }
  return predicted;
}

double fraction_correct(const std::vector<std::uint8_t>& predicted,
                        const std::vector<std::uint8_t>& labels) {
  long correct = 0;
  for (std::size_t i = 0; i < labels.size() && i < predicted.size(); ++i) {
    correct += predicted[i] == labels[i] ? 1 : 0;
  }
  return labels.empty() ? 0.0 : static_cast<double>(correct) / static_cast<double>(labels.size());
}

double evaluate_accuracy(const Mlp& model, const MatrixF& x,
                         const std::vector<std::uint8_t>& labels, int batch_size) {
  check_batch(model, x, labels);
  return fraction_correct(
      predict_in_batches(x, batch_size, [&](const MatrixF& rows) { return mlp_forward(model, rows); }),
      labels);
}

SgdOptimizer::SgdOptimizer(const Mlp& model, const TrainOptions& options) : options_(options) {
  for (const auto& l : model.layers) {
    velocity_.dw.push_back(MatrixF::Zero(l.w.rows(), l.w.cols()));
    velocity_.db.push_back(VectorF::Zero(l.b.size()));
  }
}

double SgdOptimizer::step(Mlp& model, const MatrixF& x, const std::vector<std::uint8_t>& labels) {
  if (velocity_.dw.size() != model.layers.size()) {
    throw std::invalid_argument("SgdOptimizer: the model's layers changed since construction");
  }
  const double loss = options_.loss ? options_.loss(model, x, labels, &grads_)
                                    : mlp_loss(model, x, labels, &grads_);
  const float lr = options_.learning_rate;
  const float mu = options_.momentum;
  const float wd = options_.weight_decay;
  for (std::size_t i = 0; i < model.layers.size(); ++i) {
    MlpLayer& l = model.layers[i];
    if (velocity_.dw[i].rows() != l.w.rows() || velocity_.dw[i].cols() != l.w.cols()) {
      throw std::invalid_argument("SgdOptimizer: layer " + std::to_string(i) + " changed shape");
    }
    MatrixF& v = velocity_.dw[i];
    if (wd != 0.0f) grads_.dw[i] += wd * l.w;
    v = mu * v + grads_.dw[i];
    if (l.mask.size() != 0) v.array() *= l.mask.array();
    l.w -= lr * v;
    if (l.mask.size() != 0) l.w.array() *= l.mask.array();
    velocity_.db[i] = mu * velocity_.db[i] + grads_.db[i];
    l.b -= lr * velocity_.db[i];
  }
  return loss;
}

double train(Mlp& model, const MatrixF& x, const std::vector<std::uint8_t>& labels,
             const TrainOptions& options, const StepHook& before_step) {
  if (!options.loss) check_batch(model, x, labels);
  if (static_cast<std::size_t>(x.rows()) != labels.size()) {
    throw std::invalid_argument("train: " + std::to_string(x.rows()) + " rows but " +
                                std::to_string(labels.size()) + " labels");
  }
  if (options.batch_size <= 0 || options.epochs < 0) {
    throw std::invalid_argument("train: batch_size must be positive and epochs non-negative");
  }
  const Eigen::Index n = x.rows();
  const long steps_per_epoch = static_cast<long>((n + options.batch_size - 1) / options.batch_size);
  const long total = steps_per_epoch * options.epochs;
  std::mt19937_64 rng(options.seed);
  std::vector<Eigen::Index> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), Eigen::Index{0});
  SgdOptimizer opt(model, options);
  std::unique_ptr<ProgressBar> bar;
  if (options.progress)
    bar = std::make_unique<ProgressBar>("train", static_cast<std::uint64_t>(total));
  MatrixF xb;
  std::vector<std::uint8_t> yb;
  long step = 0;
  double epoch_loss = 0.0;
  for (int e = 0; e < options.epochs; ++e) {
    // Fisher-Yates with the raw generator output (the modulo bias is below 2^-40 here).
    for (std::size_t i = order.size(); i > 1; --i) {
      std::swap(order[i - 1], order[static_cast<std::size_t>(rng() % i)]);
    }
    epoch_loss = 0.0;
    for (Eigen::Index start = 0; start < n; start += options.batch_size) {
      const Eigen::Index b = std::min<Eigen::Index>(options.batch_size, n - start);
      xb.resize(b, x.cols());
      yb.resize(static_cast<std::size_t>(b));
      for (Eigen::Index r = 0; r < b; ++r) {
        const Eigen::Index src = order[static_cast<std::size_t>(start + r)];
        xb.row(r) = x.row(src);
        yb[static_cast<std::size_t>(r)] = labels[static_cast<std::size_t>(src)];
      }
      if (before_step) before_step(model, step, total);
      if (options.cosine_schedule) {
        const double t = static_cast<double>(step) / static_cast<double>(std::max(total, 1L));
        opt.set_learning_rate(
            static_cast<float>(options.learning_rate * 0.5 * (1.0 + std::cos(kPi * t))));
      }
      epoch_loss += opt.step(model, xb, yb) * static_cast<double>(b);
      ++step;
      if (bar) bar->update(static_cast<std::uint64_t>(step));
    }
    epoch_loss /= static_cast<double>(std::max<Eigen::Index>(n, 1));
    if (options.after_epoch) options.after_epoch(model, e + 1);
  }
  if (bar) bar->finish();
  return epoch_loss;
}

void apply_masks(Mlp& model) {
  for (auto& l : model.layers) {
    if (l.mask.size() != 0) l.w.array() *= l.mask.array();
  }
}

void permute_hidden_channels(Mlp& model, std::size_t layer, const std::vector<int>& perm) {
  if (layer == 0 || layer >= model.layers.size()) {
    throw std::invalid_argument("permute_hidden_channels: layer " + std::to_string(layer) +
                                " has no previous layer in a model of " +
                                std::to_string(model.layers.size()));
  }
  MlpLayer& cur = model.layers[layer];
  MlpLayer& prev = model.layers[layer - 1];
  validate_permutation(perm, cur.w.cols());
  cur.w = apply_column_permutation(cur.w, perm);
  if (cur.mask.size() != 0) cur.mask = apply_column_permutation(cur.mask, perm);
  // Row j of the previous layer must now produce old channel perm[j]; ReLU is elementwise.
  MatrixF w(prev.w.rows(), prev.w.cols());
  MatrixF mask(prev.mask.rows(), prev.mask.cols());
  VectorF b(prev.b.size());
  for (std::size_t j = 0; j < perm.size(); ++j) {
    const auto jj = static_cast<Eigen::Index>(j);
    w.row(jj) = prev.w.row(perm[j]);
    b(jj) = prev.b(perm[j]);
    if (prev.mask.size() != 0) mask.row(jj) = prev.mask.row(perm[j]);
  }
  prev.w = std::move(w);
  prev.b = std::move(b);
  if (prev.mask.size() != 0) prev.mask = std::move(mask);
}

namespace {

// A layer selection is empty (every layer) or has one entry per layer.
void check_selection(const Mlp& model, const std::vector<bool>& selected, const char* who) {
  if (!selected.empty() && selected.size() != model.layers.size()) {
    throw std::invalid_argument(std::string(who) + ": " + std::to_string(selected.size()) +
                                " layer selections for " + std::to_string(model.layers.size()) +
                                " layers");
  }
}
bool is_selected(const std::vector<bool>& selected, std::size_t i) {
  return selected.empty() || selected[i];
}

}  // namespace

void permute_for_nm(Mlp& model, NmPattern pattern, const PermutationOptions& permutation,
                    const std::vector<bool>& selected) {
  pattern.validate();
  check_selection(model, selected, "permute_for_nm");
  for (std::size_t i = 1; i < model.layers.size(); ++i) {
    if (!is_selected(selected, i)) continue;
    permute_hidden_channels(model, i,
                            search_input_permutation(model.layers[i].w, pattern, permutation));
  }
}

void apply_nm_masks(Mlp& model, NmPattern pattern, bool permute,
                    const PermutationOptions& permutation, const std::vector<bool>& selected) {
  pattern.validate();
  check_selection(model, selected, "apply_nm_masks");
  for (std::size_t i = 0; i < model.layers.size(); ++i) {
    if (is_selected(selected, i) && model.layers[i].w.cols() % pattern.m != 0) {
      throw std::invalid_argument("apply_nm_masks: layer " + std::to_string(i) +
                                  " has K = " + std::to_string(model.layers[i].w.cols()) +
                                  ", not a multiple of M = " + std::to_string(pattern.m));
    }
  }
  apply_masks(model);
  if (permute) permute_for_nm(model, pattern, permutation, selected);
  for (std::size_t i = 0; i < model.layers.size(); ++i) {
    if (!is_selected(selected, i)) continue;
    MlpLayer& l = model.layers[i];
    l.w = prune_nm(l.w, pattern);
    // A kept weight that is exactly zero gets mask 0: the group then holds fewer than N, still
    // legal.
    l.mask = (l.w.array() != 0.0f).cast<float>();
  }
}

bool satisfies_nm(const Mlp& model, NmPattern pattern) {
  for (const auto& l : model.layers) {
    if (l.w.cols() % pattern.m != 0) return false;
    for (Eigen::Index r = 0; r < l.w.rows(); ++r) {
      for (Eigen::Index g = 0; g < l.w.cols(); g += pattern.m) {
        int nz = 0;
        for (int k = 0; k < pattern.m; ++k) nz += l.w(r, g + k) != 0.0f ? 1 : 0;
        if (nz > pattern.n) return false;
      }
    }
  }
  return true;
}

double cubic_sparsity(long step, long begin_step, long end_step, double final_sparsity,
                      double initial_sparsity) {
  if (step <= begin_step) return initial_sparsity;
  if (step >= end_step) return final_sparsity;
  const double f =
      1.0 - static_cast<double>(step - begin_step) / static_cast<double>(end_step - begin_step);
  return final_sparsity + (initial_sparsity - final_sparsity) * f * f * f;
}

void prune_toward_nm(Mlp& model, NmPattern pattern, double sparsity,
                     const std::vector<bool>& selected) {
  pattern.validate();
  check_selection(model, selected, "prune_toward_nm");
  const double max_sparsity = 1.0 - static_cast<double>(pattern.n) / pattern.m;
  sparsity = std::clamp(sparsity, 0.0, max_sparsity);
  for (std::size_t i = 0; i < model.layers.size(); ++i) {
    if (!is_selected(selected, i)) continue;
    MlpLayer& l = model.layers[i];
    if (l.w.cols() % pattern.m != 0) {
      throw std::invalid_argument("prune_toward_nm: K = " + std::to_string(l.w.cols()) +
                                  " is not a multiple of M = " + std::to_string(pattern.m));
    }
    if (l.mask.size() == 0) l.mask = MatrixF::Ones(l.w.rows(), l.w.cols());
    l.w.array() *= l.mask.array();
    // Which alive weights N:M pruning of the current weights would keep: score alive weights
    // above every pruned one (an alive zero still outranks a pruned weight).
    MatrixF score(l.w.rows(), l.w.cols());
    for (Eigen::Index j = 0; j < l.w.size(); ++j) {
      score.data()[j] =
          l.mask.data()[j] != 0.0f
              ? std::max(std::abs(l.w.data()[j]), std::numeric_limits<float>::denorm_min())
              : 0.0f;
    }
    const MatrixF kept = prune_nm(score, pattern);
    const auto total = static_cast<long>(l.w.size());
    const long pruned_now = total - static_cast<long>((l.mask.array() != 0.0f).count());
    const long at_final = total - total / pattern.m * pattern.n;
    long target =
        sparsity >= max_sparsity ? at_final : std::lround(sparsity * static_cast<double>(total));
    long extra = std::min(target, at_final) - pruned_now;
    if (extra <= 0) continue;
    std::vector<Eigen::Index> candidates;
    for (Eigen::Index j = 0; j < l.w.size(); ++j) {
      if (l.mask.data()[j] != 0.0f && kept.data()[j] == 0.0f) candidates.push_back(j);
    }
    extra = std::min<long>(extra, static_cast<long>(candidates.size()));
    auto smaller = [&](Eigen::Index a, Eigen::Index b) {
      const float ma = std::abs(l.w.data()[a]);
      const float mb = std::abs(l.w.data()[b]);
      return ma < mb || (ma == mb && a < b);
    };
    std::nth_element(candidates.begin(), candidates.begin() + extra, candidates.end(), smaller);
    for (long c = 0; c < extra; ++c) {
      l.mask.data()[candidates[static_cast<std::size_t>(c)]] = 0.0f;
      l.w.data()[candidates[static_cast<std::size_t>(c)]] = 0.0f;
    }
  }
}

double train_with_gradual_pruning(Mlp& model, const MatrixF& x,
                                  const std::vector<std::uint8_t>& labels, NmPattern pattern,
                                  const TrainOptions& options,
                                  const GradualPruningOptions& schedule,
                                  const std::vector<bool>& selected) {
  pattern.validate();
  check_selection(model, selected, "train_with_gradual_pruning");
  const double final_sparsity = 1.0 - static_cast<double>(pattern.n) / pattern.m;
  const int frequency = std::max(schedule.frequency, 1);
  long begin = -1;
  long end = -1;
  auto hook = [&](Mlp& m, long step, long total) {
    if (begin < 0) {
      begin = std::lround(schedule.begin_fraction * static_cast<double>(total));
      end = std::max(begin, std::lround(schedule.end_fraction * static_cast<double>(total)));
    }
    if (step < begin || step > end) return;
    if (step == end || (step - begin) % frequency == 0) {
      const double target = cubic_sparsity(step, begin, end, final_sparsity);
      prune_toward_nm(m, pattern, target, selected);
      if (schedule.on_prune) schedule.on_prune(step, total, target);
    }
  };
  const double loss = train(model, x, labels, options, hook);
  // end_fraction == 1 (or a schedule shorter than the run) still ends at exact N:M.
  prune_toward_nm(model, pattern, final_sparsity, selected);
  return loss;
}

// --- Model files ---------------------------------------------------------------------------------

namespace {
constexpr char kMlpMagic[8] = {'N', 'M', 'S', 'A', 'M', 'L', 'P', '\0'};
constexpr std::uint32_t kMlpVersion = 1;
}  // namespace

void save_mlp(const Mlp& model, const std::string& path) {
  write_file_atomically(path, model_file_bytes(kMlpMagic, kMlpVersion, {}, model));
}

Mlp load_mlp(const std::string& path) {
  ModelFileReader r(path, kMlpMagic, kMlpVersion, "MLP");
  Mlp m = r.layers(/*chained=*/true);
  r.expect_end();
  return m;
}

}  // namespace nmsa
