// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
#include "nmsa/golden.hpp"

#include <stdexcept>
#include <string>

#include "nmsa/types.hpp"

namespace nmsa::golden {

MatrixI32 gemm_i8(const MatrixI8& x, const MatrixI8& w) {
  if (x.cols() != w.cols()) {
    throw std::invalid_argument("golden gemm: activations have K = " + std::to_string(x.cols()) +
                                " but weights have K = " + std::to_string(w.cols()));
  }
  // Every product of two INT8 values is at most 2^14 in magnitude, so for K <= 1024 every
  // partial sum, in any order, is an integer below 2^24: exact in FP32. Eigen's FP32 product is
  // vectorized and blocked, its INT32 product is not, and the demo runs whole test sets through
  // this model; the result is the same integers either way.
  constexpr Eigen::Index kFloatExactK = 1024;
  if (x.cols() <= kFloatExactK) {
    const MatrixF y = x.cast<float>() * w.cast<float>().transpose();
    return y.cast<std::int32_t>();
  }
  return x.cast<std::int32_t>() * w.cast<std::int32_t>().transpose();
}

}  // namespace nmsa::golden
