// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// Seeded random operands for tests and benchmarks.
#pragma once

#include <random>

#include "nmsa/types.hpp"

namespace nmsa::testing {

// Uniform INT8 in [lo, hi].
inline MatrixI8 random_i8(Eigen::Index rows, Eigen::Index cols, std::mt19937_64& rng,
                          int lo = -128, int hi = 127) {
  std::uniform_int_distribution<int> dist(lo, hi);
  MatrixI8 m(rows, cols);
  for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = static_cast<std::int8_t>(dist(rng));
  return m;
}

}  // namespace nmsa::testing
