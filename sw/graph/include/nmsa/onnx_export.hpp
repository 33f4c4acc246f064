// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// ONNX output: the demo's MLP (nmsa/mlp.hpp) as an ONNX model, so that a network trained and
// pruned by nmsa runs unchanged in `nmsa run` (nmsa/runtime.hpp) and in any ONNX runtime.
//
// The graph has the form PyTorch's exporter gives a stack of nn.Linear and nn.ReLU (the names
// aside):
//
//   input  float [batch x K]            "batch" is a symbolic dimension
//   fc<i>  Gemm(x, fc<i>.weight, fc<i>.bias), transB = 1, for i = 1 .. layers
//            fc<i>.weight  float [N_out x K]   the layer's W as it is (PyTorch's Linear layout)
//            fc<i>.bias    float [N_out]
//   relu<i> Relu after every Gemm but the last
//   logits float [batch x classes]
//
// transB = 1 keeps W in its [N_out x K] layout, so the N:M groups of a pruned layer lie along K
// in the file as they do in nmsa, and the runtime's N:M test sees the pruned zeros where the
// pruning put them; each Relu is the sole reader of its Gemm's output, so the runtime fuses it.
// Weights and biases are stored bit for bit (little-endian raw_data, -0.0 and subnormals kept).
// The masks are not written: the weights already hold their zeros, and an ONNX runtime has no use
// for them. The model imports opset 13 of the default domain with IR version 7 (ONNX 1.8, the
// release that introduced opset 13), so that older runtimes read it too.
#pragma once

#include <string>
#include <vector>

#include "nmsa/cnn.hpp"
#include "nmsa/int8_mlp.hpp"
#include "nmsa/mlp.hpp"

namespace nmsa {

// The ModelProto's producer_name and producer_version. The version counts changes of the
// exported graph's layout (names, operators, attributes), not releases of nmsa.
inline constexpr const char* ONNX_PRODUCER_NAME = "nmsa";
inline constexpr const char* ONNX_PRODUCER_VERSION = "1";

// The serialized ModelProto of `model`. `doc` becomes the graph's doc_string; when empty it is
// a one-line description of the network (sizes, share of zero weights). Throws
// std::invalid_argument for a model without layers, inconsistent shapes (a layer whose K is not
// the previous layer's N_out, a bias that is not [N_out], an empty layer), a non-finite weight or
// bias (naming the layer and the position), or a model too large for one protobuf (2 GiB).
std::string serialize_mlp_onnx(const Mlp& model, const std::string& graph_name = "nmsa_mlp",
                               const std::string& doc = "");

// serialize_mlp_onnx written to `path` through a temporary file in the same directory and a
// rename, so that `path` is never left half written. Throws std::invalid_argument as
// serialize_mlp_onnx does (the message starting with `path`), and std::runtime_error naming
// `path` when the file cannot be written.
void export_mlp_onnx(const Mlp& model, const std::string& path,
                     const std::string& graph_name = "nmsa_mlp", const std::string& doc = "");

// The demo's CNN (nmsa/cnn.hpp) in FP32, as PyTorch's exporter gives a Sequential of Conv2d,
// ReLU, MaxPool2d, Flatten and Linear layers:
//
//   input  float [batch x C*H*W]                    the image rows, as the MLP reads them
//   reshape_input  Reshape to [batch, C, H, W]
//   per block conv<i>:  Conv(x, conv<i>.weight [M, C, K, K], conv<i>.bias), pads K/2 on every
//                       side; conv<i>.relu; conv<i>.pool MaxPool 2x2, stride 2 (if it pools)
//   flatten  Flatten, axis 1 (NCHW order)
//   fc<i>    Gemm(.., fc<i>.weight [N_out x K], fc<i>.bias), transB = 1; fc<i>.relu but after the last
//   logits float [batch x classes]
//
// The Conv weight keeps nmsa's [M x C*K*K] row-major bytes, which are ONNX's [M, C, K, K]: N:M
// groups along input channels x kernel window stay where the pruning put them. Throws
// std::invalid_argument for layers that do not match the shape or a non-finite value (naming the
// layer and the position).
std::string serialize_cnn_onnx(const Cnn& model, const std::string& graph_name = "nmsa_cnn",
                               const std::string& doc = "");
void export_cnn_onnx(const Cnn& model, const std::string& path,
                     const std::string& graph_name = "nmsa_cnn", const std::string& doc = "");

// The CNN statically quantized in ONNX's QDQ form, calibration included (input_scales[i]: the
// scale of trainable layer i's int8 input, as calibrate_cnn_input_scales gives them):
//
//   input float [batch x C*H*W] -> reshape_input -> conv1.quantize_input, int8
//   per block conv<i>:  conv<i>.dequantize_input, conv<i>.dequantize_weight (int8 [M, C, K, K],
//                       per output channel, axis 0), Conv with the float bias, conv<i>.relu,
//                       <next>.quantize_input to the next layer's scale, conv<i>.pool MaxPool
//                       2x2 of the int8 map (if it pools)
//   flatten of the int8 map, then per Linear layer fc<i> as the INT8 MLP's below; float logits
//
// Symmetric (every zero point 0), weights per output channel (quantize_weights_per_channel),
// activations per tensor. Quantizing before the pool is exact: rounding and saturation are
// monotone, so the pool of the int8 map is the quantized pool of the float map. nmsa's runtime
// runs every Conv and Gemm as one device GEMM with bias, requantization and ReLU in the STORE
// epilogue (the last one's accumulators scaled back on the host), pooling and flattening on the
// int8 maps on the host. Throws std::invalid_argument as serialize_cnn_onnx does, or for a wrong
// number of scales or a scale that is not finite and positive (naming the layer).
std::string serialize_int8_cnn_onnx(const Cnn& model, const std::vector<float>& input_scales,
                                    const std::string& graph_name = "nmsa_int8_cnn",
                                    const std::string& doc = "");
void export_int8_cnn_onnx(const Cnn& model, const std::vector<float>& input_scales,
                          const std::string& path, const std::string& graph_name = "nmsa_int8_cnn",
                          const std::string& doc = "");

// The statically quantized MLP (nmsa/int8_mlp.hpp) in ONNX's QDQ form, calibration included:
//
//   input  float [batch x K]
//   fc1.quantize_input   QuantizeLinear(input, fc1.input_scale, fc1.input_zero_point) int8
//   per layer fc<i>:
//     fc<i>.dequantize_input   DequantizeLinear(fc<i>.input_q, fc<i>.input_scale, 0)
//     fc<i>.dequantize_weight  DequantizeLinear(fc<i>.weight_q int8 [N_out x K],
//                                               fc<i>.weight_scale [N_out], zeros), axis 0
//     fc<i>                    Gemm(.., .., fc<i>.bias float [N_out]), transB = 1
//     relu<i>, fc<i+1>.quantize_input   Relu, QuantizeLinear to the next layer's scale
//   logits float [batch x classes] (the last Gemm)
//
// Symmetric (every zero point 0, int8), weights per output channel, activations per tensor:
// exactly Int8Mlp's numbers. nmsa's runtime runs each layer as one device GEMM with bias,
// requantization and ReLU in the STORE epilogue (docs/runtime.md), and its logits equal
// golden_forward's, bit for bit; an ONNX runtime computes the same network in float between the
// quantizers. Throws std::invalid_argument naming the layer for an empty model, inconsistent
// shapes, a non-finite value or a scale an ONNX runtime would refuse.
std::string serialize_int8_mlp_onnx(const Int8Mlp& model,
                                    const std::string& graph_name = "nmsa_int8_mlp",
                                    const std::string& doc = "");
void export_int8_mlp_onnx(const Int8Mlp& model, const std::string& path,
                          const std::string& graph_name = "nmsa_int8_mlp",
                          const std::string& doc = "");

}  // namespace nmsa
