// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// The report's accuracy statistics: McNemar's exact test against hand-computed values and the
// normal approximation, the bootstrap intervals against the normal approximation and against a
// bootstrap that resamples image by image.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>

#include "nmsa/accuracy_stats.hpp"

namespace nmsa {
namespace {

Outcomes first_correct(std::size_t n, std::size_t correct) {
  Outcomes o(n, false);
  std::fill(o.begin(), o.begin() + static_cast<std::ptrdiff_t>(correct), true);
  return o;
}

TEST(AccuracyStats, McNemarExactSmallCases) {
  EXPECT_DOUBLE_EQ(mcnemar_exact_p(0, 0), 1.0);
  EXPECT_DOUBLE_EQ(mcnemar_exact_p(5, 5), 1.0);
  EXPECT_NEAR(mcnemar_exact_p(10, 0), 2.0 / 1024.0, 1e-12);
  // 2 * (C(10,0) + C(10,1)) / 2^10
  EXPECT_NEAR(mcnemar_exact_p(9, 1), 22.0 / 1024.0, 1e-12);
  EXPECT_DOUBLE_EQ(mcnemar_exact_p(3, 7), mcnemar_exact_p(7, 3));
}

TEST(AccuracyStats, McNemarExactAgreesWithTheChiSquareAtLargeCounts) {
  // Continuity-corrected chi-square, one degree of freedom: p = erfc(sqrt(chi2 / 2)).
  const double chi2 = std::pow(std::abs(600.0 - 500.0) - 1.0, 2) / 1100.0;
  const double approx = std::erfc(std::sqrt(chi2 / 2.0));
  EXPECT_NEAR(mcnemar_exact_p(600, 500), approx, 0.1 * approx);
  EXPECT_LT(mcnemar_exact_p(600, 500), 0.01);
}

TEST(AccuracyStats, AccuracyIntervalMatchesTheNormalApproximation) {
  const Outcomes o = first_correct(10000, 9000);
  const AccuracyEstimate e = estimate_accuracy(o);
  EXPECT_DOUBLE_EQ(e.accuracy, 0.9);
  const double half = 1.96 * std::sqrt(0.9 * 0.1 / 10000.0);
  EXPECT_NEAR(0.9 - e.ci95.lo, half, 0.15 * half);
  EXPECT_NEAR(e.ci95.hi - 0.9, half, 0.15 * half);
}

TEST(AccuracyStats, BootstrapIsReproducibleAndSeeded) {
  const Outcomes o = first_correct(500, 400);
  const AccuracyEstimate a = estimate_accuracy(o, {1000, 7});
  const AccuracyEstimate b = estimate_accuracy(o, {1000, 7});
  EXPECT_EQ(a.ci95.lo, b.ci95.lo);
  EXPECT_EQ(a.ci95.hi, b.ci95.hi);
  bool differs = false;
  for (std::uint64_t seed = 8; seed < 16 && !differs; ++seed) {
    const AccuracyEstimate c = estimate_accuracy(o, {1000, seed});
    differs = c.ci95.lo != a.ci95.lo || c.ci95.hi != a.ci95.hi;
  }
  EXPECT_TRUE(differs) << "the seed does not reach the resampling";
}

TEST(AccuracyStats, PerfectAccuracyHasAPointInterval) {
  const AccuracyEstimate e = estimate_accuracy(Outcomes(200, true));
  EXPECT_DOUBLE_EQ(e.ci95.lo, 1.0);
  EXPECT_DOUBLE_EQ(e.ci95.hi, 1.0);
}

// The one-draw bootstrap against the definition: resampling images one by one.
TEST(AccuracyStats, PairedIntervalEqualsImageByImageResampling) {
  std::mt19937_64 rng(3);
  std::bernoulli_distribution a_right(0.8), b_right(0.75);
  const std::size_t n = 400;
  Outcomes a(n), b(n);
  for (std::size_t i = 0; i < n; ++i) {
    a[i] = a_right(rng);
    b[i] = b_right(rng);
  }
  const PairedComparison c = compare_paired("a vs b", "a", a, "b", b, {20000, 5});

  std::vector<double> deltas(20000);
  std::uniform_int_distribution<std::size_t> pick(0, n - 1);
  for (double& d : deltas) {
    long diff = 0;
    for (std::size_t k = 0; k < n; ++k) {
      const std::size_t i = pick(rng);
      diff += static_cast<long>(a[i]) - static_cast<long>(b[i]);
    }
    d = 100.0 * static_cast<double>(diff) / static_cast<double>(n);
  }
  std::sort(deltas.begin(), deltas.end());
  const double lo = deltas[static_cast<std::size_t>(std::ceil(0.025 * 20000)) - 1];
  const double hi = deltas[static_cast<std::size_t>(std::ceil(0.975 * 20000)) - 1];
  EXPECT_NEAR(c.ci95_pp.lo, lo, 0.6);  // 0.25 pp per image; a few ranks of sampling noise
  EXPECT_NEAR(c.ci95_pp.hi, hi, 0.6);
}

TEST(AccuracyStats, IdenticalModelsShowNoMeasurableDifference) {
  const Outcomes o = first_correct(1000, 870);
  const PairedComparison c = compare_paired("same", "a", o, "b", o);
  EXPECT_DOUBLE_EQ(c.delta_pp, 0.0);
  EXPECT_DOUBLE_EQ(c.ci95_pp.lo, 0.0);
  EXPECT_DOUBLE_EQ(c.ci95_pp.hi, 0.0);
  EXPECT_DOUBLE_EQ(c.mcnemar_p, 1.0);
  EXPECT_EQ(c.verdict(), "no measurable difference");
}

TEST(AccuracyStats, ADifferenceOfTwoPointsIsMeasurable) {
  // 10,000 images: 300 only A gets right, 100 only B does: +2 pp.
  Outcomes a(10000, false), b(10000, false);
  for (std::size_t i = 0; i < 300; ++i) a[i] = true;
  for (std::size_t i = 300; i < 400; ++i) b[i] = true;
  for (std::size_t i = 400; i < 9000; ++i) a[i] = b[i] = true;
  const PairedComparison c = compare_paired("a vs b", "a", a, "b", b);
  EXPECT_EQ(c.only_a, 300u);
  EXPECT_EQ(c.only_b, 100u);
  EXPECT_DOUBLE_EQ(c.delta_pp, 2.0);
  const double sd = std::sqrt((0.03 + 0.01 - 0.02 * 0.02) / 10000.0) * 100.0;
  EXPECT_NEAR(c.ci95_pp.hi - c.ci95_pp.lo, 2 * 1.96 * sd, 0.15 * 2 * 1.96 * sd);
  EXPECT_GT(c.ci95_pp.lo, 0.0);
  EXPECT_LT(c.mcnemar_p, 1e-6);
  EXPECT_EQ(c.verdict(), "A better");
  const PairedComparison r = compare_paired("b vs a", "b", b, "a", a);
  EXPECT_EQ(r.verdict(), "A worse");
  EXPECT_DOUBLE_EQ(r.delta_pp, -2.0);
}

TEST(AccuracyStats, BadInputIsAnError) {
  EXPECT_THROW(estimate_accuracy({}), std::invalid_argument);
  EXPECT_THROW(estimate_accuracy(Outcomes(10, true), {50, 1}), std::invalid_argument);
  EXPECT_THROW(compare_paired("x", "a", Outcomes(3, true), "b", Outcomes(4, true)),
               std::invalid_argument);
  EXPECT_THROW(compare_paired("x", "a", {}, "b", {}), std::invalid_argument);
  EXPECT_THROW(outcomes_of({1, 2}, {1}), std::invalid_argument);
  EXPECT_EQ(outcomes_of({1, 2, 3}, {1, 0, 3}), (Outcomes{true, false, true}));
}

}  // namespace
}  // namespace nmsa
