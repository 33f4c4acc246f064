// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// Eigen golden model of the device's integer arithmetic.
#pragma once

#include "nmsa/types.hpp"

namespace nmsa::golden {

// Y = X * W^T with INT8 operands and INT32 accumulation: X [rows x K], W [N_out x K] (PyTorch
// Linear layout), Y [rows x N_out]. Exact as long as no partial sum leaves the INT32 range.
MatrixI32 gemm_i8(const MatrixI8& x, const MatrixI8& w);

}  // namespace nmsa::golden
