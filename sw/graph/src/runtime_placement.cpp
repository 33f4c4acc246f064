// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// Building a Runtime: the graph checked and sorted, constants folded, every node placed by the
// supported layer matrix of nmsa/runtime.hpp (device sparse, device dense or host, with the
// reason), device GEMMs lowered (gemm_lowering.hpp), and a bias Add and a Relu fused into the
// float GEMM before them.
#include "nmsa/runtime.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "gemm_lowering.hpp"
#include "host_kernels.hpp"
#include "layer_chain.hpp"
#include "nmsa/sparse_format.hpp"
#include "qdq_pattern.hpp"
#include "runtime_plan.hpp"
#include "runtime_values.hpp"

namespace nmsa {

using namespace graph_detail;

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

const std::set<std::string>& shape_ops() {
  static const std::set<std::string> ops{"Flatten", "Reshape", "Identity", "Constant",
                                         "Unsqueeze", "Squeeze"};
  return ops;
}

// Operators folded into a constant when all their inputs are constants.
const std::set<std::string>& foldable_ops() {
  static const std::set<std::string> ops{"Identity",  "Reshape", "Flatten", "Transpose",
                                         "Cast",      "Unsqueeze", "Squeeze"};
  return ops;
}

// Operators the host runtime implements that the device has no layer for.
const std::set<std::string>& host_only_ops() {
  static const std::set<std::string> ops{"Softmax",   "Exp",            "Sub",
                                         "Mul",       "Div",            "ReduceMax",
                                         "ReduceSum", "QuantizeLinear", "DequantizeLinear",
                                         "Transpose", "Cast",           "MaxPool",
                                         "AveragePool", "GlobalAveragePool", "Concat",
                                         "BatchNormalization", "LayerNormalization"};
  return ops;
}

bool is_gemm_op(const std::string& op) {
  return op == "Gemm" || op == "MatMul" || op == "MatMulInteger" || op == "QLinearMatMul" ||
         op == "Conv";
}

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

// The weight and bias of a Conv followed by an inference BatchNormalization, as one Conv:
// W'[m] = W[m]·g[m], b'[m] = (b[m] - mean[m])·g[m] + B[m] with g = scale / sqrt(var + eps).
// `bias` may be null (a Conv without one); the BatchNormalization's four tensors are float
// vectors of W's output channels, as the caller has checked.
std::pair<Tensor, Tensor> fold_batch_norm(const Tensor& w, const Tensor* bias, const Tensor& scale,
                                          const Tensor& shift, const Tensor& mean,
                                          const Tensor& var, double eps) {
  const std::int64_t m = w.shape[0];
  const std::int64_t per = w.size() / m;
  Tensor w2 = w;
  Tensor b2 = Tensor::zeros(ElementType::FLOAT, {m});
  for (std::int64_t o = 0; o < m; ++o) {
    const auto u = static_cast<std::size_t>(o);
    const double g = scale.floats[u] / std::sqrt(double{var.floats[u]} + eps);
    for (std::int64_t k = 0; k < per; ++k) {
      const auto at = static_cast<std::size_t>(o * per + k);
      w2.floats[at] = static_cast<float>(w.floats[at] * g);
    }
    const double b = bias != nullptr ? bias->floats[u] : 0.0;
    b2.floats[u] = static_cast<float>((b - mean.floats[u]) * g + shift.floats[u]);
  }
  return {std::move(w2), std::move(b2)};
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

  // Constants are folded now, in graph order so that chains fold too: a Constant node, and a
  // layout or type operator whose inputs are all constants (a Transpose, Reshape, Cast,
  // Unsqueeze or Identity of an initializer, as exporters write for a Linear's weight). Their
  // outputs become initializers, so that a weight behind them counts as a constant weight.
  std::map<std::size_t, std::string> folded;  // node -> what was folded
  for (const std::size_t i : order_) {
    const Node& n = graph_.nodes[i];
    if (!is_default_domain(n) || n.outputs.empty() || n.outputs[0].empty()) continue;
    if (n.op_type == "Constant") {
      try {
        graph_.initializers[n.outputs[0]] = constant_value(n);
      } catch (const std::runtime_error& e) {
        fail(e.what());
      }
      folded[i] = "constant, folded when the model is loaded";
      continue;
    }
    if (foldable_ops().count(n.op_type) == 0) continue;
    std::string inputs;
    bool all_constant = !n.inputs.empty() && !n.input(0).empty();
    for (const std::string& in : n.inputs) {
      if (in.empty()) continue;
      all_constant = all_constant && graph_.is_constant(in);
      inputs += (inputs.empty() ? "'" : ", '") + in + "'";
    }
    if (!all_constant) continue;
    try {
      const Values none(graph_, {});
      graph_.initializers[n.outputs[0]] = run_host(n, none, graph_.opset);
    } catch (const std::runtime_error& e) {
      fail(e.what());
    }
    folded[i] = "constant: " + n.op_type + " of " + inputs + ", folded when the model is loaded";
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

  // A BatchNormalization (inference) right after a Conv with constant weights is folded into
  // it (fold_batch_norm), so the device's GEMM computes both. The Conv then writes the
  // BatchNormalization's output.
  if (options_.fuse) {
    for (const std::size_t i : order_) {
      Node& bn = graph_.nodes[i];
      if (bn.op_type != "BatchNormalization" || !is_default_domain(bn) ||
          bn.attr_int("training_mode", 0) != 0 || bn.outputs.size() != 1 || bn.inputs.size() != 5) {
        continue;
      }
      const auto prod = producer.find(bn.input(0));
      const auto readers = consumers.find(bn.input(0));
      if (prod == producer.end() || readers == consumers.end() || readers->second.size() != 1 ||
          graph_outputs.count(bn.input(0)) != 0) {
        continue;
      }
      Node& conv = graph_.nodes[prod->second];
      const Tensor* w = graph_.is_constant(conv.input(1)) ? &graph_.initializers.at(conv.input(1))
                                                          : nullptr;
      const bool has_bias = !conv.input(2).empty();
      bool foldable = conv.op_type == "Conv" && is_default_domain(conv) && w != nullptr &&
                      w->is_float() && w->rank() >= 3 && (!has_bias || graph_.is_constant(conv.input(2)));
      std::vector<const Tensor*> p;
      for (std::size_t k = 1; k < 5 && foldable; ++k) {
        const Tensor* t = graph_.is_constant(bn.input(k)) ? &graph_.initializers.at(bn.input(k))
                                                          : nullptr;
        foldable = t != nullptr && t->is_float() && t->rank() == 1 && t->shape[0] == w->shape[0];
        p.push_back(t);
      }
      if (!foldable) continue;
      auto [w2, b2] = fold_batch_norm(
          *w, has_bias ? &graph_.initializers.at(conv.input(2)) : nullptr, *p[0], *p[1], *p[2],
          *p[3], bn.attr_float("epsilon", 1e-5f));
      const std::string w_name = conv.name + ".weight_with_" + bn.name;
      const std::string b_name = conv.name + ".bias_with_" + bn.name;
      graph_.initializers[w_name] = std::move(w2);
      graph_.initializers[b_name] = std::move(b2);
      conv.inputs.resize(3);
      conv.inputs[1] = w_name;
      conv.inputs[2] = b_name;
      conv.outputs[0] = bn.outputs[0];
      producer[bn.outputs[0]] = prod->second;
      folded[i] = "folded into " + conv.describe() +
                  ": its scale and shift are merged into the weight and bias";
    }
  }

  layers_.resize(count);
  plan_->role.assign(count, NodeRole::HOST);
  auto constant = [this](const std::string& name) -> const Tensor* {
    const auto it = graph_.initializers.find(name);
    return name.empty() || it == graph_.initializers.end() ? nullptr : &it->second;
  };
  auto sole_consumer = [&](const std::string& v) -> const Node* {
    if (v.empty() || graph_outputs.count(v) != 0) return nullptr;
    const auto it = consumers.find(v);
    if (it == consumers.end() || it->second.size() != 1) return nullptr;
    return &graph_.nodes[it->second[0]];
  };
  auto mark_fused = [&](std::size_t idx, const Node& into, const std::string& how) {
    const Node& f = graph_.nodes[idx];
    plan_->role[idx] = NodeRole::FUSED;
    LayerReport& fr = layers_[idx];
    fr.node = idx;
    fr.name = f.name;
    fr.op_type = f.op_type;
    fr.fallback = Fallback::NONE;
    fr.fused_into = into.name;
    fr.reason = "fused into " + into.describe() + ": " + how;
  };

  // Gemms and Convs in QDQ form (qdq_pattern.hpp) take their DequantizeLinear inputs, and the
  // Relu and QuantizeLinear after them, into one device layer; marked now, as the
  // DequantizeLinear nodes come before their layer in the order.
  std::map<std::size_t, QdqGemm> qdq;
  std::map<std::size_t, std::string> qdq_not_fused;
  if (options_.fuse && options_.device_layers) {
    const GraphView view{graph_, constant, sole_consumer, [&](const std::string& v) -> const Node* {
                           const auto it = producer.find(v);
                           return it == producer.end() ? nullptr : &graph_.nodes[it->second];
                         }};
    for (const std::size_t i : order_) {
      const Node& n = graph_.nodes[i];
      if ((n.op_type != "Gemm" && n.op_type != "Conv") || !is_default_domain(n)) continue;
      std::string why_not;
      std::optional<QdqGemm> m = match_qdq_layer(view, i, why_not);
      if (!m) {
        if (!why_not.empty()) qdq_not_fused.emplace(i, why_not);
        continue;
      }
      mark_fused(m->dq_input, n, "its int8 activations go to the device as they are");
      mark_fused(m->dq_weight, n, "its int8 weights are the device's");
      if (m->relu) {
        mark_fused(*m->relu, n, m->quantize ? "applied by the device epilogue"
                                            : "applied while dequantizing the accumulators");
      }
      if (m->quantize) mark_fused(*m->quantize, n, "requantized by the device epilogue");
      qdq.emplace(i, std::move(*m));
    }
  }

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
    if (const auto f = folded.find(i); f != folded.end()) {
      plan_->role[i] = NodeRole::FOLDED;
      rep.placement = Placement::HOST;
      rep.folded = true;
      rep.reason = f->second;
      continue;
    }
    if (shape_ops().count(op) != 0) {
      plan_->role[i] = NodeRole::SHAPE;
      rep.placement = Placement::HOST;
      rep.reason = "shape op: reinterprets the row-major buffer, no data moves";
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
    if (const auto m = qdq.find(i); m != qdq.end()) {
      const bool conv = !m->second.conv_weight_shape.empty();
      g.kind = conv ? GemmKind::QDQ_CONV : GemmKind::QDQ_GEMM;
      g.k = m->second.weights.cols();
      g.n = m->second.weights.rows();
      if (conv) g.b_shape = m->second.conv_weight_shape;
      g.weights = {std::move(m->second.weights)};  // the device form, as for every GEMM
      g.qdq = std::move(m->second);
      what = "the INT8 weight";
    } else if (op == "Gemm" || op == "MatMul") {
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
    } else if (op == "Conv") {
      g.kind = GemmKind::CONV;
      const Tensor* w = constant(n.input(1));
      if (w == nullptr) {
        why_not = "W ('" + n.input(1) + "') is not a constant weight";
      } else if (!n.input(2).empty() && constant(n.input(2)) == nullptr) {
        why_not = "B ('" + n.input(2) + "') is not a constant";
      } else if (n.attr_int("group", 1) != 1) {
        why_not = "group = " + std::to_string(n.attr_int("group", 1)) +
                  ": grouped and depthwise convolutions run on the host";
      } else if (w->rank() != 3 && w->rank() != 4) {
        why_not = "W is " + w->describe() + ": only 1-D and 2-D convolutions go to the device";
      } else {
        // W [M, C, KH, KW] as [M x C*KH*KW]: the GEMM's weight, N:M along C x kernel window.
        Tensor w2 = *w;
        w2.shape = {w->shape[0], w->size() / std::max<std::int64_t>(w->shape[0], 1)};
        why_not = prepare_float_weights(g, w2, true);
        g.b_shape = w->shape;
      }
      what = "the INT8 weight (per-channel quantized, K = input channels x kernel window)";
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
    if (why_not.empty() && !options_.device_layers) {
      why_not = "device layers switched off (RuntimeOptions::device_layers)";
    }
    if (!why_not.empty()) {
      rep.placement = Placement::HOST;
      rep.fallback = Fallback::HOST_UNSUPPORTED_CASE;
      rep.reason = why_not;
      if (const auto q = qdq_not_fused.find(i); q != qdq_not_fused.end()) {
        rep.reason += " (" + q->second + ")";
      }
      continue;
    }
    choose_mode(g, rep, caps_, options_, what);
    if (g.qdq) {
      rep.reason += g.qdq->epilogue ? "; QDQ layer: bias, requantization" +
                                          std::string(g.qdq->relu ? " and ReLU" : "") +
                                          " in the device epilogue"
                                    : "; QDQ layer: dequantized on the host";
      const std::optional<std::size_t> fused[] = {g.qdq->dq_input, g.qdq->dq_weight, g.qdq->relu,
                                                  g.qdq->quantize};
      for (const std::optional<std::size_t>& f : fused) {
        if (!f) continue;
        layers_[*f].placement = rep.placement;
        rep.fused_nodes.push_back(graph_.nodes[*f].name);
      }
    }
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
    g.output = g.qdq ? g.qdq->output : n.outputs.empty() ? std::string() : n.outputs[0];

    // Fusion: a constant per-channel bias Add, then a Relu, each the only reader of its input.
    // A Conv's output is [N, M, ...]: its channels are not the last axis, so only a Relu fuses.
    if (options_.fuse && (g.kind == GemmKind::FLOAT_GEMM || g.kind == GemmKind::FLOAT_MATMUL ||
                          g.kind == GemmKind::CONV)) {
      auto fuse = [&](const Node& f, std::size_t idx, FusedStep step) {
        g.fused.push_back(std::move(step));
        g.output = f.outputs[0];
        mark_fused(idx, n, "applied while dequantizing its accumulators");
        layers_[idx].placement = rep.placement;
        rep.fused_nodes.push_back(f.name);
      };
      const Node* next = sole_consumer(g.output);
      if (next != nullptr && g.kind != GemmKind::CONV && next->op_type == "Add" &&
          is_default_domain(*next) &&
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
  plan_->chained.assign(count, false);
  if (options_.chain_layers) {
    plan_->chains = find_layer_chains(order_, plan_->role, plan_->gemms);
    for (const auto& [head, nodes] : plan_->chains) {
      std::string names;
      for (const std::size_t n : nodes) names += (names.empty() ? "" : " -> ") + layers_[n].name;
      for (const std::size_t n : nodes) {
        layers_[n].stream = names;
        if (n != head) plan_->chained[n] = true;
      }
    }
  }
}

const LayerReport& Runtime::layer(const std::string& node_name) const {
  for (const LayerReport& l : layers_) {
    if (l.name == node_name) return l;
  }
  throw std::out_of_range("no node named '" + node_name + "' in " + graph_.source);
}

bool Runtime::supports_operator(const std::string& op_type) {
  return op_type == "Add" || op_type == "Relu" || shape_ops().count(op_type) != 0 ||
         foldable_ops().count(op_type) != 0 || host_only_ops().count(op_type) != 0 ||
         is_gemm_op(op_type);
}

HostStats Runtime::host_total() const {
  HostStats total;
  for (const LayerReport& l : layers_) {
    total.runs += l.host.runs;
    total.seconds += l.host.seconds;
  }
  return total;
}

PlacementCounts Runtime::counts() const {
  PlacementCounts c;
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    const LayerReport& l = layers_[i];
    if (!l.fused_into.empty()) {
      ++c.fused;
      continue;
    }
    if (plan_->role[i] == NodeRole::FOLDED) {
      ++c.folded;
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
    << c.host << " host (" << c.shape_ops << " shape ops), " << c.fused << " nodes fused, "
    << c.folded << " constants folded\n"
    << "fallbacks: " << c.fallbacks() << " (dense weight " << c.dense_fallbacks
    << ", host unsupported op " << c.host_unsupported_op << ", host unsupported case "
    << c.host_unsupported_case << ", host unfused " << c.host_unfused << ")\n";
  for (const auto& [head, nodes] : plan_->chains) {
    s << "one command stream: " << layers_[head].stream << "\n";
  }
  return s.str();
}

}  // namespace nmsa
