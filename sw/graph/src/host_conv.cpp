// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// ONNX Conv (1-D and 2-D) on the host, and the im2col matrix the device path multiplies: one row
// per output position (batch, y, x), one column per K-position (input channel, kernel row,
// kernel column), so that a convolution is a GEMM whose weight is W reshaped to [M x C*KH*KW],
// pruned N:M along exactly that K.
#include <algorithm>
#include <string>

#include "host_kernels.hpp"

namespace nmsa::graph_detail {
namespace {

// An attribute of the spatial axes: `count` values, `fallback` each when absent.
Shape spatial_attr(const Node& node, const char* name, std::size_t count, std::int64_t fallback) {
  Shape v = node.attr_ints(name);
  if (v.empty()) return Shape(count, fallback);
  if (v.size() != count) {
    node_error(node, std::string("attribute '") + name + "' has " + std::to_string(v.size()) +
                         " values, the convolution has " + std::to_string(count) +
                         " spatial axes");
  }
  return v;
}

}  // namespace

ConvGeometry conv_geometry(const Node& node, const Shape& x, const Shape& w) {
  if ((x.size() != 3 && x.size() != 4) || w.size() != x.size()) {
    node_error(node, "X " + shape_str(x) + " and W " + shape_str(w) +
                         ": only 1-D and 2-D convolutions ([N, C, L] or [N, C, H, W]) are "
                         "supported");
  }
  const std::size_t axes = x.size() - 2;
  ConvGeometry g;
  g.n = x[0];
  g.c = x[1];
  g.m = w[0];
  g.groups = node.attr_int("group", 1);
  if (g.groups < 1 || g.c % g.groups != 0 || g.m % g.groups != 0 || w[1] * g.groups != g.c) {
    node_error(node, "group = " + std::to_string(g.groups) + " does not fit X " + shape_str(x) +
                         " and W " + shape_str(w));
  }
  // A 1-D convolution is a 2-D one of height 1.
  g.h = axes == 2 ? x[2] : 1;
  g.w = x.back();
  g.kh = axes == 2 ? w[2] : 1;
  g.kw = w.back();
  const Shape kernel = spatial_attr(node, "kernel_shape", axes, 0);
  if (node.has_attribute("kernel_shape") && kernel != Shape(w.begin() + 2, w.end())) {
    node_error(node, "kernel_shape " + shape_str(kernel) + " does not match W " + shape_str(w));
  }
  const Shape strides = spatial_attr(node, "strides", axes, 1);
  const Shape dilations = spatial_attr(node, "dilations", axes, 1);
  Shape pads = node.attr_ints("pads");
  if (pads.empty()) pads = Shape(2 * axes, 0);
  if (pads.size() != 2 * axes) node_error(node, "pads " + shape_str(pads) + " has the wrong length");
  g.stride_h = axes == 2 ? strides[0] : 1;
  g.stride_w = strides.back();
  g.dil_h = axes == 2 ? dilations[0] : 1;
  g.dil_w = dilations.back();
  for (const std::int64_t v : {g.stride_h, g.stride_w, g.dil_h, g.dil_w}) {
    if (v < 1) node_error(node, "strides and dilations must be >= 1");
  }
  std::int64_t pad_t = axes == 2 ? pads[0] : 0, pad_l = pads[axes - 1];
  std::int64_t pad_b = axes == 2 ? pads[2] : 0, pad_r = pads[2 * axes - 1];
  const auto it = node.attributes.find("auto_pad");
  const std::string auto_pad = it == node.attributes.end() ? "NOTSET" : it->second.s;
  const auto same = [&](std::int64_t in, std::int64_t k, std::int64_t stride, std::int64_t dil,
                        std::int64_t& begin, std::int64_t& end) {
    const std::int64_t out = (in + stride - 1) / stride;
    const std::int64_t total = std::max<std::int64_t>(0, (out - 1) * stride + (k - 1) * dil + 1 - in);
    begin = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
    end = total - begin;
  };
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    same(g.h, g.kh, g.stride_h, g.dil_h, pad_t, pad_b);
    same(g.w, g.kw, g.stride_w, g.dil_w, pad_l, pad_r);
  } else if (auto_pad == "VALID") {
    pad_t = pad_b = pad_l = pad_r = 0;
  } else if (auto_pad != "NOTSET") {
    node_error(node, "auto_pad '" + auto_pad + "' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID");
  }
  g.pad_t = pad_t;
  g.pad_l = pad_l;
  g.oh = (g.h + pad_t + pad_b - ((g.kh - 1) * g.dil_h + 1)) / g.stride_h + 1;
  g.ow = (g.w + pad_l + pad_r - ((g.kw - 1) * g.dil_w + 1)) / g.stride_w + 1;
  if (g.oh < 1 || g.ow < 1) {
    node_error(node, "the kernel does not fit X " + shape_str(x) + " with these pads");
  }
  g.out_shape = axes == 2 ? Shape{g.n, g.m, g.oh, g.ow} : Shape{g.n, g.m, g.ow};
  return g;
}

MatrixF im2col(const ConvGeometry& g, const Tensor& x) {
  MatrixF cols = MatrixF::Zero(g.n * g.oh * g.ow, g.c * g.kh * g.kw);
  for (std::int64_t b = 0; b < g.n; ++b) {
    for (std::int64_t oy = 0; oy < g.oh; ++oy) {
      for (std::int64_t ox = 0; ox < g.ow; ++ox) {
        const Eigen::Index row = (b * g.oh + oy) * g.ow + ox;
        for (std::int64_t ch = 0; ch < g.c; ++ch) {
          for (std::int64_t ky = 0; ky < g.kh; ++ky) {
            const std::int64_t iy = oy * g.stride_h - g.pad_t + ky * g.dil_h;
            if (iy < 0 || iy >= g.h) continue;
            for (std::int64_t kx = 0; kx < g.kw; ++kx) {
              const std::int64_t ix = ox * g.stride_w - g.pad_l + kx * g.dil_w;
              if (ix < 0 || ix >= g.w) continue;
              cols(row, (ch * g.kh + ky) * g.kw + kx) =
                  x.floats[static_cast<std::size_t>(((b * g.c + ch) * g.h + iy) * g.w + ix)];
            }
          }
        }
      }
    }
  }
  return cols;
}

Tensor conv_host(const Node& node, const Tensor& x, const Tensor& w, const Tensor* bias) {
  if (!x.is_float() || !w.is_float() || (bias != nullptr && !bias->is_float())) {
    node_error(node, "X, W and B must be float");
  }
  const ConvGeometry g = conv_geometry(node, x.shape, w.shape);
  if (bias != nullptr && (bias->rank() != 1 || bias->shape[0] != g.m)) {
    node_error(node, "B is " + bias->describe() + ", expected float[" + std::to_string(g.m) + "]");
  }
  const std::int64_t cg = g.c / g.groups, mg = g.m / g.groups;
  Tensor y = Tensor::zeros(ElementType::FLOAT, g.out_shape);
  for (std::int64_t b = 0; b < g.n; ++b) {
    for (std::int64_t oc = 0; oc < g.m; ++oc) {
      const std::int64_t group = oc / mg;
      for (std::int64_t oy = 0; oy < g.oh; ++oy) {
        for (std::int64_t ox = 0; ox < g.ow; ++ox) {
          double acc = bias != nullptr ? bias->floats[static_cast<std::size_t>(oc)] : 0.0;
          for (std::int64_t icg = 0; icg < cg; ++icg) {
            const std::int64_t ic = group * cg + icg;
            for (std::int64_t ky = 0; ky < g.kh; ++ky) {
              const std::int64_t iy = oy * g.stride_h - g.pad_t + ky * g.dil_h;
              if (iy < 0 || iy >= g.h) continue;
              for (std::int64_t kx = 0; kx < g.kw; ++kx) {
                const std::int64_t ix = ox * g.stride_w - g.pad_l + kx * g.dil_w;
                if (ix < 0 || ix >= g.w) continue;
                acc += double{x.floats[static_cast<std::size_t>(((b * g.c + ic) * g.h + iy) * g.w + ix)]} *
                       w.floats[static_cast<std::size_t>(((oc * cg + icg) * g.kh + ky) * g.kw + kx)];
              }
            }
          }
          y.floats[static_cast<std::size_t>(((b * g.m + oc) * g.oh + oy) * g.ow + ox)] =
              static_cast<float>(acc);
        }
      }
    }
  }
  return y;
}

}  // namespace nmsa::graph_detail
