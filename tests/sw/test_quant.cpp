// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// Symmetric INT8 quantization and the requantization parameters: rounding, error bounds, zero
// rows, and an integer GEMM plus epilogue that reproduces the float GEMM within a stated bound.
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "../common/seed.hpp"

#include "nmsa/epilogue.hpp"
#include "nmsa/golden.hpp"
#include "nmsa/prune.hpp"
#include "nmsa/quant.hpp"

namespace nmsa {
namespace {

using testing::seed_note;
using testing::test_seed;

MatrixF gaussian(Eigen::Index rows, Eigen::Index cols, float sigma, std::mt19937_64& rng) {
  std::normal_distribution<float> normal(0.0f, sigma);
  MatrixF m(rows, cols);
  for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = normal(rng);
  return m;
}

TEST(Quant, RoundsToNearestEvenAndSaturates) {
  const struct { float v; int q; } cases[] = {
      {0.5f, 0},   {1.5f, 2},     {2.5f, 2},     {-0.5f, 0},      {-1.5f, -2},    {-2.5f, -2},
      {0.49f, 0},  {0.51f, 1},    {-0.51f, -1},  {126.5f, 126},   {127.49f, 127}, {127.5f, 127},
      {200.0f, 127}, {-127.5f, -128}, {-128.0f, -128}, {-128.6f, -128}, {-1e30f, -128},
      {1e30f, 127}, {0.0f, 0},    {-0.0f, 0},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(quantize_to_int8(c.v, 1.0f), c.q) << c.v;
  }
  EXPECT_EQ(quantize_to_int8(0.75f, 0.5f), 2);  // 1.5 -> 2
  EXPECT_EQ(quantize_to_int8(-3.0f, 0.25f), -12);
  EXPECT_EQ(quantize_to_int8(std::numeric_limits<float>::infinity(), 1.0f), 127);
}

TEST(Quant, PerChannelWeightsWithinHalfAStep) {
  const std::uint64_t seed = test_seed(12);
  std::mt19937_64 rng(seed);
  MatrixF w = gaussian(16, 96, 0.05f, rng);
  w.row(2).setZero();            // a zero row
  w.row(4) *= 1000.0f;           // channels of very different ranges
  w(6, 10) = -3.0f;              // a negative maximum maps to -127
  const QuantizedWeights q = quantize_weights_per_channel(w);
  ASSERT_EQ(q.values.rows(), 16);
  ASSERT_EQ(q.scales.size(), 16u);
  const MatrixF back = dequantize(q);
  for (Eigen::Index r = 0; r < w.rows(); ++r) {
    const float scale = q.scales[static_cast<std::size_t>(r)];
    if (r == 2) {
      EXPECT_EQ(scale, 0.0f);
      EXPECT_TRUE((q.values.row(r).array() == 0).all());
      EXPECT_TRUE((back.row(r).array() == 0.0f).all());
      continue;
    }
    EXPECT_FLOAT_EQ(scale, w.row(r).cwiseAbs().maxCoeff() / 127.0f) << "row " << r;
    EXPECT_EQ(q.values.row(r).cast<int>().cwiseAbs().maxCoeff(), 127) << "row " << r;
    EXPECT_GE(q.values.row(r).cast<int>().minCoeff(), -127) << "row " << r;
    const float err = (back.row(r) - w.row(r)).cwiseAbs().maxCoeff();
    // Half a step, plus the float rounding of value / scale and of q * scale.
    EXPECT_LE(err, 0.5f * scale * (1.0f + 1e-5f) + 1e-6f * w.row(r).cwiseAbs().maxCoeff())
        << "row " << r << ", " << seed_note(seed);
  }
  EXPECT_EQ(q.values(6, 10), -127);
}

TEST(Quant, NonFiniteWeightsAndActivationsAreRejected) {
  MatrixF w = MatrixF::Ones(3, 4);
  w(2, 1) = std::numeric_limits<float>::quiet_NaN();
  try {
    quantize_weights_per_channel(w);
    ADD_FAILURE() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("row 2, column 1"), std::string::npos) << e.what();
  }
  w(2, 1) = std::numeric_limits<float>::infinity();
  EXPECT_THROW(quantize_weights_per_channel(w), std::invalid_argument);
  EXPECT_THROW(quantize_activations(w, 0.1f), std::invalid_argument);
  EXPECT_THROW(activation_scale(w), std::invalid_argument);
  EXPECT_THROW(quantize_activations(MatrixF::Ones(2, 2), 0.0f), std::invalid_argument);
  EXPECT_THROW(quantize_activations(MatrixF::Ones(2, 2), -1.0f), std::invalid_argument);
  EXPECT_THROW(quantize_activations(MatrixF::Ones(2, 2), std::nanf("")), std::invalid_argument);
}

TEST(Quant, PerTensorActivations) {
  const std::uint64_t seed = test_seed(13);
  std::mt19937_64 rng(seed);
  const MatrixF x = gaussian(8, 64, 2.0f, rng);
  const float scale = activation_scale(x);
  EXPECT_FLOAT_EQ(scale, x.cwiseAbs().maxCoeff() / 127.0f);
  const MatrixI8 q = quantize_activations(x, scale);
  const MatrixF back = dequantize_activations(q, scale);
  EXPECT_LE((back - x).cwiseAbs().maxCoeff(), 0.5f * scale * (1.0f + 1e-5f)) << seed_note(seed);
  EXPECT_EQ(activation_scale(MatrixF::Zero(2, 2)), 1.0f);

  // With a smaller scale than the data needs, values saturate to the INT8 range.
  const MatrixI8 sat = quantize_activations(x, scale / 4.0f);
  for (Eigen::Index i = 0; i < x.size(); ++i) {
    const float ideal = std::nearbyint(x.data()[i] / (scale / 4.0f));
    const float want = std::min(127.0f, std::max(-128.0f, ideal));
    EXPECT_EQ(sat.data()[i], static_cast<int>(want)) << "value " << x.data()[i];
  }
}

TEST(Quant, RequantParamsPerChannel) {
  const std::vector<float> w_scales{0.01f, 0.002f, 0.0f};
  const EpilogueParams p = requant_params(0.05, w_scales, 0.1, {1.0f, -0.5f, 0.3f});
  ASSERT_NO_THROW(p.validate(3));
  for (std::size_t c = 0; c < 2; ++c) {
    const double acc_scale = 0.05 * static_cast<double>(w_scales[c]);
    const QuantizedMultiplier want = quantize_multiplier(acc_scale / 0.1);
    EXPECT_EQ(p.multiplier[c], want.multiplier) << c;
    EXPECT_EQ(p.shift[c], want.shift) << c;
  }
  EXPECT_EQ(p.bias[0], 2000);    // 1.0 / (0.05 * 0.01)
  EXPECT_EQ(p.bias[1], -5000);   // -0.5 / (0.05 * 0.002)
  // The zero-scale channel: multiplier 2^-16 and the bias in 2^-16 output steps, so that the
  // (always zero) accumulator plus bias lands on round(0.3 / 0.1) = 3.
  EXPECT_EQ(p.multiplier[2], 1 << 30);
  EXPECT_EQ(p.shift[2], 46);
  EXPECT_EQ(requantize(0, p.bias[2], p.multiplier[2], p.shift[2], false), 3);

  // Defaults and saturation of a huge bias.
  const EpilogueParams z = requant_params(1.0, {1e-6f}, 1.0, {1e9f});
  EXPECT_EQ(z.bias[0], std::numeric_limits<std::int32_t>::max());
  EXPECT_EQ(requant_params(1.0, {0.5f}, 1.0).bias[0], 0);
}

TEST(Quant, RequantParamsRejectBadInputs) {
  EXPECT_THROW(requant_params(0.0, {1.0f}, 1.0), std::invalid_argument);
  EXPECT_THROW(requant_params(1.0, {1.0f}, -1.0), std::invalid_argument);
  EXPECT_THROW(requant_params(1.0, {-1.0f}, 1.0), std::invalid_argument);
  EXPECT_THROW(requant_params(1.0, {std::nanf("")}, 1.0), std::invalid_argument);
  EXPECT_THROW(requant_params(1.0, {1.0f, 1.0f}, 1.0, {1.0f}), std::invalid_argument);
  EXPECT_THROW(requant_params(1.0, {1.0f}, 1.0, {std::nanf("")}), std::invalid_argument);
  try {
    requant_params(1.0, {1.0f, 1e10f}, 1.0);  // channel 1: a ratio above 2^31
    ADD_FAILURE() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("channel 1"), std::string::npos) << e.what();
  }
}

// The whole INT8 path of one layer: 2:4-pruned per-channel INT8 weights, per-tensor INT8
// activations, INT32 accumulation (the golden GEMM), and the epilogue with requant_params. The
// result must equal the float layer X * W_pruned^T + bias, in output steps, within
//   bound = sum_k (|x_k| * s_w / 2 + |w^_k| * s_x / 2) / s_out  (operand rounding)
//         + 1/2 (output rounding) + s_x * s_w / (2 * s_out)      (bias rounding) + 1e-3,
// for every element, and the RMS error must stay below 0.75 of an output step.
TEST(Quant, RequantizedIntegerGemmApproximatesTheFloatGemm) {
  const std::uint64_t seed = test_seed(14);
  std::mt19937_64 rng(seed);
  const NmPattern p{2, 4};
  const MatrixF x = gaussian(32, 256, 1.0f, rng);
  MatrixF w = gaussian(48, 256, 0.1f, rng);
  w.row(7).setZero();  // a channel with only a bias
  const MatrixF bias_m = gaussian(1, 48, 0.5f, rng);
  const std::vector<float> bias(bias_m.data(), bias_m.data() + bias_m.size());

  const MatrixF w_pruned = prune_nm(w, p);
  MatrixF y = x * w_pruned.transpose();
  y.rowwise() += bias_m.row(0);

  const float s_x = activation_scale(x);
  const MatrixI8 xq = quantize_activations(x, s_x);
  const QuantizedWeights wq = prune_and_quantize(w, p);
  const double s_out = y.cwiseAbs().maxCoeff() / 127.0;
  const EpilogueParams params = requant_params(s_x, wq.scales, s_out, bias);
  const MatrixI32 out = apply_epilogue(golden::gemm_i8(xq, wq.values), params, false, false);

  const MatrixF w_hat = dequantize(wq);
  double sum_sq = 0.0;
  double worst = 0.0;
  for (Eigen::Index r = 0; r < y.rows(); ++r) {
    for (Eigen::Index c = 0; c < y.cols(); ++c) {
      const double s_w = wq.scales[static_cast<std::size_t>(c)];
      double bound = 0.5 + 1e-3 + 0.5 * s_x * s_w / s_out;
      for (Eigen::Index k = 0; k < x.cols(); ++k) {
        bound += (std::abs(x(r, k)) * s_w / 2 + std::abs(w_hat(c, k)) * s_x / 2) / s_out;
      }
      const double err = out(r, c) - y(r, c) / s_out;
      EXPECT_LE(std::abs(err), bound) << "(" << r << ", " << c << "), " << seed_note(seed);
      sum_sq += err * err;
      worst = std::max(worst, std::abs(err));
    }
  }
  const double rms = std::sqrt(sum_sq / static_cast<double>(y.size()));
  std::cout << "[ measured ] INT8 layer vs float: RMS error " << rms << " output steps, worst "
            << worst << "\n";
  EXPECT_LT(rms, 0.75) << seed_note(seed);
  // The bias-only channel reproduces its bias.
  for (Eigen::Index r = 0; r < y.rows(); ++r) {
    EXPECT_EQ(out(r, 7), std::lround(bias[7] / s_out)) << "row " << r;
  }
}

}  // namespace
}  // namespace nmsa
