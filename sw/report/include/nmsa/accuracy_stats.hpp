// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// How sure a top-1 accuracy, and a difference of two, is: the statistics of the deployment
// report's quality section (docs/demo.md, "Quality claims").
//
// Both models of a comparison classify the same test images, so the comparison is paired: an
// image both get right or both get wrong says nothing about which model is better. The 95%
// intervals come from the percentile bootstrap over the test images (each resample draws as many
// images as the test set holds, with replacement; a paired resample draws images, not outcomes),
// and the paired test is McNemar's exact test: under "no difference" an image that only one model
// gets right is equally likely to be either model's, so the discordant counts follow a binomial
// distribution with p = 1/2.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace nmsa {

// Per image: did the model predict its label?
using Outcomes = std::vector<bool>;

// Outcomes of predictions against labels; throws std::invalid_argument when the lengths differ.
Outcomes outcomes_of(const std::vector<std::uint8_t>& predicted,
                     const std::vector<std::uint8_t>& labels);

struct Interval {
  double lo = 0;
  double hi = 0;
  bool contains(double v) const { return lo <= v && v <= hi; }
};

// The resamples and the seed of every bootstrap in a report: fixed, so that a report is
// reproducible to the last digit.
struct BootstrapSettings {
  int resamples = 2000;
  std::uint64_t seed = 1;
};

// A top-1 accuracy (a fraction) with its 95% bootstrap interval.
struct AccuracyEstimate {
  double accuracy = 0;
  Interval ci95;
};

// Throws std::invalid_argument for no outcomes or fewer than 100 resamples.
AccuracyEstimate estimate_accuracy(const Outcomes& correct, const BootstrapSettings& b = {});

// McNemar's exact two-sided p-value for `only_a` images that only model A gets right and
// `only_b` that only B does: twice the smaller binomial tail, at most 1 (1 when both are 0).
double mcnemar_exact_p(std::uint64_t only_a, std::uint64_t only_b);

// Model A against model B on the same images.
struct PairedComparison {
  std::string name;         // what is compared, e.g. "deployed 2:4 INT8 vs dense control FP32"
  std::string a, b;         // the two models
  std::string measured_on;  // where the outcomes come from, e.g. "A: rtl:default, B: host FP32"
  double delta_pp = 0;      // 100 * (accuracy of A - accuracy of B)
  Interval ci95_pp;         // its 95% paired bootstrap interval, in pp
  std::uint64_t only_a = 0;  // images only A gets right
  std::uint64_t only_b = 0;  // images only B gets right
  std::uint64_t images = 0;
  double mcnemar_p = 1;
  // "no measurable difference" when the interval spans zero, else "A better" / "A worse".
  std::string verdict() const;
};

// Throws std::invalid_argument when the outcome lists differ in length or are empty.
PairedComparison compare_paired(const std::string& name, const std::string& a,
                                const Outcomes& correct_a, const std::string& b,
                                const Outcomes& correct_b, const BootstrapSettings& s = {});

}  // namespace nmsa
