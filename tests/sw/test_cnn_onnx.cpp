// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// ONNX export of the demo's CNN (serialize_cnn_onnx, onnx_export.hpp) and the exported model on
// the runtime with the functional model of the "small" device (4x4, 2:4):
// - ONNX's checker accepts it, and nmsa's loader reads back the graph the header promises;
// - pruned with prunable_layers, the first convolution (one input channel, K = 9) runs dense as
//   a counted DENSE_WEIGHT fallback, every other Conv and Gemm sparse on the device, each Relu
//   fused into its layer, each MaxPool on the host as a counted fallback;
// - the logits match cnn_forward within the INT8 path's error and the classes agree;
// - with RuntimeOptions::check_golden every device GEMM equals the golden model, and a device that
//   stores one wrong byte is caught, naming the layer;
// - in QDQ form (serialize_int8_cnn_onnx) with calibrated scales, every Conv and Gemm is one
//   device layer from int8 to int8 (the last to float logits), every GEMM equal to the golden
//   model, and the logits agree with the same graph computed on the host in float;
// - malformed models are refused naming the layer.
#include <gtest/gtest.h>
#include <onnx/checker.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "../common/expect_throw.hpp"
#include "../common/seed.hpp"
#include "../common/wrapped_devices.hpp"
#include "nmsa/cnn.hpp"
#include "nmsa/device.hpp"
#include "nmsa/int8_mlp.hpp"
#include "nmsa/isa.hpp"
#include "nmsa/onnx_export.hpp"
#include "nmsa/onnx_model.hpp"
#include "nmsa/runtime.hpp"

namespace nmsa {
namespace {

using nmsa::testing::expect_throw_containing;
using nmsa::testing::OneWrongByteDevice;
using nmsa::testing::seed_note;
using nmsa::testing::test_seed;

// 8 x 8 single-channel images, two pooled blocks: conv1 K = 9, conv2 K = 72, fc1 K = 8*2*2.
CnnShape test_shape() {
  CnnShape s;
  s.height = 8;
  s.width = 8;
  s.convs = {{8, 3, true}, {8, 3, true}};
  s.hidden = {16};
  s.classes = 4;
  return s;
}

Cnn test_cnn(std::uint64_t seed) {
  Cnn m = make_cnn(test_shape(), seed);
  std::mt19937_64 rng(seed + 1);
  std::uniform_real_distribution<float> d(-0.1f, 0.1f);
  for (MlpLayer& l : m.params.layers) {
    for (Eigen::Index i = 0; i < l.b.size(); ++i) l.b(i) = d(rng);
  }
  return m;
}

// test_cnn pruned 2:4 where prunable_layers allows: every layer but the first convolution.
Cnn pruned_test_cnn(std::uint64_t seed) {
  Cnn m = test_cnn(seed);
  const NmPattern pattern{2, 4};
  apply_nm_masks(m.params, pattern, false, {}, prunable_layers(m, pattern));
  return m;
}

// The graph of `bytes` once ONNX's checker has accepted it, as nmsa's loader reads it.
Graph checked_graph(const std::string& bytes) {
  onnx::ModelProto p;
  EXPECT_TRUE(p.ParseFromString(bytes));
  EXPECT_NO_THROW(onnx::checker::check_model(p));
  return parse_onnx_model(bytes, "cnn.onnx");
}

std::vector<std::string> op_types(const Graph& g) {
  std::vector<std::string> ops;
  for (const Node& n : g.nodes) ops.push_back(n.op_type);
  return ops;
}

TEST(CnnOnnxTest, CheckerAcceptsTheGraphNmsaReadsBack) {
  const std::uint64_t seed = test_seed(41);
  SCOPED_TRACE(seed_note(seed));
  const Cnn m = test_cnn(seed);
  const Graph g = checked_graph(serialize_cnn_onnx(m));
  EXPECT_EQ(op_types(g), (std::vector<std::string>{"Reshape", "Conv", "Relu", "MaxPool", "Conv", "Relu",
                                           "MaxPool", "Flatten", "Gemm", "Relu", "Gemm"}));
  const Tensor& w = g.initializers.at("conv2.weight");
  EXPECT_EQ(w.shape, (std::vector<std::int64_t>{8, 8, 3, 3}));
  // nmsa's [M x C*K*K] row-major order is ONNX's [M, C, KH, KW].
  for (std::size_t i = 0; i < w.floats.size(); ++i) {
    ASSERT_EQ(w.floats[i], m.params.layers[1].w.data()[i]) << "conv2.weight element " << i;
  }
}

TEST(CnnOnnxTest, PrunedCnnRunsSparseExceptTheFirstConvolution) {
  const std::uint64_t seed = test_seed(42);
  SCOPED_TRACE(seed_note(seed));
  const Cnn m = pruned_test_cnn(seed);
  const std::unique_ptr<Device> dev = make_model_device("small");
  Runtime rt(parse_onnx_model(serialize_cnn_onnx(m), "cnn.onnx"), *dev);

  const LayerReport& conv1 = rt.layer("conv1");
  EXPECT_EQ(conv1.placement, Placement::DEVICE_DENSE) << rt.describe();
  EXPECT_EQ(conv1.fallback, Fallback::DENSE_WEIGHT) << conv1.reason;
  for (const char* name : {"conv2", "fc1", "fc2"}) {
    EXPECT_EQ(rt.layer(name).placement, Placement::DEVICE_SPARSE) << name << ": " << rt.describe();
  }
  for (const char* name : {"conv1", "conv2", "fc1"}) {
    EXPECT_EQ(rt.layer(name).fused_nodes, (std::vector<std::string>{std::string(name) + ".relu"}))
        << rt.describe();
  }
  for (const char* name : {"conv1.pool", "conv2.pool"}) {
    EXPECT_EQ(rt.layer(name).placement, Placement::HOST) << name;
    EXPECT_EQ(rt.layer(name).fallback, Fallback::HOST_UNSUPPORTED_OP) << name;
  }
  const PlacementCounts c = rt.counts();
  EXPECT_EQ(c.device_sparse, 3u) << rt.describe();
  EXPECT_EQ(c.device_dense, 1u);
  EXPECT_EQ(c.dense_fallbacks, 1u);
  EXPECT_EQ(c.host_unsupported_op, 2u);

  std::mt19937_64 rng(seed + 2);
  std::uniform_real_distribution<float> pixel(0.0f, 1.0f);
  MatrixF x(9, 64);
  for (Eigen::Index i = 0; i < x.size(); ++i) x.data()[i] = pixel(rng);
  std::map<std::string, Tensor> out;
  ASSERT_NO_THROW(out = rt.run({{"input", Tensor::make_float({x.rows(), x.cols()},
                                                             std::vector<float>(
                                                                 x.data(), x.data() + x.size()))}}))
      << rt.describe();
  const Tensor& y = out.at("logits");
  ASSERT_EQ(y.shape, (std::vector<std::int64_t>{9, 4}));
  const MatrixF ref = cnn_forward(m, x);
  MatrixF got(9, 4);
  for (Eigen::Index i = 0; i < got.size(); ++i) got.data()[i] = y.floats[static_cast<std::size_t>(i)];
  // INT8 weights and activations through four layers: within a tenth of the logits' range (a
  // wrong weight order, a missing bias or ReLU moves them by a large part of it).
  const float range = ref.maxCoeff() - ref.minCoeff();
  ASSERT_GT(range, 0.0f);
  EXPECT_LT((got - ref).cwiseAbs().maxCoeff(), 0.1f * range) << "got\n" << got << "\nwant\n" << ref;
  EXPECT_GE(rt.layer("conv2").device.tiles_sparse, 1u);
  EXPECT_GE(rt.layer("conv1").device.tiles_dense, 1u);
}

TEST(CnnOnnxTest, GoldenCheckPassesEveryGemmAndCatchesOneWrongByte) {
  const std::uint64_t seed = test_seed(43);
  SCOPED_TRACE(seed_note(seed));
  const Cnn m = pruned_test_cnn(seed);
  const std::string onnx = serialize_cnn_onnx(m);
  std::mt19937_64 rng(seed + 2);
  std::uniform_real_distribution<float> pixel(0.0f, 1.0f);
  std::vector<float> x(5 * 64);
  for (float& v : x) v = pixel(rng);
  const std::map<std::string, Tensor> in{{"input", Tensor::make_float({5, 64}, x)}};
  RuntimeOptions checked;
  checked.check_golden = true;

  const std::unique_ptr<Device> dev = make_model_device("small");
  Runtime rt(parse_onnx_model(onnx, "cnn.onnx"), *dev, checked);
  ASSERT_NO_THROW(rt.run(in)) << rt.describe();
  for (const char* name : {"conv1", "conv2", "fc1", "fc2"}) {
    EXPECT_GE(rt.layer(name).device.programs, 1u) << name;
    EXPECT_EQ(rt.layer(name).device.golden_checked, rt.layer(name).device.programs) << name;
  }

  OneWrongByteDevice wrong(make_model_device("small"));
  Runtime unchecked(parse_onnx_model(onnx, "cnn.onnx"), wrong);
  EXPECT_NO_THROW(unchecked.run(in));  // the wrong byte passes unnoticed without the check
  EXPECT_EQ(unchecked.layer("conv1").device.golden_checked, 0u);
  Runtime caught(parse_onnx_model(onnx, "cnn.onnx"), wrong, checked);
  expect_throw_containing([&] { caught.run(in); }, std::vector<std::string>
                          {"conv1", "device one-wrong-byte(model:small) differs from the golden "
                                    "model at row "});
}

MatrixF random_pixels(Eigen::Index rows, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> pixel(0.0f, 1.0f);
  MatrixF x(rows, 64);
  for (Eigen::Index i = 0; i < x.size(); ++i) x.data()[i] = pixel(rng);
  return x;
}

MatrixF logits_of(Runtime& rt, const MatrixF& x) {
  const Tensor y =
      rt.run({{"input", Tensor::make_float({x.rows(), x.cols()},
                                           std::vector<float>(x.data(), x.data() + x.size()))}})
          .at("logits");
  return Eigen::Map<const MatrixF>(y.floats.data(), x.rows(), y.shape.back());
}

TEST(CnnOnnxTest, Int8ExportRunsEveryLayerOnTheDeviceInInt8) {
  const std::uint64_t seed = test_seed(44);
  SCOPED_TRACE(seed_note(seed));
  const Cnn m = pruned_test_cnn(seed);
  const std::vector<float> scales = calibrate_cnn_input_scales(m, random_pixels(64, seed + 1));
  const std::string bytes = serialize_int8_cnn_onnx(m, scales);
  const Graph g = checked_graph(bytes);
  const std::vector<std::string> block{"DequantizeLinear", "DequantizeLinear", "Conv", "Relu",
                                       "QuantizeLinear", "MaxPool"};
  std::vector<std::string> want{"Reshape", "QuantizeLinear"};
  want.insert(want.end(), block.begin(), block.end());
  want.insert(want.end(), block.begin(), block.end());
  for (const char* op : {"Flatten", "DequantizeLinear", "DequantizeLinear", "Gemm", "Relu",
                         "QuantizeLinear", "DequantizeLinear", "DequantizeLinear", "Gemm"}) {
    want.emplace_back(op);
  }
  EXPECT_EQ(op_types(g), want);
  EXPECT_FLOAT_EQ(g.initializers.at("fc2.input_scale").floats.at(0), scales[3]);

  RuntimeOptions checked;
  checked.check_golden = true;
  const std::unique_ptr<Device> dev = make_model_device("small");
  Runtime rt(parse_onnx_model(bytes, "cnn_int8.onnx"), *dev, checked);
  EXPECT_EQ(rt.layer("conv1").placement, Placement::DEVICE_DENSE) << rt.describe();
  EXPECT_EQ(rt.layer("conv1").fallback, Fallback::DENSE_WEIGHT);
  for (const char* name : {"conv2", "fc1", "fc2"}) {
    EXPECT_EQ(rt.layer(name).placement, Placement::DEVICE_SPARSE) << name << ": " << rt.describe();
  }
  // Each hidden layer reads int8 and writes int8 at the next layer's scale, in one device GEMM.
  EXPECT_EQ(rt.layer("conv2").fused_nodes,
            (std::vector<std::string>{"conv2.dequantize_input", "conv2.dequantize_weight",
                                      "conv2.relu", "fc1.quantize_input"}));
  EXPECT_EQ(rt.layer("fc2").fused_nodes,
            (std::vector<std::string>{"fc2.dequantize_input", "fc2.dequantize_weight"}));
  EXPECT_EQ(rt.counts().device_sparse + rt.counts().device_dense, 4u) << rt.describe();

  const MatrixF x = random_pixels(9, seed + 2);
  const MatrixF got = logits_of(rt, x);
  for (const char* name : {"conv1", "conv2", "fc1", "fc2"}) {
    EXPECT_GE(rt.layer(name).device.programs, 1u) << name;
    EXPECT_EQ(rt.layer(name).device.golden_checked, rt.layer(name).device.programs) << name;
  }
  // The same graph on the host in float between the quantizers: the epilogue's fixed-point
  // requantization may round a value one step the other way, no more.
  RuntimeOptions host;
  host.device_layers = false;
  Runtime on_host(parse_onnx_model(bytes, "cnn_int8.onnx"), *dev, host);
  const MatrixF want_logits = logits_of(on_host, x);
  const MatrixF fp32 = cnn_forward(m, x);
  const float range = fp32.maxCoeff() - fp32.minCoeff();
  ASSERT_GT(range, 0.0f);
  EXPECT_LT((got - want_logits).cwiseAbs().maxCoeff(), 0.02f * range)
      << "device\n" << got << "\nhost\n" << want_logits;
  EXPECT_LT((got - fp32).cwiseAbs().maxCoeff(), 0.1f * range) << "int8\n" << got << "\nfp32\n"
                                                              << fp32;
}

TEST(CnnOnnxTest, MalformedModelsAreRefusedNamingTheLayer) {
  const Cnn good = test_cnn(7);
  Cnn nan = good;
  nan.params.layers[1].w(3, 5) = std::numeric_limits<float>::quiet_NaN();
  expect_throw_containing([&] { serialize_cnn_onnx(nan); }, "conv2.weight[3][5] is nan");
  Cnn shape = good;
  shape.params.layers[2].w = MatrixF::Zero(16, 31);
  expect_throw_containing([&] { serialize_cnn_onnx(shape); },
                          "fc1.weight is [16 x 31] with 16 biases, the shape needs [16 x 32]");
  Cnn missing = good;
  missing.params.layers.pop_back();
  expect_throw_containing([&] { serialize_cnn_onnx(missing); },
                          "the shape has 4 trainable layers, the model 3");
  expect_throw_containing([&] { export_cnn_onnx(nan, "/nonexistent-nmsa-dir/cnn.onnx"); },
                          "/nonexistent-nmsa-dir/cnn.onnx: cannot export the CNN");

  expect_throw_containing([&] { serialize_int8_cnn_onnx(good, {0.1f, 0.1f, 0.1f}); },
                          "3 input scales for 4 layers");
  expect_throw_containing([&] { serialize_int8_cnn_onnx(good, {0.1f, 0.1f, 0.0f, 0.1f}); },
                          "fc1's input scale 0.000000 is not finite and > 0");
  expect_throw_containing([&] { serialize_int8_cnn_onnx(nan, {0.1f, 0.1f, 0.1f, 0.1f}); },
                          "conv2.weight[3][5] is nan");
}

}  // namespace
}  // namespace nmsa
