// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// The cycle model's view of a whole MLP: how long a batch takes on a device before the network
// exists, for sizing a model to a latency budget. Running a trained network is the runtime's job
// (nmsa/runtime.hpp, on the model's QDQ export, nmsa/onnx_export.hpp).
#pragma once

#include <cstdint>
#include <vector>

#include "nmsa/cycle_model.hpp"
#include "nmsa/device_caps.hpp"
#include "nmsa/gemm_program.hpp"
#include "nmsa/types.hpp"

namespace nmsa {

// The predicted cycles of one batch of `rows` rows of a network of the given layer sizes with
// every layer in `mode` (the hidden layers with their epilogue and ReLU), on a device with `caps`
// and host memory `memory`.
std::uint64_t predict_mlp_batch_cycles(const DeviceCaps& caps, const std::vector<int>& sizes,
                                       Eigen::Index rows, GemmMode mode,
                                       const PerfModelParams& memory = {});

// One layer of that sum: `in` features to `out`, a hidden layer (epilogue and ReLU) unless
// `last`. For searches that price many networks sharing layers.
std::uint64_t predict_mlp_layer_cycles(const DeviceCaps& caps, int in, int out, bool last,
                                       Eigen::Index rows, GemmMode mode,
                                       const PerfModelParams& memory = {});

}  // namespace nmsa
