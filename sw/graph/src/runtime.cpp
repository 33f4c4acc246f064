// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
#include "nmsa/runtime.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <unordered_map>
#include <utility>

#include "nmsa/epilogue.hpp"
#include "nmsa/gemm_program.hpp"
#include "nmsa/quant.hpp"
#include "nmsa/sparse_format.hpp"
#include "nmsa/types.hpp"

namespace nmsa {

namespace {

__extension__ typedef __int128 int128;

using Shape = std::vector<std::int64_t>;

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

// --- Broadcasting (numpy rules) ---------------------------------------------------------------

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

// Strides of `in` seen through the broadcast to `out` (0 along broadcast dimensions).
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

// --- Elementwise kernels ----------------------------------------------------------------------

enum class BinaryOp { ADD, SUB, MUL, DIV };

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

// --- MatMul geometry --------------------------------------------------------------------------

// numpy matmul of A [..., M, K] and B [..., K, N] (1-D operands promoted and their dimension
// dropped from the result), as a list of matrix products.
struct MatmulShape {
  std::int64_t m = 0, k = 0, n = 0;
  Shape out;
  std::int64_t a_matrices = 0, b_matrices = 0;
  std::vector<std::pair<std::int64_t, std::int64_t>> pairs;  // per output matrix: (A, B) matrix
};

MatmulShape matmul_shape(const Node& node, const Shape& a_in, const Shape& b_in) {
  if (a_in.empty() || b_in.empty()) node_error(node, "MatMul of a scalar");
  Shape a = a_in, b = b_in;
  const bool a_vec = a.size() == 1, b_vec = b.size() == 1;
  if (a_vec) a.insert(a.begin(), 1);
  if (b_vec) b.push_back(1);
  MatmulShape g;
  g.m = a[a.size() - 2];
  g.k = a.back();
  g.n = b.back();
  if (b[b.size() - 2] != g.k) {
    node_error(node, "inner dimensions differ: A " + shape_str(a_in) + ", B " + shape_str(b_in));
  }
  const Shape a_batch(a.begin(), a.end() - 2), b_batch(b.begin(), b.end() - 2);
  const Shape batch = broadcast_shapes(a_batch, b_batch, node);
  g.a_matrices = numel(a_batch);
  g.b_matrices = numel(b_batch);
  for_each_broadcast(batch, a_batch, b_batch, [&](std::int64_t, std::int64_t ia, std::int64_t ib) {
    g.pairs.emplace_back(ia, ib);
  });
  g.out = batch;
  if (!a_vec) g.out.push_back(g.m);
  if (!b_vec) g.out.push_back(g.n);
  return g;
}

// A product over int64 or double with the result type's rounding: float results accumulate in
// double, integer results wrap to their type.
Tensor host_matmul(const Node& node, const Tensor& a, const Tensor& b) {
  if (a.type != b.type) {
    node_error(node, "operand types differ: " + a.describe() + " and " + b.describe());
  }
  const MatmulShape g = matmul_shape(node, a.shape, b.shape);
  Tensor out = Tensor::zeros(a.type, g.out);
  const std::int64_t mk = g.m * g.k, kn = g.k * g.n, mn = g.m * g.n;
  for (std::size_t t = 0; t < g.pairs.size(); ++t) {
    const std::int64_t ao = g.pairs[t].first * mk, bo = g.pairs[t].second * kn;
    const auto oo = static_cast<std::int64_t>(t) * mn;
    for (std::int64_t i = 0; i < g.m; ++i) {
      for (std::int64_t j = 0; j < g.n; ++j) {
        if (a.is_float()) {
          double s = 0;
          for (std::int64_t k = 0; k < g.k; ++k) {
            s += double{a.floats[static_cast<std::size_t>(ao + i * g.k + k)]} *
                 double{b.floats[static_cast<std::size_t>(bo + k * g.n + j)]};
          }
          out.floats[static_cast<std::size_t>(oo + i * g.n + j)] = static_cast<float>(s);
        } else {
          std::uint64_t s = 0;
          for (std::int64_t k = 0; k < g.k; ++k) {
            s += static_cast<std::uint64_t>(a.ints[static_cast<std::size_t>(ao + i * g.k + k)]) *
                 static_cast<std::uint64_t>(b.ints[static_cast<std::size_t>(bo + k * g.n + j)]);
          }
          out.ints[static_cast<std::size_t>(oo + i * g.n + j)] =
              wrap_to(a.type, static_cast<std::int64_t>(s));
        }
      }
    }
  }
  return out;
}

Tensor transpose_2d(const Tensor& t) {
  Tensor out = t;
  const std::int64_t r = t.shape[0], c = t.shape[1];
  out.shape = {c, r};
  for (std::int64_t i = 0; i < r; ++i) {
    for (std::int64_t j = 0; j < c; ++j) {
      const auto src = static_cast<std::size_t>(i * c + j),
                 dst = static_cast<std::size_t>(j * r + i);
      if (t.is_float()) {
        out.floats[dst] = t.floats[src];
      } else {
        out.ints[dst] = t.ints[src];
      }
    }
  }
  return out;
}

struct GemmAttributes {
  float alpha = 1.0f, beta = 1.0f;
  bool trans_a = false, trans_b = false;
};

GemmAttributes gemm_attributes(const Node& node) {
  GemmAttributes a;
  a.alpha = node.attr_float("alpha", 1.0f);
  a.beta = node.attr_float("beta", 1.0f);
  a.trans_a = node.attr_int("transA", 0) != 0;
  a.trans_b = node.attr_int("transB", 0) != 0;
  return a;
}

// Gemm's A as [M x K]: 2-D, transposed when transA.
Tensor gemm_a(const Node& node, const Tensor& a, bool trans_a) {
  if (a.rank() != 2) node_error(node, "A must be 2-D, got " + a.describe());
  return trans_a ? transpose_2d(a) : a;
}

Tensor host_gemm(const Node& node, const Tensor& a_in, const Tensor& b_in, const Tensor* c) {
  if (!a_in.is_float() || !b_in.is_float()) {
    node_error(node, "the runtime computes Gemm in float only, got " + a_in.describe() + " and " +
                         b_in.describe());
  }
  const GemmAttributes at = gemm_attributes(node);
  const Tensor a = gemm_a(node, a_in, at.trans_a);
  if (b_in.rank() != 2) node_error(node, "B must be 2-D, got " + b_in.describe());
  const Tensor b = at.trans_b ? transpose_2d(b_in) : b_in;
  Tensor y = host_matmul(node, a, b);
  if (c != nullptr && !c->is_float()) node_error(node, "C must be float, got " + c->describe());
  const Tensor cb = c ? broadcast_to(*c, y.shape, node) : Tensor();
  for (std::size_t i = 0; i < y.floats.size(); ++i) {
    double v = double{at.alpha} * y.floats[i];
    if (c) v += double{at.beta} * cb.floats[i];
    y.floats[i] = static_cast<float>(v);
  }
  return y;
}

// --- Integer matmuls: zero points --------------------------------------------------------------

bool is_int8_type(ElementType t) { return t == ElementType::UINT8 || t == ElementType::INT8; }
std::int64_t int8_offset(ElementType t) { return t == ElementType::UINT8 ? 128 : 0; }
bool fits_int8(std::int64_t v) { return v >= -128 && v <= 127; }

// A's zero point as a tensor that broadcasts against A with one value per row: a scalar, an
// M-vector (MatMulInteger's per-row form for 2-D A), or [..., M, 1].
Tensor row_zero_point(const Node& node, const Tensor* zp, const Tensor& a) {
  if (zp == nullptr) return Tensor::zeros(a.type, {});
  if (zp->type != a.type) {
    node_error(node, "a_zero_point " + zp->describe() + " does not have A's type " +
                         std::string(to_string(a.type)));
  }
  Tensor z = *zp;
  if (z.size() == 1) {
    z.shape = {};
  } else if (z.rank() == 1 && a.rank() >= 2 && z.shape[0] == a.shape[a.shape.size() - 2]) {
    z.shape = {z.shape[0], 1};
  } else if (!(z.rank() == a.rank() && z.shape.back() == 1)) {
    node_error(node, "a_zero_point " + z.describe() + " is neither per tensor nor per row of A " +
                         a.describe());
  }
  Shape rows = a.shape;
  rows.back() = 1;
  return broadcast_to(z, rows, node);  // one value per row of A, [..., M, 1]
}

// B's zero point with one value per column of every B matrix: [b_matrices * N].
std::vector<std::int64_t> column_zero_points(const Node& node, const Tensor* zp, const Tensor& b) {
  Shape cols = b.shape;
  if (cols.size() == 1) {
    cols = {1};  // B [K] is one column
  } else {
    cols[cols.size() - 2] = 1;
  }
  if (zp == nullptr) return std::vector<std::int64_t>(static_cast<std::size_t>(numel(cols)), 0);
  if (zp->type != b.type) {
    node_error(node, "b_zero_point " + zp->describe() + " does not have B's type " +
                         std::string(to_string(b.type)));
  }
  Tensor z = *zp;
  if (z.size() == 1) z.shape = {};
  return broadcast_to(z, cols, node).ints;
}

Tensor host_matmul_integer(const Node& node, const Tensor& a, const Tensor& b, const Tensor* a_zp,
                           const Tensor* b_zp) {
  if (!is_int8_type(a.type) || !is_int8_type(b.type)) {
    node_error(node, "A and B must be uint8 or int8, got " + a.describe() + " and " + b.describe());
  }
  const Tensor za = row_zero_point(node, a_zp, a);
  Tensor ad = a;  // A - za and B - zb exactly, in int64
  for (std::size_t i = 0; i < ad.ints.size(); ++i) {
    ad.ints[i] = a.ints[i] - za.ints[i / static_cast<std::size_t>(a.shape.back())];
  }
  ad.type = ElementType::INT64;
  const std::vector<std::int64_t> zb = column_zero_points(node, b_zp, b);
  Tensor bd = b;
  bd.type = ElementType::INT64;
  const std::int64_t n = b.rank() == 1 ? 1 : b.shape.back();
  const std::int64_t k = b.rank() == 1 ? b.shape[0] : b.shape[b.shape.size() - 2];
  for (std::size_t i = 0; i < bd.ints.size(); ++i) {
    const auto idx = static_cast<std::int64_t>(i);
    const std::int64_t matrix = idx / (k * n), col = idx % n;
    bd.ints[i] -= zb[static_cast<std::size_t>(matrix * n + col)];
  }
  Tensor y = host_matmul(node, ad, bd);
  y.type = ElementType::INT32;
  for (std::int64_t& v : y.ints) v = wrap_to(ElementType::INT32, v);
  return y;
}

// (v * multiplier + 2^(shift-1)) >> shift: the device epilogue's rounding (nmsa::requantize)
// without its INT8 saturation, for the wider range of a host requantization.
std::int64_t rounding_shift(std::int64_t v, std::int32_t multiplier, unsigned shift) {
  const int128 p = static_cast<int128>(v) * multiplier;
  const int128 q = (shift == 0 ? p : p + (static_cast<int128>(1) << (shift - 1))) >> shift;
  const int128 lim = std::numeric_limits<std::int64_t>::max();
  return static_cast<std::int64_t>(std::clamp<int128>(q, -lim, lim));
}

float positive_scale(const Node& node, const Tensor& t, const char* what, std::size_t i) {
  const float s = t.floats[i];
  if (!(s > 0.0f) || !std::isfinite(s)) {
    node_error(node, std::string(what) + " " + std::to_string(s) + " is not a positive number");
  }
  return s;
}

struct QLinearParams {
  std::vector<QuantizedMultiplier> mult;  // per output column
  std::int64_t y_zero = 0;
  ElementType y_type = ElementType::UINT8;
  std::int64_t lo = 0, hi = 255;
};

QLinearParams qlinear_params(const Node& node, const Tensor& a_scale, const Tensor& b_scale,
                             const Tensor& y_scale, const Tensor& y_zp, std::int64_t n) {
  if (!a_scale.is_float() || a_scale.size() != 1) {
    node_error(node, "a_scale must be one float, got " + a_scale.describe());
  }
  if (!y_scale.is_float() || y_scale.size() != 1) {
    node_error(node, "y_scale must be one float, got " + y_scale.describe());
  }
  if (!b_scale.is_float() || (b_scale.size() != 1 && b_scale.size() != n)) {
    node_error(node, "b_scale must be one float or one per column (" + std::to_string(n) +
                         "), got " + b_scale.describe());
  }
  if (!is_int8_type(y_zp.type) || y_zp.size() != 1) {
    node_error(node, "y_zero_point must be one uint8 or int8, got " + y_zp.describe());
  }
  QLinearParams p;
  p.y_type = y_zp.type;
  p.y_zero = y_zp.ints[0];
  p.lo = p.y_type == ElementType::UINT8 ? 0 : -128;
  p.hi = p.y_type == ElementType::UINT8 ? 255 : 127;
  const double sa = positive_scale(node, a_scale, "a_scale", 0);
  const double sy = positive_scale(node, y_scale, "y_scale", 0);
  for (std::int64_t j = 0; j < n; ++j) {
    const double sb = positive_scale(node, b_scale, "b_scale",
                                     b_scale.size() == 1 ? 0 : static_cast<std::size_t>(j));
    try {
      p.mult.push_back(quantize_multiplier(sa * sb / sy));
    } catch (const std::invalid_argument& e) {
      node_error(node,
                 std::string("requantization scale a_scale * b_scale / y_scale: ") + e.what());
    }
  }
  return p;
}

std::int64_t qlinear_output(const QLinearParams& p, std::int64_t acc, std::int64_t col) {
  const QuantizedMultiplier& m = p.mult[static_cast<std::size_t>(col)];
  const std::int64_t q = rounding_shift(acc, m.multiplier, m.shift);
  return std::clamp<std::int64_t>(q + p.y_zero, p.lo, p.hi);
}

Tensor host_qlinear_matmul(const Node& node, const std::vector<const Tensor*>& in) {
  for (std::size_t i = 0; i < 8; ++i) {
    if (in[i] == nullptr) node_error(node, "QLinearMatMul needs all eight inputs");
  }
  const Tensor acc = host_matmul_integer(node, *in[0], *in[3], in[2], in[5]);
  const std::int64_t n = in[3]->rank() == 1 ? 1 : in[3]->shape.back();
  const QLinearParams p = qlinear_params(node, *in[1], *in[4], *in[6], *in[7], n);
  Tensor y = acc;
  y.type = p.y_type;
  // acc wrapped to int32 above; for K <= 131072 it is exact (see runtime.hpp).
  for (std::size_t i = 0; i < y.ints.size(); ++i) {
    const std::int64_t col = in[3]->rank() == 1 ? 0 : static_cast<std::int64_t>(i) % n;
    y.ints[i] = qlinear_output(p, acc.ints[i], col);
  }
  return y;
}

}  // namespace

// --- The plan ---------------------------------------------------------------------------------

std::string_view to_string(Placement p) {
  switch (p) {
    case Placement::DEVICE_SPARSE:
      return "DEVICE_SPARSE";
    case Placement::DEVICE_DENSE:
      return "DEVICE_DENSE";
    case Placement::HOST:
      return "HOST";
  }
  return "?";
}

std::string_view to_string(Fallback f) {
  switch (f) {
    case Fallback::NONE:
      return "NONE";
    case Fallback::DENSE_WEIGHT:
      return "DENSE_WEIGHT";
    case Fallback::HOST_UNSUPPORTED_OP:
      return "HOST_UNSUPPORTED_OP";
    case Fallback::HOST_UNSUPPORTED_CASE:
      return "HOST_UNSUPPORTED_CASE";
    case Fallback::HOST_UNFUSED:
      return "HOST_UNFUSED";
  }
  return "?";
}

namespace {

enum class GemmKind { FLOAT_GEMM, FLOAT_MATMUL, MATMUL_INTEGER, QLINEAR_MATMUL };

struct FusedStep {
  std::size_t node = 0;
  bool relu = false;  // else an Add of `bias`
  std::string bias;   // the constant operand of the Add
};

// A GEMM node placed on the device, with its weights in device form.
struct DeviceGemm {
  GemmKind kind = GemmKind::FLOAT_GEMM;
  GemmMode mode = GemmMode::DENSE;
  Shape b_shape;  // the constant B as the model holds it
  std::int64_t k = 0, n = 0;
  std::vector<MatrixI8> weights;  // per B matrix: [N x K] INT8, as the device receives it
  // Float: per-channel weight scales (quant.hpp), per matrix.
  std::vector<std::vector<float>> w_scale;
  GemmAttributes gemm;
  // Integer: per matrix and column, cb = oB - zb (0 when B' = B - zb) and colsum(B').
  std::vector<std::vector<std::int64_t>> cb, colsum;
  bool cb_zero = true;
  bool epilogue_on_device = false;  // QLinearMatMul requantized by the STORE epilogue
  std::vector<FusedStep> fused;
  std::string output;  // the value this layer writes (the last fused node's output)
};

enum class NodeRole { DEVICE_GEMM, FUSED, SHAPE, HOST };

const std::set<std::string>& shape_ops() {
  static const std::set<std::string> ops{"Flatten", "Reshape", "Identity", "Constant"};
  return ops;
}

// Operators the host runtime implements that the device has no layer for.
const std::set<std::string>& host_only_ops() {
  static const std::set<std::string> ops{"Softmax", "Exp",       "Sub",      "Mul",
                                         "Div",     "ReduceMax", "ReduceSum"};
  return ops;
}

bool is_gemm_op(const std::string& op) {
  return op == "Gemm" || op == "MatMul" || op == "MatMulInteger" || op == "QLinearMatMul";
}

}  // namespace

struct Runtime::Plan {
  std::vector<NodeRole> role;
  std::map<std::size_t, DeviceGemm> gemms;
};

namespace {

// The first weight matrix (of several) that is not N:M, as a reason; empty when all are.
std::string nm_violation(const std::vector<MatrixI8>& weights, NmPattern p) {
  for (std::size_t j = 0; j < weights.size(); ++j) {
    const MatrixI8& w = weights[j];
    if (const auto bad = find_nm_violation(pad_to_groups(w, p), p)) {
      return (weights.size() > 1 ? "weight matrix " + std::to_string(j) + ": " : std::string()) +
             "output channel " + bad->describe(p).substr(4);
    }
  }
  return {};
}

// Chooses the mode of a device GEMM and the placement reason.
void choose_mode(DeviceGemm& g, LayerReport& rep, const DeviceCaps& caps, const RuntimeOptions& o,
                 const std::string& what) {
  const NmPattern p = caps.pattern;
  std::string why_dense;
  if (!caps.sparse_supported) {
    why_dense = "the device has no sparse mode";
  } else if (!o.allow_sparse) {
    why_dense = "sparse mode disabled (RuntimeOptions::allow_sparse)";
  } else {
    const std::string bad = nm_violation(g.weights, p);
    if (!bad.empty()) why_dense = what + " is not " + p.name() + " sparse: " + bad;
  }
  if (why_dense.empty()) {
    g.mode = GemmMode::SPARSE;
    rep.placement = Placement::DEVICE_SPARSE;
    rep.fallback = Fallback::NONE;
    rep.reason = what + " is " + p.name() + " sparse";
  } else {
    g.mode = GemmMode::DENSE;
    rep.placement = Placement::DEVICE_DENSE;
    rep.fallback = Fallback::DENSE_WEIGHT;
    rep.reason = "dense fallback: " + why_dense;
  }
}

// Float weights: B constant [..., K, N] (or [K], or [N, K] with transB) as per-channel INT8.
// Returns an empty string and fills g, or the reason the device cannot take B.
std::string prepare_float_weights(DeviceGemm& g, const Tensor& b, bool b_is_nk) {
  if (!b.is_float()) return "B is " + b.describe() + ", not float";
  g.b_shape = b.shape;
  std::int64_t matrices = 1, k = 0, n = 0;
  if (b.rank() == 1) {
    k = b.shape[0];
    n = 1;
  } else if (b_is_nk) {
    n = b.shape[0];
    k = b.shape[1];
  } else {
    k = b.shape[b.shape.size() - 2];
    n = b.shape.back();
    for (std::size_t d = 0; d + 2 < b.shape.size(); ++d) matrices *= b.shape[d];
  }
  g.k = k;
  g.n = n;
  for (std::int64_t j = 0; j < matrices; ++j) {
    MatrixF w(n, k);  // [N x K]: W[row][kk] = B[kk][row] (B[row][kk] when B is stored [N, K])
    for (std::int64_t row = 0; row < n; ++row) {
      for (std::int64_t kk = 0; kk < k; ++kk) {
        const std::int64_t i = b_is_nk ? row * k + kk : j * k * n + kk * n + row;
        w(row, kk) = b.floats[static_cast<std::size_t>(i)];
      }
    }
    try {
      QuantizedWeights q = quantize_weights_per_channel(w);
      g.weights.push_back(std::move(q.values));
      g.w_scale.push_back(std::move(q.scales));
    } catch (const std::invalid_argument& e) {
      return std::string("B cannot be quantized: ") + e.what();
    }
  }
  return {};
}

// Integer weights: B' per matrix with cb and colsum (see runtime.hpp).
std::string prepare_integer_weights(DeviceGemm& g, const Node& node, const Tensor& b,
                                    const Tensor* b_zp) {
  if (!is_int8_type(b.type)) return "B is " + b.describe() + ", not uint8 or int8";
  std::vector<std::int64_t> zb;
  try {
    zb = column_zero_points(node, b_zp, b);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  g.b_shape = b.shape;
  const std::int64_t k = b.rank() == 1 ? b.shape[0] : b.shape[b.shape.size() - 2];
  const std::int64_t n = b.rank() == 1 ? 1 : b.shape.back();
  g.k = k;
  g.n = n;
  std::int64_t mats = 1;
  for (std::size_t d = 0; d + 2 < b.shape.size(); ++d) mats *= b.shape[d];
  auto b_at = [&](std::int64_t j, std::int64_t kk, std::int64_t col) {
    return b.ints[static_cast<std::size_t>(j * k * n + kk * n + col)];
  };
  bool fits = true;
  for (std::int64_t j = 0; j < mats && fits; ++j) {
    for (std::int64_t kk = 0; kk < k && fits; ++kk) {
      for (std::int64_t col = 0; col < n && fits; ++col) {
        fits = fits_int8(b_at(j, kk, col) - zb[static_cast<std::size_t>(j * n + col)]);
      }
    }
  }
  g.cb_zero = fits;
  const std::int64_t ob = int8_offset(b.type);
  for (std::int64_t j = 0; j < mats; ++j) {
    MatrixI8 w(n, k);
    std::vector<std::int64_t> cb(static_cast<std::size_t>(n)), colsum(static_cast<std::size_t>(n));
    for (std::int64_t col = 0; col < n; ++col) {
      const std::int64_t z = zb[static_cast<std::size_t>(j * n + col)];
      const std::int64_t sub = fits ? z : ob;
      cb[static_cast<std::size_t>(col)] = fits ? 0 : ob - z;
      std::int64_t s = 0;
      for (std::int64_t kk = 0; kk < k; ++kk) {
        const std::int64_t v = b_at(j, kk, col) - sub;
        w(col, kk) = static_cast<std::int8_t>(v);
        s += v;
      }
      colsum[static_cast<std::size_t>(col)] = s;
    }
    g.weights.push_back(std::move(w));
    g.cb.push_back(std::move(cb));
    g.colsum.push_back(std::move(colsum));
  }
  return {};
}

}  // namespace

Runtime::Runtime(Graph graph, Device& device, RuntimeOptions options)
    : graph_(std::move(graph)),
      device_(&device),
      options_(options),
      plan_(std::make_shared<Plan>()) {
  const std::string model = graph_.source.empty() ? "model" : graph_.source;
  auto fail = [&model](const std::string& what) { throw std::runtime_error(model + ": " + what); };
  try {
    caps_ = device.caps();
  } catch (const std::invalid_argument& e) {
    fail(device.name() + ": " + e.what());
  }
  const std::size_t count = graph_.nodes.size();

  // Producers, and the topological order (stable: graph order whenever it is already valid).
  std::map<std::string, std::size_t> producer;
  std::set<std::string> available;
  for (const auto& [name, t] : graph_.initializers) available.insert(name);
  for (const ValueInfo& v : graph_.inputs) available.insert(v.name);
  for (std::size_t i = 0; i < count; ++i) {
    for (const std::string& out : graph_.nodes[i].outputs) {
      if (out.empty()) continue;
      if (available.count(out) != 0 || !producer.emplace(out, i).second) {
        fail(graph_.nodes[i].describe() + " writes '" + out +
             "', which another node, an initializer or an input already provides");
      }
    }
  }
  std::vector<std::set<std::size_t>> deps(count);
  std::vector<std::vector<std::size_t>> users(count);
  for (std::size_t i = 0; i < count; ++i) {
    for (const std::string& in : graph_.nodes[i].inputs) {
      if (in.empty() || available.count(in) != 0) continue;
      const auto it = producer.find(in);
      if (it == producer.end()) {
        fail(graph_.nodes[i].describe() + " reads '" + in +
             "', which no node, initializer or graph input provides");
      }
      if (deps[i].insert(it->second).second) users[it->second].push_back(i);
    }
  }
  for (const ValueInfo& o : graph_.outputs) {
    if (available.count(o.name) == 0 && producer.count(o.name) == 0) {
      fail("graph output '" + o.name + "' is not computed by any node");
    }
  }
  std::vector<std::size_t> pending(count);
  std::set<std::size_t> ready;
  for (std::size_t i = 0; i < count; ++i) {
    pending[i] = deps[i].size();
    if (pending[i] == 0) ready.insert(i);
  }
  while (!ready.empty()) {
    const std::size_t i = *ready.begin();
    ready.erase(ready.begin());
    order_.push_back(i);
    for (const std::size_t u : users[i]) {
      if (--pending[u] == 0) ready.insert(u);
    }
  }
  if (order_.size() != count) {
    for (std::size_t i = 0; i < count; ++i) {
      if (pending[i] != 0) fail("the graph has a cycle through " + graph_.nodes[i].describe());
    }
  }

  // Constants are folded now so that a Constant node's output counts as a constant weight.
  for (const std::size_t i : order_) {
    const Node& n = graph_.nodes[i];
    if (n.op_type == "Constant" && is_default_domain(n) && !n.outputs.empty() &&
        !n.outputs[0].empty()) {
      try {
        graph_.initializers[n.outputs[0]] = constant_value(n);
      } catch (const std::runtime_error& e) {
        fail(e.what());
      }
    }
  }

  // Consumers of every value, and the graph outputs (which cannot be fused away).
  std::map<std::string, std::vector<std::size_t>> consumers;
  for (std::size_t i = 0; i < count; ++i) {
    for (const std::string& in : graph_.nodes[i].inputs) {
      if (!in.empty()) consumers[in].push_back(i);
    }
  }
  std::set<std::string> graph_outputs;
  for (const ValueInfo& o : graph_.outputs) graph_outputs.insert(o.name);

  layers_.resize(count);
  plan_->role.assign(count, NodeRole::HOST);
  auto constant = [this](const std::string& name) -> const Tensor* {
    const auto it = graph_.initializers.find(name);
    return name.empty() || it == graph_.initializers.end() ? nullptr : &it->second;
  };

  for (const std::size_t i : order_) {
    const Node& n = graph_.nodes[i];
    LayerReport& rep = layers_[i];
    rep.node = i;
    rep.name = n.name;
    rep.op_type = n.op_type;
    if (!rep.fused_into.empty()) continue;  // fused into an earlier GEMM
    const std::string& op = n.op_type;
    if (!is_default_domain(n)) {
      fail(n.describe() + " (domain '" + n.domain +
           "'): operator not supported: the device has no such layer and the host runtime no "
           "kernel for it");
    }
    if (shape_ops().count(op) != 0) {
      plan_->role[i] = NodeRole::SHAPE;
      rep.placement = Placement::HOST;
      rep.reason = op == "Constant" ? "constant, folded when the model is loaded"
                                    : "shape op: reinterprets the row-major buffer, no data moves";
      continue;
    }
    if (host_only_ops().count(op) != 0) {
      rep.placement = Placement::HOST;
      rep.fallback = Fallback::HOST_UNSUPPORTED_OP;
      rep.reason = "the device has no " + op + " layer";
      continue;
    }
    if (op == "Add" || op == "Relu") {
      rep.placement = Placement::HOST;
      rep.fallback = Fallback::HOST_UNFUSED;
      rep.reason =
          op == "Add" ? "not a constant bias on a float device GEMM's only output (the device adds "
                        "biases only in a GEMM layer)"
                      : "no float device GEMM (+ bias) before it to fuse into (the device applies "
                        "ReLU only in a GEMM layer)";
      continue;
    }
    if (!is_gemm_op(op)) {
      fail(n.describe() +
           ": operator not supported: the device has no such layer and the host runtime no kernel "
           "for it");
    }

    // A GEMM: device if its weight is a constant the device can take.
    DeviceGemm g;
    std::string why_not;
    std::string what = "weight";
    if (op == "Gemm" || op == "MatMul") {
      g.kind = op == "Gemm" ? GemmKind::FLOAT_GEMM : GemmKind::FLOAT_MATMUL;
      const Tensor* b = constant(n.input(1));
      if (op == "Gemm") g.gemm = gemm_attributes(n);
      if (b == nullptr) {
        why_not = "B ('" + n.input(1) + "') is not a constant weight";
      } else if (op == "Gemm" && b->rank() != 2) {
        why_not = "B is " + b->describe() + ", Gemm needs 2-D";
      } else if (op == "MatMul" && b->rank() == 0) {
        why_not = "B is a scalar";
      } else {
        why_not = prepare_float_weights(g, *b, op == "Gemm" && g.gemm.trans_b);
      }
      what = "the INT8 weight (per-channel quantized)";
    } else {
      g.kind = op == "MatMulInteger" ? GemmKind::MATMUL_INTEGER : GemmKind::QLINEAR_MATMUL;
      const std::size_t b_in = op == "MatMulInteger" ? 1 : 3;
      const std::size_t bz_in = op == "MatMulInteger" ? 3 : 5;
      const Tensor* b = constant(n.input(b_in));
      const Tensor* bz = constant(n.input(bz_in));
      if (b == nullptr) {
        why_not = "B ('" + n.input(b_in) + "') is not a constant weight";
      } else if (!n.input(bz_in).empty() && bz == nullptr) {
        why_not = "b_zero_point ('" + n.input(bz_in) + "') is not a constant";
      } else if (b->rank() == 0) {
        why_not = "B is a scalar";
      } else {
        why_not = prepare_integer_weights(g, n, *b, bz);
      }
      what = g.cb_zero ? "B - b_zero_point"
                       : "B - " + std::to_string(int8_offset(b ? b->type : ElementType::INT8));
    }
    if (!why_not.empty()) {
      rep.placement = Placement::HOST;
      rep.fallback = Fallback::HOST_UNSUPPORTED_CASE;
      rep.reason = why_not;
      continue;
    }
    choose_mode(g, rep, caps_, options_, what);
    if (g.kind == GemmKind::MATMUL_INTEGER || g.kind == GemmKind::QLINEAR_MATMUL) {
      rep.reason += g.cb_zero
                        ? "; A's zero point by subtraction or, when A - a_zero_point does not "
                          "fit INT8, by the host's row-sum correction"
                        : "; B - b_zero_point does not fit INT8: zero points by the host's "
                          "row/column-sum corrections";
    }
    if (g.kind == GemmKind::QLINEAR_MATMUL) {
      // The STORE epilogue can requantize when the only correction is a per-channel bias and the
      // output saturates where the device's INT8 does (see runtime.hpp).
      const Tensor* a_zp = constant(n.input(2));
      const Tensor* y_zp = constant(n.input(7));
      const bool scales = constant(n.input(1)) && constant(n.input(4)) && constant(n.input(6));
      std::string why_host;
      if (!g.cb_zero) {
        why_host = "B - b_zero_point does not fit INT8";
      } else if (a_zp == nullptr || a_zp->size() != 1) {
        why_host = "a_zero_point is not one constant";
      } else if (y_zp == nullptr || y_zp->size() != 1 || !scales) {
        why_host = "scales or y_zero_point are not constants";
      } else if (!((y_zp->type == ElementType::INT8 && y_zp->ints[0] == 0) ||
                   (y_zp->type == ElementType::UINT8 && y_zp->ints[0] == 128))) {
        why_host = "y_zero_point " + std::to_string(y_zp->ints[0]) + " (" +
                   std::string(to_string(y_zp->type)) +
                   ") saturates elsewhere than the device's INT8 output";
      } else if (g.k == 0) {
        why_host = "K = 0";
      } else {
        std::int64_t max_colsum = 0;
        for (const auto& cs : g.colsum) {
          for (const std::int64_t v : cs) max_colsum = std::max(max_colsum, std::abs(v));
        }
        if (255 * max_colsum > std::numeric_limits<std::int32_t>::max()) {
          why_host = "the zero-point bias may not fit INT32";
        }
      }
      g.epilogue_on_device = why_host.empty();
      rep.reason += g.epilogue_on_device ? "; requantized in the device epilogue"
                                         : "; requantized on the host (" + why_host + ")";
    }
    plan_->role[i] = NodeRole::DEVICE_GEMM;
    g.output = n.outputs.empty() ? std::string() : n.outputs[0];

    // Fusion: a constant per-channel bias Add, then a Relu, each the only reader of its input.
    if (options_.fuse && (g.kind == GemmKind::FLOAT_GEMM || g.kind == GemmKind::FLOAT_MATMUL)) {
      auto sole_consumer = [&](const std::string& v) -> const Node* {
        if (v.empty() || graph_outputs.count(v) != 0) return nullptr;
        const auto it = consumers.find(v);
        if (it == consumers.end() || it->second.size() != 1) return nullptr;
        return &graph_.nodes[it->second[0]];
      };
      auto fuse = [&](const Node& f, std::size_t idx, FusedStep step) {
        g.fused.push_back(std::move(step));
        g.output = f.outputs[0];
        plan_->role[idx] = NodeRole::FUSED;
        LayerReport& fr = layers_[idx];
        fr.node = idx;
        fr.name = f.name;
        fr.op_type = f.op_type;
        fr.placement = rep.placement;
        fr.fallback = Fallback::NONE;
        fr.fused_into = n.name;
        fr.reason = "fused into " + n.describe() + ": applied while dequantizing its accumulators";
        rep.fused_nodes.push_back(f.name);
      };
      const Node* next = sole_consumer(g.output);
      if (next != nullptr && next->op_type == "Add" && is_default_domain(*next) &&
          next->inputs.size() == 2 && next->outputs.size() == 1 && !next->outputs[0].empty()) {
        const std::string& other = next->inputs[0] == g.output ? next->inputs[1] : next->inputs[0];
        const Tensor* bias = other == g.output ? nullptr : constant(other);
        bool per_channel = bias != nullptr && bias->is_float() && bias->rank() >= 1 &&
                           (bias->shape.back() == 1 || bias->shape.back() == g.n);
        for (std::size_t d = 0; per_channel && d + 1 < bias->shape.size(); ++d) {
          per_channel = bias->shape[d] == 1;
        }
        if (bias != nullptr && bias->is_float() && bias->rank() == 0) per_channel = true;
        if (per_channel) {
          const auto idx = static_cast<std::size_t>(next - graph_.nodes.data());
          fuse(*next, idx, FusedStep{idx, false, other});
          next = sole_consumer(g.output);
        }
      }
      if (next != nullptr && next->op_type == "Relu" && is_default_domain(*next) &&
          next->outputs.size() == 1 && !next->outputs[0].empty()) {
        const auto idx = static_cast<std::size_t>(next - graph_.nodes.data());
        fuse(*next, idx, FusedStep{idx, true, {}});
      }
    }
    plan_->gemms.emplace(i, std::move(g));
  }
}

const LayerReport& Runtime::layer(const std::string& node_name) const {
  for (const LayerReport& l : layers_) {
    if (l.name == node_name) return l;
  }
  throw std::out_of_range("no node named '" + node_name + "' in " + graph_.source);
}

PlacementCounts Runtime::counts() const {
  PlacementCounts c;
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    const LayerReport& l = layers_[i];
    if (!l.fused_into.empty()) {
      ++c.fused;
      continue;
    }
    switch (l.placement) {
      case Placement::DEVICE_SPARSE:
        ++c.device_sparse;
        break;
      case Placement::DEVICE_DENSE:
        ++c.device_dense;
        break;
      case Placement::HOST:
        ++c.host;
        break;
    }
    if (plan_->role[i] == NodeRole::SHAPE) ++c.shape_ops;
    switch (l.fallback) {
      case Fallback::NONE:
        break;
      case Fallback::DENSE_WEIGHT:
        ++c.dense_fallbacks;
        break;
      case Fallback::HOST_UNSUPPORTED_OP:
        ++c.host_unsupported_op;
        break;
      case Fallback::HOST_UNSUPPORTED_CASE:
        ++c.host_unsupported_case;
        break;
      case Fallback::HOST_UNFUSED:
        ++c.host_unfused;
        break;
    }
  }
  return c;
}

std::string Runtime::describe() const {
  std::ostringstream s;
  s << "model " << (graph_.source.empty() ? graph_.name : graph_.source) << " on "
    << device_->name() << " (" << caps_.describe() << ")\n";
  for (const std::size_t i : order_) {
    const LayerReport& l = layers_[i];
    s << "  " << l.name << " (" << l.op_type << "): " << to_string(l.placement);
    if (l.fallback != Fallback::NONE) s << ", fallback " << to_string(l.fallback);
    s << ": " << l.reason << "\n";
  }
  const PlacementCounts c = counts();
  s << "layers: " << c.device_sparse << " device sparse, " << c.device_dense << " device dense, "
    << c.host << " host (" << c.shape_ops << " shape ops), " << c.fused << " nodes fused\n"
    << "fallbacks: " << c.fallbacks() << " (dense weight " << c.dense_fallbacks
    << ", host unsupported op " << c.host_unsupported_op << ", host unsupported case "
    << c.host_unsupported_case << ", host unfused " << c.host_unfused << ")\n";
  return s.str();
}

// --- Execution --------------------------------------------------------------------------------

namespace {

class Values {
 public:
  Values(const Graph& g, const std::map<std::string, Tensor>& inputs) : g_(g), inputs_(inputs) {}
  const Tensor* find(const std::string& name) const {
    if (name.empty()) return nullptr;
    if (const auto it = computed_.find(name); it != computed_.end()) return &it->second;
    if (const auto it = inputs_.find(name); it != inputs_.end()) return &it->second;
    if (const auto it = g_.initializers.find(name); it != g_.initializers.end()) return &it->second;
    return nullptr;
  }
  const Tensor& get(const Node& node, std::size_t input) const {
    const std::string& name = node.input(input);
    const Tensor* t = find(name);
    if (t == nullptr) {
      node_error(node, name.empty() ? "input " + std::to_string(input) + " is missing"
                                    : "input '" + name + "' has no value");
    }
    return *t;
  }
  const Tensor* optional(const Node& node, std::size_t input) const {
    return find(node.input(input));
  }
  void set(const std::string& name, Tensor t) {
    if (!name.empty()) computed_[name] = std::move(t);
  }

 private:
  const Graph& g_;
  const std::map<std::string, Tensor>& inputs_;
  std::unordered_map<std::string, Tensor> computed_;
};

// Rows of A that multiply each B matrix: out matrix t uses A matrix pairs[t].first.
std::map<std::int64_t, std::vector<std::size_t>> group_by_weight(const MatmulShape& g) {
  std::map<std::int64_t, std::vector<std::size_t>> groups;
  for (std::size_t t = 0; t < g.pairs.size(); ++t) groups[g.pairs[t].second].push_back(t);
  return groups;
}

}  // namespace

namespace {

struct DeviceContext {
  Device& device;
  const DeviceCaps& caps;
};

MatrixI32 device_gemm(const DeviceContext& dev, const Node& node, const MatrixI8& x,
                      const MatrixI8& w, GemmMode mode, const std::optional<EpilogueParams>& epi,
                      DeviceStats& stats) {
  if (x.rows() == 0 || w.rows() == 0 || x.cols() == 0) {
    return MatrixI32::Zero(x.rows(), w.rows());  // nothing to send; K = 0 sums to 0
  }
  HostMemory& mem = dev.device.memory();
  GemmOptions o;
  o.mode = mode;
  o.epilogue = epi;
  std::optional<GemmProgram> prog;
  try {
    prog.emplace(dev.caps, x, w, o, mem);
  } catch (const std::exception& e) {
    node_error(node, std::string("cannot compile the GEMM for the device: ") + e.what());
  }
  const DeviceRun r = dev.device.run(prog->command_address(), prog->command_count());
  if (!r.ok()) node_error(node, "device " + dev.device.name() + ": " + r.describe());
  namespace rg = regs;
  ++stats.programs;
  stats.commands += prog->command_count();
  stats.cycles += r.cycles;
  stats.tiles_sparse += r.counter(rg::TILES_SPARSE_LO_OFFSET);
  stats.tiles_dense += r.counter(rg::TILES_DENSE_LO_OFFSET);
  stats.macs += r.counter(rg::MACS_LO_OFFSET);
  stats.dma_rd_bytes += r.counter(rg::DMA_RD_BYTES_LO_OFFSET);
  stats.dma_wr_bytes += r.counter(rg::DMA_WR_BYTES_LO_OFFSET);
  MatrixI32 out = prog->read_output();
  mem.clear();  // the program's pages; the allocator moves on, so addresses never repeat
  return out;
}

Tensor run_float_gemm(const DeviceContext& dev, const Node& node, const DeviceGemm& g,
                      const Values& values, DeviceStats& stats) {
  const Tensor& a_in = values.get(node, 0);
  if (!a_in.is_float()) node_error(node, "A must be float, got " + a_in.describe());
  const bool is_gemm = g.kind == GemmKind::FLOAT_GEMM;
  const Tensor a = is_gemm ? gemm_a(node, a_in, g.gemm.trans_a) : a_in;
  // B's role in the geometry: [K, N] for Gemm (W is B or B^T already), the model's B for MatMul.
  const Shape b_geom = is_gemm ? Shape{g.k, g.n} : g.b_shape;
  const MatmulShape ms = matmul_shape(node, a.shape, b_geom);

  // One activation scale for the whole tensor, calibrated on this input (quant.hpp).
  const std::int64_t mn = ms.m * ms.n;
  const MatrixF a_rows = Eigen::Map<const MatrixF>(a.floats.data(), ms.a_matrices * ms.m, ms.k);
  float sx = 1.0f;
  MatrixI8 a_q;
  try {
    sx = activation_scale(a_rows);
    a_q = quantize_activations(a_rows, sx);
  } catch (const std::invalid_argument& e) {
    node_error(node, std::string("A cannot be quantized for the device: ") + e.what());
  }

  Tensor y = Tensor::zeros(ElementType::FLOAT, ms.out);
  for (const auto& [j, outs] : group_by_weight(ms)) {
    MatrixI8 x(static_cast<Eigen::Index>(outs.size()) * ms.m, ms.k);
    for (std::size_t t = 0; t < outs.size(); ++t) {
      x.middleRows(static_cast<Eigen::Index>(t) * ms.m, ms.m) =
          a_q.middleRows(ms.pairs[outs[t]].first * ms.m, ms.m);
    }
    const auto ju = static_cast<std::size_t>(j);
    const MatrixI32 acc = device_gemm(dev, node, x, g.weights[ju], g.mode, std::nullopt, stats);
    const double alpha = is_gemm ? double{g.gemm.alpha} : 1.0;
    for (std::size_t t = 0; t < outs.size(); ++t) {
      const std::int64_t base = static_cast<std::int64_t>(outs[t]) * mn;
      for (std::int64_t i = 0; i < ms.m; ++i) {
        for (std::int64_t c = 0; c < ms.n; ++c) {
          const double v = alpha *
                           static_cast<double>(acc(static_cast<Eigen::Index>(t) * ms.m + i, c)) *
                           double{sx} * double{g.w_scale[ju][static_cast<std::size_t>(c)]};
          y.floats[static_cast<std::size_t>(base + i * ms.n + c)] = static_cast<float>(v);
        }
      }
    }
  }
  if (is_gemm) {
    if (const Tensor* c = values.optional(node, 2)) {
      if (!c->is_float()) node_error(node, "C must be float, got " + c->describe());
      const Tensor cb = broadcast_to(*c, y.shape, node);
      for (std::size_t i = 0; i < y.floats.size(); ++i) {
        y.floats[i] = static_cast<float>(double{y.floats[i]} + double{g.gemm.beta} * cb.floats[i]);
      }
    }
  }
  return y;
}

Tensor run_integer_gemm(const DeviceContext& dev, const Node& node, const DeviceGemm& g,
                        const Values& values, DeviceStats& stats) {
  const bool qlinear = g.kind == GemmKind::QLINEAR_MATMUL;
  const Tensor& a = values.get(node, 0);
  if (!is_int8_type(a.type)) node_error(node, "A must be uint8 or int8, got " + a.describe());
  const Tensor* a_zp = values.optional(node, 2);  // a_zero_point in both operators
  if (qlinear && a_zp == nullptr) node_error(node, "a_zero_point is missing");
  const Tensor za_rows = row_zero_point(node, a_zp, a);  // [..., M, 1]
  const MatmulShape ms = matmul_shape(node, a.shape, g.b_shape);

  std::optional<QLinearParams> q;
  if (qlinear) {
    q = qlinear_params(node, values.get(node, 1), values.get(node, 4), values.get(node, 6),
                       values.get(node, 7), ms.n);
  }

  // A' = A - za when it all fits INT8, else A - oA with the correction ca = oA - za per row.
  bool a_fits = true;
  const auto k = static_cast<std::size_t>(ms.k);
  for (std::size_t i = 0; i < a.ints.size() && a_fits; ++i) {
    a_fits = fits_int8(a.ints[i] - za_rows.ints[i / std::max<std::size_t>(k, 1)]);
  }
  const std::int64_t oa = int8_offset(a.type);
  const std::size_t rows_total = za_rows.ints.size();
  std::vector<std::int64_t> ca(rows_total, 0), rowsum(rows_total, 0);
  MatrixI8 a_dev(static_cast<Eigen::Index>(rows_total), ms.k);
  for (std::size_t r = 0; r < rows_total; ++r) {
    const std::int64_t sub = a_fits ? za_rows.ints[r] : oa;
    ca[r] = a_fits ? 0 : oa - za_rows.ints[r];
    for (std::size_t kk = 0; kk < k; ++kk) {
      const std::int64_t v = a.ints[r * k + kk] - sub;
      a_dev(static_cast<Eigen::Index>(r), static_cast<Eigen::Index>(kk)) =
          static_cast<std::int8_t>(v);
      rowsum[r] += v;
    }
  }

  Tensor y = Tensor::zeros(qlinear ? q->y_type : ElementType::INT32, ms.out);
  const std::int64_t mn = ms.m * ms.n;
  for (const auto& [j, outs] : group_by_weight(ms)) {
    const auto ju = static_cast<std::size_t>(j);
    MatrixI8 x(static_cast<Eigen::Index>(outs.size()) * ms.m, ms.k);
    for (std::size_t t = 0; t < outs.size(); ++t) {
      x.middleRows(static_cast<Eigen::Index>(t) * ms.m, ms.m) =
          a_dev.middleRows(ms.pairs[outs[t]].first * ms.m, ms.m);
    }
    std::optional<EpilogueParams> epi;
    if (qlinear && g.epilogue_on_device) {
      // ca is one value here (a per-tensor a_zero_point), so its correction is a channel bias.
      const std::int64_t ca0 = ca.empty() ? 0 : ca[0];
      EpilogueParams p;
      for (std::int64_t c = 0; c < ms.n; ++c) {
        p.bias.push_back(
            static_cast<std::int32_t>(ca0 * g.colsum[ju][static_cast<std::size_t>(c)] +
                                      ms.k * ca0 * g.cb[ju][static_cast<std::size_t>(c)]));
        p.multiplier.push_back(q->mult[static_cast<std::size_t>(c)].multiplier);
        p.shift.push_back(static_cast<std::uint8_t>(q->mult[static_cast<std::size_t>(c)].shift));
      }
      epi = std::move(p);
    }
    const MatrixI32 acc = device_gemm(dev, node, x, g.weights[ju], g.mode, epi, stats);
    for (std::size_t t = 0; t < outs.size(); ++t) {
      const std::int64_t a_row0 = ms.pairs[outs[t]].first * ms.m;
      const std::int64_t base = static_cast<std::int64_t>(outs[t]) * mn;
      for (std::int64_t i = 0; i < ms.m; ++i) {
        const auto r = static_cast<std::size_t>(a_row0 + i);
        for (std::int64_t c = 0; c < ms.n; ++c) {
          const auto cu = static_cast<std::size_t>(c);
          const std::int64_t dev_value = acc(static_cast<Eigen::Index>(t) * ms.m + i, c);
          std::int64_t out = 0;
          if (epi) {
            // The device saturated to INT8; uint8 with zero point 128 is the same range shifted.
            out = dev_value + (q->y_type == ElementType::UINT8 ? 128 : 0);
          } else {
            const std::int64_t exact = dev_value + g.cb[ju][cu] * rowsum[r] +
                                       ca[r] * g.colsum[ju][cu] + ms.k * ca[r] * g.cb[ju][cu];
            out = qlinear ? qlinear_output(*q, wrap_to(ElementType::INT32, exact), c)
                          : wrap_to(ElementType::INT32, exact);
          }
          y.ints[static_cast<std::size_t>(base + i * ms.n + c)] = out;
        }
      }
    }
  }
  return y;
}

void check_inputs(const Graph& g, const std::map<std::string, Tensor>& inputs) {
  const std::string model = g.source.empty() ? "model" : g.source;
  for (const auto& [name, t] : inputs) {
    const bool known = std::any_of(g.inputs.begin(), g.inputs.end(),
                                   [&](const ValueInfo& v) { return v.name == name; });
    if (!known) throw std::runtime_error(model + ": '" + name + "' is not an input of the graph");
    t.validate(model + ": input '" + name + "'");
  }
  for (const ValueInfo& v : g.inputs) {
    const auto it = inputs.find(v.name);
    if (it == inputs.end()) throw std::runtime_error(model + ": input '" + v.name + "' is missing");
    const Tensor& t = it->second;
    if (v.type && *v.type != t.type) {
      throw std::runtime_error(model + ": input '" + v.name + "' is " + t.describe() +
                               ", the model declares " + std::string(to_string(*v.type)));
    }
    if (v.shape) {
      bool ok = v.shape->size() == t.shape.size();
      for (std::size_t d = 0; ok && d < t.shape.size(); ++d) {
        ok = (*v.shape)[d] < 0 || (*v.shape)[d] == t.shape[d];
      }
      if (!ok) {
        throw std::runtime_error(model + ": input '" + v.name + "' is " + t.describe() +
                                 ", the model declares shape " + shape_str(*v.shape));
      }
    }
  }
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

}  // namespace

std::map<std::string, Tensor> Runtime::run(const std::map<std::string, Tensor>& inputs) {
  check_inputs(graph_, inputs);
  Values values(graph_, inputs);
  const DeviceContext dev{*device_, caps_};
  for (const std::size_t i : order_) {
    const Node& n = graph_.nodes[i];
    switch (plan_->role[i]) {
      case NodeRole::FUSED:
        break;  // computed by its GEMM layer
      case NodeRole::DEVICE_GEMM: {
        const DeviceGemm& g = plan_->gemms.at(i);
        LayerReport& rep = layers_[i];
        Tensor y = g.kind == GemmKind::FLOAT_GEMM || g.kind == GemmKind::FLOAT_MATMUL
                       ? run_float_gemm(dev, n, g, values, rep.device)
                       : run_integer_gemm(dev, n, g, values, rep.device);
        for (const FusedStep& f : g.fused) {
          const Node& fn = graph_.nodes[f.node];
          y = f.relu ? relu(y) : binary(fn, y, graph_.initializers.at(f.bias), BinaryOp::ADD);
        }
        values.set(g.output, std::move(y));
        break;
      }
      case NodeRole::SHAPE:
      case NodeRole::HOST:
        if (!n.outputs.empty()) values.set(n.outputs[0], run_host(n, values, graph_.opset));
        break;
    }
  }
  std::map<std::string, Tensor> out;
  for (const ValueInfo& o : graph_.outputs) {
    const Tensor* t = values.find(o.name);
    if (t == nullptr) {
      throw std::runtime_error((graph_.source.empty() ? "model" : graph_.source) + ": output '" +
                               o.name + "' was not computed");
    }
    out.emplace(o.name, *t);
  }
  return out;
}

}  // namespace nmsa
