// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// The QDQ form of a quantized fully connected or convolution layer, and its match in a graph. A
// statically quantized network in ONNX's QDQ form (docs/runtime.md, "Deploying a quantized
// network") writes every layer as
//
//   A = DequantizeLinear(x_q int8, s_x)
//   B = DequantizeLinear(W_q int8 constant, s_w per tensor or per output channel)
//   y = Gemm(A, B, C) or Conv(A, B, C)       C: a float constant per output channel, or none
//       [-> Relu] [-> QuantizeLinear(s_y, int8 zero point 0)]
//
// with symmetric scales (zero points 0); a Conv's W is [M, C, (KH,) KW] with its per-channel
// scales along axis 0, and group = 1. The runtime runs the whole pattern as one device layer (a
// Conv's int8 input lowered by im2col, whose padding is the zero point 0): the device multiplies
// x_q by W_q, and the STORE epilogue adds the bias, requantizes to s_y (requant_params, quant.hpp)
// and applies the ReLU; without a QuantizeLinear the accumulators come back and the host computes
// float(s_x * s_w[c] * acc + C[c]) (and the ReLU), the same arithmetic as Int8Mlp's logits.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "nmsa/epilogue.hpp"
#include "nmsa/onnx_model.hpp"
#include "nmsa/types.hpp"

namespace nmsa::graph_detail {

struct QdqGemm {
  std::size_t dq_input = 0;    // DequantizeLinear of the activations
  std::size_t dq_weight = 0;   // DequantizeLinear of the constant weights
  std::optional<std::size_t> relu;
  std::optional<std::size_t> quantize;  // QuantizeLinear of the output
  std::string input;                    // the int8 activations (dq_input's x)
  std::string output;                   // the last fused node's output
  float input_scale = 1.0f;
  MatrixI8 weights;                  // [N x K] (the runtime moves it to DeviceGemm::weights)
  std::vector<std::int64_t> conv_weight_shape;  // a Conv's W [M, C, (KH,) KW]; empty: a Gemm
  std::vector<float> weight_scales;  // per output channel
  std::vector<float> bias;           // C per output channel, or empty
  std::optional<EpilogueParams> epilogue;  // with `quantize`: bias, requantization to s_y
};

// What the matcher needs of the graph around a node.
struct GraphView {
  const Graph& graph;
  std::function<const Tensor*(const std::string&)> constant;  // nullptr unless a constant
  // The only node that reads a value, or nullptr (several readers, none, or a graph output).
  std::function<const Node*(const std::string&)> sole_consumer;
  // The node that writes a value, or nullptr (an input or initializer).
  std::function<const Node*(const std::string&)> producer;
};

// The QDQ pattern around Gemm or Conv node `layer`: nullopt, with `why_not` set when the node
// reads a DequantizeLinear output yet the pattern does not hold (the reason), left empty when the
// node is not in QDQ form at all.
std::optional<QdqGemm> match_qdq_layer(const GraphView& view, std::size_t layer,
                                       std::string& why_not);

}  // namespace nmsa::graph_detail
