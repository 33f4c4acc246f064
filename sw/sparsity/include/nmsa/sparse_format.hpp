// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// N:M pruning and the compressed weight format of docs/format.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "nmsa/types.hpp"

namespace nmsa {

// Magnitude N:M pruning along K: in every group of M consecutive K-positions of a row keep the N
// values of largest magnitude (on ties the lower index wins) and zero the rest. K must be a
// multiple of M.
MatrixI8 prune_nm(const MatrixI8& w, NmPattern p);

// K padded with zeros to whole groups of M, so that a partial last group becomes an ordinary one.
MatrixI8 pad_to_groups(const MatrixI8& w, NmPattern p);

// prune_nm for any K: a partial last group is pruned as if padded with zeros.
MatrixI8 prune_nm_any_k(const MatrixI8& w, NmPattern p);

// The first group of a matrix that breaks the N:M rule.
struct NmViolation {
  Eigen::Index row = 0;
  Eigen::Index group = 0;
  int nonzeros = 0;
  std::string describe(NmPattern p) const;
};

// Returns the first offending group (row-major order), or nothing if w is N:M sparse.
std::optional<NmViolation> find_nm_violation(const MatrixI8& w, NmPattern p);

// Metadata of one group: N indices, slot j in bits [j*log2(M) +: log2(M)], strictly increasing.
// For 2:4 this is NVIDIA's / PyTorch's nibble idx_lo | idx_hi << 2.
std::uint8_t encode_group_meta(const std::vector<int>& indices, NmPattern p);
std::vector<int> decode_group_meta(std::uint8_t meta, NmPattern p);   // the N raw indices
bool is_legal_group_meta(std::uint8_t meta, NmPattern p);             // strictly increasing

// Compressed weights: `values` [rows x K*N/M] holds the kept values of each group in increasing
// index order, `meta` [rows x K/M] one metadata field per group.
struct CompressedWeights {
  NmPattern pattern;
  Eigen::Index rows = 0;
  Eigen::Index k = 0;
  MatrixI8 values;
  Matrix<std::uint8_t> meta;
};

// Compresses an N:M sparse matrix. Groups with fewer than N nonzeros keep their nonzero positions
// and fill the remaining slots with the highest unused positions (value 0); for 2:4 this equals
// PyTorch's _sparse_semi_structured_from_dense (e.g. an all-zero group encodes as 0b1110).
// Throws std::invalid_argument naming the first offending group if w is not N:M sparse.
CompressedWeights compress(const MatrixI8& w, NmPattern p);

// Inverse of compress. Throws std::invalid_argument naming the group on an illegal metadata code.
MatrixI8 decompress(const CompressedWeights& c);

// The metadata as a file holds it (docs/format.md, section 8.3): each field in F bits, F the
// field width rounded up to a power of two (2:4: 4, two groups a byte in PyTorch's nibble order;
// 1:4: 2; 2:8: 8), packed LSB-first, each row padded to whole bytes with zero bits.
int meta_field_stride_bits(NmPattern p);
Eigen::Index packed_meta_row_bytes(Eigen::Index groups, NmPattern p);
Matrix<std::uint8_t> pack_meta(const Matrix<std::uint8_t>& meta, NmPattern p);
// Inverse of pack_meta for rows of `groups` fields. Throws std::invalid_argument on a row length
// that does not match or a padding bit that is not 0, naming the row and byte.
Matrix<std::uint8_t> unpack_meta(const Matrix<std::uint8_t>& packed, Eigen::Index groups,
                                 NmPattern p);

}  // namespace nmsa
