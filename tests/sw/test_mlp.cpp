// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// The demo's MLP (mlp.hpp) and the Fashion-MNIST reader (fashion_mnist.hpp).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "../common/expect_throw.hpp"
#include "../common/seed.hpp"
#include "nmsa/fashion_mnist.hpp"
#include "nmsa/mlp.hpp"

namespace nmsa {
namespace {

using nmsa::testing::seed_note;
using nmsa::testing::test_seed;

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("nmsa_test_mlp_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

using nmsa::testing::expect_throw_containing;

// Eigen's setRandom() draws from std::rand(), whose state other tests share: use the seed.
template <typename Derived>
void fill_normal(Eigen::DenseBase<Derived>& m, std::mt19937_64& rng) {
  std::normal_distribution<float> g(0.0f, 1.0f);
  for (Eigen::Index i = 0; i < m.size(); ++i) m(i / m.cols(), i % m.cols()) = g(rng);
}

// Gaussian blobs around well-separated class centers: linearly separable in practice.
void make_blobs(int n, int dim, int classes, std::uint64_t seed, MatrixF& x,
                std::vector<std::uint8_t>& y) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> noise(0.0f, 0.3f);
  MatrixF centers(classes, dim);
  for (Eigen::Index i = 0; i < centers.size(); ++i) centers.data()[i] = noise(rng) * 6.0f;
  x.resize(n, dim);
  y.resize(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    const int c = static_cast<int>(rng() % static_cast<std::uint64_t>(classes));
    y[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(c);
    for (int d = 0; d < dim; ++d) x(i, d) = centers(c, d) + noise(rng);
  }
}

TEST(MlpTest, GradientMatchesFiniteDifferences) {
  const auto seed = test_seed(11);
  Mlp m = make_mlp({8, 6, 5, 3}, seed);
  std::mt19937_64 rng(seed + 1);
  for (auto& l : m.layers) fill_normal(l.b, rng);  // nonzero biases exercise db too
  // Central differences are wrong across a ReLU kink: draw inputs whose hidden pre-activations
  // all stay well away from zero.
  MatrixF x(4, 8);
  float margin = 0.0f;
  for (int attempt = 0; attempt < 1000 && margin < 0.05f; ++attempt) {
    fill_normal(x, rng);
    MatrixF a = x;
    margin = std::numeric_limits<float>::infinity();
    for (std::size_t li = 0; li + 1 < m.layers.size(); ++li) {
      MatrixF z = a * m.layers[li].w.transpose();
      z.rowwise() += m.layers[li].b.transpose();
      margin = std::min(margin, z.cwiseAbs().minCoeff());
      a = z.cwiseMax(0.0f);
    }
  }
  ASSERT_GE(margin, 0.05f) << seed_note(seed);
  const std::vector<std::uint8_t> y = {0, 2, 1, 2};
  MlpGradients grads;
  mlp_loss(m, x, y, &grads);
  // Small enough that no ReLU pre-activation crosses zero, large enough for float rounding.
  const float h = 1e-3f;
  for (std::size_t li = 0; li < m.layers.size(); ++li) {
    auto& l = m.layers[li];
    for (Eigen::Index j = 0; j < l.w.size(); ++j) {
      const float orig = l.w.data()[j];
      l.w.data()[j] = orig + h;
      const double up = mlp_loss(m, x, y);
      l.w.data()[j] = orig - h;
      const double down = mlp_loss(m, x, y);
      l.w.data()[j] = orig;
      const double numeric = (up - down) / (2.0 * h);
      EXPECT_NEAR(grads.dw[li].data()[j], numeric, 1e-3 + 1e-2 * std::abs(numeric))
          << "layer " << li << " weight " << j << ", " << seed_note(seed);
    }
    for (Eigen::Index j = 0; j < l.b.size(); ++j) {
      const float orig = l.b(j);
      l.b(j) = orig + h;
      const double up = mlp_loss(m, x, y);
      l.b(j) = orig - h;
      const double down = mlp_loss(m, x, y);
      l.b(j) = orig;
      const double numeric = (up - down) / (2.0 * h);
      EXPECT_NEAR(grads.db[li](j), numeric, 1e-3 + 1e-2 * std::abs(numeric))
          << "layer " << li << " bias " << j << ", " << seed_note(seed);
    }
  }
}

TEST(MlpTest, TrainsSeparableDataAndIsReproducible) {
  const auto seed = test_seed(5);
  MatrixF x;
  std::vector<std::uint8_t> y;
  make_blobs(2000, 16, 4, seed, x, y);
  TrainOptions opt;
  opt.epochs = 5;
  opt.batch_size = 32;
  opt.seed = seed;
  Mlp a = make_mlp({16, 32, 16, 4}, seed);
  Mlp b = a;
  train(a, x, y, opt);
  train(b, x, y, opt);
  EXPECT_GT(evaluate_accuracy(a, x, y), 0.95) << seed_note(seed);
  for (std::size_t i = 0; i < a.layers.size(); ++i) {
    EXPECT_EQ(a.layers[i].w, b.layers[i].w)
        << "layer " << i << " not reproducible, " << seed_note(seed);
  }
}

TEST(MlpTest, MasksKeepPrunedWeightsZeroThroughTraining) {
  const auto seed = test_seed(7);
  MatrixF x;
  std::vector<std::uint8_t> y;
  make_blobs(500, 16, 4, seed, x, y);
  Mlp m = make_mlp({16, 32, 16, 4}, seed);
  const NmPattern p{2, 4};
  apply_nm_masks(m, p);
  ASSERT_TRUE(satisfies_nm(m, p));
  const std::vector<MatrixF> masks = {m.layers[0].mask, m.layers[1].mask, m.layers[2].mask};
  TrainOptions opt;
  opt.epochs = 3;
  opt.weight_decay = 1e-3f;
  opt.seed = seed;
  train(m, x, y, opt);
  EXPECT_TRUE(satisfies_nm(m, p)) << seed_note(seed);
  for (std::size_t i = 0; i < m.layers.size(); ++i) {
    EXPECT_EQ(m.layers[i].mask, masks[i]);
    EXPECT_TRUE(((m.layers[i].mask.array() == 0.0f) <= (m.layers[i].w.array() == 0.0f)).all())
        << "layer " << i << ": a pruned weight came back, " << seed_note(seed);
  }
}

TEST(MlpTest, PermutationKeepsTheNetworkFunction) {
  const auto seed = test_seed(13);
  Mlp m = make_mlp({8, 12, 8, 3}, seed);
  std::mt19937_64 rng(seed);
  for (auto& l : m.layers) fill_normal(l.b, rng);
  MatrixF x(20, 8);
  fill_normal(x, rng);
  const MatrixF before = mlp_forward(m, x);
  for (std::size_t layer = 1; layer < m.layers.size(); ++layer) {
    std::vector<int> perm(static_cast<std::size_t>(m.layers[layer].w.cols()));
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng);
    permute_hidden_channels(m, layer, perm);
  }
  EXPECT_TRUE(mlp_forward(m, x).isApprox(before, 1e-5f)) << seed_note(seed);

  // apply_nm_masks with permute: same network before pruning, and legal N:M after.
  Mlp searched = make_mlp({8, 12, 8, 4}, seed);
  Mlp plain = searched;
  const NmPattern p{2, 4};
  PermutationOptions po;
  po.seed = seed;
  po.escape_attempts = 5;
  apply_nm_masks(searched, p, true, po);
  apply_nm_masks(plain, p, false);
  EXPECT_TRUE(satisfies_nm(searched, p));
  // The output rows of the last layer are never permuted.
  EXPECT_EQ(searched.layers.back().b, plain.layers.back().b);
  EXPECT_GE(retained_magnitude(searched.layers[1].w), retained_magnitude(plain.layers[1].w) - 1e-4);
}

TEST(MlpTest, GradualPruningEndsAtExactNm) {
  const auto seed = test_seed(17);
  EXPECT_DOUBLE_EQ(cubic_sparsity(0, 10, 110, 0.5), 0.0);
  EXPECT_DOUBLE_EQ(cubic_sparsity(110, 10, 110, 0.5), 0.5);
  EXPECT_DOUBLE_EQ(cubic_sparsity(60, 10, 110, 0.5), 0.5 - 0.5 * 0.125);
  MatrixF x;
  std::vector<std::uint8_t> y;
  make_blobs(1000, 16, 4, seed, x, y);
  Mlp m = make_mlp({16, 32, 16, 4}, seed);
  TrainOptions opt;
  opt.epochs = 3;
  opt.seed = seed;
  train(m, x, y, opt);
  // Halfway: sparsity as asked, every group still holding at least N alive weights.
  Mlp half = m;
  prune_toward_nm(half, NmPattern{2, 4}, 0.25);
  const auto& mask = half.layers[0].mask;
  EXPECT_EQ((mask.array() == 0.0f).count(), mask.size() / 4);
  GradualPruningOptions sched;
  sched.frequency = 5;
  train_with_gradual_pruning(m, x, y, NmPattern{2, 4}, opt, sched);
  EXPECT_TRUE(satisfies_nm(m, NmPattern{2, 4}));
  for (const auto& l : m.layers) EXPECT_EQ((l.mask.array() == 0.0f).count(), l.mask.size() / 2);
  EXPECT_GT(evaluate_accuracy(m, x, y), 0.95) << seed_note(seed);
}

TEST(MlpTest, ModelFileRoundTripAndCorruptFiles) {
  const auto seed = test_seed(19);
  Mlp m = make_mlp({8, 12, 4}, seed);
  apply_nm_masks(m, NmPattern{2, 4});
  const std::string path = temp_path("model.bin");
  save_mlp(m, path);
  const Mlp back = load_mlp(path);
  ASSERT_EQ(back.sizes(), m.sizes());
  for (std::size_t i = 0; i < m.layers.size(); ++i) {
    EXPECT_EQ(back.layers[i].w, m.layers[i].w);
    EXPECT_EQ(back.layers[i].b, m.layers[i].b);
    EXPECT_EQ(back.layers[i].mask, m.layers[i].mask);
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
  auto load = [&] { load_mlp(path); };
  // A device or a directory is refused before it is read (/dev/zero would fill memory).
  expect_throw_containing([] { load_mlp("/dev/zero"); }, "/dev/zero: cannot read: not a regular file");
  expect_throw_containing([&] { load_mlp(std::filesystem::path(path).parent_path().string()); },
                          "a directory, not a file");
  write(bytes.substr(0, bytes.size() - 3));
  expect_throw_containing(load, "truncated");
  write(bytes + "x");
  expect_throw_containing(load, "trailing");
  std::string bad = bytes;
  bad[0] = 'X';
  write(bad);
  expect_throw_containing(load, "wrong magic");
  bad = bytes;
  bad[8] = 2;
  write(bad);
  expect_throw_containing(load, "unsupported version 2");
  bad = bytes;
  bad[16] = 0;  // N_out of layer 0
  bad[17] = 0;
  write(bad);
  expect_throw_containing(load, "implausible");
  std::remove(path.c_str());
  expect_throw_containing(load, path);
}

std::vector<std::uint8_t> idx(std::uint32_t magic, const std::vector<std::uint32_t>& dims,
                              std::size_t payload) {
  std::vector<std::uint8_t> b;
  auto be = [&](std::uint32_t v) {
    for (int s = 24; s >= 0; s -= 8) b.push_back(static_cast<std::uint8_t>(v >> s));
  };
  be(magic);
  for (auto d : dims) be(d);
  for (std::size_t i = 0; i < payload; ++i) b.push_back(static_cast<std::uint8_t>(i * 51));
  return b;
}

TEST(FashionMnistTest, ParsesHandMadeIdx) {
  int rows = 0;
  int cols = 0;
  const MatrixF img = parse_idx_images(idx(0x803, {2, 2, 3}, 12), "img", &rows, &cols);
  ASSERT_EQ(img.rows(), 2);
  ASSERT_EQ(img.cols(), 6);
  EXPECT_EQ(rows, 2);
  EXPECT_EQ(cols, 3);
  EXPECT_FLOAT_EQ(img(0, 0), 0.0f);
  EXPECT_FLOAT_EQ(img(0, 5), 255.0f / 255.0f);  // 5 * 51
  EXPECT_FLOAT_EQ(img(1, 0), static_cast<float>(static_cast<std::uint8_t>(6 * 51)) / 255.0f);
  const auto labels = parse_idx_labels(idx(0x801, {3}, 3), "lab");
  EXPECT_EQ(labels, (std::vector<std::uint8_t>{0, 51, 102}));
}

TEST(FashionMnistTest, RejectsMalformedIdx) {
  expect_throw_containing(
      [] {
        parse_idx_images(idx(0x801, {2, 2, 3}, 12), "img");
      },
      "img: wrong IDX magic 0x00000801");
  expect_throw_containing(
      [] {
        parse_idx_images(idx(0x803, {2, 2, 3}, 11), "img");
      },
      "img: truncated");
  expect_throw_containing(
      [] {
        parse_idx_images(idx(0x803, {2, 2}, 0), "img");
      },
      "truncated header");
  expect_throw_containing([] { parse_idx_labels(idx(0x801, {3}, 4), "lab"); }, "trailing");
  expect_throw_containing([] { parse_idx_labels({}, "lab"); }, "lab: truncated");

  // Files on disk: count mismatch between images and labels, a truncated gzip, a missing dir.
  const std::string dir = temp_path("idx");
  std::filesystem::create_directories(dir);
  auto put = [&](const std::string& name, const std::vector<std::uint8_t>& b) {
    std::ofstream f(dir + "/" + name, std::ios::binary);
    f.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
  };
  put("t10k-images-idx3-ubyte", idx(0x803, {2, 2, 2}, 8));
  put("t10k-labels-idx1-ubyte", idx(0x801, {3}, 3));
  expect_throw_containing([&] { load_fashion_mnist(dir, FashionMnistSplit::kTest); },
                          "holds 3 labels but");
  put("t10k-labels-idx1-ubyte", idx(0x801, {2}, 2));  // labels 0 and 51
  expect_throw_containing([&] { load_fashion_mnist(dir, FashionMnistSplit::kTest); },
                          "label 51 at item 1 is not a class 0..9");
  put("t10k-labels-idx1-ubyte", {0, 0, 8, 1, 0, 0, 0, 2, 3, 9});
  const LabeledImages ok = load_fashion_mnist(dir, FashionMnistSplit::kTest);
  EXPECT_EQ(ok.images.rows(), 2);
  EXPECT_EQ(ok.labels, (std::vector<std::uint8_t>{3, 9}));
  expect_throw_containing([&] { load_fashion_mnist(dir, FashionMnistSplit::kTrain); },
                          "train-images-idx3-ubyte.gz: missing");
  // A gzip stream cut short: header of a real gzip member, no body.
  put("train-images-idx3-ubyte.gz", {0x1f, 0x8b, 0x08, 0x00, 0, 0, 0, 0, 0, 0x03, 0x63, 0x60});
  put("train-labels-idx1-ubyte", idx(0x801, {2}, 2));
  expect_throw_containing([&] { load_fashion_mnist(dir, FashionMnistSplit::kTrain); },
                          "train-images-idx3-ubyte.gz: corrupt");
  std::filesystem::remove_all(dir);
  expect_throw_containing([&] { load_fashion_mnist(dir); },
                          "apt-get install dataset-fashion-mnist");
}

// Deliberately not skipped when the package is missing: the demo needs the data.
TEST(FashionMnistTest, LoadsTheRealTestSplit) {
  LabeledImages d;
  try {
    d = load_fashion_mnist(kFashionMnistDir, FashionMnistSplit::kTest);
  } catch (const std::exception& e) {
    FAIL() << e.what();
  }
  EXPECT_EQ(d.images.rows(), 10000);
  EXPECT_EQ(d.images.cols(), 784);
  EXPECT_EQ(d.rows, 28);
  EXPECT_EQ(d.cols, 28);
  ASSERT_EQ(d.labels.size(), 10000u);
  std::vector<int> counts(10, 0);
  for (auto l : d.labels) {
    ASSERT_LT(l, 10);
    ++counts[l];
  }
  for (int c : counts) EXPECT_EQ(c, 1000);  // the test split is balanced
  EXPECT_GE(d.images.minCoeff(), 0.0f);
  EXPECT_LE(d.images.maxCoeff(), 1.0f);
  EXPECT_GT(d.images.maxCoeff(), 0.9f);
}

}  // namespace
}  // namespace nmsa
