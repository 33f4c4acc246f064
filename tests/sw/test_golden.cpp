// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
#include <random>

#include <gtest/gtest.h>

#include "../common/random_matrix.hpp"
#include "nmsa/golden.hpp"

namespace nmsa {
namespace {

TEST(Golden, MatchesNaiveTripleLoop) {
  std::mt19937_64 rng(3);
  const MatrixI8 x = testing::random_i8(5, 37, rng);
  const MatrixI8 w = testing::random_i8(7, 37, rng);
  const MatrixI32 y = golden::gemm_i8(x, w);
  ASSERT_EQ(y.rows(), 5);
  ASSERT_EQ(y.cols(), 7);
  for (Eigen::Index i = 0; i < 5; ++i) {
    for (Eigen::Index j = 0; j < 7; ++j) {
      std::int64_t acc = 0;
      for (Eigen::Index k = 0; k < 37; ++k) acc += std::int64_t{x(i, k)} * w(j, k);
      EXPECT_EQ(y(i, j), acc);
    }
  }
}

TEST(Golden, ExtremeValuesAreExact) {
  const MatrixI8 x = MatrixI8::Constant(2, 4096, -128);
  const MatrixI8 w = MatrixI8::Constant(3, 4096, -128);
  EXPECT_EQ(golden::gemm_i8(x, w)(1, 2), 4096 * 16384);
}

// The FP32 fast path is exact up to K = 1024 (|sum| <= 2^24) and the INT32 path takes over above:
// extreme and random operands at and around the boundary against an int64 reference.
TEST(Golden, ExactAroundTheFloatPathBoundary) {
  std::mt19937_64 rng(5);
  for (Eigen::Index k : {1023, 1024, 1025}) {
    EXPECT_EQ(golden::gemm_i8(MatrixI8::Constant(1, k, -128), MatrixI8::Constant(1, k, -128))(0, 0),
              k * 16384)
        << "K " << k;
    // Sums just below 2^24 with an odd term: a float path without exactness would round it.
    MatrixI8 x = MatrixI8::Constant(1, k, -128);
    MatrixI8 w = MatrixI8::Constant(1, k, -128);
    x(0, 0) = 1;
    w(0, 0) = 1;
    EXPECT_EQ(golden::gemm_i8(x, w)(0, 0), (k - 1) * 16384 + 1) << "K " << k;
    const MatrixI8 a = testing::random_i8(9, k, rng);
    const MatrixI8 b = testing::random_i8(6, k, rng);
    const MatrixI32 y = golden::gemm_i8(a, b);
    for (Eigen::Index i = 0; i < 9; ++i) {
      for (Eigen::Index j = 0; j < 6; ++j) {
        std::int64_t acc = 0;
        for (Eigen::Index t = 0; t < k; ++t) acc += std::int64_t{a(i, t)} * b(j, t);
        ASSERT_EQ(y(i, j), acc) << "K " << k << " at " << i << "," << j;
      }
    }
  }
}

TEST(Golden, RejectsMismatchedK) {
  EXPECT_THROW(golden::gemm_i8(MatrixI8::Zero(2, 4), MatrixI8::Zero(2, 8)), std::invalid_argument);
}

}  // namespace
}  // namespace nmsa
