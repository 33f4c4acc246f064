// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// Matrix types shared by the library, the harness and the tests. Matrices are row-major so that
// a weight row [N_out x K] and an activation row [rows x K] are contiguous along K, the reduction
// dimension along which N:M sparsity runs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <Eigen/Core>

namespace nmsa {

template <typename T>
using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

using MatrixI8 = Matrix<std::int8_t>;
using MatrixI32 = Matrix<std::int32_t>;
using MatrixF = Matrix<float>;

// An N:M pattern: at most N nonzeros in every group of M consecutive K-positions.
struct NmPattern {
  int n = 2;
  int m = 4;

  int index_bits() const;      // log2(M)
  int meta_bits() const;       // N * log2(M): the metadata field of one group
  std::string name() const;    // "2:4"
  void validate() const;       // throws std::invalid_argument unless 1 <= N <= M, M a power of two
  bool operator==(const NmPattern& o) const { return n == o.n && m == o.m; }
};

// Parses "2:4". Throws std::invalid_argument naming the text on a malformed pattern.
NmPattern parse_nm_pattern(const std::string& text);

// The patterns of the hardware configurations nmsa ships (rtl/configs.json; a test keeps the two
// in step): 1:4, 2:4, 2:8. Other valid patterns exist only in software.
const std::vector<NmPattern>& hardware_patterns();

// Throws std::invalid_argument naming p and the supported list unless the hardware runs p.
void require_hardware_pattern(NmPattern p);

}  // namespace nmsa
