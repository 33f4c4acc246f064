// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// A Conv in ONNX's QDQ form (qdq_pattern.hpp) on the runtime with the functional model of the
// "small" device (4x4, 2:4):
// 1. DequantizeLinear of the int8 input and of the constant int8 weight (per output channel,
//    axis 0), the Conv with its bias, a Relu and a QuantizeLinear are one device layer, sparse
//    for a 2:4 weight; its int8 output equals a direct convolution in integers followed by the
//    epilogue's requantization, element for element, with padding and with strides, and every
//    device GEMM equals the golden model.
// 2. Without the QuantizeLinear the accumulators come back and the host dequantizes them with the
//    bias and the ReLU.
// 3. A QDQ Conv the device cannot take as one GEMM (grouped; a weight scale on the wrong axis)
//    runs on the host and says why.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "../common/seed.hpp"
#include "nmsa/device.hpp"
#include "nmsa/epilogue.hpp"
#include "nmsa/onnx_model.hpp"
#include "nmsa/quant.hpp"
#include "nmsa/runtime.hpp"

namespace nmsa {
namespace {

using nmsa::testing::seed_note;
using nmsa::testing::test_seed;

constexpr std::int64_t N = 2, C = 4, H = 6, W = 5, M = 8, KH = 3, KW = 3;

struct ConvCase {
  std::int64_t stride = 1, pad = 0, group = 1;
  bool quantize_output = true;
  std::int64_t weight_scale_axis = 0;
};

struct QdqConv {
  float sx = 0.05f, sy = 0.2f;
  std::vector<float> sw, bias;
  Tensor w;  // int8 [M, C/group, KH, KW]
};

QdqConv random_layer(std::mt19937_64& rng, std::int64_t group) {
  QdqConv l;
  std::uniform_int_distribution<int> value(-127, 127);
  std::uniform_real_distribution<float> scale(0.01f, 0.03f), bias(-0.5f, 0.5f);
  const std::int64_t k = C / group * KH * KW;
  std::vector<std::int64_t> w(static_cast<std::size_t>(M * k));
  // 2:4 along the flattened K (input channel x kernel window): two of every four kept.
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = (i % 4) < 2 ? value(rng) : 0;
  l.w = Tensor::make_int(ElementType::INT8, {M, C / group, KH, KW}, w);
  for (std::int64_t m = 0; m < M; ++m) {
    l.sw.push_back(scale(rng));
    l.bias.push_back(bias(rng));
  }
  return l;
}

Attribute ints_attr(std::vector<std::int64_t> v) {
  Attribute a;
  a.kind = Attribute::Kind::INTS;
  a.ints = std::move(v);
  return a;
}

Attribute int_attr(std::int64_t v) {
  Attribute a;
  a.kind = Attribute::Kind::INT;
  a.i = v;
  return a;
}

// x_q -> DequantizeLinear -> Conv(., DequantizeLinear(W_q), B) -> Relu [-> QuantizeLinear] -> y
Graph qdq_conv_graph(const QdqConv& l, const ConvCase& c) {
  Graph g;
  g.name = "qdq_conv";
  g.source = "qdq_conv.onnx";
  g.opset = 13;
  g.initializers["sx"] = Tensor::make_float({}, {l.sx});
  g.initializers["zp"] = Tensor::make_int(ElementType::INT8, {}, {0});
  g.initializers["w_q"] = l.w;
  g.initializers["sw"] = Tensor::make_float({M}, l.sw);
  g.initializers["zw"] = Tensor::make_int(ElementType::INT8, {M}, std::vector<std::int64_t>(M, 0));
  g.initializers["b"] = Tensor::make_float({M}, l.bias);
  g.initializers["sy"] = Tensor::make_float({}, {l.sy});
  g.inputs = {{"x_q", ElementType::INT8, std::vector<std::int64_t>{N, C, H, W}}};
  g.nodes.push_back({"dq_x", "DequantizeLinear", "", {"x_q", "sx", "zp"}, {"x"}, {}});
  g.nodes.push_back({"dq_w", "DequantizeLinear", "", {"w_q", "sw", "zw"}, {"w"},
                     {{"axis", int_attr(c.weight_scale_axis)}}});
  g.nodes.push_back({"conv", "Conv", "", {"x", "w", "b"}, {"conv.out"},
                     {{"strides", ints_attr({c.stride, c.stride})},
                      {"pads", ints_attr({c.pad, c.pad, c.pad, c.pad})},
                      {"group", int_attr(c.group)}}});
  g.nodes.push_back({"relu", "Relu", "", {"conv.out"}, {"relu.out"}, {}});
  if (c.quantize_output) {
    g.nodes.push_back({"q_y", "QuantizeLinear", "", {"relu.out", "sy", "zp"}, {"y"}, {}});
    g.outputs = {{"y", ElementType::INT8, std::nullopt}};
  } else {
    g.outputs = {{"relu.out", ElementType::FLOAT, std::nullopt}};
  }
  return g;
}

Tensor random_input(std::mt19937_64& rng) {
  std::uniform_int_distribution<int> value(-128, 127);
  std::vector<std::int64_t> x(static_cast<std::size_t>(N * C * H * W));
  for (std::int64_t& v : x) v = value(rng);
  return Tensor::make_int(ElementType::INT8, {N, C, H, W}, x);
}

// The convolution in integers, written directly (no im2col): [N*OH*OW x M], rows (b, oy, ox).
MatrixI32 direct_conv(const Tensor& x, const Tensor& w, const ConvCase& c, std::int64_t& oh,
                      std::int64_t& ow) {
  oh = (H + 2 * c.pad - KH) / c.stride + 1;
  ow = (W + 2 * c.pad - KW) / c.stride + 1;
  MatrixI32 acc = MatrixI32::Zero(N * oh * ow, M);
  for (std::int64_t b = 0; b < N; ++b) {
    for (std::int64_t oy = 0; oy < oh; ++oy) {
      for (std::int64_t ox = 0; ox < ow; ++ox) {
        for (std::int64_t m = 0; m < M; ++m) {
          std::int32_t sum = 0;
          for (std::int64_t ch = 0; ch < C; ++ch) {
            for (std::int64_t ky = 0; ky < KH; ++ky) {
              for (std::int64_t kx = 0; kx < KW; ++kx) {
                const std::int64_t iy = oy * c.stride - c.pad + ky;
                const std::int64_t ix = ox * c.stride - c.pad + kx;
                if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
                sum += static_cast<std::int32_t>(
                    x.ints[static_cast<std::size_t>(((b * C + ch) * H + iy) * W + ix)] *
                    w.ints[static_cast<std::size_t>(((m * C + ch) * KH + ky) * KW + kx)]);
              }
            }
          }
          acc((b * oh + oy) * ow + ox, m) = sum;
        }
      }
    }
  }
  return acc;
}

TEST(QdqConvTest, OneSparseDeviceLayerWithTheEpilogueBitExact) {
  const std::uint64_t seed = test_seed(61);
  SCOPED_TRACE(seed_note(seed));
  std::mt19937_64 rng(seed);
  for (const ConvCase& c : {ConvCase{1, 1}, ConvCase{2, 0}}) {
    SCOPED_TRACE("stride " + std::to_string(c.stride) + ", pad " + std::to_string(c.pad));
    const QdqConv l = random_layer(rng, 1);
    const std::unique_ptr<Device> dev = make_model_device("small");
    RuntimeOptions o;
    o.check_golden = true;
    Runtime rt(qdq_conv_graph(l, c), *dev, o);
    const LayerReport& conv = rt.layer("conv");
    EXPECT_EQ(conv.placement, Placement::DEVICE_SPARSE) << rt.describe();
    EXPECT_NE(conv.reason.find("bias, requantization and ReLU in the device epilogue"),
              std::string::npos)
        << conv.reason;
    EXPECT_EQ(conv.fused_nodes, (std::vector<std::string>{"dq_x", "dq_w", "relu", "q_y"}));
    EXPECT_EQ(rt.counts().host, 0u) << rt.describe();

    const Tensor x = random_input(rng);
    const Tensor y = rt.run({{"x_q", x}}).at("y");
    std::int64_t oh = 0, ow = 0;
    const MatrixI32 want = apply_epilogue(direct_conv(x, l.w, c, oh, ow),
                                          requant_params(l.sx, l.sw, l.sy, l.bias), true, false);
    ASSERT_EQ(y.type, ElementType::INT8);
    ASSERT_EQ(y.shape, (std::vector<std::int64_t>{N, M, oh, ow}));
    int positive = 0;
    for (std::int64_t b = 0; b < N; ++b) {
      for (std::int64_t m = 0; m < M; ++m) {
        for (std::int64_t p = 0; p < oh * ow; ++p) {
          const std::int64_t got = y.ints[static_cast<std::size_t>((b * M + m) * oh * ow + p)];
          ASSERT_EQ(got, want(b * oh * ow + p, m)) << "batch " << b << ", channel " << m
                                                   << ", position " << p;
          positive += got > 0 ? 1 : 0;
        }
      }
    }
    EXPECT_GT(positive, 0);  // not all clipped by the ReLU
    EXPECT_EQ(conv.device.golden_checked, conv.device.programs);
    EXPECT_GE(conv.device.tiles_sparse, 1u);
  }
}

TEST(QdqConvTest, WithoutQuantizeLinearTheHostDequantizes) {
  const std::uint64_t seed = test_seed(62);
  SCOPED_TRACE(seed_note(seed));
  std::mt19937_64 rng(seed);
  ConvCase c{1, 1};
  c.quantize_output = false;
  const QdqConv l = random_layer(rng, 1);
  const std::unique_ptr<Device> dev = make_model_device("small");
  Runtime rt(qdq_conv_graph(l, c), *dev);
  EXPECT_NE(rt.layer("conv").reason.find("QDQ layer: dequantized on the host"), std::string::npos)
      << rt.layer("conv").reason;
  const Tensor x = random_input(rng);
  const Tensor y = rt.run({{"x_q", x}}).at("relu.out");
  std::int64_t oh = 0, ow = 0;
  const MatrixI32 acc = direct_conv(x, l.w, c, oh, ow);
  ASSERT_EQ(y.shape, (std::vector<std::int64_t>{N, M, oh, ow}));
  for (std::int64_t b = 0; b < N; ++b) {
    for (std::int64_t m = 0; m < M; ++m) {
      for (std::int64_t p = 0; p < oh * ow; ++p) {
        const double v = static_cast<double>(l.sx) * l.sw[static_cast<std::size_t>(m)] *
                             acc(b * oh * ow + p, m) +
                         l.bias[static_cast<std::size_t>(m)];
        const float want = std::max(static_cast<float>(v), 0.0f);
        ASSERT_EQ(y.floats[static_cast<std::size_t>((b * M + m) * oh * ow + p)], want)
            << "batch " << b << ", channel " << m << ", position " << p;
      }
    }
  }
}

TEST(QdqConvTest, AQdqConvTheDeviceCannotTakeRunsOnTheHostAndSaysWhy) {
  const std::uint64_t seed = test_seed(63);
  SCOPED_TRACE(seed_note(seed));
  std::mt19937_64 rng(seed);
  ConvCase grouped{1, 1};
  grouped.group = 2;
  ConvCase wrong_axis{1, 1};
  wrong_axis.weight_scale_axis = 1;
  for (const auto& [c, why] :
       std::vector<std::pair<ConvCase, std::string>>{
           {grouped, "QDQ Conv not fused: group = 2: grouped and depthwise convolutions are not "
                     "one GEMM"},
           {wrong_axis, "QDQ Conv not fused: the weight scale float[8] is neither per tensor nor "
                        "per output channel (axis 1, not 0)"}}) {
    const QdqConv l = random_layer(rng, c.group);
    const std::unique_ptr<Device> dev = make_model_device("small");
    Runtime rt(qdq_conv_graph(l, c), *dev);
    const LayerReport& conv = rt.layer("conv");
    EXPECT_EQ(conv.placement, Placement::HOST) << rt.describe();
    EXPECT_EQ(conv.fallback, Fallback::HOST_UNSUPPORTED_CASE);
    EXPECT_NE(conv.reason.find(why), std::string::npos) << conv.reason;
  }
}

}  // namespace
}  // namespace nmsa
