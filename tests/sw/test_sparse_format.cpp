// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
#include <random>

#include <gtest/gtest.h>

#include "../common/random_matrix.hpp"
#include "nmsa/sparse_format.hpp"

namespace nmsa {
namespace {

// The 2:4 encoding of PyTorch's _sparse_semi_structured_from_dense for every nonzero mask with at
// most two nonzeros (mask bit i = position i nonzero), including its fill for sparser groups.
TEST(SparseFormat, TwoFourMetadataMatchesPyTorch) {
  const struct { unsigned mask; std::uint8_t nibble; } cases[] = {
      {0b0011, 0b0100}, {0b0101, 0b1000}, {0b0110, 0b1001}, {0b1001, 0b1100},
      {0b1010, 0b1101}, {0b1100, 0b1110}, {0b0000, 0b1110}, {0b1000, 0b1110},
      {0b0100, 0b1110}, {0b0010, 0b1101}, {0b0001, 0b1100},
  };
  const NmPattern p{2, 4};
  for (const auto& c : cases) {
    MatrixI8 w = MatrixI8::Zero(1, 4);
    for (int i = 0; i < 4; ++i) w(0, i) = ((c.mask >> i) & 1u) ? static_cast<std::int8_t>(i + 1) : 0;
    const CompressedWeights cw = compress(w, p);
    EXPECT_EQ(cw.meta(0, 0), c.nibble) << "mask " << c.mask;
    EXPECT_EQ(decompress(cw), w) << "mask " << c.mask;
  }
}

TEST(SparseFormat, PruneKeepsLargestMagnitudesAndRoundTrips) {
  std::mt19937_64 rng(7);
  for (const NmPattern p : {NmPattern{2, 4}, NmPattern{1, 4}, NmPattern{2, 8}}) {
    const MatrixI8 w = testing::random_i8(16, 64, rng);
    const MatrixI8 pruned = prune_nm(w, p);
    EXPECT_FALSE(find_nm_violation(pruned, p).has_value()) << p.name();
    for (Eigen::Index r = 0; r < w.rows(); ++r) {
      for (Eigen::Index g = 0; g < w.cols() / p.m; ++g) {
        int smallest_kept = 256;
        int largest_dropped = 0;
        for (int i = 0; i < p.m; ++i) {
          const std::int8_t before = w(r, g * p.m + i);
          const std::int8_t after = pruned(r, g * p.m + i);
          ASSERT_TRUE(after == 0 || after == before);
          if (after != 0) {
            smallest_kept = std::min(smallest_kept, std::abs(int{after}));
          } else {
            largest_dropped = std::max(largest_dropped, std::abs(int{before}));
          }
        }
        EXPECT_LE(largest_dropped, smallest_kept) << p.name() << " row " << r << " group " << g;
      }
    }
    EXPECT_EQ(decompress(compress(pruned, p)), pruned) << p.name();
  }
}

TEST(SparseFormat, CompressRejectsDenseGroupNamingIt) {
  MatrixI8 w = MatrixI8::Zero(3, 8);
  w(2, 4) = 1;
  w(2, 5) = 2;
  w(2, 6) = 3;
  try {
    compress(w, NmPattern{2, 4});
    FAIL() << "compress accepted a 3-of-4 group";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("row 2, K-group 1"), std::string::npos) << e.what();
  }
}

TEST(SparseFormat, DecompressRejectsIllegalCode) {
  CompressedWeights c = compress(MatrixI8::Zero(1, 4), NmPattern{2, 4});
  c.meta(0, 0) = 0b0101;  // idx_lo == idx_hi
  EXPECT_THROW(decompress(c), std::invalid_argument);
}

TEST(SparseFormat, LegalityOfEveryTwoFourCode) {
  const NmPattern p{2, 4};
  int legal = 0;
  for (unsigned code = 0; code < 16; ++code) {
    const bool expect = (code & 3u) < (code >> 2);
    EXPECT_EQ(is_legal_group_meta(static_cast<std::uint8_t>(code), p), expect) << code;
    legal += expect;
  }
  EXPECT_EQ(legal, 6);  // C(4,2)
}

TEST(SparseFormat, ParsePattern) {
  EXPECT_EQ(parse_nm_pattern("2:4"), (NmPattern{2, 4}));
  EXPECT_EQ(parse_nm_pattern("2:8"), (NmPattern{2, 8}));
  EXPECT_THROW(parse_nm_pattern("2:3"), std::invalid_argument);
  EXPECT_THROW(parse_nm_pattern("5:4"), std::invalid_argument);
  EXPECT_THROW(parse_nm_pattern("2-4"), std::invalid_argument);
  EXPECT_THROW(parse_nm_pattern("2:4x"), std::invalid_argument);
}

TEST(SparseFormat, PruneAnyKTreatsThePartialGroupAsZeroPadded) {
  MatrixI8 w(1, 6);
  w << 1, 5, 2, 6, 7, 3;  // last group holds positions 4, 5 of a group of 4
  const MatrixI8 pruned = prune_nm_any_k(w, NmPattern{2, 4});
  MatrixI8 want(1, 6);
  want << 0, 5, 0, 6, 7, 3;
  EXPECT_EQ(pruned, want);
  EXPECT_EQ(pad_to_groups(w, NmPattern{2, 4}).cols(), 8);
  EXPECT_FALSE(find_nm_violation(pad_to_groups(pruned, NmPattern{2, 4}), NmPattern{2, 4}));
}

TEST(SparseFormat, RejectsKNotMultipleOfM) {
  EXPECT_THROW(prune_nm(MatrixI8::Zero(2, 6), NmPattern{2, 4}), std::invalid_argument);
}

}  // namespace
}  // namespace nmsa
