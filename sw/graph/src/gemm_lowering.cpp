// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
#include "gemm_lowering.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <stdexcept>
#include <utility>

#include "nmsa/epilogue.hpp"
#include "nmsa/golden.hpp"
#include "nmsa/quant.hpp"
#include "nmsa/stream_counters.hpp"
#include "runtime_values.hpp"

namespace nmsa::graph_detail {

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

void add_counters(DeviceStats& stats, const StreamCounters& c) {
  stats.compute_cycles += c.beats;
  stats.tiles_sparse += c.tiles_sparse;
  stats.tiles_dense += c.tiles_dense;
  stats.macs += c.macs;
  stats.dma_rd_bytes += c.dma_rd_bytes;
  stats.dma_wr_bytes += c.dma_wr_bytes;
  stats.meta_bytes += c.meta_bytes;
}

Tensor apply_fused_steps(const Graph& graph, const DeviceGemm& g, Tensor y) {
  for (const FusedStep& f : g.fused) {
    const Node& fn = graph.nodes[f.node];
    y = f.relu ? relu(y) : binary(fn, y, graph.initializers.at(f.bias), BinaryOp::ADD);
  }
  return y;
}

GemmOptions device_gemm_options(const DeviceContext& dev, const Node& node, std::size_t matrix,
                                Eigen::Index rows, const MatrixI8& w, GemmMode mode,
                                const std::optional<EpilogueParams>& epi, bool relu) {
  GemmOptions o;
  o.mode = mode;
  o.epilogue = epi;
  o.relu = relu;
  if (dev.memory) {
    o.memory = dev.memory;
    const auto key = std::make_tuple(&node, matrix, rows);
    auto it = dev.plans.find(key);
    if (it == dev.plans.end()) {
      const GemmEstimate e = estimate_gemm(dev.caps, rows, w.cols(), w.rows(), o, *o.memory);
      it = dev.plans.emplace(key, e.plan).first;
    }
    o.plan = it->second;
  }
  return o;
}

void check_against_golden(const DeviceContext& dev, const Node& node, const MatrixI8& x,
                          const MatrixI8& w, const std::optional<EpilogueParams>& epi, bool relu,
                          const MatrixI32& out) {
  const MatrixI32 acc = golden::gemm_i8(x, w);
  const MatrixI32 want = epi                ? apply_epilogue(acc, *epi, relu, false)
                         : relu ? MatrixI32(acc.cwiseMax(0))
                                : acc;
  if (out.rows() != want.rows() || out.cols() != want.cols()) {
    node_error(node, "device " + dev.device.name() + " returned [" + std::to_string(out.rows()) +
                         " x " + std::to_string(out.cols()) + "], the golden model [" +
                         std::to_string(want.rows()) + " x " + std::to_string(want.cols()) + "]");
  }
  for (Eigen::Index c = 0; c < out.cols(); ++c) {
    for (Eigen::Index r = 0; r < out.rows(); ++r) {
      if (out(r, c) == want(r, c)) continue;
      node_error(node, "device " + dev.device.name() + " differs from the golden model at row " +
                           std::to_string(r) + ", column " + std::to_string(c) + ": " +
                           std::to_string(out(r, c)) + ", golden " + std::to_string(want(r, c)));
    }
  }
}

namespace {

// Rows of A that multiply each B matrix: out matrix t uses A matrix pairs[t].first.
std::map<std::int64_t, std::vector<std::size_t>> group_by_weight(const MatmulShape& g) {
  std::map<std::int64_t, std::vector<std::size_t>> groups;
  for (std::size_t t = 0; t < g.pairs.size(); ++t) groups[g.pairs[t].second].push_back(t);
  return groups;
}

// One weight matrix (`matrix` of the node's) times x on the device.
MatrixI32 device_gemm(const DeviceContext& dev, const Node& node, std::size_t matrix,
                      const MatrixI8& x, const MatrixI8& w, GemmMode mode,
                      const std::optional<EpilogueParams>& epi, bool relu, DeviceStats& stats) {
  if (x.rows() == 0 || w.rows() == 0 || x.cols() == 0) {
    return MatrixI32::Zero(x.rows(), w.rows());  // nothing to send; K = 0 sums to 0
  }
  HostMemory& mem = dev.device.memory();
  std::optional<GemmProgram> prog;
  try {
    const GemmOptions o = device_gemm_options(dev, node, matrix, x.rows(), w, mode, epi, relu);
    prog.emplace(dev.caps, x, w, o, mem);
  } catch (const std::exception& e) {
    node_error(node, std::string("cannot compile the GEMM for the device: ") + e.what());
  }
  const DeviceRun r = dev.device.run(prog->command_address(), prog->command_count());
  if (!r.ok()) node_error(node, "device " + dev.device.name() + ": " + r.describe());
  ++stats.programs;
  stats.commands += prog->command_count();
  stats.cycles += r.cycles;
  // The functional model has no clock: its figure is the cycle model's prediction, as nmsa gemm
  // prints it (a device with a clock measures instead, and pays no prediction).
  if (r.cycles == 0) {
    stats.predicted_cycles += prog->predict_cycles(dev.memory.value_or(PerfModelParams{})).total;
  }
  add_counters(stats, run_counters(r));
  MatrixI32 out = prog->read_output();
  mem.clear();  // the program's pages; the allocator moves on, so addresses never repeat
  if (dev.check_golden) {
    check_against_golden(dev, node, x, w, epi, relu, out);
    ++stats.golden_checked;
  }
  return out;
}

}  // namespace

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
    const MatrixI32 acc =
        device_gemm(dev, node, ju, x, g.weights[ju], g.mode, std::nullopt, false, stats);
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

Tensor run_conv(const DeviceContext& dev, const Node& node, const DeviceGemm& g,
                const Values& values, DeviceStats& stats) {
  const Tensor& x = values.get(node, 0);
  if (!x.is_float()) node_error(node, "X must be float, got " + x.describe());
  const ConvGeometry geo = conv_geometry(node, x.shape, g.b_shape);
  const MatrixF cols = im2col(geo, x);
  float sx = 1.0f;
  MatrixI8 cols_q;
  try {
    sx = activation_scale(cols);
    cols_q = quantize_activations(cols, sx);
  } catch (const std::invalid_argument& e) {
    node_error(node, std::string("X cannot be quantized for the device: ") + e.what());
  }
  const MatrixI32 acc = device_gemm(dev, node, 0, cols_q, g.weights[0], g.mode, std::nullopt,
                                    false, stats);
  const Tensor* bias = values.optional(node, 2);
  Tensor y = Tensor::zeros(ElementType::FLOAT, geo.out_shape);
  const std::int64_t positions = geo.oh * geo.ow;
  for (std::int64_t b = 0; b < geo.n; ++b) {
    for (std::int64_t p = 0; p < positions; ++p) {
      for (std::int64_t m = 0; m < geo.m; ++m) {
        double v = static_cast<double>(acc(static_cast<Eigen::Index>(b * positions + p), m)) *
                   double{sx} * double{g.w_scale[0][static_cast<std::size_t>(m)]};
        if (bias != nullptr) v += bias->floats[static_cast<std::size_t>(m)];
        y.floats[static_cast<std::size_t>((b * geo.m + m) * positions + p)] = static_cast<float>(v);
      }
    }
  }
  return y;
}

const Tensor& qdq_input(const Node& node, const QdqGemm& q, const Values& values) {
  const Tensor* x = values.find(q.input);
  if (x == nullptr) node_error(node, "the quantized activations '" + q.input + "' have no value");
  if (x->type != ElementType::INT8) {
    node_error(node, "the quantized activations '" + q.input + "' are " + x->describe() +
                         ", not int8");
  }
  return *x;
}

Tensor qdq_rows(const QdqGemm& q, const MatrixI32& out) {
  const Shape shape{out.rows(), out.cols()};
  if (q.epilogue) {
    Tensor y = Tensor::zeros(ElementType::INT8, shape);
    for (Eigen::Index r = 0; r < out.rows(); ++r) {
      for (Eigen::Index c = 0; c < out.cols(); ++c) {
        y.ints[static_cast<std::size_t>(r * out.cols() + c)] = out(r, c);
      }
    }
    return y;
  }
  Tensor y = Tensor::zeros(ElementType::FLOAT, shape);
  for (Eigen::Index r = 0; r < out.rows(); ++r) {
    for (Eigen::Index c = 0; c < out.cols(); ++c) {
      const auto cu = static_cast<std::size_t>(c);
      const double scale = static_cast<double>(q.input_scale) * q.weight_scales[cu];
      const double bias = q.bias.empty() ? 0.0 : static_cast<double>(q.bias[cu]);
      float v = static_cast<float>(scale * out(r, c) + bias);
      if (q.relu && v < 0.0f) v = 0.0f;
      y.floats[static_cast<std::size_t>(r * out.cols() + c)] = v;
    }
  }
  return y;
}

MatrixI8 qdq_gemm_rows(const Node& node, const DeviceGemm& g, const Values& values) {
  const QdqGemm& q = *g.qdq;
  const Tensor& x = qdq_input(node, q, values);
  if (x.rank() != 2 || x.shape[1] != g.k) {
    node_error(node, "the quantized activations '" + q.input + "' are " + x.describe() +
                         ", the layer takes int8 [M x " + std::to_string(g.k) + "]");
  }
  MatrixI8 a(x.shape[0], g.k);
  for (Eigen::Index i = 0; i < a.size(); ++i) {
    a.data()[i] = static_cast<std::int8_t>(x.ints[static_cast<std::size_t>(i)]);
  }
  return a;
}

Tensor run_qdq_gemm(const DeviceContext& dev, const Node& node, const DeviceGemm& g,
                    const Values& values, DeviceStats& stats) {
  const QdqGemm& q = *g.qdq;
  const MatrixI8 a = qdq_gemm_rows(node, g, values);
  return qdq_rows(q, device_gemm(dev, node, 0, a, g.weights[0], g.mode, q.epilogue,
                                 qdq_relu_on_device(q), stats));
}

Tensor run_qdq_conv(const DeviceContext& dev, const Node& node, const DeviceGemm& g,
                    const Values& values, DeviceStats& stats) {
  const QdqGemm& q = *g.qdq;
  const Tensor& x = qdq_input(node, q, values);
  const ConvGeometry geo = conv_geometry(node, x.shape, g.b_shape);
  // im2col of the int8 values, exact in float; its padding is 0, the zero point.
  Tensor xf = Tensor::zeros(ElementType::FLOAT, x.shape);
  for (std::size_t i = 0; i < x.ints.size(); ++i) xf.floats[i] = static_cast<float>(x.ints[i]);
  const MatrixI8 cols = im2col(geo, xf).cast<std::int8_t>();
  const Tensor rows = qdq_rows(q, device_gemm(dev, node, 0, cols, g.weights[0], g.mode,
                                              q.epilogue, qdq_relu_on_device(q), stats));
  // Row (b, position), column m to [N, M, (OH,) OW].
  Tensor y = Tensor::zeros(rows.type, geo.out_shape);
  const std::int64_t positions = geo.oh * geo.ow;
  for (std::int64_t b = 0; b < geo.n; ++b) {
    for (std::int64_t p = 0; p < positions; ++p) {
      for (std::int64_t m = 0; m < geo.m; ++m) {
        const auto from = static_cast<std::size_t>((b * positions + p) * geo.m + m);
        const auto to = static_cast<std::size_t>((b * geo.m + m) * positions + p);
        if (y.is_float()) {
          y.floats[to] = rows.floats[from];
        } else {
          y.ints[to] = rows.ints[from];
        }
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
    const MatrixI32 acc = device_gemm(dev, node, ju, x, g.weights[ju], g.mode, epi, false, stats);
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

}  // namespace nmsa::graph_detail
