// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// An Mlp (mlp.hpp) quantized for the device, with statically calibrated activation scales, so that
// the layers chain on the device in INT8 without host work in between:
//
//   layer i < last:  x_i (INT8, scale s_i) -> GEMM with W_i (INT8, per-channel scales w_i[c]) ->
//                    STORE epilogue: + bias, requantize by s_i * w_i[c] / s_{i+1}, ReLU -> x_{i+1}
//   last layer:      the INT32 accumulators; the host scales them back, logit_c =
//                    s_last * w_last[c] * acc_c + b_c (ten values a row), and takes the argmax
//
// The scales s_i come from a calibration set run through the FP32 model (calibrate_input_scales).
// The golden model here (golden_forward) is the integer reference of the device for the whole
// network: the RTL and the functional model must reproduce its last-layer accumulators bit for bit.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nmsa/epilogue.hpp"
#include "nmsa/gemm_program.hpp"
#include "nmsa/mlp.hpp"
#include "nmsa/types.hpp"

namespace nmsa {

struct Int8MlpLayer {
  std::string name;                  // "fc1", "fc2", ...
  MatrixI8 weights;                  // [N_out x K]
  std::vector<float> weight_scales;  // per output channel
  float input_scale = 1.0f;          // s_i of this layer's INT8 input
  GemmMode mode = GemmMode::DENSE;   // how the device runs it
  bool last = false;                 // INT32 output, finished on the host
  EpilogueParams epilogue;           // hidden layers: bias, requantization to s_{i+1}, ReLU
  std::vector<float> bias;           // the FP32 bias (the last layer adds it on the host)
};

struct Int8Mlp {
  std::vector<Int8MlpLayer> layers;
  std::vector<int> sizes() const;  // {K, N_out of every layer}
};

// The scale of one INT8 activation tensor: the `percentile`-th percentile of |x| over its values
// (100: the maximum) divided by 127 (1 if they are all zero). Throws std::invalid_argument on no
// values, a percentile outside (0, 100] or a non-finite value.
float calibrated_scale(const MatrixF& activations, double percentile = 100.0);

// The scale of every layer's input: calibrated_scale of the activations it reads in the FP32
// forward pass of `model` over the calibration rows. Activations above it saturate. Throws std::invalid_argument on an empty calibration set, a percentile outside
// (0, 100] or a non-finite activation.
std::vector<float> calibrate_input_scales(const Mlp& model, const MatrixF& calibration,
                                          double percentile = 100.0);

// Quantizes every layer: weights per output channel (quantize_weights_per_channel), the epilogue
// of each hidden layer from its input scale, its weight scales, the next layer's input scale and
// its bias (requant_params). modes[i] says how layer i runs; a SPARSE layer's INT8 weights must
// be N:M for `pattern` (they are whenever the FP32 weights are). Throws std::invalid_argument on
// mismatched sizes or a sparse layer that is not N:M (naming the layer).
Int8Mlp quantize_mlp(const Mlp& model, const std::vector<float>& input_scales,
                     const std::vector<GemmMode>& modes, NmPattern pattern = {});

// The network's INT8 input: quantize_activations(x, s_0).
MatrixI8 quantize_input(const Int8Mlp& model, const MatrixF& x);

// One layer as the device computes it: INT8 results (as int32) of a hidden layer, the INT32
// accumulators of the last one.
MatrixI32 golden_layer(const Int8MlpLayer& layer, const MatrixI8& x);

// The last layer's accumulators for an INT8 input, layer by layer (golden_layer).
MatrixI32 golden_forward(const Int8Mlp& model, const MatrixI8& x);

// Hidden-layer results (INT8 values held as int32, as GemmProgram::read_output gives them) as
// the next layer's INT8 input. Throws std::invalid_argument on a value outside INT8.
MatrixI8 to_int8(const MatrixI32& values);

// Logits of the last layer's accumulators (see the top of this file) and their argmax per row
// (the lowest index wins ties, as in evaluate_accuracy).
MatrixF logits_from_accumulators(const Int8MlpLayer& last, const MatrixI32& acc);
std::vector<std::uint8_t> predict_classes(const MatrixF& logits);

// Top-1 accuracy of the last layer's accumulators (from the golden model or a device).
double top1_accuracy(const Int8Mlp& model, const MatrixI32& accumulators,
                     const std::vector<std::uint8_t>& labels);

// Top-1 accuracy of the INT8 model on the golden model (fast: Eigen, no device).
double evaluate_int8_accuracy(const Int8Mlp& model, const MatrixF& x,
                              const std::vector<std::uint8_t>& labels, int batch_size = 1000);

}  // namespace nmsa
