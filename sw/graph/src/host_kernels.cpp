// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
#include "host_kernels.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>

#include "runtime_values.hpp"

namespace nmsa::graph_detail {

[[noreturn]] void node_error(const Node& n, const std::string& what) {
  throw std::runtime_error(n.describe() + ": " + what);
}

std::string shape_str(const Shape& s) {
  std::string out = "[";
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (i != 0) out += 'x';
    out += std::to_string(s[i]);
  }
  return out + "]";
}

std::int64_t numel(const Shape& s) {
  std::int64_t n = 1;
  for (const std::int64_t d : s) n *= d;
  return n;
}

bool is_default_domain(const Node& n) { return n.domain.empty(); }

Shape broadcast_shapes(const Shape& a, const Shape& b, const Node& node) {
  const std::size_t r = std::max(a.size(), b.size());
  Shape out(r);
  for (std::size_t i = 0; i < r; ++i) {
    const std::int64_t da = i < r - a.size() ? 1 : a[i - (r - a.size())];
    const std::int64_t db = i < r - b.size() ? 1 : b[i - (r - b.size())];
    if (da != db && da != 1 && db != 1) {
      node_error(node, "shapes " + shape_str(a) + " and " + shape_str(b) + " do not broadcast");
    }
    out[i] = da == 1 ? db : da;
  }
  return out;
}

Shape broadcast_strides(const Shape& in, const Shape& out) {
  Shape strides(out.size(), 0);
  std::int64_t stride = 1;
  for (std::size_t i = in.size(); i-- > 0;) {
    const std::size_t o = i + (out.size() - in.size());
    strides[o] = in[i] == 1 ? 0 : stride;
    stride *= in[i];
  }
  return strides;
}

Tensor broadcast_to(const Tensor& t, const Shape& shape, const Node& node) {
  const Shape full = broadcast_shapes(t.shape, shape, node);
  if (full != shape) {
    node_error(node, "cannot broadcast " + t.describe() + " to " + shape_str(shape));
  }
  Tensor out = Tensor::zeros(t.type, shape);
  for_each_broadcast(shape, t.shape, shape, [&](std::int64_t o, std::int64_t i, std::int64_t) {
    if (t.is_float()) {
      out.floats[static_cast<std::size_t>(o)] = t.floats[static_cast<std::size_t>(i)];
    } else {
      out.ints[static_cast<std::size_t>(o)] = t.ints[static_cast<std::size_t>(i)];
    }
  });
  return out;
}

Tensor binary(const Node& node, const Tensor& a, const Tensor& b, BinaryOp op) {
  if (a.type != b.type) {
    node_error(node, "operand types differ: " + a.describe() + " and " + b.describe());
  }
  const Shape out_shape = broadcast_shapes(a.shape, b.shape, node);
  Tensor out = Tensor::zeros(a.type, out_shape);
  if (a.is_float()) {
    for_each_broadcast(out_shape, a.shape, b.shape,
                       [&](std::int64_t o, std::int64_t ia, std::int64_t ib) {
                         const float x = a.floats[static_cast<std::size_t>(ia)];
                         const float y = b.floats[static_cast<std::size_t>(ib)];
                         float r = 0;
                         switch (op) {
                           case BinaryOp::ADD:
                             r = x + y;
                             break;
                           case BinaryOp::SUB:
                             r = x - y;
                             break;
                           case BinaryOp::MUL:
                             r = x * y;
                             break;
                           case BinaryOp::DIV:
                             r = x / y;
                             break;
                         }
                         out.floats[static_cast<std::size_t>(o)] = r;
                       });
  } else {
    for_each_broadcast(
        out_shape, a.shape, b.shape, [&](std::int64_t o, std::int64_t ia, std::int64_t ib) {
          // Unsigned 64-bit arithmetic: wraps like the narrower types do, never undefined.
          const auto x = static_cast<std::uint64_t>(a.ints[static_cast<std::size_t>(ia)]);
          const auto y = static_cast<std::uint64_t>(b.ints[static_cast<std::size_t>(ib)]);
          std::int64_t r = 0;
          switch (op) {
            case BinaryOp::ADD:
              r = static_cast<std::int64_t>(x + y);
              break;
            case BinaryOp::SUB:
              r = static_cast<std::int64_t>(x - y);
              break;
            case BinaryOp::MUL:
              r = static_cast<std::int64_t>(x * y);
              break;
            case BinaryOp::DIV: {
              const auto sx = static_cast<std::int64_t>(x), sy = static_cast<std::int64_t>(y);
              if (sy == 0) node_error(node, "integer division by zero");
              r = sy == -1 ? static_cast<std::int64_t>(0 - x) : sx / sy;  // C++ truncation
              break;
            }
          }
          out.ints[static_cast<std::size_t>(o)] = wrap_to(a.type, r);
        });
  }
  return out;
}

Tensor relu(const Tensor& t) {
  Tensor out = t;
  for (float& v : out.floats) v = v > 0.0f ? v : (std::isnan(v) ? v : 0.0f);
  for (std::int64_t& v : out.ints) v = std::max<std::int64_t>(v, 0);
  return out;
}

namespace {

Tensor exp_kernel(const Node& node, const Tensor& t) {
  if (!t.is_float()) node_error(node, "Exp needs a float tensor, got " + t.describe());
  Tensor out = t;
  for (float& v : out.floats) v = std::exp(v);
  return out;
}

std::int64_t normalize_axis(const Node& node, std::int64_t axis, std::int64_t rank,
                            bool inclusive_end) {
  const std::int64_t hi = inclusive_end ? rank : rank - 1;
  if (axis < -rank || axis > hi) {
    node_error(
        node, "axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  }
  return axis < 0 ? axis + rank : axis;
}

Tensor softmax(const Node& node, const Tensor& t, std::int64_t opset) {
  if (!t.is_float()) node_error(node, "Softmax needs a float tensor, got " + t.describe());
  const auto rank = static_cast<std::int64_t>(t.rank());
  if (rank == 0) node_error(node, "Softmax of a scalar");
  // Opset 13 made Softmax act along one axis (default -1); before, it flattened the input to 2-D
  // at `axis` (default 1) and normalized each row.
  const bool legacy = opset != 0 && opset < 13;
  const std::int64_t axis =
      normalize_axis(node, node.attr_int("axis", legacy ? 1 : -1), rank, legacy);
  std::int64_t outer = 1, len = 1, inner = 1;
  for (std::int64_t d = 0; d < rank; ++d) {
    const std::int64_t dim = t.shape[static_cast<std::size_t>(d)];
    if (d < axis) {
      outer *= dim;
    } else if (d == axis || legacy) {
      len *= dim;
    } else {
      inner *= dim;
    }
  }
  Tensor out = t;
  for (std::int64_t o = 0; o < outer; ++o) {
    for (std::int64_t i = 0; i < inner; ++i) {
      auto at = [&](std::int64_t j) { return static_cast<std::size_t>((o * len + j) * inner + i); };
      double mx = -std::numeric_limits<double>::infinity();
      for (std::int64_t j = 0; j < len; ++j) mx = std::max(mx, double{t.floats[at(j)]});
      double sum = 0;
      for (std::int64_t j = 0; j < len; ++j) sum += std::exp(double{t.floats[at(j)]} - mx);
      for (std::int64_t j = 0; j < len; ++j) {
        out.floats[at(j)] = static_cast<float>(std::exp(double{t.floats[at(j)]} - mx) / sum);
      }
    }
  }
  return out;
}

enum class ReduceOp { MAX, SUM };

Tensor reduce(const Node& node, const Tensor& t, Shape axes, bool keepdims, bool noop_if_empty,
              ReduceOp op) {
  const auto rank = static_cast<std::int64_t>(t.rank());
  if (axes.empty()) {
    if (noop_if_empty) return t;
    for (std::int64_t d = 0; d < rank; ++d) axes.push_back(d);
  }
  std::vector<bool> reduced(static_cast<std::size_t>(rank), false);
  for (std::int64_t& a : axes) {
    a = normalize_axis(node, a, rank, false);
    reduced[static_cast<std::size_t>(a)] = true;
  }
  Shape kept_shape;  // with reduced dims as 1
  for (std::int64_t d = 0; d < rank; ++d) {
    kept_shape.push_back(
        reduced[static_cast<std::size_t>(d)] ? 1 : t.shape[static_cast<std::size_t>(d)]);
  }
  if (op == ReduceOp::MAX) {
    for (std::int64_t d = 0; d < rank; ++d) {
      if (reduced[static_cast<std::size_t>(d)] && t.shape[static_cast<std::size_t>(d)] == 0) {
        node_error(node, "ReduceMax over an empty axis");
      }
    }
  }
  const std::int64_t n_out = numel(kept_shape);
  std::vector<double> acc_f(static_cast<std::size_t>(n_out),
                            op == ReduceOp::MAX ? -std::numeric_limits<double>::infinity() : 0.0);
  std::vector<std::int64_t> acc_i(
      static_cast<std::size_t>(n_out),
      op == ReduceOp::MAX ? std::numeric_limits<std::int64_t>::min() : 0);
  // Walk the input; its image in the kept shape is the broadcast index of the output.
  for_each_broadcast(t.shape, t.shape, kept_shape,
                     [&](std::int64_t, std::int64_t in, std::int64_t o) {
                       const auto oi = static_cast<std::size_t>(o);
                       const auto ii = static_cast<std::size_t>(in);
                       if (t.is_float()) {
                         const double v = t.floats[ii];
                         acc_f[oi] = op == ReduceOp::MAX ? std::max(acc_f[oi], v) : acc_f[oi] + v;
                       } else {
                         const std::int64_t v = t.ints[ii];
                         acc_i[oi] = op == ReduceOp::MAX ? std::max(acc_i[oi], v) : acc_i[oi] + v;
                       }
                     });
  Shape out_shape;
  for (std::int64_t d = 0; d < rank; ++d) {
    if (!reduced[static_cast<std::size_t>(d)]) {
      out_shape.push_back(t.shape[static_cast<std::size_t>(d)]);
    } else if (keepdims) {
      out_shape.push_back(1);
    }
  }
  Tensor out = Tensor::zeros(t.type, out_shape);
  for (std::size_t i = 0; i < static_cast<std::size_t>(n_out); ++i) {
    if (t.is_float()) {
      out.floats[i] = static_cast<float>(acc_f[i]);
    } else {
      out.ints[i] = wrap_to(t.type, acc_i[i]);
    }
  }
  return out;
}

// --- Shape ops --------------------------------------------------------------------------------

Tensor flatten(const Node& node, const Tensor& t) {
  const auto rank = static_cast<std::int64_t>(t.rank());
  const std::int64_t axis = normalize_axis(node, node.attr_int("axis", 1), rank, true);
  std::int64_t outer = 1;
  for (std::int64_t d = 0; d < axis; ++d) outer *= t.shape[static_cast<std::size_t>(d)];
  std::int64_t inner = 1;
  for (std::int64_t d = axis; d < rank; ++d) inner *= t.shape[static_cast<std::size_t>(d)];
  Tensor out = t;
  out.shape = {outer, inner};
  return out;
}

Tensor reshape(const Node& node, const Tensor& t, const Tensor& shape_tensor) {
  if (shape_tensor.type != ElementType::INT64 || shape_tensor.rank() != 1) {
    node_error(node, "the shape input must be a 1-D int64 tensor, got " + shape_tensor.describe());
  }
  const bool allowzero = node.attr_int("allowzero", 0) != 0;
  Shape shape = shape_tensor.ints;
  int infer = -1;
  std::int64_t known = 1;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 0 && !allowzero) {
      if (i >= t.shape.size()) {
        node_error(node, "shape " + shape_str(shape_tensor.ints) + " copies dimension " +
                             std::to_string(i) + " of the " + t.describe() + " input");
      }
      shape[i] = t.shape[i];
    }
    if (shape[i] == -1) {
      if (infer >= 0) node_error(node, "shape " + shape_str(shape_tensor.ints) + " has two -1");
      infer = static_cast<int>(i);
    } else if (shape[i] < 0) {
      node_error(node, "shape " + shape_str(shape_tensor.ints) + " has a negative dimension");
    } else {
      known *= shape[i];
    }
  }
  const std::int64_t total = t.size();
  if (infer >= 0) {
    if (known == 0 || total % known != 0) {
      node_error(node, "cannot infer the -1 of shape " + shape_str(shape_tensor.ints) + " for " +
                           t.describe());
    }
    shape[static_cast<std::size_t>(infer)] = total / known;
  }
  if (numel(shape) != total) {
    node_error(node, "cannot reshape " + t.describe() + " to " + shape_str(shape));
  }
  Tensor out = t;
  out.shape = shape;
  return out;
}

// Transpose: `perm` (default: the axes reversed) must be a permutation of the axes.
Tensor transpose(const Node& node, const Tensor& t) {
  const std::size_t rank = t.shape.size();
  Shape perm = node.attr_ints("perm");
  if (perm.empty()) {
    for (std::size_t d = rank; d-- > 0;) perm.push_back(static_cast<std::int64_t>(d));
  }
  std::vector<bool> seen(rank, false);
  for (const std::int64_t p : perm) {
    if (perm.size() != rank || p < 0 || p >= static_cast<std::int64_t>(rank) ||
        seen[static_cast<std::size_t>(p)]) {
      node_error(node, "perm " + shape_str(perm) + " is not a permutation of the " +
                           std::to_string(rank) + " axes of " + t.describe());
    }
    seen[static_cast<std::size_t>(p)] = true;
  }
  Shape in_stride(rank, 1);
  for (std::size_t d = rank; d-- > 1;) in_stride[d - 1] = in_stride[d] * t.shape[d];
  Shape out_shape(rank);
  Shape stride(rank);  // input stride of each output axis
  for (std::size_t d = 0; d < rank; ++d) {
    out_shape[d] = t.shape[static_cast<std::size_t>(perm[d])];
    stride[d] = in_stride[static_cast<std::size_t>(perm[d])];
  }
  Tensor out = Tensor::zeros(t.type, out_shape);
  Shape idx(rank, 0);
  std::int64_t in = 0;
  for (std::int64_t o = 0; o < out.size(); ++o) {
    const auto uo = static_cast<std::size_t>(o), ui = static_cast<std::size_t>(in);
    if (t.is_float()) {
      out.floats[uo] = t.floats[ui];
    } else {
      out.ints[uo] = t.ints[ui];
    }
    for (std::size_t d = rank; d-- > 0;) {  // next output index, the last axis fastest
      in += stride[d];
      if (++idx[d] < out_shape[d]) break;
      in -= stride[d] * out_shape[d];
      idx[d] = 0;
    }
  }
  return out;
}

// Cast to the element types the runtime has. Float to integer truncates toward zero and wraps as
// a two's-complement cast does (ONNX leaves out-of-range values undefined); to bool: nonzero.
Tensor cast(const Node& node, const Tensor& t) {
  const std::int64_t to = node.attr_int("to", 0);
  static const std::map<std::int64_t, ElementType> types{
      {1, ElementType::FLOAT}, {2, ElementType::UINT8},  {3, ElementType::INT8},
      {4, ElementType::UINT16}, {5, ElementType::INT16}, {6, ElementType::INT32},
      {7, ElementType::INT64}, {9, ElementType::BOOL}};
  const auto it = types.find(to);
  if (it == types.end()) {
    node_error(node, "cast to ONNX element type " + std::to_string(to) +
                         " is not supported (float, uint8, int8, uint16, int16, int32, int64, "
                         "bool)");
  }
  const ElementType target = it->second;
  Tensor out = Tensor::zeros(target, t.shape);
  for (std::size_t i = 0; i < static_cast<std::size_t>(t.size()); ++i) {
    if (target == ElementType::FLOAT) {
      out.floats[i] = t.is_float() ? t.floats[i] : static_cast<float>(t.ints[i]);
      continue;
    }
    std::int64_t v = 0;
    if (t.is_float()) {
      const float f = t.floats[i];
      if (!std::isfinite(f)) {
        node_error(node, "cannot cast " + std::to_string(f) + " to " +
                             std::string(to_string(target)));
      }
      const double limit = 9.2e18;  // inside int64: the truncation below is defined
      v = target == ElementType::BOOL ? (f != 0.0f)
                                      : static_cast<std::int64_t>(std::clamp<double>(f, -limit, limit));
    } else {
      v = target == ElementType::BOOL ? (t.ints[i] != 0) : t.ints[i];
    }
    out.ints[i] = wrap_to(target, v);
  }
  return out;
}

// The axes of Unsqueeze and Squeeze: the int64 input 1 (opset 13 on) or the `axes` attribute.
Shape axes_of(const Node& node, const Values& v) {
  if (const Tensor* t = v.optional(node, 1)) {
    if (t->type != ElementType::INT64 || t->rank() != 1) {
      node_error(node, "axes must be a 1-D int64 tensor, got " + t->describe());
    }
    return t->ints;
  }
  return node.attr_ints("axes");
}

Tensor unsqueeze(const Node& node, const Tensor& t, const Shape& axes) {
  const auto rank = static_cast<std::int64_t>(t.rank() + axes.size());
  std::vector<bool> inserted(static_cast<std::size_t>(rank), false);
  for (const std::int64_t a : axes) {
    const std::int64_t axis = normalize_axis(node, a, rank, false);
    if (inserted[static_cast<std::size_t>(axis)]) {
      node_error(node, "axes " + shape_str(axes) + " name an axis twice");
    }
    inserted[static_cast<std::size_t>(axis)] = true;
  }
  Tensor out = t;
  out.shape.clear();
  std::size_t next = 0;
  for (std::int64_t d = 0; d < rank; ++d) {
    out.shape.push_back(inserted[static_cast<std::size_t>(d)] ? 1 : t.shape[next++]);
  }
  return out;
}

Tensor squeeze(const Node& node, const Tensor& t, const Shape& axes) {
  const auto rank = static_cast<std::int64_t>(t.rank());
  std::vector<bool> removed(static_cast<std::size_t>(rank), axes.empty());
  for (std::int64_t d = 0; d < rank && axes.empty(); ++d) {
    removed[static_cast<std::size_t>(d)] = t.shape[static_cast<std::size_t>(d)] == 1;
  }
  for (const std::int64_t a : axes) {
    const std::int64_t axis = normalize_axis(node, a, rank, false);
    if (t.shape[static_cast<std::size_t>(axis)] != 1) {
      node_error(node, "axis " + std::to_string(a) + " of " + t.describe() + " is not 1");
    }
    removed[static_cast<std::size_t>(axis)] = true;
  }
  Tensor out = t;
  out.shape.clear();
  for (std::int64_t d = 0; d < rank; ++d) {
    if (!removed[static_cast<std::size_t>(d)]) out.shape.push_back(t.shape[static_cast<std::size_t>(d)]);
  }
  return out;
}

}  // namespace

Tensor constant_value(const Node& node) {
  if (const Tensor* t = node.attr_tensor("value")) return *t;
  if (node.has_attribute("value_float")) {
    return Tensor::make_float({}, {node.attr_float("value_float", 0)});
  }
  if (node.has_attribute("value_int")) {
    return Tensor::make_int(ElementType::INT64, {}, {node.attr_int("value_int", 0)});
  }
  if (node.has_attribute("value_ints")) {
    const Shape v = node.attr_ints("value_ints");
    return Tensor::make_int(ElementType::INT64, {static_cast<std::int64_t>(v.size())}, v);
  }
  if (node.has_attribute("value_floats")) {
    const auto it = node.attributes.find("value_floats");
    if (it->second.kind != Attribute::Kind::FLOATS) {
      node_error(node, "attribute 'value_floats' is not a list of floats");
    }
    return Tensor::make_float({static_cast<std::int64_t>(it->second.floats.size())},
                              it->second.floats);
  }
  node_error(node, "no value attribute nmsa supports (value, value_float(s), value_int(s))");
}

Tensor run_host(const Node& n, const Values& v, std::int64_t opset) {
  const std::string& op = n.op_type;
  if (op == "Add") return binary(n, v.get(n, 0), v.get(n, 1), BinaryOp::ADD);
  if (op == "Sub") return binary(n, v.get(n, 0), v.get(n, 1), BinaryOp::SUB);
  if (op == "Mul") return binary(n, v.get(n, 0), v.get(n, 1), BinaryOp::MUL);
  if (op == "Div") return binary(n, v.get(n, 0), v.get(n, 1), BinaryOp::DIV);
  if (op == "Relu") return relu(v.get(n, 0));
  if (op == "Exp") return exp_kernel(n, v.get(n, 0));
  if (op == "Softmax") return softmax(n, v.get(n, 0), opset);
  if (op == "Identity") return v.get(n, 0);
  if (op == "Flatten") return flatten(n, v.get(n, 0));
  if (op == "Reshape") return reshape(n, v.get(n, 0), v.get(n, 1));
  if (op == "Transpose") return transpose(n, v.get(n, 0));
  if (op == "Conv") return conv_host(n, v.get(n, 0), v.get(n, 1), v.optional(n, 2));
  if (op == "MaxPool" || op == "AveragePool") return pool(n, v.get(n, 0), op == "MaxPool");
  if (op == "GlobalAveragePool") return global_average_pool(n, v.get(n, 0));
  if (op == "BatchNormalization") {
    return batch_normalization(n, v.get(n, 0), v.get(n, 1), v.get(n, 2), v.get(n, 3),
                               v.get(n, 4));
  }
  if (op == "LayerNormalization") return run_host_outputs(n, v, opset)[0];
  if (op == "Concat") {
    std::vector<const Tensor*> in;
    for (std::size_t i = 0; i < n.inputs.size(); ++i) in.push_back(&v.get(n, i));
    return concat(n, in);
  }
  if (op == "Cast") return cast(n, v.get(n, 0));
  if (op == "Unsqueeze") return unsqueeze(n, v.get(n, 0), axes_of(n, v));
  if (op == "Squeeze") return squeeze(n, v.get(n, 0), axes_of(n, v));
  if (op == "Constant") return constant_value(n);
  if (op == "ReduceMax" || op == "ReduceSum") {
    Shape axes = n.attr_ints("axes");
    if (const Tensor* t = v.optional(n, 1)) {
      if (t->type != ElementType::INT64 || t->rank() != 1) {
        node_error(n, "axes must be a 1-D int64 tensor, got " + t->describe());
      }
      axes = t->ints;
    }
    return reduce(n, v.get(n, 0), axes, n.attr_int("keepdims", 1) != 0,
                  n.attr_int("noop_with_empty_axes", 0) != 0,
                  op == "ReduceMax" ? ReduceOp::MAX : ReduceOp::SUM);
  }
  if (op == "QuantizeLinear") return quantize_linear(n, v.get(n, 0), v.get(n, 1), v.optional(n, 2));
  if (op == "DequantizeLinear") {
    return dequantize_linear(n, v.get(n, 0), v.get(n, 1), v.optional(n, 2));
  }
  if (op == "MatMul") return host_matmul(n, v.get(n, 0), v.get(n, 1));
  if (op == "Gemm") return host_gemm(n, v.get(n, 0), v.get(n, 1), v.optional(n, 2));
  if (op == "MatMulInteger") {
    return host_matmul_integer(n, v.get(n, 0), v.get(n, 1), v.optional(n, 2), v.optional(n, 3));
  }
  if (op == "QLinearMatMul") {
    std::vector<const Tensor*> in;
    for (std::size_t i = 0; i < 8; ++i) in.push_back(v.optional(n, i));
    return host_qlinear_matmul(n, in);
  }
  node_error(n, "no host kernel");  // the constructor admits only the operators above
}

std::vector<Tensor> run_host_outputs(const Node& n, const Values& v, std::int64_t opset) {
  if (n.op_type == "LayerNormalization") {
    return layer_normalization(n, v.get(n, 0), v.get(n, 1), v.optional(n, 2));
  }
  return {run_host(n, v, opset)};
}

}  // namespace nmsa::graph_detail
