// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
#include <fstream>
#include <random>
#include <set>
#include <utility>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

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

// All 16 masks of a 2:4 group against a second, independent source: the Boolean functions PyTorch
// evaluates (minimized with Espresso; mask bit i = position i nonzero). Masks of at most two
// nonzeros must encode exactly as PyTorch's; masks of three or four, which PyTorch encodes by
// dropping nonzeros, compress refuses (docs/format.md, section 4), and PyTorch's codes for them
// are legal, so metadata written by PyTorch never trips the hardware's check.
TEST(SparseFormat, EveryTwoFourMaskAgainstPyTorchsBooleanFunctions) {
  const NmPattern p{2, 4};
  for (unsigned mask = 0; mask < 16; ++mask) {
    const bool m0 = mask & 1u, m1 = mask & 2u, m2 = mask & 4u;
    const bool bit0 = !m0 && m1;
    const bool bit1 = !m0 && !m1;
    const bool bit2 = bit1 || !m2;
    const bool bit3 = bit0 || !m1 || m2;
    const auto pytorch = static_cast<std::uint8_t>(bit0 | bit1 << 1 | bit2 << 2 | bit3 << 3);
    EXPECT_TRUE(is_legal_group_meta(pytorch, p)) << "mask " << mask;
    MatrixI8 w = MatrixI8::Zero(1, 4);
    for (int i = 0; i < 4; ++i) w(0, i) = ((mask >> i) & 1u) ? static_cast<std::int8_t>(i + 1) : 0;
    if (__builtin_popcount(mask) <= 2) {
      EXPECT_EQ(compress(w, p).meta(0, 0), pytorch) << "mask " << mask;
    } else {
      EXPECT_THROW(compress(w, p), std::invalid_argument) << "mask " << mask;
    }
  }
}

// Every mask of 1:4 and 2:8: the kept positions are the nonzeros, then the highest free positions
// (section 4's table), and a group with more than N nonzeros is refused.
TEST(SparseFormat, EveryOneFourAndTwoEightMask) {
  for (const NmPattern p : {NmPattern{1, 4}, NmPattern{2, 8}}) {
    for (unsigned mask = 0; mask < (1u << p.m); ++mask) {
      MatrixI8 w = MatrixI8::Zero(1, p.m);
      for (int i = 0; i < p.m; ++i) w(0, i) = ((mask >> i) & 1u) ? static_cast<std::int8_t>(i + 1) : 0;
      const int nonzeros = __builtin_popcount(mask);
      if (nonzeros > p.n) {
        EXPECT_THROW(compress(w, p), std::invalid_argument) << p.name() << " mask " << mask;
        continue;
      }
      // Written out per case rather than computed: zero, one or two nonzeros.
      std::vector<int> want;
      const int top = p.m - 1;
      if (p.n == 1) {
        want = {nonzeros == 0 ? top : __builtin_ctz(mask)};
      } else if (nonzeros == 0) {
        want = {top - 1, top};
      } else if (nonzeros == 1) {
        const int i = __builtin_ctz(mask);
        want = i == top ? std::vector<int>{top - 1, top} : std::vector<int>{i, top};
      } else {
        want = {__builtin_ctz(mask), 31 - __builtin_clz(mask)};
      }
      const CompressedWeights c = compress(w, p);
      EXPECT_EQ(decode_group_meta(c.meta(0, 0), p), want) << p.name() << " mask " << mask;
      EXPECT_EQ(decompress(c), w) << p.name() << " mask " << mask;
    }
  }
}

// The packed metadata of a file (docs/format.md, section 8.3), byte for byte on section 8.5's
// example, and round trips of every pattern with row lengths that leave padding bits.
TEST(SparseFormat, PackedMetadata) {
  MatrixI8 w(1, 12);
  w << 3, -1, 0, 0, 0, 0, 0, 0, 0, 5, 7, 0;
  const CompressedWeights c = compress(w, NmPattern{2, 4});
  const Matrix<std::uint8_t> packed = pack_meta(c.meta, NmPattern{2, 4});
  ASSERT_EQ(packed.cols(), 2);
  EXPECT_EQ(packed(0, 0), 0xE4);
  EXPECT_EQ(packed(0, 1), 0x09);

  std::mt19937_64 rng(11);
  for (const NmPattern p : hardware_patterns()) {
    for (const Eigen::Index groups : {1, 3, 5, 8}) {
      const MatrixI8 pruned = prune_nm(testing::random_i8(3, groups * p.m, rng), p);
      const CompressedWeights cw = compress(pruned, p);
      const Matrix<std::uint8_t> bytes = pack_meta(cw.meta, p);
      EXPECT_EQ(bytes.cols(), (groups * meta_field_stride_bits(p) + 7) / 8) << p.name();
      EXPECT_EQ(unpack_meta(bytes, groups, p), cw.meta) << p.name() << ", " << groups << " groups";
    }
  }
  EXPECT_EQ(meta_field_stride_bits(NmPattern{1, 4}), 2);
  EXPECT_EQ(meta_field_stride_bits(NmPattern{2, 4}), 4);
  EXPECT_EQ(meta_field_stride_bits(NmPattern{2, 8}), 8);

  Matrix<std::uint8_t> padded = packed;
  padded(0, 1) |= 0x10;  // the unused high nibble of the row's last byte
  try {
    unpack_meta(padded, 3, NmPattern{2, 4});
    ADD_FAILURE() << "a set padding bit was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("row 0, byte 1"), std::string::npos) << e.what();
  }
  EXPECT_THROW(unpack_meta(packed, 5, NmPattern{2, 4}), std::invalid_argument);
  Matrix<std::uint8_t> wide = c.meta;
  wide(0, 2) = 0x1E;
  EXPECT_THROW(pack_meta(wide, NmPattern{2, 4}), std::invalid_argument);
}

// The patterns the software calls the hardware's are exactly those of rtl/configs.json.
TEST(SparseFormat, HardwarePatternsAreTheShippedConfigurations) {
  std::ifstream in(std::string(NMSA_SOURCE_DIR) + "/rtl/configs.json");
  ASSERT_TRUE(in) << "cannot read rtl/configs.json";
  const nlohmann::json configs = nlohmann::json::parse(in)["configs"];
  std::set<std::pair<int, int>> in_rtl;
  for (const auto& [name, c] : configs.items()) {
    if (c["sparse"].get<int>() == 1) in_rtl.insert({c["n"].get<int>(), c["m"].get<int>()});
  }
  std::set<std::pair<int, int>> in_software;
  for (const NmPattern& p : hardware_patterns()) in_software.insert({p.n, p.m});
  EXPECT_EQ(in_software, in_rtl);
  try {
    require_hardware_pattern(NmPattern{3, 4});
    ADD_FAILURE() << "3:4 accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("3:4 is not one the hardware runs (supported: 1:4, 2:4, 2:8)"),
              std::string::npos)
        << e.what();
  }
  EXPECT_NO_THROW(require_hardware_pattern(NmPattern{2, 8}));
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
