// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// nmsa_array for every named configuration: random GEMMs against the Eigen golden model in sparse
// and dense mode (dense only on the dense-only array), weight swap while streaming without
// bubbles, illegal metadata, and reset in the middle of a run.
#include <random>

#include <gtest/gtest.h>

#include "../common/random_matrix.hpp"
#include "nmsa/golden.hpp"
#include "nmsa/sparse_format.hpp"
#include "nmsa/tb/array_gemm.hpp"
#include "nmsa/tb/sim_context.hpp"

namespace nmsa {
namespace {

using tb::ArrayGemmOptions;
using tb::ArrayMode;

class ArrayTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    seed_ = tb::test_seed(std::hash<std::string>{}(GetParam()) % 100000 + 1);
    sim_ = tb::make_array_sim(GetParam(), seed_);
    rng_.seed(seed_);
  }
  const tb::ArrayGeometry& geometry() const { return sim_->geometry(); }
  // The modes the array runs: both, or dense alone on the dense-only array.
  std::vector<ArrayMode> modes() const {
    if (geometry().sparse) return {ArrayMode::kSparse, ArrayMode::kDense};
    return {ArrayMode::kDense};
  }
  // Its fastest mode, and weights for it.
  ArrayMode native() const { return geometry().sparse ? ArrayMode::kSparse : ArrayMode::kDense; }
  MatrixI8 weights_for(ArrayMode mode, const MatrixI8& w) const {
    return mode == ArrayMode::kSparse ? prune_nm(w, geometry().pattern) : w;
  }

  std::uint64_t seed_ = 1;
  std::unique_ptr<tb::ArraySim> sim_;
  std::mt19937_64 rng_;
};

// Shapes that are not multiples of the array: rows, K and N_out drawn around the tile sizes.
struct Shape {
  Eigen::Index rows, k, n_out;
};

Shape random_shape(const tb::ArrayGeometry& g, std::mt19937_64& rng) {
  auto pick = [&rng](Eigen::Index lo, Eigen::Index hi) {
    return std::uniform_int_distribution<Eigen::Index>(lo, hi)(rng);
  };
  const Eigen::Index m = g.pattern.m;
  return Shape{pick(1, 3 * g.latency()), m * pick(1, 3 * g.rows + 2), pick(1, 3 * g.cols)};
}

TEST_P(ArrayTest, RandomSparseAndDenseGemmsMatchGolden) {
  SCOPED_TRACE(tb::seed_note(seed_));
  const tb::ArrayGeometry& g = geometry();
  for (int iter = 0; iter < 16; ++iter) {
    const Shape s = random_shape(g, rng_);
    SCOPED_TRACE("iteration " + std::to_string(iter) + ": " + std::to_string(s.rows) + " x " +
                 std::to_string(s.k) + " x " + std::to_string(s.n_out));
    const MatrixI8 x = testing::random_i8(s.rows, s.k, rng_);
    const MatrixI8 w_raw = testing::random_i8(s.n_out, s.k, rng_);
    ArrayGemmOptions options;
    options.seed = rng_();
    options.gap_probability = iter % 2 == 0 ? 0.0 : 0.3;
    for (const ArrayMode mode : modes()) {
      const MatrixI8 w = weights_for(mode, w_raw);
      const auto r = tb::run_array_gemm(*sim_, x, w, mode, options);
      EXPECT_EQ(r.error_beats, 0u);
      EXPECT_EQ(r.illegal_loads, 0u);
      ASSERT_EQ(r.y, golden::gemm_i8(x, w)) << tb::to_string(mode);
    }
  }
}

TEST_P(ArrayTest, ExtremeOperandsAccumulateExactly) {
  const tb::ArrayGeometry& g = geometry();
  const Eigen::Index k = 4 * g.chunk_k(false);
  const MatrixI8 x = MatrixI8::Constant(5, k, -128);
  const MatrixI8 w = weights_for(native(), MatrixI8::Constant(g.cols + 1, k, -128));
  const auto r = tb::run_array_gemm(*sim_, x, w, native());
  ASSERT_EQ(r.y, golden::gemm_i8(x, w));
  const Eigen::Index kept = g.sparse ? k / g.pattern.m * g.pattern.n : k;
  EXPECT_EQ(r.y(0, 0), kept * 16384);
}

// The next tile's weights load into the idle bank while the current tile streams: once a tile
// has at least Latency + Rows beats, the stream never waits, so a run costs exactly the initial
// load, one cycle per beat, and the pipeline latency.
TEST_P(ArrayTest, WeightSwapWhileStreamingHasNoBubble) {
  SCOPED_TRACE(tb::seed_note(seed_));
  const tb::ArrayGeometry& g = geometry();
  for (const ArrayMode mode : modes()) {
    SCOPED_TRACE(tb::to_string(mode));
    const Eigen::Index rows = g.latency() + g.rows + 3;
    const Eigen::Index k = 3 * g.chunk_k(mode == ArrayMode::kDense);
    const MatrixI8 x = testing::random_i8(rows, k, rng_);
    const MatrixI8 w = weights_for(mode, testing::random_i8(2 * g.cols, k, rng_));
    const auto r = tb::run_array_gemm(*sim_, x, w, mode);
    ASSERT_EQ(r.y, golden::gemm_i8(x, w));
    EXPECT_EQ(r.tiles, 6u);
    EXPECT_EQ(r.stall_cycles, g.rows);  // only the first tile's load
    EXPECT_EQ(r.cycles, g.rows + r.tiles * static_cast<std::uint64_t>(rows) + g.latency());
  }
}

TEST_P(ArrayTest, IllegalMetadataIsFlaggedAndNeverValid) {
  SCOPED_TRACE(tb::seed_note(seed_));
  const tb::ArrayGeometry& g = geometry();
  std::optional<std::uint8_t> illegal;
  for (unsigned code = 0; code < (1u << g.pattern.meta_bits()) && !illegal; ++code) {
    if (!is_legal_group_meta(static_cast<std::uint8_t>(code), g.pattern)) {
      illegal = static_cast<std::uint8_t>(code);
    }
  }
  if (!illegal) {
    // N = 1: any single index is a legal code, so no load can be illegal.
    ASSERT_EQ(g.pattern.n, 1);
    return;
  }
  if (!g.sparse) {
    // The dense-only array has no metadata path: a code that is illegal for N:M changes nothing.
    const Eigen::Index chunk = g.chunk_k(true);
    const MatrixI8 x = testing::random_i8(2 * g.latency(), 3 * chunk, rng_);
    const MatrixI8 w = testing::random_i8(g.cols, 3 * chunk, rng_);
    ArrayGemmOptions options;
    options.corrupt_meta = tb::MetaCorruption{1, g.rows - 1, g.cols / 2, *illegal};
    const auto r = tb::run_array_gemm(*sim_, x, w, ArrayMode::kDense, options);
    EXPECT_EQ(r.illegal_loads, 0u);
    EXPECT_EQ(r.error_beats, 0u);
    EXPECT_EQ(r.y, golden::gemm_i8(x, w));
    return;
  }
  const Eigen::Index chunk = g.chunk_k(false);
  const Eigen::Index rows = 2 * g.latency();
  const MatrixI8 x = testing::random_i8(rows, 3 * chunk, rng_);
  const MatrixI8 w = prune_nm(testing::random_i8(g.cols, 3 * chunk, rng_), g.pattern);
  ArrayGemmOptions options;
  options.corrupt_meta = tb::MetaCorruption{1, g.rows - 1, g.cols / 2, *illegal};
  const auto r = tb::run_array_gemm(*sim_, x, w, ArrayMode::kSparse, options);
  EXPECT_EQ(r.illegal_loads, 1u);
  EXPECT_EQ(r.error_beats, static_cast<std::uint64_t>(rows));  // every beat of tile 1
  // Tiles 0 and 2 were accumulated, tile 1 (K-chunk 1) was dropped whole.
  MatrixI8 w_without_chunk1 = w;
  w_without_chunk1.middleCols(chunk, chunk).setZero();
  EXPECT_EQ(r.y, golden::gemm_i8(x, w_without_chunk1));

  // The next, legal run is clean.
  const auto clean = tb::run_array_gemm(*sim_, x, w, ArrayMode::kSparse);
  EXPECT_EQ(clean.error_beats, 0u);
  EXPECT_EQ(clean.y, golden::gemm_i8(x, w));
}

TEST_P(ArrayTest, ResetInTheMiddleThenCorrectRun) {
  SCOPED_TRACE(tb::seed_note(seed_));
  const tb::ArrayGeometry& g = geometry();
  const Eigen::Index k = 2 * g.chunk_k(false);
  const MatrixI8 x = testing::random_i8(2 * g.latency(), k, rng_);
  const MatrixI8 w = weights_for(native(), testing::random_i8(2 * g.cols, k, rng_));
  ArrayGemmOptions stop_early;
  stop_early.stop_after_cycles = g.rows + static_cast<std::uint64_t>(x.rows()) + g.latency() / 2;
  const auto partial = tb::run_array_gemm(*sim_, x, w, native(), stop_early);
  ASSERT_FALSE(partial.completed);
  sim_->reset();
  // After reset both banks count as unloaded: a beat that used one would come out as an error.
  EXPECT_FALSE(sim_->bank_busy(0));
  EXPECT_FALSE(sim_->bank_busy(1));
  const auto r = tb::run_array_gemm(*sim_, x, w, native());
  EXPECT_EQ(r.error_beats, 0u);
  EXPECT_EQ(r.y, golden::gemm_i8(x, w));
}

TEST_P(ArrayTest, NonSparseWeightsAreRejectedInSparseMode) {
  const tb::ArrayGeometry& g = geometry();
  const MatrixI8 x = MatrixI8::Ones(2, g.pattern.m);
  const MatrixI8 w = MatrixI8::Ones(1, g.pattern.m);  // M nonzeros in one group
  EXPECT_THROW(tb::run_array_gemm(*sim_, x, w, ArrayMode::kSparse), std::invalid_argument);
}

INSTANTIATE_TEST_SUITE_P(Configs, ArrayTest, ::testing::ValuesIn(tb::array_config_names()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace nmsa
