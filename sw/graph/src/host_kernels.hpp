// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// The runtime's host kernels: every operator of the supported layer matrix (nmsa/runtime.hpp)
// computed on host tensors, for the layers placed on the host and for the parts of a device
// layer the host does (broadcasting a bias, zero points, requantization). Element-wise, reduction
// and shape kernels are in host_kernels.cpp, the matrix products in host_matmul.cpp.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "nmsa/epilogue.hpp"
#include "nmsa/onnx_model.hpp"
#include "nmsa/types.hpp"

namespace nmsa::graph_detail {

class Values;

using Shape = std::vector<std::int64_t>;

// Throws std::runtime_error naming the node.
[[noreturn]] void node_error(const Node& n, const std::string& what);
std::string shape_str(const Shape& s);
std::int64_t numel(const Shape& s);
bool is_default_domain(const Node& n);

// --- Broadcasting (numpy rules) ---------------------------------------------------------------

Shape broadcast_shapes(const Shape& a, const Shape& b, const Node& node);

// Strides of `in` seen through the broadcast to `out` (0 along broadcast dimensions).
Shape broadcast_strides(const Shape& in, const Shape& out);

// Calls f(out_index, a_index, b_index) for every element of the broadcast of a and b to `out`.
template <typename F>
void for_each_broadcast(const Shape& out, const Shape& a, const Shape& b, F f) {
  const std::int64_t n = numel(out);
  if (n == 0) return;
  const Shape sa = broadcast_strides(a, out);
  const Shape sb = broadcast_strides(b, out);
  Shape idx(out.size(), 0);
  std::int64_t ia = 0, ib = 0;
  for (std::int64_t o = 0; o < n; ++o) {
    f(o, ia, ib);
    for (std::size_t d = out.size(); d-- > 0;) {
      ++idx[d];
      ia += sa[d];
      ib += sb[d];
      if (idx[d] < out[d]) break;
      ia -= sa[d] * out[d];
      ib -= sb[d] * out[d];
      idx[d] = 0;
    }
  }
}

Tensor broadcast_to(const Tensor& t, const Shape& shape, const Node& node);

// --- Elementwise kernels ----------------------------------------------------------------------

enum class BinaryOp { ADD, SUB, MUL, DIV };

Tensor binary(const Node& node, const Tensor& a, const Tensor& b, BinaryOp op);
Tensor relu(const Tensor& t);

// The value of a Constant node.
Tensor constant_value(const Node& node);

// Node n's operator on its inputs in `v`, on the host: its first output.
Tensor run_host(const Node& n, const Values& v, std::int64_t opset);
// Every output of node n, in order (operators with several outputs: LayerNormalization).
std::vector<Tensor> run_host_outputs(const Node& n, const Values& v, std::int64_t opset);

// --- Convolution (host_conv.cpp) ---------------------------------------------------------------

// A 1-D or 2-D ONNX Conv's shapes, a 1-D one as height 1: X [n, c, h, w], W [m, c/groups, kh, kw],
// output [n, m, oh, ow] (or [n, m, ow]). Throws naming the node on shapes or attributes it does
// not support.
struct ConvGeometry {
  std::int64_t n = 0, c = 0, h = 0, w = 0, m = 0, kh = 0, kw = 0, oh = 0, ow = 0;
  std::int64_t stride_h = 1, stride_w = 1, dil_h = 1, dil_w = 1, pad_t = 0, pad_l = 0;
  std::int64_t groups = 1;
  Shape out_shape;
};
ConvGeometry conv_geometry(const Node& node, const Shape& x, const Shape& w);

// The convolution's input as a GEMM operand (groups = 1): [n*oh*ow x c*kh*kw], row (b, y, x),
// column (channel, kernel row, kernel column); padding positions are 0.
MatrixF im2col(const ConvGeometry& g, const Tensor& x);

// Conv on the host, in double accumulation; `bias` may be null.
Tensor conv_host(const Node& node, const Tensor& x, const Tensor& w, const Tensor* bias);

// --- Pooling, normalization, Concat (host_nn.cpp) ----------------------------------------------

// MaxPool (any element type; no Indices output) or AveragePool (float), 1-D or 2-D: kernel_shape,
// strides, pads, auto_pad, dilations, ceil_mode, count_include_pad.
Tensor pool(const Node& node, const Tensor& x, bool max);
Tensor global_average_pool(const Node& node, const Tensor& x);
// BatchNormalization in inference mode (training_mode = 0), along axis 1.
Tensor batch_normalization(const Node& node, const Tensor& x, const Tensor& scale,
                           const Tensor& bias, const Tensor& mean, const Tensor& var);
// LayerNormalization: Y, Mean and InvStdDev over the axes from `axis` on.
std::vector<Tensor> layer_normalization(const Node& node, const Tensor& x, const Tensor& scale,
                                        const Tensor* bias);
Tensor concat(const Node& node, const std::vector<const Tensor*>& inputs);

// --- Quantization (host_quantize.cpp) ---------------------------------------------------------

// ONNX QuantizeLinear / DequantizeLinear (opset 13): `scale` per tensor or 1-D along the node's
// `axis`, `zp` (optional) of the same shape; QuantizeLinear rounds half to even and saturates to
// the zero point's type (uint8 without one).
Tensor quantize_linear(const Node& node, const Tensor& x, const Tensor& scale, const Tensor* zp);
Tensor dequantize_linear(const Node& node, const Tensor& x, const Tensor& scale, const Tensor* zp);

// --- MatMul geometry --------------------------------------------------------------------------

// numpy matmul of A [..., M, K] and B [..., K, N] (1-D operands promoted and their dimension
// dropped from the result), as a list of matrix products.
struct MatmulShape {
  std::int64_t m = 0, k = 0, n = 0;
  Shape out;
  std::int64_t a_matrices = 0, b_matrices = 0;
  std::vector<std::pair<std::int64_t, std::int64_t>> pairs;  // per output matrix: (A, B) matrix
};

MatmulShape matmul_shape(const Node& node, const Shape& a_in, const Shape& b_in);

// A product over int64 or double with the result type's rounding: float results accumulate in
// double, integer results wrap to their type.
Tensor host_matmul(const Node& node, const Tensor& a, const Tensor& b);

struct GemmAttributes {
  float alpha = 1.0f, beta = 1.0f;
  bool trans_a = false, trans_b = false;
};

GemmAttributes gemm_attributes(const Node& node);

// Gemm's A as [M x K]: 2-D, transposed when transA.
Tensor gemm_a(const Node& node, const Tensor& a, bool trans_a);

Tensor host_gemm(const Node& node, const Tensor& a_in, const Tensor& b_in, const Tensor* c);

// --- Integer matmuls: zero points --------------------------------------------------------------

inline bool is_int8_type(ElementType t) {
  return t == ElementType::UINT8 || t == ElementType::INT8;
}
inline std::int64_t int8_offset(ElementType t) { return t == ElementType::UINT8 ? 128 : 0; }
inline bool fits_int8(std::int64_t v) { return v >= -128 && v <= 127; }

// A's zero point as a tensor that broadcasts against A with one value per row: a scalar, an
// M-vector (MatMulInteger's per-row form for 2-D A), or [..., M, 1].
Tensor row_zero_point(const Node& node, const Tensor* zp, const Tensor& a);

// B's zero point with one value per column of every B matrix: [b_matrices * N].
std::vector<std::int64_t> column_zero_points(const Node& node, const Tensor* zp,
                                             const Tensor& b);

Tensor host_matmul_integer(const Node& node, const Tensor& a, const Tensor& b, const Tensor* a_zp,
                           const Tensor* b_zp);

struct QLinearParams {
  std::vector<QuantizedMultiplier> mult;  // per output column
  std::int64_t y_zero = 0;
  ElementType y_type = ElementType::UINT8;
  std::int64_t lo = 0, hi = 255;
};

QLinearParams qlinear_params(const Node& node, const Tensor& a_scale, const Tensor& b_scale,
                             const Tensor& y_scale, const Tensor& y_zp, std::int64_t n);
std::int64_t qlinear_output(const QLinearParams& p, std::int64_t acc, std::int64_t col);
Tensor host_qlinear_matmul(const Node& node, const std::vector<const Tensor*>& in);

}  // namespace nmsa::graph_detail
