// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
#include "qdq_pattern.hpp"

#include <cmath>
#include <stdexcept>

#include "host_kernels.hpp"
#include "nmsa/quant.hpp"

namespace nmsa::graph_detail {

namespace {

bool is_op(const Node* n, const char* op) {
  return n != nullptr && n->op_type == op && is_default_domain(*n) && n->outputs.size() == 1 &&
         !n->outputs[0].empty();
}

// A zero point that is absent or a constant int8 tensor of zeros; else the reason.
std::string zero_int8_zero_point(const GraphView& v, const Node& n, const std::string& what) {
  const std::string& name = n.input(2);
  if (name.empty()) return {};
  const Tensor* zp = v.constant(name);
  if (zp == nullptr) return what + " zero point is not a constant";
  if (zp->type != ElementType::INT8) return what + " zero point is " + zp->describe() + ", not int8";
  for (const std::int64_t z : zp->ints) {
    if (z != 0) return what + " zero point is " + std::to_string(z) + ", not 0 (symmetric)";
  }
  return {};
}

// One constant positive finite scale; else the reason.
std::string scalar_scale(const GraphView& v, const Node& n, const std::string& what, float& out) {
  const Tensor* s = v.constant(n.input(1));
  if (s == nullptr || !s->is_float() || s->size() != 1) {
    return what + " scale is not one constant float";
  }
  out = s->floats[0];
  if (!(out > 0.0f) || !std::isfinite(out)) {
    return what + " scale " + std::to_string(out) + " is not a finite number > 0";
  }
  return {};
}

// The weight DequantizeLinear: constant int8 W, zero points 0, a scale per tensor or per output
// channel. W holds the output channels first ([N, K] for a Gemm with transB, a Conv's
// [M, C, (KH,) KW] flattened to [M x C*KH*KW]) or last ([K, N], a Gemm). Fills g.weights [N x K]
// and g.weight_scales (and a Conv's g.conv_weight_shape); returns the reason when it cannot.
std::string weight_operand(const GraphView& v, const Node& dq, bool conv, bool trans_b,
                           QdqGemm& g) {
  const Tensor* w = v.constant(dq.input(0));
  if (w == nullptr) return "the weight DequantizeLinear's input is not a constant";
  const bool rank_ok = conv ? w->rank() == 3 || w->rank() == 4 : w->rank() == 2;
  if (w->type != ElementType::INT8 || !rank_ok) {
    return "the quantized weight is " + w->describe() +
           (conv ? ", not a 3-D or 4-D int8 tensor" : ", not a 2-D int8 tensor");
  }
  if (std::string bad = zero_int8_zero_point(v, dq, "the weight"); !bad.empty()) return bad;
  const bool channels_first = conv || trans_b;
  const std::int64_t n = channels_first ? w->shape[0] : w->shape[1];
  const std::int64_t k = n == 0 ? 0 : w->size() / n;
  const Tensor* s = v.constant(dq.input(1));
  if (s == nullptr || !s->is_float()) return "the weight scale is not a constant float";
  const std::int64_t out_axis = channels_first ? 0 : 1;
  std::int64_t axis = dq.attr_int("axis", 1);
  if (axis < 0) axis += static_cast<std::int64_t>(w->rank());
  if (s->size() != 1 && (s->rank() != 1 || s->size() != n || axis != out_axis)) {
    return "the weight scale " + s->describe() + " is neither per tensor nor per output channel" +
           (s->size() == n && axis != out_axis ? " (axis " + std::to_string(axis) + ", not " +
                                                     std::to_string(out_axis) + ")"
                                               : std::string());
  }
  for (const float f : s->floats) {
    if (!(f >= 0.0f) || !std::isfinite(f)) {
      return "weight scale " + std::to_string(f) + " is not a finite number >= 0";
    }
  }
  g.weights.resize(n, k);
  for (std::int64_t row = 0; row < n; ++row) {
    for (std::int64_t kk = 0; kk < k; ++kk) {
      const std::int64_t i = channels_first ? row * k + kk : kk * n + row;
      g.weights(row, kk) = static_cast<std::int8_t>(w->ints[static_cast<std::size_t>(i)]);
    }
  }
  g.weight_scales.assign(static_cast<std::size_t>(n), s->floats[0]);
  if (s->size() != 1) g.weight_scales = s->floats;
  if (conv) g.conv_weight_shape = w->shape;
  return {};
}

// The bias (a Gemm's C, a Conv's B): absent, or a constant float with one value per output
// channel (or one for all).
std::string bias_operand(const GraphView& v, const Node& layer, std::int64_t n, QdqGemm& g) {
  const std::string& name = layer.input(2);
  if (name.empty()) return {};
  const std::string what = layer.op_type == "Conv" ? "B (the bias)" : "C";
  const Tensor* c = v.constant(name);
  if (c == nullptr || !c->is_float()) return what + " is not a constant float";
  bool per_channel = c->size() == 1 || c->shape.back() == n;
  for (std::size_t d = 0; per_channel && d + 1 < c->shape.size(); ++d) per_channel = c->shape[d] == 1;
  if (!per_channel) return what + " " + c->describe() + " is not one value per output channel";
  g.bias.assign(static_cast<std::size_t>(n), c->floats[0]);
  if (c->size() != 1) g.bias = c->floats;
  return {};
}

}  // namespace

std::optional<QdqGemm> match_qdq_layer(const GraphView& v, std::size_t layer,
                                       std::string& why_not) {
  why_not.clear();
  const Node& node = v.graph.nodes[layer];
  const bool conv = node.op_type == "Conv";
  const Node* dq_a = v.producer(node.input(0));
  const Node* dq_w = v.producer(node.input(1));
  if (!is_op(dq_a, "DequantizeLinear") && !is_op(dq_w, "DequantizeLinear")) return std::nullopt;
  auto fail = [&why_not, &node](const std::string& why) {
    why_not = "QDQ " + node.op_type + " not fused: " + why;
    return std::nullopt;
  };
  if (!is_op(dq_a, "DequantizeLinear") || !is_op(dq_w, "DequantizeLinear")) {
    return fail(conv ? "X and W must both come from DequantizeLinear"
                     : "A and B must both come from DequantizeLinear");
  }
  if (v.sole_consumer(node.input(0)) != &node || v.sole_consumer(node.input(1)) != &node) {
    return fail("a DequantizeLinear output has other readers");
  }
  GemmAttributes attr;
  if (conv) {
    if (const std::int64_t group = node.attr_int("group", 1); group != 1) {
      return fail("group = " + std::to_string(group) + ": grouped and depthwise convolutions "
                  "are not one GEMM");
    }
  } else {
    attr = gemm_attributes(node);
    if (attr.alpha != 1.0f || attr.beta != 1.0f || attr.trans_a) {
      return fail("alpha and beta must be 1 and transA 0");
    }
  }

  QdqGemm g;
  g.dq_input = static_cast<std::size_t>(dq_a - v.graph.nodes.data());
  g.dq_weight = static_cast<std::size_t>(dq_w - v.graph.nodes.data());
  g.input = dq_a->input(0);
  for (const std::string& bad :
       {scalar_scale(v, *dq_a, "the activation", g.input_scale),
        zero_int8_zero_point(v, *dq_a, "the activation"),
        weight_operand(v, *dq_w, conv, attr.trans_b, g)}) {
    if (!bad.empty()) return fail(bad);
  }
  if (std::string bad = bias_operand(v, node, g.weights.rows(), g); !bad.empty()) return fail(bad);

  // What follows: a Relu, then a QuantizeLinear to int8 with zero point 0.
  g.output = node.outputs.empty() ? std::string() : node.outputs[0];
  const Node* next = v.sole_consumer(g.output);
  if (is_op(next, "Relu")) {
    g.relu = static_cast<std::size_t>(next - v.graph.nodes.data());
    g.output = next->outputs[0];
    next = v.sole_consumer(g.output);
  }
  // A QuantizeLinear the epilogue cannot do (another zero point, a scale it cannot represent)
  // stays a host node after the fused layer.
  if (is_op(next, "QuantizeLinear")) {
    float out_scale = 1.0f;
    std::string bad = scalar_scale(v, *next, "the output", out_scale);
    if (bad.empty() && next->input(2).empty()) bad = "no zero point";
    if (bad.empty()) bad = zero_int8_zero_point(v, *next, "the output");
    if (bad.empty()) {
      try {
        g.epilogue = requant_params(g.input_scale, g.weight_scales, out_scale, g.bias);
        g.quantize = static_cast<std::size_t>(next - v.graph.nodes.data());
        g.output = next->outputs[0];
      } catch (const std::invalid_argument&) {
        g.epilogue.reset();
      }
    }
  }
  return g;
}

}  // namespace nmsa::graph_detail
