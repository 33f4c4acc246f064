// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// The host kernels of convolutional and transformer networks around the device's GEMMs: pooling
// (MaxPool, AveragePool, GlobalAveragePool), BatchNormalization (inference), LayerNormalization
// and Concat, as ONNX defines them (opset 13 to 18).
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "host_kernels.hpp"

namespace nmsa::graph_detail {
namespace {

// The spatial geometry of a 1-D or 2-D pooling window, a 1-D one as height 1.
struct PoolGeometry {
  std::int64_t n = 0, c = 0, h = 0, w = 0, kh = 1, kw = 1, oh = 0, ow = 0;
  std::int64_t stride_h = 1, stride_w = 1, dil_h = 1, dil_w = 1;
  std::int64_t pad_t = 0, pad_l = 0, pad_b = 0, pad_r = 0;
  Shape out_shape;
};

PoolGeometry pool_geometry(const Node& node, const Shape& x) {
  if (x.size() != 3 && x.size() != 4) {
    node_error(node, "X " + shape_str(x) + ": only 1-D and 2-D pooling ([N, C, L] or [N, C, H, W])");
  }
  const std::size_t axes = x.size() - 2;
  const auto attr = [&](const char* name, std::size_t count, std::int64_t fallback) {
    Shape v = node.attr_ints(name);
    if (v.empty()) return Shape(count, fallback);
    if (v.size() != count) {
      node_error(node, std::string("attribute '") + name + "' has " + std::to_string(v.size()) +
                           " values, expected " + std::to_string(count));
    }
    return v;
  };
  const Shape kernel = attr("kernel_shape", axes, 0);
  if (kernel[0] == 0) node_error(node, "kernel_shape is required");
  const Shape strides = attr("strides", axes, 1);
  const Shape dilations = attr("dilations", axes, 1);
  const Shape pads = attr("pads", 2 * axes, 0);
  PoolGeometry g;
  g.n = x[0];
  g.c = x[1];
  g.h = axes == 2 ? x[2] : 1;
  g.w = x.back();
  g.kh = axes == 2 ? kernel[0] : 1;
  g.kw = kernel.back();
  g.stride_h = axes == 2 ? strides[0] : 1;
  g.stride_w = strides.back();
  g.dil_h = axes == 2 ? dilations[0] : 1;
  g.dil_w = dilations.back();
  g.pad_t = axes == 2 ? pads[0] : 0;
  g.pad_l = pads[axes - 1];
  g.pad_b = axes == 2 ? pads[2] : 0;
  g.pad_r = pads[2 * axes - 1];
  for (const std::int64_t v : {g.kh, g.kw, g.stride_h, g.stride_w, g.dil_h, g.dil_w}) {
    if (v < 1) node_error(node, "kernel, strides and dilations must be >= 1");
  }
  const auto it = node.attributes.find("auto_pad");
  const std::string auto_pad = it == node.attributes.end() ? "NOTSET" : it->second.s;
  const bool ceil_mode = node.attr_int("ceil_mode", 0) != 0;
  const auto extent = [](std::int64_t k, std::int64_t d) { return (k - 1) * d + 1; };
  const auto size = [&](std::int64_t in, std::int64_t k, std::int64_t s, std::int64_t d,
                        std::int64_t& pb, std::int64_t& pe) {
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      const std::int64_t out = (in + s - 1) / s;
      const std::int64_t total = std::max<std::int64_t>(0, (out - 1) * s + extent(k, d) - in);
      pb = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      pe = total - pb;
      return out;
    }
    if (auto_pad == "VALID") {
      pb = pe = 0;
    } else if (auto_pad != "NOTSET") {
      node_error(node, "auto_pad '" + auto_pad + "' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID");
    }
    const std::int64_t span = in + pb + pe - extent(k, d);
    if (span < 0) node_error(node, "the window does not fit X " + shape_str(x));
    std::int64_t out = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
    // A last window that would start in the end padding only is dropped (as ONNX's reference).
    if (ceil_mode && (out - 1) * s >= in + pb) --out;
    return out;
  };
  g.oh = size(g.h, g.kh, g.stride_h, g.dil_h, g.pad_t, g.pad_b);
  g.ow = size(g.w, g.kw, g.stride_w, g.dil_w, g.pad_l, g.pad_r);
  g.out_shape = axes == 2 ? Shape{g.n, g.c, g.oh, g.ow} : Shape{g.n, g.c, g.ow};
  return g;
}

double element(const Tensor& t, std::size_t i) {
  return t.is_float() ? double{t.floats[i]} : static_cast<double>(t.ints[i]);
}

}  // namespace

Tensor pool(const Node& node, const Tensor& x, bool max) {
  if (node.outputs.size() > 1 && !node.outputs[1].empty()) {
    node_error(node, "the Indices output is not supported");
  }
  if (!max && !x.is_float()) node_error(node, "X must be float, got " + x.describe());
  const PoolGeometry g = pool_geometry(node, x.shape);
  const bool include_pad = node.attr_int("count_include_pad", 0) != 0;
  Tensor y = Tensor::zeros(x.type, g.out_shape);
  for (std::int64_t plane = 0; plane < g.n * g.c; ++plane) {
    for (std::int64_t oy = 0; oy < g.oh; ++oy) {
      for (std::int64_t ox = 0; ox < g.ow; ++ox) {
        double acc = max ? -std::numeric_limits<double>::infinity() : 0.0;
        std::int64_t count = 0;
        for (std::int64_t ky = 0; ky < g.kh; ++ky) {
          const std::int64_t iy = oy * g.stride_h - g.pad_t + ky * g.dil_h;
          for (std::int64_t kx = 0; kx < g.kw; ++kx) {
            const std::int64_t ix = ox * g.stride_w - g.pad_l + kx * g.dil_w;
            const bool inside = iy >= 0 && iy < g.h && ix >= 0 && ix < g.w;
            const bool in_pads = iy >= -g.pad_t && iy < g.h + g.pad_b && ix >= -g.pad_l &&
                                 ix < g.w + g.pad_r;
            if (inside) {
              const double v = element(x, static_cast<std::size_t>((plane * g.h + iy) * g.w + ix));
              acc = max ? std::max(acc, v) : acc + v;
            }
            count += inside || (include_pad && in_pads);
          }
        }
        const auto o = static_cast<std::size_t>((plane * g.oh + oy) * g.ow + ox);
        if (y.is_float()) {
          y.floats[o] = static_cast<float>(max ? acc : acc / std::max<std::int64_t>(count, 1));
        } else {
          y.ints[o] = static_cast<std::int64_t>(acc);
        }
      }
    }
  }
  return y;
}

Tensor global_average_pool(const Node& node, const Tensor& x) {
  if (!x.is_float() || x.rank() < 3) {
    node_error(node, "X must be float [N, C, ...], got " + x.describe());
  }
  Shape out(x.shape.begin(), x.shape.begin() + 2);
  out.resize(x.shape.size(), 1);
  const std::int64_t planes = x.shape[0] * x.shape[1];
  const std::int64_t area = planes == 0 ? 0 : x.size() / planes;
  Tensor y = Tensor::zeros(ElementType::FLOAT, out);
  for (std::int64_t p = 0; p < planes; ++p) {
    double sum = 0;
    for (std::int64_t i = 0; i < area; ++i) sum += x.floats[static_cast<std::size_t>(p * area + i)];
    y.floats[static_cast<std::size_t>(p)] = static_cast<float>(sum / std::max<std::int64_t>(area, 1));
  }
  return y;
}

Tensor batch_normalization(const Node& node, const Tensor& x, const Tensor& scale,
                           const Tensor& bias, const Tensor& mean, const Tensor& var) {
  if (node.attr_int("training_mode", 0) != 0 ||
      (node.outputs.size() > 1 && std::any_of(node.outputs.begin() + 1, node.outputs.end(),
                                              [](const std::string& o) { return !o.empty(); }))) {
    node_error(node, "training mode (running statistics as outputs) is not supported");
  }
  if (!x.is_float() || x.rank() < 2) node_error(node, "X must be float [N, C, ...], got " + x.describe());
  const std::int64_t c = x.shape[1];
  for (const Tensor* t : {&scale, &bias, &mean, &var}) {
    if (!t->is_float() || t->rank() != 1 || t->shape[0] != c) {
      node_error(node, "scale, B, mean and var must be float[" + std::to_string(c) + "], got " +
                           t->describe());
    }
  }
  const double eps = node.attr_float("epsilon", 1e-5f);
  const std::int64_t inner = x.shape[0] * c == 0 ? 0 : x.size() / (x.shape[0] * c);
  Tensor y = x;
  for (std::size_t i = 0; i < y.floats.size(); ++i) {
    const auto ch = static_cast<std::size_t>((static_cast<std::int64_t>(i) / inner) % c);
    const double inv = 1.0 / std::sqrt(double{var.floats[ch]} + eps);
    y.floats[i] = static_cast<float>((x.floats[i] - double{mean.floats[ch]}) * inv *
                                         scale.floats[ch] + bias.floats[ch]);
  }
  return y;
}

std::vector<Tensor> layer_normalization(const Node& node, const Tensor& x, const Tensor& scale,
                                        const Tensor* bias) {
  if (!x.is_float()) node_error(node, "X must be float, got " + x.describe());
  const auto rank = static_cast<std::int64_t>(x.rank());
  std::int64_t axis = node.attr_int("axis", -1);
  if (axis < -rank || axis >= rank) {
    node_error(node, "axis " + std::to_string(axis) + " is out of range for " + x.describe());
  }
  if (axis < 0) axis += rank;
  std::int64_t outer = 1;
  for (std::int64_t d = 0; d < axis; ++d) outer *= x.shape[static_cast<std::size_t>(d)];
  const std::int64_t inner = outer == 0 ? 0 : x.size() / outer;
  const Shape norm_shape(x.shape.begin() + axis, x.shape.end());
  const auto broadcastable = [&](const Tensor& t) {
    return t.is_float() && (t.size() == inner || t.size() == 1);
  };
  if (!broadcastable(scale) || (bias != nullptr && !broadcastable(*bias))) {
    node_error(node, "Scale and B must be float of shape " + shape_str(norm_shape));
  }
  const double eps = node.attr_float("epsilon", 1e-5f);
  Shape stat_shape = x.shape;
  for (std::int64_t d = axis; d < rank; ++d) stat_shape[static_cast<std::size_t>(d)] = 1;
  Tensor y = x, mean_t = Tensor::zeros(ElementType::FLOAT, stat_shape);
  Tensor inv_t = Tensor::zeros(ElementType::FLOAT, stat_shape);
  for (std::int64_t o = 0; o < outer; ++o) {
    const auto base = static_cast<std::size_t>(o * inner);
    double mean = 0, sq = 0;
    for (std::int64_t i = 0; i < inner; ++i) mean += x.floats[base + static_cast<std::size_t>(i)];
    mean /= static_cast<double>(inner);
    for (std::int64_t i = 0; i < inner; ++i) {
      const double d = x.floats[base + static_cast<std::size_t>(i)] - mean;
      sq += d * d;
    }
    const double inv = 1.0 / std::sqrt(sq / static_cast<double>(inner) + eps);
    for (std::int64_t i = 0; i < inner; ++i) {
      const auto u = static_cast<std::size_t>(i);
      const double s = scale.floats[scale.size() == 1 ? 0 : u];
      const double b = bias == nullptr ? 0.0 : bias->floats[bias->size() == 1 ? 0 : u];
      y.floats[base + u] = static_cast<float>((x.floats[base + u] - mean) * inv * s + b);
    }
    mean_t.floats[static_cast<std::size_t>(o)] = static_cast<float>(mean);
    inv_t.floats[static_cast<std::size_t>(o)] = static_cast<float>(inv);
  }
  return {y, mean_t, inv_t};
}

Tensor concat(const Node& node, const std::vector<const Tensor*>& inputs) {
  if (inputs.empty()) node_error(node, "no inputs");
  const Tensor& first = *inputs[0];
  const auto rank = static_cast<std::int64_t>(first.rank());
  std::int64_t axis = node.attr_int("axis", 0);
  if (rank == 0 || axis < -rank || axis >= rank) {
    node_error(node, "axis " + std::to_string(axis) + " is out of range for " + first.describe());
  }
  if (axis < 0) axis += rank;
  const auto ax = static_cast<std::size_t>(axis);
  Shape out = first.shape;
  out[ax] = 0;
  for (const Tensor* t : inputs) {
    bool same = t->type == first.type && t->rank() == first.rank();
    for (std::size_t d = 0; same && d < out.size(); ++d) same = d == ax || t->shape[d] == out[d];
    if (!same) {
      node_error(node, "inputs " + first.describe() + " and " + t->describe() +
                           " differ outside axis " + std::to_string(axis));
    }
    out[ax] += t->shape[ax];
  }
  std::int64_t outer = 1;
  for (std::size_t d = 0; d < ax; ++d) outer *= out[d];
  Tensor y = Tensor::zeros(first.type, out);
  std::size_t at = 0;
  for (std::int64_t o = 0; o < outer; ++o) {
    for (const Tensor* t : inputs) {
      const std::int64_t block = outer == 0 ? 0 : t->size() / outer;
      const auto from = static_cast<std::size_t>(o * block);
      for (std::int64_t i = 0; i < block; ++i, ++at) {
        if (y.is_float()) {
          y.floats[at] = t->floats[from + static_cast<std::size_t>(i)];
        } else {
          y.ints[at] = t->ints[from + static_cast<std::size_t>(i)];
        }
      }
    }
  }
  return y;
}

}  // namespace nmsa::graph_detail
