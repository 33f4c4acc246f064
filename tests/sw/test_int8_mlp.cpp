// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// The INT8 deployment of the demo's MLP (int8_mlp.hpp), running it on a device (its QDQ export
// on the runtime), predicting its cycles (mlp_cycles.hpp),
// and the layer selection of the pruning functions (mlp.hpp) that the quality gate relies on.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "../common/expect_throw.hpp"
#include "../common/seed.hpp"
#include "nmsa/device.hpp"
#include "nmsa/int8_mlp.hpp"
#include "nmsa/mlp.hpp"
#include "nmsa/mlp_cycles.hpp"
#include "nmsa/onnx_export.hpp"
#include "nmsa/onnx_model.hpp"
#include "nmsa/runtime.hpp"

namespace nmsa {
namespace {

using nmsa::testing::expect_throw_containing;
using nmsa::testing::seed_note;
using nmsa::testing::test_seed;

MatrixF random_inputs(Eigen::Index rows, Eigen::Index cols, std::mt19937_64& rng) {
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  MatrixF x(rows, cols);
  for (Eigen::Index i = 0; i < x.size(); ++i) x.data()[i] = u(rng);
  return x;
}

// A model with nonzero biases (make_mlp's are zero) so that the epilogue's bias path counts.
Mlp random_model(const std::vector<int>& sizes, std::uint64_t seed) {
  Mlp m = make_mlp(sizes, seed);
  std::mt19937_64 rng(seed + 7);
  std::normal_distribution<float> g(0.0f, 0.1f);
  for (auto& l : m.layers) {
    for (Eigen::Index i = 0; i < l.b.size(); ++i) l.b(i) = g(rng);
  }
  return m;
}

TEST(Int8MlpTest, CalibrationScalesAreTheLayerInputMaxima) {
  const auto seed = test_seed(31);
  const Mlp m = random_model({16, 12, 4}, seed);
  std::mt19937_64 rng(seed);
  const MatrixF x = random_inputs(50, 16, rng);
  const auto scales = calibrate_input_scales(m, x, 100.0);
  ASSERT_EQ(scales.size(), 2u);
  EXPECT_FLOAT_EQ(scales[0], x.cwiseAbs().maxCoeff() / 127.0f) << seed_note(seed);
  MatrixF h = x * m.layers[0].w.transpose();
  h.rowwise() += m.layers[0].b.transpose();
  EXPECT_FLOAT_EQ(scales[1], h.cwiseMax(0.0f).maxCoeff() / 127.0f) << seed_note(seed);
  // A lower percentile clips the largest values: never a larger scale.
  const auto clipped = calibrate_input_scales(m, x, 90.0);
  EXPECT_LT(clipped[0], scales[0]);
  EXPECT_LE(clipped[1], scales[1]);
  EXPECT_THROW(calibrate_input_scales(m, x, 0.0), std::invalid_argument);
  EXPECT_THROW(calibrate_input_scales(m, MatrixF(0, 16), 100.0), std::invalid_argument);
  EXPECT_THROW(calibrate_input_scales(m, MatrixF::Zero(3, 15), 100.0), std::invalid_argument);
}

TEST(Int8MlpTest, QuantizedNetworkFollowsTheFloatNetwork) {
  const auto seed = test_seed(32);
  const Mlp m = random_model({64, 32, 16, 10}, seed);
  std::mt19937_64 rng(seed);
  const MatrixF x = random_inputs(200, 64, rng);
  const Int8Mlp q = quantize_mlp(m, calibrate_input_scales(m, x), {GemmMode::DENSE,
                                                                    GemmMode::DENSE,
                                                                    GemmMode::DENSE});
  ASSERT_EQ(q.sizes(), (std::vector<int>{64, 32, 16, 10}));
  EXPECT_TRUE(q.layers.back().last);
  EXPECT_FALSE(q.layers.front().last);
  EXPECT_EQ(q.layers[0].epilogue.channels(), 32u);
  const MatrixF want = mlp_forward(m, x);
  const MatrixF got =
      logits_from_accumulators(q.layers.back(), golden_forward(q, quantize_input(q, x)));
  // Three INT8 roundings with calibrated (max) scales: a few percent of the logit range.
  const float range = want.maxCoeff() - want.minCoeff();
  EXPECT_LT((got - want).cwiseAbs().maxCoeff(), 0.05f * range) << seed_note(seed);
  // The argmax mostly agrees.
  const auto a = predict_classes(want);
  const auto b = predict_classes(got);
  int same = 0;
  for (std::size_t i = 0; i < a.size(); ++i) same += a[i] == b[i] ? 1 : 0;
  EXPECT_GE(same, 190) << seed_note(seed);
  // Accuracy against the INT8 model's own predictions is 1, in any batch size; against the FP32
  // predictions it is the agreement counted above.
  const MatrixI32 acc = golden_forward(q, quantize_input(q, x));
  EXPECT_DOUBLE_EQ(top1_accuracy(q, acc, b), 1.0);
  EXPECT_DOUBLE_EQ(evaluate_int8_accuracy(q, x, b, 7), 1.0);
  EXPECT_DOUBLE_EQ(evaluate_int8_accuracy(q, x, a), same / 200.0);
  EXPECT_THROW(top1_accuracy(q, acc, std::vector<std::uint8_t>(3)), std::invalid_argument);
}

TEST(Int8MlpTest, SparseLayerMustBeNm) {
  const Mlp dense = random_model({16, 8, 4}, test_seed(33));
  const std::vector<float> scales = {0.01f, 0.01f};
  expect_throw_containing(
      [&] { quantize_mlp(dense, scales, {GemmMode::SPARSE, GemmMode::DENSE}); },
      std::vector<std::string>{"layer fc1 is to run sparse", "allowed by 2:4"});
  EXPECT_THROW(quantize_mlp(dense, {0.01f}, {GemmMode::DENSE, GemmMode::DENSE}),
               std::invalid_argument);
  Mlp pruned = dense;
  apply_nm_masks(pruned, NmPattern{2, 4});
  EXPECT_NO_THROW(quantize_mlp(pruned, scales, {GemmMode::SPARSE, GemmMode::SPARSE}));
}

TEST(Int8MlpTest, ToInt8RejectsWideValues) {
  MatrixI32 v(1, 3);
  v << -128, 127, 5;
  EXPECT_EQ(to_int8(v).cast<int>(), v);
  v(0, 2) = 128;
  EXPECT_THROW(to_int8(v), std::invalid_argument);
}

// The deployment path (the QDQ export on the runtime) equals the golden model bit for bit, for
// every mix of sparse and dense layers and a batch that does not fill the array.
TEST(MlpDeviceTest, FunctionalModelMatchesGoldenForEveryPlacement) {
  const auto seed = test_seed(34);
  std::mt19937_64 rng(seed);
  const MatrixF x = random_inputs(9, 40, rng);
  auto device = make_model_device("small");
  for (int mix = 0; mix < 4; ++mix) {
    const std::vector<bool> pruned = {(mix & 1) != 0, false, (mix & 2) != 0};
    Mlp m = random_model({40, 24, 16, 6}, seed);
    apply_nm_masks(m, NmPattern{2, 4}, false, {}, pruned);
    std::vector<GemmMode> modes;
    for (const bool p : pruned) modes.push_back(p ? GemmMode::SPARSE : GemmMode::DENSE);
    const Int8Mlp q = quantize_mlp(m, calibrate_input_scales(m, x), modes);
    Runtime rt(parse_onnx_model(serialize_int8_mlp_onnx(q), "mix.onnx"), *device);
    const Tensor logits =
        rt.run({{"input", Tensor::make_float({x.rows(), x.cols()},
                                             std::vector<float>(x.data(), x.data() + x.size()))}})
            .at("logits");
    const MatrixF golden = logits_from_accumulators(q.layers.back(),
                                                    golden_forward(q, quantize_input(q, x)));
    EXPECT_EQ(Eigen::Map<const MatrixF>(logits.floats.data(), x.rows(), 6), golden)
        << "mix " << mix << ", " << seed_note(seed);
    for (std::size_t i = 0; i < pruned.size(); ++i) {
      const DeviceStats& d = rt.layer(q.layers[i].name).device;
      EXPECT_EQ(d.tiles_sparse > 0, pruned[i]) << "mix " << mix << ", layer " << i;
      EXPECT_EQ(d.tiles_dense > 0, !pruned[i]) << "mix " << mix << ", layer " << i;
    }
  }
}

TEST(MlpDeviceTest, SparseBatchIsPredictedNearlyTwiceAsFast) {
  const DeviceCaps caps = DeviceCaps::named("default");
  const std::vector<int> sizes = {784, 512, 256, 10};
  const auto dense = predict_mlp_batch_cycles(caps, sizes, 100, GemmMode::DENSE);
  const auto sparse = predict_mlp_batch_cycles(caps, sizes, 100, GemmMode::SPARSE);
  const double ratio = static_cast<double>(dense) / static_cast<double>(sparse);
  EXPECT_GT(ratio, 1.8);
  EXPECT_LE(ratio, 2.05);
  EXPECT_LT(predict_mlp_batch_cycles(caps, sizes, 50, GemmMode::SPARSE), sparse);
  EXPECT_THROW(predict_mlp_batch_cycles(caps, {784}, 100, GemmMode::DENSE),
               std::invalid_argument);
}

// --- Layer selection of the pruning functions (the quality gate's dense fallback) ---------

TEST(MlpSelectionTest, OneShotPrunesOnlyTheSelectedLayers) {
  const auto seed = test_seed(35);
  const Mlp dense = random_model({16, 8, 8, 4}, seed);
  for (bool permute : {false, true}) {
    Mlp m = dense;
    apply_nm_masks(m, NmPattern{2, 4}, permute, {}, {false, true, false});
    EXPECT_EQ(m.layers[0].mask.size(), 0) << "permute " << permute;
    EXPECT_EQ(m.layers[2].mask.size(), 0) << "permute " << permute;
    EXPECT_GT(m.layers[1].mask.size(), 0) << "permute " << permute;
    Mlp only_layer1;
    only_layer1.layers = {m.layers[1]};
    EXPECT_TRUE(satisfies_nm(only_layer1, NmPattern{2, 4})) << "layer 1 is not 2:4";
    EXPECT_EQ((m.layers[0].w.array() == 0.0f).count(), 0) << "layer 0 was pruned";
    EXPECT_EQ((m.layers[2].w.array() == 0.0f).count(), 0) << "layer 2 was pruned";
  }
  Mlp m = dense;
  EXPECT_THROW(apply_nm_masks(m, NmPattern{2, 4}, false, {}, {true}), std::invalid_argument);
}

TEST(MlpSelectionTest, PermutationKeepsTheFunction) {
  const auto seed = test_seed(36);
  Mlp m = random_model({16, 16, 8, 4}, seed);
  std::mt19937_64 rng(seed);
  const MatrixF x = random_inputs(5, 16, rng);
  const MatrixF before = mlp_forward(m, x);
  permute_for_nm(m, NmPattern{2, 4}, {}, {true, true, true});
  EXPECT_LT((mlp_forward(m, x) - before).cwiseAbs().maxCoeff(), 1e-4f) << seed_note(seed);
}

TEST(MlpSelectionTest, GradualPruningReportsItsEventsAndSparesUnselectedLayers) {
  const auto seed = test_seed(37);
  Mlp m = random_model({8, 8, 4}, seed);
  std::mt19937_64 rng(seed);
  const MatrixF x = random_inputs(64, 8, rng);
  std::vector<std::uint8_t> y(64);
  for (auto& v : y) v = static_cast<std::uint8_t>(rng() % 4);
  TrainOptions o;
  o.epochs = 2;
  o.batch_size = 8;
  o.cosine_schedule = true;
  int epochs_seen = 0;
  o.after_epoch = [&](const Mlp&, int epoch) { epochs_seen = epoch; };
  GradualPruningOptions g;
  g.frequency = 2;
  std::vector<double> targets;
  g.on_prune = [&](long, long, double s) { targets.push_back(s); };
  train_with_gradual_pruning(m, x, y, NmPattern{2, 4}, o, g, {true, false});
  EXPECT_EQ(epochs_seen, 2);
  ASSERT_GE(targets.size(), 3u);
  for (std::size_t i = 1; i < targets.size(); ++i) EXPECT_GE(targets[i], targets[i - 1]);
  EXPECT_DOUBLE_EQ(targets.back(), 0.5);
  EXPECT_EQ(m.layers[1].mask.size(), 0);
  EXPECT_EQ((m.layers[1].w.array() == 0.0f).count(), 0);
  EXPECT_EQ((m.layers[0].w.array() == 0.0f).count(), m.layers[0].w.size() / 2);
}

}  // namespace
}  // namespace nmsa
