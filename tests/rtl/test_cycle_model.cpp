// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// The cycle model (GemmProgram::predict_cycles) against the Verilated accelerator: on memories
// whose bandwidth gives each direction a beat per cycle (the model's exact regime, see
// sw/cycle_model/src/cycle_model.cpp), every compiled program must take exactly the predicted
// cycles, for random shapes in both modes, INT8 and INT32 outputs, on every top configuration;
// under random back-pressure, within a stated tolerance. Programs chained into one stream
// (program_chain.hpp) likewise: exact cycles, the network's result bit-exact, and the device's
// counters those the chain's commands count (stream_counters.hpp).
#include <cmath>
#include <random>

#include <gtest/gtest.h>

#include "../common/random_matrix.hpp"
#include "nmsa/device.hpp"
#include "nmsa/epilogue.hpp"
#include "nmsa/gemm_program.hpp"
#include "nmsa/golden.hpp"
#include "nmsa/program_chain.hpp"
#include "nmsa/sparse_format.hpp"
#include "nmsa/stream_counters.hpp"
#include "nmsa/tb/rtl_device.hpp"
#include "nmsa/tb/sim_context.hpp"
#include "nmsa/tb/top_sim.hpp"

namespace nmsa {
namespace {

struct Memory {
  const char* name;
  unsigned read_latency;
  unsigned write_latency;
};

// A near memory and the benchmark's far one; 16 B/cycle is a beat per cycle each way.
constexpr Memory kMemories[] = {{"near", 4, 2}, {"far", 100, 16}};
constexpr double kBytesPerCycle = 16.0;

class CycleModelTest : public ::testing::TestWithParam<std::string> {};

TEST_P(CycleModelTest, PredictionEqualsRtlCycles) {
  const std::uint64_t seed = tb::test_seed(31);
  SCOPED_TRACE(tb::seed_note(seed));
  std::mt19937_64 rng(seed);
  auto pick = [&rng](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (const Memory& mem : kMemories) {
    tb::AxiMemoryConfig axi;
    axi.read_latency = mem.read_latency;
    axi.write_latency = mem.write_latency;
    axi.bytes_per_cycle = kBytesPerCycle;
    axi.max_reads = 64;
    axi.max_writes = 64;
    PerfModelParams perf;
    perf.dma_bytes_per_cycle = kBytesPerCycle;
    perf.dma_read_latency = static_cast<int>(mem.read_latency);
    perf.dma_write_latency = static_cast<int>(mem.write_latency);
    auto rtl = tb::make_rtl_device(GetParam(), axi, seed);
    const DeviceCaps caps = rtl->caps();
    const bool sparse_ok = caps.sparse_supported;
    for (int i = 0; i < 8; ++i) {
      // Short tiles (few rows) and long ones, K from one chunk to several.
      const int rows = i % 4 == 0 ? pick(1, 4) : pick(5, 96);
      const int k = pick(1, 5 * caps.dense_chunk_k() * caps.dense_parts());
      const int n = pick(1, 3 * caps.cols);
      const MatrixI8 x = testing::random_i8(rows, k, rng);
      MatrixI8 w = testing::random_i8(n, k, rng);
      GemmOptions options;
      options.mode = sparse_ok && i % 2 == 0 ? GemmMode::SPARSE : GemmMode::DENSE;
      if (options.mode == GemmMode::SPARSE) w = prune_nm_any_k(w, caps.pattern);
      if (i % 3 != 2) {
        EpilogueParams e;
        for (int c = 0; c < n; ++c) {
          e.bias.push_back(pick(-300, 300));
          const auto q = quantize_multiplier(0.002 * pick(1, 20));
          e.multiplier.push_back(q.multiplier);
          e.shift.push_back(q.shift);
        }
        options.epilogue = e;
      }
      options.memory = perf;
      SCOPED_TRACE(std::string(mem.name) + " memory, program " + std::to_string(i) + ": " +
                   std::to_string(rows) + "x" + std::to_string(k) + "x" + std::to_string(n) + " " +
                   std::string(to_string(options.mode)) +
                   (options.epilogue ? " INT8" : " INT32"));
      const GemmProgram program(caps, x, w, options, rtl->memory());
      const DeviceRun run = rtl->run(program.command_address(), program.command_count());
      ASSERT_TRUE(run.ok()) << run.describe();
      EXPECT_EQ(program.predict_cycles(perf).total, run.cycles) << program.plan().describe();
      // The run was a real one: bit-exact against the golden model.
      MatrixI32 want = golden::gemm_i8(x, w);
      if (options.epilogue) want = apply_epilogue(want, *options.epilogue, false, false);
      EXPECT_EQ(program.read_output(), want);
    }
  }
}

// Under random back-pressure (every channel withholds READY or a due beat with probability p in
// each cycle) the RTL's cycles are random; the model, told the channels' beat rate 1 - p,
// predicts their expectation. The tolerance docs/verification.md states: within 8% for p up to
// 0.1, at host memories from half a beat per cycle (bandwidth-bound) to four beats (none shared).
TEST_P(CycleModelTest, PredictionWithinToleranceUnderBackPressure) {
  constexpr double kTolerance = 0.08;
  const std::uint64_t seed = tb::test_seed(37);
  SCOPED_TRACE(tb::seed_note(seed));
  std::mt19937_64 rng(seed);
  auto pick = [&rng](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (const double p : {0.05, 0.1}) {
    for (const double beats_per_cycle : {0.5, 1.0, 1.5, 4.0}) {
      auto rtl = tb::make_rtl_device(GetParam(), tb::AxiMemoryConfig{}, seed);
      const DeviceCaps caps = rtl->caps();
      tb::AxiMemoryConfig axi;
      axi.read_latency = 50;
      axi.write_latency = 16;
      axi.bytes_per_cycle = beats_per_cycle * caps.axi_bytes();
      axi.p_ar_stall = axi.p_aw_stall = axi.p_w_stall = axi.p_r_gap = axi.p_b_gap = p;
      axi.max_reads = 64;
      axi.max_writes = 64;
      rtl = tb::make_rtl_device(GetParam(), axi, seed);
      PerfModelParams perf;
      perf.dma_bytes_per_cycle = axi.bytes_per_cycle;
      perf.dma_read_latency = 50;
      perf.dma_write_latency = 16;
      perf.channel_beat_rate = 1 - p;
      for (int i = 0; i < 6; ++i) {
        const int rows = i % 3 == 0 ? pick(1, 4) : pick(5, 96);
        const int k = pick(1, 5 * caps.dense_chunk_k() * caps.dense_parts());
        const int n = pick(1, 3 * caps.cols);
        const MatrixI8 x = testing::random_i8(rows, k, rng);
        MatrixI8 w = testing::random_i8(n, k, rng);
        GemmOptions options;
        options.mode = caps.sparse_supported && i % 2 == 0 ? GemmMode::SPARSE : GemmMode::DENSE;
        if (options.mode == GemmMode::SPARSE) w = prune_nm_any_k(w, caps.pattern);
        options.memory = perf;
        SCOPED_TRACE("p " + std::to_string(p) + ", " + std::to_string(beats_per_cycle) +
                     " beats per cycle, program " + std::to_string(i) + ": " +
                     std::to_string(rows) + "x" + std::to_string(k) + "x" + std::to_string(n) +
                     " " + std::string(to_string(options.mode)));
        const GemmProgram program(caps, x, w, options, rtl->memory());
        const DeviceRun run = rtl->run(program.command_address(), program.command_count());
        ASSERT_TRUE(run.ok()) << run.describe();
        const double predicted = static_cast<double>(program.predict_cycles(perf).total);
        const double measured = static_cast<double>(run.cycles);
        EXPECT_LE(std::abs(predicted - measured) / measured, kTolerance)
            << "predicted " << predicted << ", RTL " << measured;
        EXPECT_EQ(program.read_output(), golden::gemm_i8(x, w));
      }
    }
  }
}

// A three-layer network as one command stream: each layer reads the previous one's INT8 output
// where its STOREs wrote it, ordered by the chain's barrier COMPUTEs. The RTL's result must be
// the golden network's and its cycles the cycle model's prediction for the whole stream.
TEST_P(CycleModelTest, ChainedProgramsTakeThePredictedCycles) {
  const std::uint64_t seed = tb::test_seed(41);
  SCOPED_TRACE(tb::seed_note(seed));
  std::mt19937_64 rng(seed);
  auto pick = [&rng](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  tb::AxiMemoryConfig axi;
  axi.read_latency = 24;
  axi.write_latency = 16;
  axi.bytes_per_cycle = kBytesPerCycle;
  axi.max_reads = 64;
  axi.max_writes = 64;
  PerfModelParams perf;
  perf.dma_bytes_per_cycle = kBytesPerCycle;
  perf.dma_read_latency = 24;
  perf.dma_write_latency = 16;
  auto rtl = tb::make_rtl_device(GetParam(), axi, seed);
  const DeviceCaps caps = rtl->caps();
  const Eigen::Index rows = pick(8, 64);
  const std::vector<int> widths{pick(16, 160), pick(8, 80), pick(8, 80), pick(2, 24)};
  SCOPED_TRACE(std::to_string(rows) + " rows, widths " + std::to_string(widths[0]) + " " +
               std::to_string(widths[1]) + " " + std::to_string(widths[2]) + " " +
               std::to_string(widths[3]));
  std::vector<ChainLayer> layers;
  for (std::size_t i = 0; i + 1 < widths.size(); ++i) {
    ChainLayer l;
    l.weights = testing::random_i8(widths[i + 1], widths[i], rng);
    l.options.mode = caps.sparse_supported && i != 1 ? GemmMode::SPARSE : GemmMode::DENSE;
    if (l.options.mode == GemmMode::SPARSE) l.weights = prune_nm_any_k(l.weights, caps.pattern);
    l.options.memory = perf;
    if (i + 2 < widths.size()) {
      EpilogueParams e;
      for (int c = 0; c < widths[i + 1]; ++c) {
        e.bias.push_back(pick(-300, 300));
        const auto q = quantize_multiplier(0.002 * pick(1, 20));
        e.multiplier.push_back(q.multiplier);
        e.shift.push_back(q.shift);
      }
      l.options.epilogue = e;
      l.options.relu = true;
    }
    layers.push_back(std::move(l));
  }
  const MatrixI8 x = testing::random_i8(rows, widths[0], rng);
  const ProgramChain chain(caps, x, layers, rtl->memory());
  const DeviceRun run = rtl->run(chain.command_address(), chain.command_count());
  ASSERT_TRUE(run.ok()) << run.describe();
  const CyclePrediction predicted = chain.predict_cycles(perf);
  EXPECT_EQ(predicted.total, run.cycles);
  // The RTL's counters are what the chain's commands count (the runtime splits them by layer).
  EXPECT_EQ(run_counters(run), stream_counters(caps, chain.commands(), 0, chain.command_count()));
  MatrixI8 a = x;
  for (std::size_t i = 0; i + 1 < layers.size(); ++i) {
    a = apply_epilogue(golden::gemm_i8(a, layers[i].weights), *layers[i].options.epilogue, true,
                       false)
            .cast<std::int8_t>();
  }
  EXPECT_EQ(chain.read_output(), golden::gemm_i8(a, layers.back().weights));
}

INSTANTIATE_TEST_SUITE_P(Configs, CycleModelTest, ::testing::ValuesIn(tb::top_config_names()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace nmsa
