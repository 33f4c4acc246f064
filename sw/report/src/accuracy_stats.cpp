// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
#include "nmsa/accuracy_stats.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>

namespace nmsa {

namespace {

// The 2.5th and 97.5th nearest-rank percentiles of the resampled statistics.
Interval percentile_interval(std::vector<double> stats) {
  std::sort(stats.begin(), stats.end());
  const auto rank = [&](double p) {
    const auto r = static_cast<std::size_t>(std::ceil(p * static_cast<double>(stats.size())));
    return stats[std::max<std::size_t>(r, 1) - 1];
  };
  return {rank(0.025), rank(0.975)};
}

void check_resamples(const BootstrapSettings& b) {
  if (b.resamples < 100) {
    throw std::invalid_argument("bootstrap: " + std::to_string(b.resamples) +
                                " resamples; at least 100 are needed for a 95% interval");
  }
}

std::uint64_t count_true(const Outcomes& v) {
  return static_cast<std::uint64_t>(std::count(v.begin(), v.end(), true));
}

}  // namespace

Outcomes outcomes_of(const std::vector<std::uint8_t>& predicted,
                     const std::vector<std::uint8_t>& labels) {
  if (predicted.size() != labels.size()) {
    throw std::invalid_argument("outcomes: " + std::to_string(predicted.size()) +
                                " predictions but " + std::to_string(labels.size()) + " labels");
  }
  Outcomes o(labels.size());
  for (std::size_t i = 0; i < labels.size(); ++i) o[i] = predicted[i] == labels[i];
  return o;
}

// A resample of n images with replacement holds Binomial(n, k / n) correct ones when k of the n
// are correct: the same distribution as drawing the images one by one, in one draw.
AccuracyEstimate estimate_accuracy(const Outcomes& correct, const BootstrapSettings& b) {
  if (correct.empty()) throw std::invalid_argument("accuracy: no test images");
  check_resamples(b);
  const auto n = static_cast<std::uint64_t>(correct.size());
  const double p = static_cast<double>(count_true(correct)) / static_cast<double>(n);
  std::mt19937_64 rng(b.seed);
  std::binomial_distribution<std::uint64_t> draw(n, p);
  std::vector<double> stats(static_cast<std::size_t>(b.resamples));
  for (double& s : stats) s = static_cast<double>(draw(rng)) / static_cast<double>(n);
  return {p, percentile_interval(std::move(stats))};
}

double mcnemar_exact_p(std::uint64_t only_a, std::uint64_t only_b) {
  const std::uint64_t n = only_a + only_b;
  if (n == 0) return 1.0;
  const std::uint64_t k = std::min(only_a, only_b);
  // log of C(n, i) / 2^n, summed for i = 0..k in log space (n reaches the test set's size).
  const double log_half_n = static_cast<double>(n) * std::log(0.5);
  const auto log_term = [&](std::uint64_t i) {
    return std::lgamma(static_cast<double>(n) + 1) - std::lgamma(static_cast<double>(i) + 1) -
           std::lgamma(static_cast<double>(n - i) + 1) + log_half_n;
  };
  const double top = log_term(k);  // the largest term of the lower tail
  double sum = 0;
  for (std::uint64_t i = 0; i <= k; ++i) sum += std::exp(log_term(i) - top);
  return std::min(1.0, 2.0 * std::exp(top + std::log(sum)));
}

std::string PairedComparison::verdict() const {
  if (ci95_pp.contains(0.0)) return "no measurable difference";
  return delta_pp > 0 ? "A better" : "A worse";
}

// A paired resample draws n images; each is one only A gets right (+1 to the difference), one
// only B does (-1) or a concordant one (0): a multinomial draw, made as two binomial ones.
PairedComparison compare_paired(const std::string& name, const std::string& a,
                                const Outcomes& correct_a, const std::string& b,
                                const Outcomes& correct_b, const BootstrapSettings& s) {
  if (correct_a.size() != correct_b.size()) {
    throw std::invalid_argument("comparison '" + name + "': " + std::to_string(correct_a.size()) +
                                " outcomes of " + a + " but " + std::to_string(correct_b.size()) +
                                " of " + b);
  }
  if (correct_a.empty()) throw std::invalid_argument("comparison '" + name + "': no test images");
  check_resamples(s);
  PairedComparison c;
  c.name = name;
  c.a = a;
  c.b = b;
  c.images = correct_a.size();
  for (std::size_t i = 0; i < correct_a.size(); ++i) {
    c.only_a += correct_a[i] && !correct_b[i] ? 1 : 0;
    c.only_b += correct_b[i] && !correct_a[i] ? 1 : 0;
  }
  const auto n = static_cast<double>(c.images);
  c.delta_pp = 100.0 * (static_cast<double>(c.only_a) - static_cast<double>(c.only_b)) / n;
  c.mcnemar_p = mcnemar_exact_p(c.only_a, c.only_b);

  const double p_a = static_cast<double>(c.only_a) / n;
  const double p_b = static_cast<double>(c.only_b) / n;
  // Given x_a draws of A-only images, each of the other draws is B-only with p_b / (1 - p_a).
  const double p_b_rest = p_a < 1.0 ? std::min(1.0, p_b / (1.0 - p_a)) : 0.0;
  std::mt19937_64 rng(s.seed);
  std::vector<double> stats(static_cast<std::size_t>(s.resamples));
  for (double& st : stats) {
    const std::uint64_t x_a = std::binomial_distribution<std::uint64_t>(c.images, p_a)(rng);
    const std::uint64_t x_b =
        std::binomial_distribution<std::uint64_t>(c.images - x_a, p_b_rest)(rng);
    st = 100.0 * (static_cast<double>(x_a) - static_cast<double>(x_b)) / n;
  }
  c.ci95_pp = percentile_interval(std::move(stats));
  return c;
}

}  // namespace nmsa
