// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// The demo's CNN (cnn.hpp): its forward pass against a direct convolution, its gradients against
// finite differences, the calibration of its INT8 input scales, training, pruning and its model
// file.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "../common/expect_throw.hpp"
#include "../common/seed.hpp"
#include "nmsa/cnn.hpp"

namespace nmsa {
namespace {

using nmsa::testing::expect_throw_containing;
using nmsa::testing::seed_note;
using nmsa::testing::test_seed;

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("nmsa_test_cnn_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

void fill_normal(MatrixF& m, std::mt19937_64& rng, float sigma = 1.0f) {
  std::normal_distribution<float> g(0.0f, sigma);
  for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = g(rng);
}

// Biases drawn from N(0, 0.1^2): make_cnn's are zero, which would hide a missing bias.
void randomize_biases(Cnn& m, std::mt19937_64& rng) {
  for (auto& l : m.params.layers) {
    MatrixF b(l.b.size(), 1);
    fill_normal(b, rng, 0.1f);
    l.b = b.col(0);
  }
}

// Two channels of 6 x 6, a pooled and an unpooled block, one hidden Linear layer.
CnnShape small_shape() {
  CnnShape s;
  s.channels = 2;
  s.height = 6;
  s.width = 6;
  s.convs = {{3, 3, true}, {4, 3, false}};
  s.hidden = {5};
  s.classes = 3;
  return s;
}

// The network written out as ONNX defines it: NCHW tensors, Conv with W[M, C, KH, KW] and
// pads k/2, Relu, MaxPool 2x2, Flatten, Gemm with transB. Shares no code with cnn.cpp.
MatrixF reference_forward(const Cnn& m, const MatrixF& x) {
  const CnnShape& s = m.shape;
  MatrixF logits(x.rows(), s.classes);
  for (Eigen::Index b = 0; b < x.rows(); ++b) {
    int c_n = s.channels;
    int h = s.height;
    int w = s.width;
    std::vector<float> t(x.row(b).data(), x.row(b).data() + x.cols());
    for (std::size_t i = 0; i < s.convs.size(); ++i) {
      const int k = s.convs[i].kernel;
      const int o_n = s.convs[i].out_channels;
      const MlpLayer& l = m.params.layers[i];
      std::vector<float> out(static_cast<std::size_t>(o_n * h * w));
      for (int o = 0; o < o_n; ++o) {
        for (int y = 0; y < h; ++y) {
          for (int xx = 0; xx < w; ++xx) {
            double acc = l.b(o);
            for (int c = 0; c < c_n; ++c) {
              for (int ky = 0; ky < k; ++ky) {
                for (int kx = 0; kx < k; ++kx) {
                  const int iy = y + ky - k / 2;
                  const int ix = xx + kx - k / 2;
                  if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
                  acc += static_cast<double>(l.w(o, (c * k + ky) * k + kx)) *
                         t[static_cast<std::size_t>((c * h + iy) * w + ix)];
                }
              }
            }
            out[static_cast<std::size_t>((o * h + y) * w + xx)] =
                static_cast<float>(std::max(acc, 0.0));
          }
        }
      }
      c_n = o_n;
      if (s.convs[i].pool) {
        std::vector<float> pooled(static_cast<std::size_t>(c_n * (h / 2) * (w / 2)));
        for (int c = 0; c < c_n; ++c) {
          for (int y = 0; y < h / 2; ++y) {
            for (int xx = 0; xx < w / 2; ++xx) {
              float best = -INFINITY;
              for (int dy = 0; dy < 2; ++dy) {
                for (int dx = 0; dx < 2; ++dx) {
                  best = std::max(best,
                                  out[static_cast<std::size_t>((c * h + 2 * y + dy) * w + 2 * xx + dx)]);
                }
              }
              pooled[static_cast<std::size_t>((c * (h / 2) + y) * (w / 2) + xx)] = best;
            }
          }
        }
        out = std::move(pooled);
        h /= 2;
        w /= 2;
      }
      t = std::move(out);
    }
    for (std::size_t i = s.convs.size(); i < m.params.layers.size(); ++i) {
      const MlpLayer& l = m.params.layers[i];
      std::vector<float> next(static_cast<std::size_t>(l.w.rows()));
      for (Eigen::Index o = 0; o < l.w.rows(); ++o) {
        double acc = l.b(o);
        for (Eigen::Index j = 0; j < l.w.cols(); ++j) acc += double{l.w(o, j)} * t[static_cast<std::size_t>(j)];
        const bool last = i + 1 == m.params.layers.size();
        next[static_cast<std::size_t>(o)] = static_cast<float>(last ? acc : std::max(acc, 0.0));
      }
      t = std::move(next);
    }
    for (int c = 0; c < s.classes; ++c) logits(b, c) = t[static_cast<std::size_t>(c)];
  }
  return logits;
}

TEST(CnnTest, ForwardIsOnnxsConvReluPoolFlattenGemm) {
  const auto seed = test_seed(3);
  Cnn m = make_cnn(small_shape(), seed);
  std::mt19937_64 rng(seed + 1);
  randomize_biases(m, rng);
  ASSERT_EQ(m.params.layers.size(), 4u);
  EXPECT_EQ(m.params.layers[0].w.cols(), 2 * 9);      // C_in * 3 * 3
  EXPECT_EQ(m.params.layers[1].w.cols(), 3 * 9);
  EXPECT_EQ(m.params.layers[2].w.cols(), 4 * 3 * 3);  // 4 channels of 3 x 3 after one pool
  EXPECT_EQ(flattened_features(m.shape), 36);
  MatrixF x(3, 2 * 6 * 6);
  fill_normal(x, rng);
  const MatrixF got = cnn_forward(m, x);
  const MatrixF want = reference_forward(m, x);
  ASSERT_EQ(got.rows(), 3);
  ASSERT_EQ(got.cols(), 3);
  for (Eigen::Index i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got.data()[i], want.data()[i], 1e-4f * (1.0f + std::abs(want.data()[i])))
        << "logit " << i << ", " << seed_note(seed);
  }
  EXPECT_EQ(cnn_layer_name(m, 0), "conv1");
  EXPECT_EQ(cnn_layer_name(m, 1), "conv2");
  EXPECT_EQ(cnn_layer_name(m, 2), "fc1");
  EXPECT_EQ(cnn_layer_name(m, 3), "fc2");
}

// Every layer's scale is taken from the activations that layer reads: doubling layer j's weights
// and bias doubles exactly what layer j + 1 reads (ReLU and max pool are positively homogeneous,
// and a factor of 2 is exact in float); halving layer j + 1's weights then leaves everything
// after it unchanged. So only scale j + 1 moves, by exactly 2x.
TEST(CnnTest, CalibrationScalesComeFromWhatEachLayerReads) {
  const auto seed = test_seed(4);
  SCOPED_TRACE(seed_note(seed));
  std::mt19937_64 rng(seed);
  Cnn m = make_cnn(small_shape(), seed);
  randomize_biases(m, rng);
  MatrixF x(20, 2 * 6 * 6);
  fill_normal(x, rng);
  const std::vector<float> scales = calibrate_cnn_input_scales(m, x);
  ASSERT_EQ(scales.size(), 4u);
  EXPECT_FLOAT_EQ(scales[0], x.cwiseAbs().maxCoeff() / 127.0f);
  for (std::size_t j = 0; j + 1 < scales.size(); ++j) {
    SCOPED_TRACE("layer " + std::to_string(j) + " doubled");
    Cnn scaled = m;
    scaled.params.layers[j].w *= 2.0f;
    scaled.params.layers[j].b *= 2.0f;
    scaled.params.layers[j + 1].w *= 0.5f;
    const std::vector<float> got = calibrate_cnn_input_scales(scaled, x);
    for (std::size_t i = 0; i < scales.size(); ++i) {
      EXPECT_FLOAT_EQ(got[i], i == j + 1 ? 2.0f * scales[i] : scales[i]) << "scale " << i;
    }
  }
  const std::vector<float> clipped = calibrate_cnn_input_scales(m, x, 90.0);
  for (std::size_t i = 0; i < scales.size(); ++i) EXPECT_LT(clipped[i], scales[i]) << i;
  expect_throw_containing([&] { calibrate_cnn_input_scales(m, MatrixF::Zero(4, 71)); },
                          "input has 71 features, the network reads 72");
  expect_throw_containing([&] { calibrate_cnn_input_scales(m, MatrixF(0, 72)); },
                          "no calibration rows");
  expect_throw_containing([&] { calibrate_cnn_input_scales(m, x, 0.0); }, "percentile");
}

TEST(CnnTest, GradientMatchesFiniteDifferences) {
  const auto seed = test_seed(17);
  Cnn m = make_cnn(small_shape(), seed);
  std::mt19937_64 rng(seed + 2);
  randomize_biases(m, rng);
  MatrixF x(4, 2 * 6 * 6);
  fill_normal(x, rng);
  const std::vector<std::uint8_t> y = {0, 2, 1, 2};
  MlpGradients grads;
  cnn_loss(m, x, y, &grads);
  ASSERT_EQ(grads.dw.size(), m.params.layers.size());
  // Central differences over a float network. A step that crosses a ReLU kink or swaps a pool's
  // maximum makes the loss non-smooth across it: where the two one-sided differences disagree
  // the entry is left out (a third of them at most, or the check would say little). Of the
  // rest, a few may still miss the tolerance (a kink crossed barely); the norm must match.
  const float h = 3e-4f;
  const double f0 = cnn_loss(m, x, y);
  auto check = [&](float* params, const float* analytic, Eigen::Index n, const std::string& what) {
    long kinks = 0, off = 0;
    double diff2 = 0.0, norm2 = 0.0;
    for (Eigen::Index j = 0; j < n; ++j) {
      const float orig = params[j];
      params[j] = orig + h;
      const double up = cnn_loss(m, x, y);
      params[j] = orig - h;
      const double down = cnn_loss(m, x, y);
      params[j] = orig;
      const double central = (up - down) / (2.0 * h);
      const double err = analytic[j] - central;
      const bool kink = std::abs((up - f0) - (f0 - down)) / h > 5e-3 + 0.05 * std::abs(central);
      if (kink) {
        ++kinks;
        continue;
      }
      if (std::abs(err) > 2e-3 + 1e-2 * std::abs(central)) ++off;
      diff2 += err * err;
      norm2 += central * central;
    }
    EXPECT_LE(kinks, std::max<long>(2, static_cast<long>(n) / 3)) << what << ": kinks";
    EXPECT_LE(off, std::max<long>(3, static_cast<long>(n) / 10)) << what << ": entries off";
    EXPECT_LT(std::sqrt(diff2 / std::max(norm2, 1e-12)), 2e-2) << what;
  };
  for (std::size_t li = 0; li < m.params.layers.size(); ++li) {
    SCOPED_TRACE(cnn_layer_name(m, li) + ", " + seed_note(seed));
    MlpLayer& l = m.params.layers[li];
    check(l.w.data(), grads.dw[li].data(), l.w.size(), "weight");
    check(l.b.data(), grads.db[li].data(), l.b.size(), "bias");
  }
}

// 8 x 8 images, four classes: a bright 2 x 2 spot in one of the four quadrants, at a random place
// inside it, over noise. Needs the convolutions' translation invariance, not one pixel.
void make_spots(int n, std::uint64_t seed, MatrixF& x, std::vector<std::uint8_t>& y) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> noise(0.0f, 0.1f);
  x.resize(n, 64);
  y.resize(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    for (int p = 0; p < 64; ++p) x(i, p) = noise(rng);
    const int c = static_cast<int>(rng() % 4);
    y[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(c);
    const int top = (c / 2) * 4 + static_cast<int>(rng() % 3);
    const int left = (c % 2) * 4 + static_cast<int>(rng() % 3);
    for (int dy = 0; dy < 2; ++dy) {
      for (int dx = 0; dx < 2; ++dx) x(i, (top + dy) * 8 + left + dx) += 1.0f;
    }
  }
}

CnnShape spot_shape() {
  CnnShape s;
  s.height = 8;
  s.width = 8;
  s.convs = {{4, 3, true}, {8, 3, true}};
  s.hidden = {16};
  s.classes = 4;
  return s;
}

TEST(CnnTest, TrainsAndIsReproducible) {
  const auto seed = test_seed(5);
  MatrixF x;
  std::vector<std::uint8_t> y;
  make_spots(1500, seed, x, y);
  Cnn a = make_cnn(spot_shape(), seed);
  Cnn b = a;
  TrainOptions opt;
  opt.epochs = 4;
  opt.batch_size = 32;
  opt.seed = seed;
  const double before = evaluate_cnn_accuracy(a, x, y);
  train(a.params, x, y, cnn_train_options(a, opt));
  train(b.params, x, y, cnn_train_options(b, opt));
  EXPECT_GT(evaluate_cnn_accuracy(a, x, y), 0.95) << "from " << before << ", " << seed_note(seed);
  for (std::size_t i = 0; i < a.params.layers.size(); ++i) {
    EXPECT_EQ(a.params.layers[i].w, b.params.layers[i].w)
        << cnn_layer_name(a, i) << " not reproducible, " << seed_note(seed);
  }
  // The options are bound to their model: training another's layers with them is refused.
  expect_throw_containing([&] { train(b.params, x, y, cnn_train_options(a, opt)); },
                          "not the CNN's params");
}

TEST(CnnTest, PrunesEveryLayerWhoseKFillsGroupsAndKeepsTheMasksThroughTraining) {
  const auto seed = test_seed(23);
  MatrixF x;
  std::vector<std::uint8_t> y;
  make_spots(600, seed, x, y);
  Cnn m = make_cnn(spot_shape(), seed);
  const NmPattern p{2, 4};
  const std::vector<bool> selected = prunable_layers(m, p);
  // conv1 reads one channel: K = 9 is not a multiple of 4, so it stays dense.
  EXPECT_EQ(selected, (std::vector<bool>{false, true, true, true}));
  TrainOptions opt;
  opt.epochs = 2;
  opt.batch_size = 32;
  opt.seed = seed;
  GradualPruningOptions schedule;
  schedule.frequency = 5;
  train_with_gradual_pruning(m.params, x, y, p, cnn_train_options(m, opt), schedule, selected);
  EXPECT_TRUE(m.params.layers[0].mask.size() == 0) << "conv1 was pruned";
  for (std::size_t i = 1; i < m.params.layers.size(); ++i) {
    Mlp one;
    one.layers = {m.params.layers[i]};
    EXPECT_TRUE(satisfies_nm(one, p)) << cnn_layer_name(m, i) << ", " << seed_note(seed);
    EXPECT_EQ((m.params.layers[i].w.array() == 0.0f).count(), m.params.layers[i].w.size() / 2)
        << cnn_layer_name(m, i);
  }
  // Fine-tuning after pruning keeps every pruned weight at zero.
  const MatrixF mask = m.params.layers[1].mask;
  train(m.params, x, y, cnn_train_options(m, opt));
  EXPECT_TRUE(((mask.array() == 0.0f) <= (m.params.layers[1].w.array() == 0.0f)).all());
}

TEST(CnnTest, RejectsBadShapesAndBatches) {
  CnnShape s = small_shape();
  s.convs[0].kernel = 2;
  expect_throw_containing([&] { make_cnn(s, 1); }, "conv1's kernel 2 is not odd");
  s = small_shape();
  s.height = 7;
  expect_throw_containing([&] { make_cnn(s, 1); }, "conv1 pools a 7 x 6 map");
  s = small_shape();
  s.classes = 1;
  expect_throw_containing([&] { make_cnn(s, 1); }, "needs 2 to 1048576 classes, not 1");
  s = small_shape();
  s.convs[1].kernel = 1001;  // K = 3 * 1001 * 1001
  expect_throw_containing([&] { make_cnn(s, 1); }, "conv2's K = 3006003 exceeds 1048576");
  s = small_shape();
  s.height = s.width = 4096;
  s.convs[1].pool = true;
  expect_throw_containing([&] { make_cnn(s, 1); }, "the flattened features 4194304 exceed");
  const Cnn m = make_cnn(small_shape(), 1);
  expect_throw_containing([&] { cnn_forward(m, MatrixF::Zero(2, 70)); },
                          "input has 70 features, the network reads 72");
  expect_throw_containing([&] { cnn_loss(m, MatrixF::Zero(2, 70), {0, 1}); },
                          "input has 70 features, the network reads 72");
  expect_throw_containing([&] { cnn_loss(m, MatrixF::Zero(2, 72), {0, 3}); },
                          "label 3 of row 1 is not below the 3 classes");
}

TEST(CnnTest, ModelFileRoundTripAndCorruptFiles) {
  const auto seed = test_seed(29);
  Cnn m = make_cnn(small_shape(), seed);
  apply_nm_masks(m.params, NmPattern{2, 4}, false, {}, prunable_layers(m, NmPattern{2, 4}));
  const std::string path = temp_path("model.bin");
  save_cnn(m, path);
  const Cnn back = load_cnn(path);
  ASSERT_EQ(back.params.layers.size(), m.params.layers.size());
  EXPECT_EQ(back.shape.convs.size(), 2u);
  EXPECT_EQ(back.shape.convs[1].pool, false);
  EXPECT_EQ(back.shape.hidden, m.shape.hidden);
  for (std::size_t i = 0; i < m.params.layers.size(); ++i) {
    EXPECT_EQ(back.params.layers[i].w, m.params.layers[i].w);
    EXPECT_EQ(back.params.layers[i].b, m.params.layers[i].b);
    EXPECT_EQ(back.params.layers[i].mask, m.params.layers[i].mask);
  }
  std::string bytes;
  {
    std::ifstream f(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  }
  auto write = [&](const std::string& b) {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f.write(b.data(), static_cast<std::streamsize>(b.size()));
  };
  auto load = [&] { load_cnn(path); };
  write(bytes.substr(0, bytes.size() - 3));
  expect_throw_containing(load, "truncated");
  std::string bad = bytes;
  bad[6] = 'L';  // "NMSACNL": neither model's magic
  write(bad);
  expect_throw_containing(load, "not an nmsa CNN file");
  bad = bytes;
  bad[12 + 4] = 7;  // the height: 7 cannot be pooled
  write(bad);
  expect_throw_containing(load, "conv1 pools a 7 x 6 map");
  bad = bytes;
  bad[12 + 5 * 4] = 5;  // conv1's channels: the layers that follow no longer match
  write(bad);
  expect_throw_containing(load, "conv1 is 3 x 18, the shape needs 5 x 18");
  // An MLP file is not a CNN file, and the other way round.
  Mlp mlp = make_mlp({4, 3}, seed);
  save_mlp(mlp, path);
  expect_throw_containing(load, "not an nmsa CNN file (wrong magic)");
  save_cnn(m, path);
  expect_throw_containing([&] { load_mlp(path); }, "not an nmsa MLP file (wrong magic)");
  std::remove(path.c_str());
}

}  // namespace
}  // namespace nmsa
