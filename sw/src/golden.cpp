// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
#include "nmsa/golden.hpp"

#include <stdexcept>
#include <string>

namespace nmsa::golden {

MatrixI32 gemm_i8(const MatrixI8& x, const MatrixI8& w) {
  if (x.cols() != w.cols()) {
    throw std::invalid_argument("golden gemm: activations have K = " + std::to_string(x.cols()) +
                                " but weights have K = " + std::to_string(w.cols()));
  }
  return x.cast<std::int32_t>() * w.cast<std::int32_t>().transpose();
}

}  // namespace nmsa::golden
