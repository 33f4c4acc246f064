// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// The quantized MLP in ONNX's QDQ form (serialize_int8_mlp_onnx) and its deployment by the
// runtime (qdq_pattern.hpp):
// 1. ONNX's own checker accepts the exported model.
// 2. On the functional model of the "small" device (4x4, 2:4), every layer is one device GEMM:
//    the DequantizeLinear nodes, the Relu and the QuantizeLinear are fused into it, the 2:4
//    layers run sparse and a layer left dense falls back to dense mode, only the input's
//    QuantizeLinear runs on the host; and the logits equal Int8Mlp's golden model bit for bit,
//    for inputs beyond the calibrated range (saturating) and of both signs.
// 3. The same with the device's plans ranked for a host memory (RuntimeOptions::memory), the
//    demo's setting, over two runs (the second reuses the plans chosen in the first).
// 4. A QDQ Gemm the device cannot take whole (a non-zero activation zero point) runs on the host
//    and says why.
// 5. The exporter refuses a malformed quantized model, naming the layer and the field.
// 6. The three layers run as one command stream (RuntimeOptions::chain_layers): one START a run,
//    the logits of the layers run alone, each layer's counters its share of the stream's, and a
//    wrong result byte caught by the golden check naming the layer.
#include <gtest/gtest.h>
#include <onnx/checker.h>
#include <onnx/onnx_pb.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "../common/expect_throw.hpp"
#include "../common/seed.hpp"
#include "../common/wrapped_devices.hpp"
#include "nmsa/device.hpp"
#include "nmsa/int8_mlp.hpp"
#include "nmsa/mlp.hpp"
#include "nmsa/onnx_export.hpp"
#include "nmsa/onnx_model.hpp"
#include "nmsa/runtime.hpp"

namespace nmsa {
namespace {

using nmsa::testing::expect_throw_containing;
using nmsa::testing::seed_note;
using nmsa::testing::test_seed;

constexpr const char* DEVICE_CONFIG = "small";
const std::vector<int> SIZES{32, 16, 8, 4};
const NmPattern PATTERN{2, 4};

MatrixF random_input(Eigen::Index rows, std::mt19937_64& rng, float lo, float hi) {
  std::uniform_real_distribution<float> d(lo, hi);
  MatrixF x(rows, SIZES.front());
  for (Eigen::Index i = 0; i < x.size(); ++i) x.data()[i] = d(rng);
  return x;
}

// A trained-looking quantized MLP: random weights with non-zero biases, the first two layers
// 2:4-pruned (and run sparse), the last left dense; scales calibrated below the maximum so that
// some activations saturate.
Int8Mlp test_model(std::uint64_t seed, std::mt19937_64& rng) {
  Mlp m = make_mlp(SIZES, seed);
  std::uniform_real_distribution<float> d(-0.5f, 0.5f);
  for (MlpLayer& l : m.layers) {
    for (Eigen::Index i = 0; i < l.b.size(); ++i) l.b(i) = d(rng);
  }
  apply_nm_masks(m, PATTERN, false, {}, {true, true, false});
  const MatrixF calibration = random_input(64, rng, 0.0f, 1.0f);
  const std::vector<float> scales = calibrate_input_scales(m, calibration, 99.0);
  return quantize_mlp(m, scales, {GemmMode::SPARSE, GemmMode::SPARSE, GemmMode::DENSE}, PATTERN);
}

Tensor to_tensor(const MatrixF& x) {
  return Tensor::make_float({x.rows(), x.cols()},
                            std::vector<float>(x.data(), x.data() + x.size()));
}

// Int8Mlp's logits for x: the golden model of what the device computes.
MatrixF golden_logits(const Int8Mlp& q, const MatrixF& x) {
  return logits_from_accumulators(q.layers.back(), golden_forward(q, quantize_input(q, x)));
}

void expect_bit_exact(Runtime& rt, const Int8Mlp& q, const MatrixF& x) {
  const Tensor y = rt.run({{"input", to_tensor(x)}}).at("logits");
  ASSERT_EQ(y.type, ElementType::FLOAT);
  ASSERT_EQ(y.shape, (std::vector<std::int64_t>{x.rows(), SIZES.back()}));
  const MatrixF want = golden_logits(q, x);
  for (Eigen::Index i = 0; i < want.size(); ++i) {
    ASSERT_EQ(y.floats[static_cast<std::size_t>(i)], want.data()[i])
        << "logit " << i << " of " << want.size();
  }
}

TEST(OnnxQdqTest, OnnxCheckerAcceptsTheQuantizedModel) {
  const std::uint64_t seed = test_seed(41);
  SCOPED_TRACE(seed_note(seed));
  std::mt19937_64 rng(seed);
  onnx::ModelProto p;
  ASSERT_TRUE(p.ParseFromString(serialize_int8_mlp_onnx(test_model(seed, rng))));
  EXPECT_NO_THROW(onnx::checker::check_model(p));
}

TEST(OnnxQdqTest, EveryLayerIsOneDeviceGemmAndTheLogitsAreBitExact) {
  const std::uint64_t seed = test_seed(42);
  SCOPED_TRACE(seed_note(seed));
  std::mt19937_64 rng(seed);
  const Int8Mlp q = test_model(seed, rng);
  const std::unique_ptr<Device> dev = make_model_device(DEVICE_CONFIG);
  Runtime rt(parse_onnx_model(serialize_int8_mlp_onnx(q), "qdq.onnx"), *dev);

  for (std::size_t i = 0; i < q.layers.size(); ++i) {
    const std::string fc = q.layers[i].name;
    const LayerReport& l = rt.layer(fc);
    const bool last = i + 1 == q.layers.size();
    EXPECT_EQ(l.placement, last ? Placement::DEVICE_DENSE : Placement::DEVICE_SPARSE)
        << rt.describe();
    EXPECT_EQ(l.fallback, last ? Fallback::DENSE_WEIGHT : Fallback::NONE) << l.reason;
    std::vector<std::string> fused{fc + ".dequantize_input", fc + ".dequantize_weight"};
    if (!last) {
      fused.push_back("relu" + std::to_string(i + 1));
      fused.push_back(q.layers[i + 1].name + ".quantize_input");
      EXPECT_NE(l.reason.find("in the device epilogue"), std::string::npos) << l.reason;
    }
    EXPECT_EQ(l.fused_nodes, fused) << rt.describe();
    for (const std::string& f : fused) EXPECT_EQ(rt.layer(f).fused_into, fc) << f;
  }
  const PlacementCounts c = rt.counts();
  EXPECT_EQ(c.device_sparse, 2u);
  EXPECT_EQ(c.device_dense, 1u);
  EXPECT_EQ(c.host, 1u) << rt.describe();  // the input's QuantizeLinear
  EXPECT_EQ(rt.layer("fc1.quantize_input").fallback, Fallback::HOST_UNSUPPORTED_OP);

  // Inside the calibrated range, beyond it (saturating), and of both signs; batch sizes that are
  // not multiples of the array.
  for (const auto& [rows, lo, hi] :
       std::vector<std::tuple<Eigen::Index, float, float>>{{7, 0.0f, 1.0f}, {5, -3.0f, 3.0f},
                                                            {1, 0.0f, 1.0f}}) {
    SCOPED_TRACE(std::to_string(rows) + " rows in [" + std::to_string(lo) + ", " +
                 std::to_string(hi) + "]");
    expect_bit_exact(rt, q, random_input(rows, rng, lo, hi));
  }
  EXPECT_GT(rt.layer("fc1").device.tiles_sparse, 0u);
  EXPECT_EQ(rt.layer("fc1").device.tiles_dense, 0u);
  EXPECT_GT(rt.layer("fc3").device.tiles_dense, 0u);
}

TEST(OnnxQdqTest, PlansRankedForAHostMemoryGiveTheSameLogits) {
  const std::uint64_t seed = test_seed(43);
  SCOPED_TRACE(seed_note(seed));
  std::mt19937_64 rng(seed);
  const Int8Mlp q = test_model(seed, rng);
  const std::unique_ptr<Device> dev = make_model_device(DEVICE_CONFIG);
  RuntimeOptions o;
  o.memory = PerfModelParams{};
  o.memory->dma_read_latency = 40;
  Runtime rt(parse_onnx_model(serialize_int8_mlp_onnx(q), "qdq.onnx"), *dev, o);
  for (int run = 0; run < 2; ++run) expect_bit_exact(rt, q, random_input(6, rng, 0.0f, 1.0f));
  EXPECT_EQ(rt.layer("fc1").device.programs, 2u);
}

TEST(OnnxQdqTest, ConsecutiveLayersRunAsOneCommandStream) {
  const std::uint64_t seed = test_seed(46);
  SCOPED_TRACE(seed_note(seed));
  std::mt19937_64 rng(seed);
  const Int8Mlp q = test_model(seed, rng);
  const std::string model = serialize_int8_mlp_onnx(q);
  RuntimeOptions chained;
  chained.check_golden = true;
  RuntimeOptions alone = chained;
  alone.chain_layers = false;
  testing::CountingDevice chain_dev(make_model_device(DEVICE_CONFIG));
  testing::CountingDevice alone_dev(make_model_device(DEVICE_CONFIG));
  Runtime rc(parse_onnx_model(model, "qdq.onnx"), chain_dev, chained);
  Runtime ra(parse_onnx_model(model, "qdq.onnx"), alone_dev, alone);

  const MatrixF x = random_input(9, rng, -1.0f, 2.0f);
  const Tensor yc = rc.run({{"input", to_tensor(x)}}).at("logits");
  const Tensor ya = ra.run({{"input", to_tensor(x)}}).at("logits");
  EXPECT_EQ(chain_dev.starts, 1);
  EXPECT_EQ(alone_dev.starts, 3);
  EXPECT_EQ(yc.floats, ya.floats);
  const MatrixF want = golden_logits(q, x);
  ASSERT_EQ(yc.floats.size(), static_cast<std::size_t>(want.size()));
  for (Eigen::Index i = 0; i < want.size(); ++i) {
    ASSERT_EQ(yc.floats[static_cast<std::size_t>(i)], want.data()[i]) << "logit " << i;
  }
  for (std::size_t i = 0; i < q.layers.size(); ++i) {
    const std::string& fc = q.layers[i].name;
    SCOPED_TRACE(fc);
    EXPECT_EQ(rc.layer(fc).stream, "fc1 -> fc2 -> fc3");
    EXPECT_EQ(ra.layer(fc).stream, "");
    const DeviceStats& c = rc.layer(fc).device;
    const DeviceStats& a = ra.layer(fc).device;
    EXPECT_EQ(c.programs, 1u);
    EXPECT_EQ(c.golden_checked, 1u);
    // The same tiles of the same weights: the barriers between layers are the chain's.
    EXPECT_EQ(c.tiles_sparse, a.tiles_sparse);
    EXPECT_EQ(c.tiles_dense, a.tiles_dense);
    EXPECT_EQ(c.macs, a.macs);
    EXPECT_EQ(c.compute_cycles, a.compute_cycles);
    EXPECT_EQ(c.commands, a.commands);
    EXPECT_EQ(c.meta_bytes, a.meta_bytes);
    EXPECT_EQ(c.dma_wr_bytes, a.dma_wr_bytes);
    EXPECT_GT(c.predicted_cycles, 0u);
    EXPECT_EQ(c.cycles, 0u);  // the functional model has no clock
  }

  // An empty batch sends nothing and gives empty logits.
  const Tensor empty = rc.run({{"input", to_tensor(MatrixF(0, SIZES.front()))}}).at("logits");
  EXPECT_EQ(empty.shape, (std::vector<std::int64_t>{0, SIZES.back()}));
  EXPECT_EQ(chain_dev.starts, 1);
  // A wrong byte in the last layer's output is caught by the golden check, naming that layer.
  testing::OneWrongByteDevice wrong(make_model_device(DEVICE_CONFIG),
                                    testing::OneWrongByteDevice::Store::LAST);
  Runtime caught(parse_onnx_model(model, "qdq.onnx"), wrong, chained);
  expect_throw_containing([&] { caught.run({{"input", to_tensor(x)}}); },
                          std::vector<std::string>{"fc3", "differs from the golden model at row"});
}

TEST(OnnxQdqTest, AQdqGemmTheDeviceCannotTakeRunsOnTheHostAndSaysWhy) {
  const std::uint64_t seed = test_seed(44);
  SCOPED_TRACE(seed_note(seed));
  std::mt19937_64 rng(seed);
  const Int8Mlp q = test_model(seed, rng);
  onnx::ModelProto p;
  ASSERT_TRUE(p.ParseFromString(serialize_int8_mlp_onnx(q)));
  // fc2's activation zero point becomes 3: asymmetric, which the device's INT8 path does not take.
  for (onnx::TensorProto& t : *p.mutable_graph()->mutable_initializer()) {
    if (t.name() == "fc2.input_zero_point") t.set_raw_data(std::string(1, '\x03'));
  }
  std::string bytes;
  ASSERT_TRUE(p.SerializeToString(&bytes));
  const std::unique_ptr<Device> dev = make_model_device(DEVICE_CONFIG);
  Runtime rt(parse_onnx_model(bytes, "asymmetric.onnx"), *dev);
  const LayerReport& fc2 = rt.layer("fc2");
  EXPECT_EQ(fc2.placement, Placement::HOST) << rt.describe();
  EXPECT_EQ(fc2.fallback, Fallback::HOST_UNSUPPORTED_CASE);
  EXPECT_NE(fc2.reason.find("QDQ Gemm not fused: the activation zero point is 3, not 0"),
            std::string::npos)
      << fc2.reason;
  EXPECT_EQ(rt.layer("fc1").placement, Placement::DEVICE_SPARSE) << rt.describe();
  EXPECT_EQ(rt.layer("fc3").placement, Placement::DEVICE_DENSE) << rt.describe();
  // The host runs fc2 in float between its Q/DQ nodes: finite logits of the right shape.
  const Tensor y = rt.run({{"input", to_tensor(random_input(3, rng, 0.0f, 1.0f))}}).at("logits");
  ASSERT_EQ(y.shape, (std::vector<std::int64_t>{3, SIZES.back()}));
  for (const float v : y.floats) EXPECT_TRUE(std::isfinite(v));
}

TEST(OnnxQdqTest, MalformedQuantizedModelsAreRejectedNamingTheLayer) {
  const std::uint64_t seed = test_seed(45);
  SCOPED_TRACE(seed_note(seed));
  std::mt19937_64 rng(seed);
  const Int8Mlp good = test_model(seed, rng);
  auto rejected = [](const Int8Mlp& q, const std::string& want) {
    try {
      serialize_int8_mlp_onnx(q);
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
      return;
    }
    ADD_FAILURE() << "accepted a model that should fail with: " << want;
  };
  rejected(Int8Mlp{}, "the model has no layers");
  Int8Mlp q = good;
  q.layers[1].bias[2] = std::nanf("");
  rejected(q, "fc2: bias [2] is not finite");
  q = good;
  q.layers[2].input_scale = 0.0f;
  rejected(q, "fc3: input scale 0");
  q = good;
  q.layers[0].weight_scales.pop_back();
  rejected(q, "fc1: 15 weight scales and 16 biases for 16 channels");
  q = good;
  q.layers[1].weights = MatrixI8::Zero(8, 12);
  rejected(q, "fc2: K = 12 is not fc1's N_out = 16");
}

}  // namespace
}  // namespace nmsa
