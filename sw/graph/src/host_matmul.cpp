// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
#include "host_kernels.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "nmsa/epilogue.hpp"

namespace nmsa::graph_detail {

namespace {

__extension__ typedef __int128 int128;

}  // namespace

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

namespace {

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

}  // namespace

GemmAttributes gemm_attributes(const Node& node) {
  GemmAttributes a;
  a.alpha = node.attr_float("alpha", 1.0f);
  a.beta = node.attr_float("beta", 1.0f);
  a.trans_a = node.attr_int("transA", 0) != 0;
  a.trans_b = node.attr_int("transB", 0) != 0;
  return a;
}

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

namespace {

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

}  // namespace

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

}  // namespace nmsa::graph_detail
