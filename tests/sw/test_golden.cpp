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

TEST(Golden, RejectsMismatchedK) {
  EXPECT_THROW(golden::gemm_i8(MatrixI8::Zero(2, 4), MatrixI8::Zero(2, 8)), std::invalid_argument);
}

}  // namespace
}  // namespace nmsa
