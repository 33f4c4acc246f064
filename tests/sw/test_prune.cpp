// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// FP32 N:M pruning, the fused prune + quantize path, and the channel permutation search (Pool &
// Yu, 2021), including the acceptance test on a 64 x 128 Gaussian matrix.
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "../common/seed.hpp"

#include "../common/random_matrix.hpp"
#include "nmsa/prune.hpp"
#include "nmsa/quant.hpp"
#include "nmsa/sparse_format.hpp"

namespace nmsa {
namespace {

using testing::seed_note;
using testing::test_seed;

MatrixF gaussian(Eigen::Index rows, Eigen::Index cols, std::mt19937_64& rng) {
  std::normal_distribution<float> normal;
  MatrixF m(rows, cols);
  for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = normal(rng);
  return m;
}

// 1 where m is nonzero: the sparsity pattern as an INT8 matrix for find_nm_violation.
MatrixI8 nonzero_mask(const MatrixF& m) {
  return (m.array() != 0.0f).cast<std::int8_t>().matrix();
}

const NmPattern kPatterns[] = {{2, 4}, {1, 4}, {2, 8}, {1, 8}, {3, 4}, {1, 16}, {2, 16}, {4, 4}};

// The FP32 rule is the INT8 rule of sparse_format: on integer-valued weights (many ties, both
// signs, -128 whose magnitude has no INT8 positive) both keep exactly the same positions.
TEST(PruneFloat, MatchesInt8PruneIncludingTies) {
  const std::uint64_t seed = test_seed(3);
  std::mt19937_64 rng(seed);
  for (const NmPattern p : kPatterns) {
    for (const int range : {3, 128}) {
      const MatrixI8 w = testing::random_i8(24, 64, rng, -range, range - 1);
      const MatrixF pruned = prune_nm(MatrixF(w.cast<float>()), p);
      EXPECT_EQ(pruned, prune_nm(w, p).cast<float>()) << p.name() << ", " << seed_note(seed);
      EXPECT_FALSE(find_nm_violation(nonzero_mask(pruned), p).has_value()) << p.name();
    }
  }
}

TEST(PruneFloat, KeepsExactlyNEvenWithSignedZerosInfinitiesAndNaN) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  MatrixF w(4, 4);
  w << -0.0f, 0.0f, -0.0f, 0.0f,   // all zero: keep positions 0 and 1 (values stay signed zeros)
      -inf, 1.0f, inf, 2.0f,       // both infinities win; the tie goes to the lower index
      nan, 5.0f, nan, nan,         // NaN counts as the largest magnitude
      -3.0f, 3.0f, -3.0f, 2.5f;    // ties: lower indices win
  const MatrixF pruned = prune_nm(w, {2, 4});
  EXPECT_TRUE(std::signbit(pruned(0, 0)));   // kept as it was
  EXPECT_FALSE(std::signbit(pruned(0, 2)));  // pruned: +0
  EXPECT_EQ(pruned(1, 0), -inf);
  EXPECT_EQ(pruned(1, 1), 0.0f);
  EXPECT_EQ(pruned(1, 2), inf);
  EXPECT_EQ(pruned(1, 3), 0.0f);
  EXPECT_TRUE(std::isnan(pruned(2, 0)));
  EXPECT_EQ(pruned(2, 1), 0.0f);
  EXPECT_TRUE(std::isnan(pruned(2, 2)));
  EXPECT_EQ(pruned(2, 3), 0.0f);
  EXPECT_EQ(pruned.row(3), (Eigen::RowVector4f(-3.0f, 3.0f, 0.0f, 0.0f)));
}

TEST(PruneFloat, RejectsKNotMultipleOfM) {
  EXPECT_THROW(prune_nm(MatrixF(MatrixF::Zero(2, 6)), NmPattern{2, 4}), std::invalid_argument);
  EXPECT_THROW(prune_and_quantize(MatrixF::Zero(2, 6), NmPattern{2, 4}), std::invalid_argument);
  EXPECT_THROW(search_input_permutation(MatrixF::Zero(2, 6), NmPattern{2, 4}),
               std::invalid_argument);
  EXPECT_THROW(prune_nm(MatrixF(MatrixF::Zero(2, 8)), NmPattern{2, 3}), std::invalid_argument);
}

TEST(PruneFloat, RetainedMagnitudeAndUnstructuredBound) {
  MatrixF w(2, 8);
  w << 1, -2, 3, -4, 5, -6, 7, -8,   // 2:4 keeps 3,4 and 7,8: 22; unstructured 5..8: 26
      8, 7, 6, 5, 4, 3, 2, 1;        // 2:4 keeps 8,7 and 4,3: 22; unstructured 8..5: 26
  const NmPattern p{2, 4};
  EXPECT_DOUBLE_EQ(retained_magnitude(prune_nm(w, p)), 44.0);
  EXPECT_DOUBLE_EQ(unstructured_retained_magnitude(w, p), 52.0);
  EXPECT_DOUBLE_EQ(retained_magnitude(w), 72.0);
  // The swap of columns 0..1 with 4..5 in row 0 gains 5+6 - 3-4 = 4, but row 1 loses the same.
  const PermutationGain g = evaluate_permutation(w, p, {0, 1, 2, 3, 4, 5, 6, 7});
  EXPECT_DOUBLE_EQ(g.plain, 44.0);
  EXPECT_DOUBLE_EQ(g.permuted, 44.0);
  EXPECT_DOUBLE_EQ(g.gap_closed(), 0.0);
}

// The deployment path: bit-identical to pruning and then quantizing, and compressible.
TEST(PruneFloat, FusedPruneAndQuantizeEqualsTheTwoSteps) {
  const std::uint64_t seed = test_seed(4);
  std::mt19937_64 rng(seed);
  for (const NmPattern p : kPatterns) {
    MatrixF w = gaussian(19, 2048 + 64, rng);  // more than one 1024-value block per row
    w.row(3).setZero();
    w.row(5) *= 1e-30f;
    w(7, 9) = -1e30f;
    const QuantizedWeights fused = prune_and_quantize(w, p);
    const QuantizedWeights steps = quantize_weights_per_channel(prune_nm(w, p));
    EXPECT_EQ(fused.values, steps.values) << p.name() << ", " << seed_note(seed);
    EXPECT_EQ(fused.scales, steps.scales) << p.name();
    ASSERT_FALSE(find_nm_violation(fused.values, p).has_value()) << p.name();
    EXPECT_EQ(decompress(compress(fused.values, p)), fused.values) << p.name();
  }
  MatrixF bad = MatrixF::Ones(2, 8);
  bad(1, 6) = std::numeric_limits<float>::quiet_NaN();
  try {
    prune_and_quantize(bad, {2, 4});
    ADD_FAILURE() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("row 1, column 6"), std::string::npos) << e.what();
  }
}

TEST(Permutation, ValidateApplyAndInvert) {
  EXPECT_NO_THROW(validate_permutation({2, 0, 1}, 3));
  EXPECT_THROW(validate_permutation({0, 1}, 3), std::invalid_argument);
  EXPECT_THROW(validate_permutation({0, 1, 3}, 3), std::invalid_argument);
  EXPECT_THROW(validate_permutation({0, -1, 2}, 3), std::invalid_argument);
  try {
    validate_permutation({0, 1, 1}, 3);
    ADD_FAILURE() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("column 1 appears twice"), std::string::npos) << e.what();
  }
  MatrixI8 m(2, 3);
  m << 1, 2, 3, 4, 5, 6;
  const std::vector<int> perm{2, 0, 1};
  MatrixI8 want(2, 3);
  want << 3, 1, 2, 6, 4, 5;
  EXPECT_EQ(apply_column_permutation(m, perm), want);
  EXPECT_EQ(apply_column_permutation(want, invert_permutation(perm)), m);
}

// Permuting the input channels of both operands leaves the layer's output unchanged.
TEST(Permutation, MatchingActivationPermutationPreservesTheGemm) {
  const std::uint64_t seed = test_seed(5);
  std::mt19937_64 rng(seed);
  // Small integers: every product and sum is exact in float, so the check is exact.
  const MatrixF w = testing::random_i8(16, 64, rng, -8, 8).cast<float>();
  const MatrixF x = testing::random_i8(10, 64, rng, -8, 8).cast<float>();
  const std::vector<int> perm = search_input_permutation(w, {2, 4});
  const MatrixF wp = prune_nm(apply_column_permutation(w, perm), {2, 4});
  const MatrixF y = apply_column_permutation(x, perm) * wp.transpose();
  // The same layer written in the original channel order: un-permute the pruned weights.
  const MatrixF w_orig_order = apply_column_permutation(wp, invert_permutation(perm));
  EXPECT_EQ(y, x * w_orig_order.transpose()) << seed_note(seed);
}

TEST(Permutation, IdentityWhenThereIsNothingToSearch) {
  std::mt19937_64 rng(1);
  const MatrixF w = gaussian(8, 4, rng);
  EXPECT_EQ(search_input_permutation(w, {2, 4}), (std::vector<int>{0, 1, 2, 3}));
  const std::vector<int> all_kept = search_input_permutation(gaussian(4, 16, rng), {4, 4});
  for (int j = 0; j < 16; ++j) EXPECT_EQ(all_kept[static_cast<std::size_t>(j)], j);
  PermutationOptions bad;
  bad.swaps_per_escape = 0;
  EXPECT_THROW(search_input_permutation(gaussian(4, 16, rng), {2, 4}, bad), std::invalid_argument);
}

TEST(Permutation, DeterministicForASeed) {
  std::mt19937_64 rng(9);
  const MatrixF w = gaussian(32, 64, rng);
  PermutationOptions o;
  o.seed = 77;
  o.escape_attempts = 30;
  EXPECT_EQ(search_input_permutation(w, {2, 4}, o), search_input_permutation(w, {2, 4}, o));
}

// On a 64 x 128 Gaussian matrix the search closes at least 30% of the retained-magnitude gap
// between plain 2:4 pruning and 50% unstructured pruning, returns a valid permutation, and the
// pruned permuted matrix is 2:4.
TEST(Permutation, ClosesAtLeast30PercentOfTheGapOnAGaussianMatrix) {
  const std::uint64_t seed = test_seed(2021);
  std::mt19937_64 rng(seed);
  const MatrixF w = gaussian(64, 128, rng);
  const NmPattern p{2, 4};
  PermutationOptions options;
  options.seed = seed;
  const std::vector<int> perm = search_input_permutation(w, p, options);
  ASSERT_NO_THROW(validate_permutation(perm, w.cols())) << seed_note(seed);

  const MatrixF pruned = prune_nm(apply_column_permutation(w, perm), p);
  const auto violation = find_nm_violation(nonzero_mask(pruned), p);
  EXPECT_FALSE(violation.has_value()) << violation->describe(p);
  EXPECT_FALSE(find_nm_violation(quantize_weights_per_channel(pruned).values, p).has_value());

  const PermutationGain g = evaluate_permutation(w, p, perm);
  std::cout << "[ measured ] retained magnitude: plain 2:4 " << g.plain << ", permuted "
            << g.permuted << ", unstructured 50% " << g.unstructured << "; gap closed "
            << g.gap_closed() << " (" << 100.0 * g.gap_closed() << "%)\n";
  EXPECT_DOUBLE_EQ(g.permuted, retained_magnitude(pruned));
  EXPECT_LE(g.permuted, g.unstructured + 1e-9);
  EXPECT_GE(g.gap_closed(), 0.30) << seed_note(seed);
}

// Other patterns go through the generic scorer; the search must never lose magnitude.
TEST(Permutation, ImprovesOtherPatterns) {
  const std::uint64_t seed = test_seed(6);
  std::mt19937_64 rng(seed);
  for (const NmPattern p : {NmPattern{1, 4}, NmPattern{2, 8}, NmPattern{3, 4}}) {
    const MatrixF w = gaussian(16, 64, rng);
    PermutationOptions o;
    o.seed = seed;
    o.escape_attempts = 20;
    const std::vector<int> perm = search_input_permutation(w, p, o);
    ASSERT_NO_THROW(validate_permutation(perm, w.cols()));
    const PermutationGain g = evaluate_permutation(w, p, perm);
    EXPECT_GT(g.permuted, g.plain) << p.name() << ", " << seed_note(seed);
    EXPECT_LE(g.permuted, g.unstructured + 1e-9) << p.name();
  }
}

}  // namespace
}  // namespace nmsa
