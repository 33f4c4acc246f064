// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// QuantizeLinear and DequantizeLinear on the host (opset 13: a per-tensor scale, or a 1-D scale
// along `axis`, with a zero point of the same shape). The runtime fuses the Q/DQ pairs around a
// Gemm into the device layer (qdq_pattern.hpp); these kernels run the others, such as the
// quantization of a network's float input.
#include <cmath>
#include <string>

#include "host_kernels.hpp"

namespace nmsa::graph_detail {

namespace {

// The quantization axis of a node (negative counts from the end) for an input of `rank`.
std::int64_t quant_axis(const Node& node, int rank) {
  const std::int64_t axis = node.attr_int("axis", 1);
  const std::int64_t a = axis < 0 ? axis + rank : axis;
  if (rank > 0 && (a < 0 || a >= rank)) {
    node_error(node, "axis " + std::to_string(axis) + " is outside a rank-" +
                         std::to_string(rank) + " input");
  }
  return a;
}

// Element i's index into a scale (and zero point) of `per_axis` values along `axis` of `shape`:
// 0 for a per-tensor scale.
struct AxisIndex {
  std::int64_t inner = 1;  // elements per step along the axis
  std::int64_t count = 1;  // values of the scale
  std::int64_t of(std::int64_t i) const { return count == 1 ? 0 : (i / inner) % count; }
};

AxisIndex axis_index(const Node& node, const Tensor& x, const Tensor& scale) {
  AxisIndex ix;
  if (scale.rank() == 0 || scale.size() == 1) return ix;
  if (scale.rank() != 1) node_error(node, "the scale is " + scale.describe() + ", not 1-D");
  const std::int64_t axis = quant_axis(node, x.rank());
  if (x.rank() == 0 || x.shape[static_cast<std::size_t>(axis)] != scale.size()) {
    node_error(node, "a scale of " + std::to_string(scale.size()) + " values does not match " +
                         x.describe() + " along axis " + std::to_string(axis));
  }
  for (std::size_t d = static_cast<std::size_t>(axis) + 1; d < x.shape.size(); ++d) {
    ix.inner *= x.shape[d];
  }
  ix.count = scale.size();
  return ix;
}

void check_scale(const Node& node, const Tensor& scale) {
  if (!scale.is_float()) node_error(node, "the scale must be float, got " + scale.describe());
  for (const float s : scale.floats) {
    if (!(s > 0.0f) || !std::isfinite(s)) {
      node_error(node, "scale " + std::to_string(s) + " is not a finite number > 0");
    }
  }
}

// A zero point, when given, has one value per scale value.
void check_zero_point(const Node& node, const Tensor* zp, const Tensor& scale) {
  if (zp == nullptr) return;
  if (zp->size() != scale.size()) {
    node_error(node, "the zero point " + zp->describe() + " does not match the scale " +
                         scale.describe());
  }
}

}  // namespace

Tensor quantize_linear(const Node& node, const Tensor& x, const Tensor& scale, const Tensor* zp) {
  if (!x.is_float()) node_error(node, "x must be float, got " + x.describe());
  check_scale(node, scale);
  check_zero_point(node, zp, scale);
  // Without a zero point the output is uint8, as ONNX specifies.
  const ElementType type = zp == nullptr ? ElementType::UINT8 : zp->type;
  if (!is_int8_type(type)) {
    node_error(node, "the zero point is " + zp->describe() + ", not uint8 or int8");
  }
  const double lo = type == ElementType::UINT8 ? 0.0 : -128.0;
  const double hi = type == ElementType::UINT8 ? 255.0 : 127.0;
  const AxisIndex ix = axis_index(node, x, scale);
  Tensor y = Tensor::zeros(type, x.shape);
  for (std::size_t i = 0; i < x.floats.size(); ++i) {
    const float v = x.floats[i];
    if (!std::isfinite(v)) {
      node_error(node, "x[" + std::to_string(i) + "] is " + std::to_string(v) +
                           ", which no integer represents");
    }
    const auto j = static_cast<std::size_t>(ix.of(static_cast<std::int64_t>(i)));
    // v / scale in float, rounded half to even, as ONNX and quantize_to_int8 (quant.hpp) do.
    const float q = v / scale.floats[j];
    double r = std::nearbyint(static_cast<double>(q)) + (zp == nullptr ? 0 : zp->ints[j]);
    r = r < lo ? lo : (r > hi ? hi : r);
    y.ints[i] = static_cast<std::int64_t>(r);
  }
  return y;
}

Tensor dequantize_linear(const Node& node, const Tensor& x, const Tensor& scale, const Tensor* zp) {
  if (!(is_int8_type(x.type) || x.type == ElementType::INT32)) {
    node_error(node, "x must be uint8, int8 or int32, got " + x.describe());
  }
  check_scale(node, scale);
  check_zero_point(node, zp, scale);
  if (zp != nullptr && zp->type != x.type) {
    node_error(node, "the zero point is " + zp->describe() + ", x is " + x.describe());
  }
  const AxisIndex ix = axis_index(node, x, scale);
  Tensor y = Tensor::zeros(ElementType::FLOAT, x.shape);
  for (std::size_t i = 0; i < x.ints.size(); ++i) {
    const auto j = static_cast<std::size_t>(ix.of(static_cast<std::int64_t>(i)));
    const std::int64_t z = zp == nullptr ? 0 : zp->ints[j];
    y.floats[i] = static_cast<float>(x.ints[i] - z) * scale.floats[j];
  }
  return y;
}

}  // namespace nmsa::graph_detail
