// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
//
// The layer-by-layer runtime on models built in code: graph validation errors name the node; the
// placement matrix (an N:M weight runs sparse, a dense one falls back to dense mode, an
// unsupported operator to the host, Add(bias) and Relu fuse, constants fold, every fallback is
// counted); the integer paths are bit-exact for random operands and zero points.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "../common/seed.hpp"
#include "nmsa/device.hpp"
#include "nmsa/epilogue.hpp"
#include "nmsa/onnx_model.hpp"
#include "nmsa/runtime.hpp"
#include "nmsa/sparse_format.hpp"
#include "onnx_test_models.hpp"

namespace nmsa {
namespace {

constexpr const char* DEVICE_CONFIG = "small";

using testing::ModelBuilder;
using testing::at;
using testing::error_of;
using testing::float_matmul;
using testing::quantized_error_bound;
using testing::random_float;
using testing::seed_note;
using testing::sparse_weight_kn;
using testing::tensor_proto;
using testing::test_seed;

// --- Graph validation -------------------------------------------------------------------------

TEST(Runtime, MalformedGraphsAndUnknownOperatorsAreErrorsNamingTheNode) {
  const std::unique_ptr<Device> dev = make_model_device(DEVICE_CONFIG);
  {
    ModelBuilder b;
    b.input("a", onnx::TensorProto::FLOAT, {2}).output("y");
    b.node("Relu", {"nowhere"}, {"y"}, "r");
    const std::string e = error_of([&] { Runtime(b.graph("m.onnx"), *dev); });
    EXPECT_NE(e.find("m.onnx: Relu node 'r' reads 'nowhere'"), std::string::npos) << e;
  }
  {
    ModelBuilder b;
    b.input("a", onnx::TensorProto::FLOAT, {2}).output("y");
    b.node("Add", {"a", "z"}, {"y"}, "p");
    b.node("Relu", {"y"}, {"z"}, "q");
    const std::string e = error_of([&] { Runtime(b.graph("cycle.onnx"), *dev); });
    EXPECT_NE(e.find("cycle"), std::string::npos) << e;
  }
  {
    ModelBuilder b;
    b.input("a", onnx::TensorProto::FLOAT, {1, 1, 4, 4}).output("y");
    b.node("Resize", {"a"}, {"y"}, "resize");
    const std::string e = error_of([&] { Runtime(b.graph("resize.onnx"), *dev); });
    EXPECT_NE(e.find("resize.onnx: Resize node 'resize': operator not supported"),
              std::string::npos)
        << e;
  }
  {
    ModelBuilder b;
    b.input("a", onnx::TensorProto::FLOAT, {2}).output("y");
    b.node("Relu", {"a"}, {"y"}, "r1");
    b.node("Relu", {"a"}, {"y"}, "r2");
    const std::string e = error_of([&] { Runtime(b.graph("dup.onnx"), *dev); });
    EXPECT_NE(e.find("writes 'y'"), std::string::npos) << e;
  }
  {  // wrong input type and shape at run time
    ModelBuilder b;
    b.input("a", onnx::TensorProto::FLOAT, {2}).output("y");
    b.node("Relu", {"a"}, {"y"}, "r");
    Runtime rt(b.graph("in.onnx"), *dev);
    std::string e = error_of([&] { rt.run({{"a", Tensor::make_float({3}, {1, 2, 3})}}); });
    EXPECT_NE(e.find("in.onnx: input 'a' is float[3], the model declares shape [2]"),
              std::string::npos)
        << e;
    e = error_of([&] { rt.run({}); });
    EXPECT_NE(e.find("input 'a' is missing"), std::string::npos) << e;
  }
}

// --- Placement and fallbacks ------------------------------------------------------------------

TEST(Runtime, NmWeightRunsSparseAndFusesBiasAndRelu) {
  const std::uint64_t seed = test_seed(3);
  SCOPED_TRACE(seed_note(seed));
  std::mt19937_64 rng(seed);
  const std::int64_t m = 5, k = 18, n = 7;  // K and N not multiples of the array
  const Tensor w_kn = sparse_weight_kn(k, n, rng);
  // Gemm with transB = 1: the weight is stored [N x K] as PyTorch's Linear has it.
  Tensor w_nk = w_kn;
  w_nk.shape = {n, k};
  for (std::int64_t i = 0; i < k; ++i) {
    for (std::int64_t j = 0; j < n; ++j)
      w_nk.floats[static_cast<std::size_t>(j * k + i)] = at(w_kn, i * n + j);
  }
  const Tensor bias = random_float({n}, rng);
  ModelBuilder b;
  b.input("x", onnx::TensorProto::FLOAT, {m, k}).output("y");
  b.constant("w", w_nk).constant("bias", bias);
  ModelBuilder::attr_int(b.node("Gemm", {"x", "w"}, {"h"}, "fc"), "transB", 1);
  b.node("Add", {"h", "bias"}, {"hb"}, "add_bias");
  b.node("Relu", {"hb"}, {"y"}, "act");
  const std::unique_ptr<Device> dev = make_model_device(DEVICE_CONFIG);
  Runtime rt(b.graph(), *dev);
  const LayerReport& fc = rt.layer("fc");
  EXPECT_EQ(fc.placement, Placement::DEVICE_SPARSE) << rt.describe();
  EXPECT_EQ(fc.fallback, Fallback::NONE);
  EXPECT_EQ(fc.fused_nodes, (std::vector<std::string>{"add_bias", "act"}));
  EXPECT_EQ(rt.layer("add_bias").fused_into, "fc");
  EXPECT_EQ(rt.layer("act").fused_into, "fc");
  const PlacementCounts c = rt.counts();
  EXPECT_EQ(c.device_sparse, 1u);
  EXPECT_EQ(c.fused, 2u);
  EXPECT_EQ(c.fallbacks(), 0u) << rt.describe();

  const Tensor x = random_float({m, k}, rng);
  const Tensor y = rt.run({{"x", x}}).at("y");
  ASSERT_EQ(y.shape, (std::vector<std::int64_t>{m, n}));
  const std::vector<float> ref = float_matmul(x, w_kn);
  const std::vector<double> bound = quantized_error_bound(x, w_kn, 1.0, nullptr, 0.0);
  for (std::int64_t i = 0; i < m * n; ++i) {
    const auto u = static_cast<std::size_t>(i);
    const double expect = std::max(0.0, double{ref[u]} + at(bias, i % n));
    EXPECT_NEAR(y.floats[u], expect, bound[u]) << "element " << i;
  }
  EXPECT_EQ(rt.layer("fc").device.programs, 1u);
  EXPECT_GT(rt.layer("fc").device.tiles_sparse, 0u);
  EXPECT_EQ(rt.layer("fc").device.tiles_dense, 0u);
}

TEST(Runtime, NonNmWeightFallsBackToDenseAndIsCounted) {
  const std::uint64_t seed = test_seed(4);
  SCOPED_TRACE(seed_note(seed));
  std::mt19937_64 rng(seed);
  const std::int64_t m = 3, k = 16, n = 6;
  const Tensor w = random_float({k, n}, rng);  // dense: every group has 4 nonzeros
  ModelBuilder b;
  b.input("x", onnx::TensorProto::FLOAT, {m, k}).output("y");
  b.constant("w", w);
  b.node("MatMul", {"x", "w"}, {"y"}, "mm");
  const std::unique_ptr<Device> dev = make_model_device(DEVICE_CONFIG);
  Runtime rt(b.graph(), *dev);
  const LayerReport& l = rt.layer("mm");
  EXPECT_EQ(l.placement, Placement::DEVICE_DENSE);
  EXPECT_EQ(l.fallback, Fallback::DENSE_WEIGHT);
  EXPECT_NE(l.reason.find("not 2:4 sparse"), std::string::npos) << l.reason;
  const PlacementCounts c = rt.counts();
  EXPECT_EQ(c.device_dense, 1u);
  EXPECT_EQ(c.dense_fallbacks, 1u);
  EXPECT_EQ(c.fallbacks(), 1u);
  EXPECT_NE(rt.describe().find("fallbacks: 1 (dense weight 1"), std::string::npos) << rt.describe();

  const Tensor x = random_float({m, k}, rng);
  const Tensor y = rt.run({{"x", x}}).at("y");
  const std::vector<float> ref = float_matmul(x, w);
  const std::vector<double> bound = quantized_error_bound(x, w, 1.0, nullptr, 0.0);
  for (std::size_t i = 0; i < ref.size(); ++i) EXPECT_NEAR(y.floats[i], ref[i], bound[i]) << i;
  EXPECT_GT(l.device.tiles_dense, 0u);
  EXPECT_EQ(l.device.tiles_sparse, 0u);

  // A sparse weight with sparse mode switched off is a dense fallback too.
  ModelBuilder s;
  s.input("x", onnx::TensorProto::FLOAT, {m, k}).output("y");
  s.constant("w", sparse_weight_kn(k, n, rng));
  s.node("MatMul", {"x", "w"}, {"y"}, "mm");
  RuntimeOptions o;
  o.allow_sparse = false;
  Runtime forced(s.graph(), *dev, o);
  EXPECT_EQ(forced.layer("mm").placement, Placement::DEVICE_DENSE);
  EXPECT_EQ(forced.counts().dense_fallbacks, 1u);
}

TEST(Runtime, UnsupportedOperatorsRunOnTheHostAndAreCounted) {
  const std::uint64_t seed = test_seed(5);
  SCOPED_TRACE(seed_note(seed));
  std::mt19937_64 rng(seed);
  const std::int64_t m = 4, k = 8, n = 5;
  const Tensor w = sparse_weight_kn(k, n, rng);
  ModelBuilder b;
  b.input("x", onnx::TensorProto::FLOAT, {m, k}).output("p");
  b.constant("w", w);
  b.constant("shape", Tensor::make_int(ElementType::INT64, {2}, {m, -1}));
  b.node("Flatten", {"x"}, {"xf"}, "flat");
  b.node("MatMul", {"xf", "w"}, {"h"}, "mm");
  b.node("Softmax", {"h"}, {"s"}, "softmax");
  b.node("Relu", {"s"}, {"r"}, "late_relu");  // nothing on the device to fuse into
  b.node("Reshape", {"r", "shape"}, {"p"}, "reshape");
  const std::unique_ptr<Device> dev = make_model_device(DEVICE_CONFIG);
  Runtime rt(b.graph(), *dev);
  EXPECT_EQ(rt.layer("mm").placement, Placement::DEVICE_SPARSE);
  EXPECT_EQ(rt.layer("softmax").placement, Placement::HOST);
  EXPECT_EQ(rt.layer("softmax").fallback, Fallback::HOST_UNSUPPORTED_OP);
  EXPECT_EQ(rt.layer("late_relu").fallback, Fallback::HOST_UNFUSED);
  EXPECT_EQ(rt.layer("flat").fallback, Fallback::NONE);
  EXPECT_EQ(rt.layer("reshape").fallback, Fallback::NONE);
  const PlacementCounts c = rt.counts();
  EXPECT_EQ(c.device_sparse, 1u);
  EXPECT_EQ(c.host, 4u);
  EXPECT_EQ(c.shape_ops, 2u);
  EXPECT_EQ(c.host_unsupported_op, 1u);
  EXPECT_EQ(c.host_unfused, 1u);
  EXPECT_EQ(c.host_fallbacks(), 2u);
  EXPECT_EQ(c.fallbacks(), 2u) << rt.describe();

  const Tensor x = random_float({m, k}, rng);
  const Tensor p = rt.run({{"x", x}}).at("p");
  ASSERT_EQ(p.shape, (std::vector<std::int64_t>{m, n}));
  for (std::int64_t i = 0; i < m; ++i) {
    double sum = 0;
    for (std::int64_t j = 0; j < n; ++j) sum += at(p, i * n + j);
    EXPECT_NEAR(sum, 1.0, 1e-5) << "row " << i;
  }
  // Host layers are timed on the host, run by run; the device layer has no host time of its own.
  rt.run({{"x", x}});
  double host_seconds = 0;
  for (const char* name : {"flat", "softmax", "late_relu", "reshape"}) {
    EXPECT_EQ(rt.layer(name).host.runs, 2u) << name;
    EXPECT_GE(rt.layer(name).host.seconds, 0.0) << name;
    host_seconds += rt.layer(name).host.seconds;
  }
  EXPECT_GT(host_seconds, 0.0);
  EXPECT_EQ(rt.layer("mm").host.runs, 0u);
  EXPECT_EQ(rt.layer("mm").host.seconds, 0.0);
  // The runtime's total is the sum over its host layers: 4 of them, each run twice.
  EXPECT_EQ(rt.host_total().runs, 8u);
  EXPECT_NEAR(rt.host_total().seconds, host_seconds, 1e-12);
}

TEST(Runtime, ConstantNodeWeightsAndFrozenInputsAreConstants) {
  ModelBuilder b;
  b.input("x", onnx::TensorProto::FLOAT, {2, 4}).input("w2", onnx::TensorProto::FLOAT, {2, 2});
  b.output("y");
  auto* c = b.node("Constant", {}, {"w"}, "weight");
  auto* a = c->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  *a->mutable_t() = tensor_proto("", Tensor::make_float({4, 2}, {1, 0, 0, 1, 0, 0, 0, 0}));
  b.node("MatMul", {"x", "w"}, {"h"}, "mm1");
  b.node("MatMul", {"h", "w2"}, {"y"}, "mm2");
  Graph g = b.graph();
  const std::unique_ptr<Device> dev = make_model_device(DEVICE_CONFIG);
  {
    Runtime rt(g, *dev);
    EXPECT_EQ(rt.layer("mm1").placement, Placement::DEVICE_SPARSE) << rt.describe();
    EXPECT_EQ(rt.layer("mm2").fallback, Fallback::HOST_UNSUPPORTED_CASE) << rt.describe();
  }
  EXPECT_THROW(g.freeze_input("nope", Tensor::make_float({}, {0})), std::invalid_argument);
  g.freeze_input("w2", Tensor::make_float({2, 2}, {2, 0, 0, 2}));
  EXPECT_TRUE(g.is_constant("w2"));
  ASSERT_EQ(g.inputs.size(), 1u);
  Runtime rt(g, *dev);
  EXPECT_EQ(rt.layer("mm2").placement, Placement::DEVICE_SPARSE) << rt.describe();
  // Weights that INT8 represents exactly and inputs in multiples of max/127: an exact result.
  const Tensor y =
      rt.run({{"x", Tensor::make_float({2, 4}, {127, -64, 3, 5, 1, 2, -127, 0})}}).at("y");
  EXPECT_EQ(y.floats, (std::vector<float>{254, -128, 2, 4}));
}

// A Linear without bias as older PyTorch exports write it: MatMul(x, Transpose(W)) with W the
// [N x K] initializer. The Transpose is folded when the model loads, so the MatMul's weight is a
// constant and runs on the device; a Cast -> Reshape -> Identity chain of constants folds too.
TEST(Runtime, ConstantSubgraphsAreFoldedBeforePlacement) {
  const std::uint64_t seed = test_seed(12);
  SCOPED_TRACE(seed_note(seed));
  std::mt19937_64 rng(seed);
  const std::int64_t m = 3, k = 16, n = 5;
  const Tensor w_kn = sparse_weight_kn(k, n, rng);
  Tensor w_nk = Tensor::zeros(ElementType::FLOAT, {n, k});
  for (std::int64_t i = 0; i < k; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      w_nk.floats[static_cast<std::size_t>(j * k + i)] = at(w_kn, i * n + j);
    }
  }
  // The second layer's weight [n x 2] arrives as int32 values in a flat [2n] initializer.
  std::vector<std::int64_t> w2_values;
  for (std::int64_t i = 0; i < 2 * n; ++i) w2_values.push_back(i % 3 == 0 ? 2 : 0);
  ModelBuilder b;
  b.input("x", onnx::TensorProto::FLOAT, {m, k}).output("y");
  b.constant("w", w_nk);
  b.constant("w2_flat", Tensor::make_int(ElementType::INT32, {2 * n}, w2_values));
  b.constant("w2_shape", Tensor::make_int(ElementType::INT64, {2}, {n, 2}));
  ModelBuilder::attr_ints(b.node("Transpose", {"w"}, {"wt"}, "transpose_w"), "perm", {1, 0});
  ModelBuilder::attr_int(b.node("Cast", {"w2_flat"}, {"w2_f"}, "cast_w2"), "to", 1);
  b.node("Reshape", {"w2_f", "w2_shape"}, {"w2_r"}, "reshape_w2");
  b.node("Identity", {"w2_r"}, {"w2"}, "identity_w2");
  b.node("MatMul", {"x", "wt"}, {"h"}, "fc1");
  b.node("MatMul", {"h", "w2"}, {"y"}, "fc2");
  const std::unique_ptr<Device> dev = make_model_device(DEVICE_CONFIG);
  Runtime rt(b.graph(), *dev);
  EXPECT_EQ(rt.layer("fc1").placement, Placement::DEVICE_SPARSE) << rt.describe();
  EXPECT_NE(rt.layer("fc2").placement, Placement::HOST) << rt.describe();
  for (const char* name : {"transpose_w", "cast_w2", "reshape_w2", "identity_w2"}) {
    EXPECT_TRUE(rt.layer(name).folded) << name << "\n" << rt.describe();
    EXPECT_NE(rt.layer(name).reason.find("folded when the model is loaded"), std::string::npos);
  }
  EXPECT_NE(rt.layer("transpose_w").reason.find("Transpose of 'w'"), std::string::npos)
      << rt.layer("transpose_w").reason;
  const PlacementCounts c = rt.counts();
  EXPECT_EQ(c.folded, 4u);
  EXPECT_EQ(c.host, 0u) << rt.describe();
  EXPECT_EQ(c.fallbacks(), 0u) << rt.describe();

  const Tensor x = random_float({m, k}, rng);
  const Tensor y = rt.run({{"x", x}}).at("y");
  ASSERT_EQ(y.shape, (std::vector<std::int64_t>{m, 2}));
  const std::vector<float> h = float_matmul(x, w_kn);
  const std::vector<double> bound = quantized_error_bound(x, w_kn, 1.0, nullptr, 0.0);
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t j = 0; j < 2; ++j) {
      double want = 0, tol = 0;
      for (std::int64_t r = 0; r < n; ++r) {
        const double w2 = static_cast<double>(w2_values[static_cast<std::size_t>(r * 2 + j)]);
        want += h[static_cast<std::size_t>(i * n + r)] * w2;
        tol += bound[static_cast<std::size_t>(i * n + r)] * w2;
      }
      // fc2 quantizes h too: allow its own rounding, a fraction of the largest |h| per term.
      double h_max = 0;
      for (std::int64_t r = 0; r < n; ++r) {
        h_max = std::max(h_max, std::abs(double{h[static_cast<std::size_t>(i * n + r)]}));
      }
      tol += 4.0 * n * h_max / 127.0;
      EXPECT_NEAR(y.floats[static_cast<std::size_t>(i * 2 + j)], want, tol) << i << "," << j;
    }
  }
}

// A Conv whose weight is 2:4 along input channels x kernel window runs sparse on the device as
// one GEMM over the im2col matrix, its Relu fused; a depthwise Conv runs on the host. Both match
// the host's float convolution (the device at the INT8 tolerance of docs/runtime.md).
TEST(Runtime, ConvolutionsRunOnTheDeviceAsGemmsAndDepthwiseOnTheHost) {
  const std::uint64_t seed = test_seed(13);
  SCOPED_TRACE(seed_note(seed));
  std::mt19937_64 rng(seed);
  const std::int64_t c = 3, m = 5, kh = 3, kw = 3;
  Tensor w = random_float({m, c, kh, kw}, rng);
  // 2:4 along K = c*kh*kw = 27 (padded to 28 by the device): zero 2 of every 4 K-positions.
  for (std::int64_t o = 0; o < m; ++o) {
    for (std::int64_t k = 0; k < c * kh * kw; ++k) {
      if (k % 4 >= 2) w.floats[static_cast<std::size_t>(o * c * kh * kw + k)] = 0.0f;
    }
  }
  const Tensor bias = random_float({m}, rng);
  const Tensor dw = random_float({c, 1, 3, 3}, rng);
  ModelBuilder b;
  b.input("x", onnx::TensorProto::FLOAT, {2, c, 6, 5}).output("y").output("d");
  b.constant("w", w).constant("bias", bias).constant("dw", dw);
  auto* conv = b.node("Conv", {"x", "w", "bias"}, {"h"}, "conv");
  ModelBuilder::attr_ints(conv, "pads", {1, 0, 1, 2});
  ModelBuilder::attr_ints(conv, "strides", {1, 2});
  b.node("Relu", {"h"}, {"y"}, "relu");
  ModelBuilder::attr_int(b.node("Conv", {"x", "dw"}, {"d"}, "depthwise"), "group", c);
  const std::unique_ptr<Device> dev = make_model_device(DEVICE_CONFIG);
  Runtime rt(b.graph(), *dev);
  EXPECT_EQ(rt.layer("conv").placement, Placement::DEVICE_SPARSE) << rt.describe();
  EXPECT_EQ(rt.layer("relu").fused_into, "conv");
  EXPECT_EQ(rt.layer("depthwise").placement, Placement::HOST);
  EXPECT_NE(rt.layer("depthwise").reason.find("depthwise convolutions run on the host"),
            std::string::npos)
      << rt.layer("depthwise").reason;

  const Tensor x = random_float({2, c, 6, 5}, rng);
  const auto out = rt.run({{"x", x}});
  RuntimeOptions host;
  host.device_layers = false;
  host.fuse = false;
  Runtime reference(b.graph(), *dev, host);
  const auto want = reference.run({{"x", x}});
  const Tensor& y = out.at("y");
  ASSERT_EQ(y.shape, (std::vector<std::int64_t>{2, m, 6, 3}));  // (5 + 0 + 2 - 3) / 2 + 1 = 3
  double max_ref = 0;
  for (const float v : want.at("y").floats) max_ref = std::max(max_ref, double{std::abs(v)});
  for (std::size_t i = 0; i < y.floats.size(); ++i) {
    EXPECT_NEAR(y.floats[i], want.at("y").floats[i], 4.0 / 127.0 * max_ref) << i;
  }
  EXPECT_EQ(out.at("d").floats, want.at("d").floats);
  EXPECT_GT(rt.layer("conv").device.tiles_sparse, 0u);
}

// Conv -> BatchNormalization -> Relu -> MaxPool -> GlobalAveragePool: the BatchNormalization folds
// into the Conv's weight and bias, the Relu fuses, the pools run on the host; the result matches
// the unfolded float graph on the host.
TEST(Runtime, BatchNormalizationFoldsIntoThePrecedingConv) {
  const std::uint64_t seed = test_seed(14);
  SCOPED_TRACE(seed_note(seed));
  std::mt19937_64 rng(seed);
  const std::int64_t c = 2, m = 4;
  const Tensor w = random_float({m, c, 3, 3}, rng);
  Tensor var = random_float({m}, rng);
  for (float& v : var.floats) v = std::abs(v) + 0.5f;
  ModelBuilder b;
  b.input("x", onnx::TensorProto::FLOAT, {1, c, 8, 8}).output("y");
  b.constant("w", w).constant("scale", random_float({m}, rng)).constant("shift", random_float({m}, rng));
  b.constant("mean", random_float({m}, rng)).constant("var", var);
  ModelBuilder::attr_ints(b.node("Conv", {"x", "w"}, {"h"}, "conv"), "pads", {1, 1, 1, 1});
  b.node("BatchNormalization", {"h", "scale", "shift", "mean", "var"}, {"n"}, "bn");
  b.node("Relu", {"n"}, {"r"}, "relu");
  auto* pool = b.node("MaxPool", {"r"}, {"p"}, "pool");
  ModelBuilder::attr_ints(pool, "kernel_shape", {2, 2});
  ModelBuilder::attr_ints(pool, "strides", {2, 2});
  b.node("GlobalAveragePool", {"p"}, {"y"}, "gap");
  const std::unique_ptr<Device> dev = make_model_device(DEVICE_CONFIG);
  Runtime rt(b.graph(), *dev);
  EXPECT_TRUE(rt.layer("bn").folded) << rt.describe();
  EXPECT_NE(rt.layer("bn").reason.find("folded into Conv node 'conv'"), std::string::npos)
      << rt.layer("bn").reason;
  EXPECT_NE(rt.layer("conv").placement, Placement::HOST) << rt.describe();
  EXPECT_EQ(rt.layer("relu").fused_into, "conv") << rt.describe();
  EXPECT_EQ(rt.layer("pool").fallback, Fallback::HOST_UNSUPPORTED_OP);

  const Tensor x = random_float({1, c, 8, 8}, rng);
  RuntimeOptions host;
  host.device_layers = false;
  host.fuse = false;
  Runtime reference(b.graph(), *dev, host);
  EXPECT_FALSE(reference.layer("bn").folded);
  const Tensor y = rt.run({{"x", x}}).at("y");
  const Tensor want = reference.run({{"x", x}}).at("y");
  ASSERT_EQ(y.shape, (std::vector<std::int64_t>{1, m, 1, 1}));
  double max_ref = 0;
  for (const float v : want.floats) max_ref = std::max(max_ref, double{std::abs(v)});
  for (std::size_t i = 0; i < y.floats.size(); ++i) {
    EXPECT_NEAR(y.floats[i], want.floats[i], 4.0 / 127.0 * max_ref) << i;
  }
}

// Transpose, Cast, Unsqueeze and Squeeze on runtime values run on the host, exactly.
TEST(Runtime, LayoutAndCastKernelsOnTheHost) {
  ModelBuilder b;
  b.input("x", onnx::TensorProto::FLOAT, {2, 3, 1}).output("t").output("c").output("u");
  b.constant("axes", Tensor::make_int(ElementType::INT64, {1}, {0}));
  ModelBuilder::attr_ints(b.node("Transpose", {"x"}, {"t"}, "transpose"), "perm", {2, 0, 1});
  ModelBuilder::attr_int(b.node("Cast", {"x"}, {"c"}, "cast"), "to", 3);  // int8
  b.node("Squeeze", {"x"}, {"s"}, "squeeze");                             // every axis of size 1
  b.node("Unsqueeze", {"s", "axes"}, {"u"}, "unsqueeze");
  const std::unique_ptr<Device> dev = make_model_device(DEVICE_CONFIG);
  Runtime rt(b.graph(), *dev);
  EXPECT_EQ(rt.layer("transpose").fallback, Fallback::HOST_UNSUPPORTED_OP);
  EXPECT_EQ(rt.layer("cast").fallback, Fallback::HOST_UNSUPPORTED_OP);
  EXPECT_EQ(rt.layer("squeeze").fallback, Fallback::NONE);
  EXPECT_FALSE(rt.layer("squeeze").folded);
  const auto out =
      rt.run({{"x", Tensor::make_float({2, 3, 1}, {1.9f, -2.9f, 3, 200.5f, 5, -6})}});
  EXPECT_EQ(out.at("t").shape, (std::vector<std::int64_t>{1, 2, 3}));
  EXPECT_EQ(out.at("t").floats, (std::vector<float>{1.9f, -2.9f, 3, 200.5f, 5, -6}));
  EXPECT_EQ(out.at("c").type, ElementType::INT8);
  // Truncated toward zero; 200 wraps to -56 as a two's-complement cast does.
  EXPECT_EQ(out.at("c").ints, (std::vector<std::int64_t>{1, -2, 3, -56, 5, -6}));
  EXPECT_EQ(out.at("u").shape, (std::vector<std::int64_t>{1, 2, 3}));

  ModelBuilder bad;
  bad.input("x", onnx::TensorProto::FLOAT, {2, 3}).output("t");
  ModelBuilder::attr_ints(bad.node("Transpose", {"x"}, {"t"}, "tr"), "perm", {0, 0});
  Runtime rt_bad(bad.graph(), *dev);
  std::mt19937_64 rng(1);
  const Tensor x = random_float({2, 3}, rng);
  const std::string e = error_of([&] { rt_bad.run({{"x", x}}); });
  EXPECT_NE(e.find("perm [0x0] is not a permutation"), std::string::npos) << e;
}

TEST(Runtime, SoftmaxBeforeOpset13NormalizesTheFlattenedTrailingDimensions) {
  ModelBuilder b;
  b.proto().mutable_opset_import(0)->set_version(11);
  b.input("x", onnx::TensorProto::FLOAT, {2, 2, 2}).output("y");
  b.node("Softmax", {"x"}, {"y"}, "sm");  // axis 1: rows of 4 = 2 x 2
  const std::unique_ptr<Device> dev = make_model_device(DEVICE_CONFIG);
  Runtime rt(b.graph(), *dev);
  const Tensor y = rt.run({{"x", Tensor::make_float({2, 2, 2}, {0, 0, 0, 0, 1, 1, 1, 1})}}).at("y");
  for (const float v : y.floats) EXPECT_FLOAT_EQ(v, 0.25f);
}

TEST(Runtime, DynamicWeightsRunOnTheHost) {
  ModelBuilder b;
  b.input("x", onnx::TensorProto::FLOAT, {2, 3}).input("w", onnx::TensorProto::FLOAT, {3, 2});
  b.output("y");
  b.node("MatMul", {"x", "w"}, {"y"}, "mm");
  const std::unique_ptr<Device> dev = make_model_device(DEVICE_CONFIG);
  Runtime rt(b.graph(), *dev);
  EXPECT_EQ(rt.layer("mm").fallback, Fallback::HOST_UNSUPPORTED_CASE);
  EXPECT_NE(rt.layer("mm").reason.find("not a constant weight"), std::string::npos);
  const Tensor y = rt.run({{"x", Tensor::make_float({2, 3}, {1, 2, 3, 4, 5, 6})},
                           {"w", Tensor::make_float({3, 2}, {1, 0, 0, 1, 1, 1})}})
                       .at("y");
  EXPECT_EQ(y.floats, (std::vector<float>{4, 5, 10, 11}));
}

// --- Integer paths: bit-exact ------------------------------------------------------------------

struct IntCase {
  ElementType a_type, b_type;
  bool per_row_a, per_col_b;
  bool sparse_b;
};

std::int64_t random_in(ElementType t, std::mt19937_64& rng) {
  return t == ElementType::UINT8 ? static_cast<std::int64_t>(rng() % 256)
                                 : static_cast<std::int64_t>(rng() % 256) - 128;
}

TEST(Runtime, MatMulIntegerIsBitExactOnTheDevice) {
  const std::uint64_t seed = test_seed(6);
  SCOPED_TRACE(seed_note(seed));
  std::mt19937_64 rng(seed);
  const std::int64_t m = 5, k = 20, n = 6;
  const std::vector<IntCase> cases{
      {ElementType::UINT8, ElementType::UINT8, false, false, true},
      {ElementType::UINT8, ElementType::UINT8, true, true, false},
      {ElementType::INT8, ElementType::INT8, false, true, true},
      {ElementType::INT8, ElementType::UINT8, true, false, false},
      {ElementType::UINT8, ElementType::INT8, false, false, false},
  };
  const std::unique_ptr<Device> dev = make_model_device(DEVICE_CONFIG);
  for (std::size_t ci = 0; ci < cases.size(); ++ci) {
    const IntCase& ic = cases[ci];
    SCOPED_TRACE("case " + std::to_string(ci));
    Tensor a = Tensor::zeros(ic.a_type, {m, k});
    for (auto& v : a.ints) v = random_in(ic.a_type, rng);
    Tensor za = Tensor::zeros(
        ic.a_type, ic.per_row_a ? std::vector<std::int64_t>{m} : std::vector<std::int64_t>{});
    for (auto& v : za.ints) v = random_in(ic.a_type, rng);
    Tensor zb = Tensor::zeros(
        ic.b_type, ic.per_col_b ? std::vector<std::int64_t>{n} : std::vector<std::int64_t>{});
    for (auto& v : zb.ints)
      v = random_in(ic.b_type, rng) / 2 + (ic.b_type == ElementType::UINT8 ? 64 : 0);
    Tensor bt = Tensor::zeros(ic.b_type, {k, n});
    for (std::int64_t kk = 0; kk < k; ++kk) {
      for (std::int64_t j = 0; j < n; ++j) {
        const std::int64_t z = zb.ints[static_cast<std::size_t>(ic.per_col_b ? j : 0)];
        // Sparse: B - zb is 0 in two of every four K positions and fits INT8 elsewhere.
        std::int64_t v = random_in(ic.b_type, rng);
        if (ic.sparse_b)
          v = (kk % 4 < 2)
                  ? z
                  : std::clamp<std::int64_t>(z + static_cast<std::int64_t>(rng() % 200) - 100,
                                             ic.b_type == ElementType::UINT8 ? 0 : -128,
                                             ic.b_type == ElementType::UINT8 ? 255 : 127);
        bt.ints[static_cast<std::size_t>(kk * n + j)] = v;
      }
    }
    const int a_pt =
        ic.a_type == ElementType::UINT8 ? onnx::TensorProto::UINT8 : onnx::TensorProto::INT8;
    ModelBuilder b;
    b.input("a", a_pt, {m, k}).output("y");
    b.constant("b", bt).constant("za", za).constant("zb", zb);
    b.node("MatMulInteger", {"a", "b", "za", "zb"}, {"y"}, "mmi");
    Runtime rt(b.graph(), *dev);
    const LayerReport& l = rt.layer("mmi");
    if (ic.sparse_b) {
      EXPECT_EQ(l.placement, Placement::DEVICE_SPARSE) << rt.describe();
    } else {
      EXPECT_NE(l.placement, Placement::HOST) << rt.describe();
    }
    const Tensor y = rt.run({{"a", a}}).at("y");
    ASSERT_EQ(y.type, ElementType::INT32);
    ASSERT_EQ(y.shape, (std::vector<std::int64_t>{m, n}));
    for (std::int64_t i = 0; i < m; ++i) {
      for (std::int64_t j = 0; j < n; ++j) {
        std::int64_t s = 0;
        for (std::int64_t kk = 0; kk < k; ++kk) {
          s += (a.ints[static_cast<std::size_t>(i * k + kk)] -
                za.ints[static_cast<std::size_t>(ic.per_row_a ? i : 0)]) *
               (bt.ints[static_cast<std::size_t>(kk * n + j)] -
                zb.ints[static_cast<std::size_t>(ic.per_col_b ? j : 0)]);
        }
        ASSERT_EQ(y.ints[static_cast<std::size_t>(i * n + j)], s) << "(" << i << ", " << j << ")";
      }
    }
  }
}

// The reference requantization: the device epilogue's arithmetic (epilogue.hpp) without its INT8
// saturation, then the output zero point and the output type's range.
std::int64_t qlinear_reference(std::int64_t acc, double real_scale, std::int64_t zy, bool u8) {
  const QuantizedMultiplier qm = quantize_multiplier(real_scale);
  __extension__ typedef __int128 int128;
  const int128 p = static_cast<int128>(acc) * qm.multiplier;
  const auto q =
      static_cast<std::int64_t>((p + (static_cast<int128>(1) << (qm.shift - 1))) >> qm.shift);
  return std::clamp<std::int64_t>(q + zy, u8 ? 0 : -128, u8 ? 255 : 127);
}

TEST(Runtime, QLinearMatMulIsBitExactWithTheEpilogueOnTheDeviceOrTheHost) {
  const std::uint64_t seed = test_seed(8);
  SCOPED_TRACE(seed_note(seed));
  std::mt19937_64 rng(seed);
  const std::int64_t m = 6, k = 24, n = 5;
  const std::unique_ptr<Device> dev = make_model_device(DEVICE_CONFIG);
  // y zero point 128 (uint8): the device's epilogue requantizes; 118: the host does.
  for (const std::int64_t zy : {128, 118}) {
    SCOPED_TRACE("y_zero_point " + std::to_string(zy));
    const std::int64_t za = 113, zb = 120;
    Tensor a = Tensor::zeros(ElementType::UINT8, {2, m, k});  // batched A against a 2-D B
    for (auto& v : a.ints) v = static_cast<std::int64_t>(rng() % 256);
    Tensor bt = Tensor::zeros(ElementType::UINT8, {k, n});
    for (std::int64_t kk = 0; kk < k; ++kk) {
      for (std::int64_t j = 0; j < n; ++j) {
        bt.ints[static_cast<std::size_t>(kk * n + j)] =
            kk % 4 == j % 4 || kk % 4 == (j + 1) % 4
                ? zb + static_cast<std::int64_t>(rng() % 200) - 100
                : zb;
      }
    }
    const float sa = 0.0066f, sb = 0.00705f, sy = 0.0107f * 2;
    ModelBuilder b;
    b.input("a", onnx::TensorProto::UINT8, {2, m, k}).output("y");
    b.constant("sa", Tensor::make_float({}, {sa}))
        .constant("za", Tensor::make_int(ElementType::UINT8, {}, {za}))
        .constant("b", bt)
        .constant("sb", Tensor::make_float({}, {sb}))
        .constant("zb", Tensor::make_int(ElementType::UINT8, {}, {zb}))
        .constant("sy", Tensor::make_float({}, {sy}))
        .constant("zy", Tensor::make_int(ElementType::UINT8, {}, {zy}));
    b.node("QLinearMatMul", {"a", "sa", "za", "b", "sb", "zb", "sy", "zy"}, {"y"}, "qmm");
    Runtime rt(b.graph(), *dev);
    const LayerReport& l = rt.layer("qmm");
    EXPECT_EQ(l.placement, Placement::DEVICE_SPARSE) << rt.describe();
    const bool on_device = l.reason.find("requantized in the device epilogue") != std::string::npos;
    EXPECT_EQ(on_device, zy == 128) << l.reason;
    const Tensor y = rt.run({{"a", a}}).at("y");
    ASSERT_EQ(y.type, ElementType::UINT8);
    ASSERT_EQ(y.shape, (std::vector<std::int64_t>{2, m, n}));
    const double real = double{sa} * double{sb} / double{sy};
    int saturated = 0;
    for (std::int64_t t = 0; t < 2; ++t) {
      for (std::int64_t i = 0; i < m; ++i) {
        for (std::int64_t j = 0; j < n; ++j) {
          std::int64_t s = 0;
          for (std::int64_t kk = 0; kk < k; ++kk) {
            s += (a.ints[static_cast<std::size_t>((t * m + i) * k + kk)] - za) *
                 (bt.ints[static_cast<std::size_t>(kk * n + j)] - zb);
          }
          const std::int64_t expect = qlinear_reference(s, real, zy, true);
          saturated += expect == 0 || expect == 255;
          ASSERT_EQ(y.ints[static_cast<std::size_t>((t * m + i) * n + j)], expect)
              << "(" << t << ", " << i << ", " << j << ") acc " << s;
        }
      }
    }
    EXPECT_LT(saturated, 2 * m * n / 2) << "the scales should keep most outputs in range";
  }
}

}  // namespace
}  // namespace nmsa
