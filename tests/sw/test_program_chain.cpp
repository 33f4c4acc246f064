// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// Programs chained into one command stream (program_chain.hpp) on the functional model: each
// layer reads the previous layer's output where its STOREs wrote it, and the whole network
// equals the golden model layer after layer, with no unordered hazard (the barrier and the
// chain's tokens order every buffer reuse across layers), on every named configuration, sparse
// and dense; a K that is not a multiple of the activation entry reads the padding bytes of the
// previous output rows and still gives the exact result. Streams the chain cannot extend are
// refused naming the program.
#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "../common/expect_throw.hpp"
#include "../common/random_matrix.hpp"
#include "../common/seed.hpp"
#include "nmsa/epilogue.hpp"
#include "nmsa/functional_model.hpp"
#include "nmsa/gemm_program.hpp"
#include "nmsa/golden.hpp"
#include "nmsa/program_chain.hpp"
#include "nmsa/sparse_format.hpp"
#include "nmsa/stream_counters.hpp"

namespace nmsa {
namespace {

using nmsa::testing::expect_throw_containing;
using nmsa::testing::seed_note;
using nmsa::testing::test_seed;

EpilogueParams random_epilogue(Eigen::Index n, std::mt19937_64& rng) {
  std::uniform_int_distribution<int> bias(-300, 300), scale(1, 20);
  EpilogueParams e;
  for (Eigen::Index c = 0; c < n; ++c) {
    e.bias.push_back(bias(rng));
    const auto q = quantize_multiplier(0.002 * scale(rng));
    e.multiplier.push_back(q.multiplier);
    e.shift.push_back(q.shift);
  }
  return e;
}

// A network of widths[0] -> widths[1] -> ... as chained programs; hidden layers INT8 with ReLU
// through the epilogue, the last INT32. Checks the result against the golden model.
void check_chain(const DeviceCaps& caps, const std::vector<int>& widths, Eigen::Index rows,
                 bool sparse, std::mt19937_64& rng) {
  std::string shape;
  for (const int w : widths) shape += std::to_string(w) + " ";
  SCOPED_TRACE(caps.describe() + ": " + std::to_string(rows) + " rows through " + shape +
               (sparse ? "sparse" : "dense"));
  HostMemory mem;
  std::vector<ChainLayer> layers(widths.size() - 1);
  for (std::size_t i = 0; i < layers.size(); ++i) {
    MatrixI8 w = testing::random_i8(widths[i + 1], widths[i], rng);
    layers[i].options.mode = sparse ? GemmMode::SPARSE : GemmMode::DENSE;
    layers[i].weights = sparse ? prune_nm_any_k(w, caps.pattern) : w;
    if (i + 1 < layers.size()) {
      layers[i].options.epilogue = random_epilogue(widths[i + 1], rng);
      layers[i].options.relu = true;
    }
  }
  const MatrixI8 x = testing::random_i8(rows, widths[0], rng);
  const ProgramChain chain(caps, x, layers, mem);
  std::uint32_t separate = 0;
  for (std::size_t i = 0; i < chain.size(); ++i) separate += chain.program(i).command_count();
  ASSERT_EQ(chain.command_count(), separate + layers.size() - 1);  // one barrier between two
  // Each layer reads where the one before it writes.
  for (std::size_t i = 1; i < chain.size(); ++i) {
    EXPECT_EQ(chain.program(i).activation_address(), chain.program(i - 1).output_address());
  }

  FunctionalModel model(caps);
  const RunResult res = model.run(mem, chain.command_address(), chain.command_count());
  ASSERT_TRUE(res.ok()) << res.describe();
  ASSERT_TRUE(res.hazards.empty()) << res.hazard_count << " hazards, first: " << res.hazards.front();

  MatrixI8 a = x;
  for (std::size_t i = 0; i + 1 < layers.size(); ++i) {
    a = apply_epilogue(golden::gemm_i8(a, layers[i].weights), *layers[i].options.epilogue, true,
                       false)
            .cast<std::int8_t>();
  }
  EXPECT_TRUE(chain.read_output() == golden::gemm_i8(a, layers.back().weights));
  // The device's counters are the sum of the layers' shares, each taken from its own commands.
  StreamCounters shares;
  for (std::size_t i = 0; i < chain.size(); ++i) {
    const std::size_t from = chain.first_command(i);
    const std::size_t count = chain.first_command(i + 1) - from;
    EXPECT_EQ(count, chain.program(i).command_count() + (i > 0 ? 1u : 0u));
    EXPECT_EQ(chain.layer_of_command(from), i);
    EXPECT_EQ(chain.layer_of_command(from + count - 1), i);
    shares += stream_counters(caps, chain.commands(), from, count);
  }
  EXPECT_EQ(chain.first_command(chain.size()), chain.command_count());
  EXPECT_EQ(shares, run_counters(res));
  // The cycle model runs the whole stream (it would throw on a token deadlock); its split gives
  // every layer a share and the shares add up to the total.
  const CyclePrediction p = chain.predict_cycles();
  const std::vector<std::uint64_t> cycles = chain.layer_cycles(p);
  ASSERT_EQ(cycles.size(), chain.size());
  std::uint64_t sum = 0;
  for (const std::uint64_t c : cycles) {
    EXPECT_GT(c, 0u);
    sum += c;
  }
  EXPECT_EQ(sum, p.total);
  // A layer takes at least its array's beats after the one before it has finished.
  for (std::size_t i = 0; i < chain.size(); ++i) {
    EXPECT_GE(cycles[i], stream_counters(caps, chain.commands(), chain.first_command(i),
                                         chain.first_command(i + 1) - chain.first_command(i))
                             .beats);
  }
}

TEST(ProgramChainTest, ChainedLayersEqualTheGoldenNetwork) {
  const std::uint64_t seed = test_seed(61);
  SCOPED_TRACE(seed_note(seed));
  std::mt19937_64 rng(seed);
  for (const char* config : {"small", "default", "dense_only", "small_2of8"}) {
    const DeviceCaps caps = DeviceCaps::named(config);
    const bool sparse = caps.sparse_supported;
    // Widths that are and are not multiples of an activation entry (the padding bytes of an
    // output row are read as the next layer's K padding).
    check_chain(caps, {64, 48, 32}, 20, sparse, rng);
    check_chain(caps, {70, 45, 37, 10}, 33, sparse, rng);
    check_chain(caps, {40, 24, 12}, 7, false, rng);
  }
}

TEST(ProgramChainTest, RefusesWhatItCannotChain) {
  const DeviceCaps caps = DeviceCaps::named("small");
  std::mt19937_64 rng(5);
  HostMemory mem;
  const MatrixI8 x = testing::random_i8(8, 32, rng);
  const MatrixI8 w = testing::random_i8(16, 32, rng);
  GemmOptions dense;
  dense.mode = GemmMode::DENSE;
  const GemmProgram a(caps, x, w, dense, mem);
  expect_throw_containing([] { chain_commands({}); }, "no program to chain");
  expect_throw_containing([&] { chain_commands({&a, nullptr}); }, "a null program");
  std::vector<ChainLayer> layers{{w, dense}, {testing::random_i8(4, 16, rng), dense}};
  expect_throw_containing([&] { ProgramChain(caps, x, layers, mem); },
                          "layer 0 has no epilogue: the next layer reads INT8");
  layers[0].options.epilogue = EpilogueParams{std::vector<std::int32_t>(16, 0),
                                              std::vector<std::int32_t>(16, 1 << 30),
                                              std::vector<std::uint8_t>(16, 31)};
  layers[1].weights = testing::random_i8(4, 15, rng);
  expect_throw_containing([&] { ProgramChain(caps, x, layers, mem); },
                          "layer 1 has K = 15 but reads 16 values a row");

  // An external input the LOADs cannot read: misaligned, or rows shorter than the padded K.
  GemmOptions bad = dense;
  bad.input = ExternalInput{a.output_address() + 1, 64};
  expect_throw_containing([&] { GemmProgram(caps, 8, w, bad, mem); },
                          "multiples of the 8-byte AXI word");
  bad.input = ExternalInput{a.output_address(), 16};
  expect_throw_containing([&] { GemmProgram(caps, 8, w, bad, mem); },
                          "the stride at least the padded K = 32");
  GemmOptions none = dense;
  expect_throw_containing([&] { GemmProgram(caps, 8, w, none, mem); },
                          "no activations and no external input");
  GemmOptions both = dense;
  both.input = ExternalInput{a.output_address(), 64};
  expect_throw_containing([&] { GemmProgram(caps, x, w, both, mem); },
                          "both as a matrix and as an external input");
}

}  // namespace
}  // namespace nmsa
