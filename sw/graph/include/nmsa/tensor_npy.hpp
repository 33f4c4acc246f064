// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// Runtime tensors to and from .npy arrays, each with its real shape and its own dtype: how
// `nmsa run` reads a model's inputs and writes every output.
#pragma once

#include <optional>
#include <string>

#include "nmsa/npy.hpp"
#include "nmsa/onnx_model.hpp"

namespace nmsa {

// The array as a tensor of element type `want` (the type the model declares for the input; when
// it declares none, the array's own: float64 becomes float). A float tensor takes float32 or
// float64 (converted to float32); an integer or bool tensor takes exactly its own dtype. Throws
// std::runtime_error starting with `what` on any other dtype.
Tensor tensor_from_npy(const NpyArray& array, std::optional<ElementType> want,
                       const std::string& what);

// The tensor with its shape and the dtype of its element type (float32, int8, ..., bool).
NpyArray npy_from_tensor(const Tensor& tensor);

}  // namespace nmsa
