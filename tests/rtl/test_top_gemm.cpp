// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// Random GEMMs through the whole accelerator: shapes that are not multiples of the array or the
// tiles, sparse and dense, with the epilogue (INT8, optional ReLU) and without (INT32), with
// random host-memory latency and back-pressure. Results are checked against the Eigen golden
// model, the counters against the functional model running the same command stream, and the AXI
// traffic by the protocol monitors. On a mismatch the run is repeated with tracing and the path
// of the waveform around the end of the run is printed.
#include <cstdlib>
#include <filesystem>
#include <random>

#include <gtest/gtest.h>

#include "../common/random_matrix.hpp"
#include "nmsa/device_caps.hpp"
#include "nmsa/epilogue.hpp"
#include "nmsa/functional_model.hpp"
#include "nmsa/gemm_program.hpp"
#include "nmsa/golden.hpp"
#include "nmsa/sparse_format.hpp"
#include "nmsa/tb/coverage.hpp"
#include "nmsa/tb/sim_context.hpp"
#include "nmsa/tb/top_runner.hpp"
#include "top_fixture.hpp"

namespace nmsa {
namespace {

namespace r = regs;

struct GemmCase {
  MatrixI8 x, w;
  GemmOptions options;
  tb::AxiMemoryConfig memory;
  std::string describe() const {
    return std::to_string(x.rows()) + "x" + std::to_string(x.cols()) + "x" +
           std::to_string(w.rows()) + " " + std::string(to_string(options.mode)) +
           (options.epilogue ? (options.relu ? " int8+relu" : " int8") : " int32") +
           " latency " + std::to_string(memory.read_latency);
  }
};

GemmCase random_case(const DeviceCaps& caps, std::mt19937_64& rng, int index) {
  auto pick = [&rng](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  GemmCase c;
  const int rows = pick(1, 3 * (caps.rows + caps.cols));
  const int k = pick(1, 5 * caps.rows * caps.pattern.m);
  const int n_out = pick(1, 3 * caps.cols);
  c.x = testing::random_i8(rows, k, rng);
  c.w = testing::random_i8(n_out, k, rng);
  c.options.mode = caps.sparse_supported && index % 2 == 0 ? GemmMode::SPARSE : GemmMode::DENSE;
  if (c.options.mode == GemmMode::SPARSE) {
    c.w = prune_nm_any_k(c.w, caps.pattern);
  }
  if (index % 3 != 0) {
    EpilogueParams e;
    for (int ch = 0; ch < n_out; ++ch) {
      e.bias.push_back(pick(-5000, 5000));
      const auto q = quantize_multiplier(std::uniform_real_distribution<double>(1e-4, 2e-2)(rng));
      e.multiplier.push_back(q.multiplier);
      e.shift.push_back(q.shift);
    }
    c.options.epilogue = e;
    c.options.relu = index % 3 == 2;
  }
  c.memory.read_latency = static_cast<unsigned>(pick(1, 60));
  c.memory.write_latency = static_cast<unsigned>(pick(1, 30));
  c.memory.p_ar_stall = index % 4 == 3 ? 0.3 : 0.0;
  c.memory.p_r_gap = index % 4 == 3 ? 0.3 : 0.0;
  c.memory.p_w_stall = index % 4 == 2 ? 0.3 : 0.0;
  c.memory.p_aw_stall = index % 4 == 2 ? 0.2 : 0.0;
  return c;
}

MatrixI32 golden_result(const GemmCase& c) {
  const MatrixI32 acc = golden::gemm_i8(c.x, c.w);
  if (!c.options.epilogue) return acc;
  return apply_epilogue(acc, *c.options.epilogue, c.options.relu, /*int32_output=*/false);
}

class TopGemmTest : public ::testing::TestWithParam<std::string> {};

TEST_P(TopGemmTest, RandomGemmsMatchGoldenAndFunctionalModel) {
  const std::uint64_t seed = tb::test_seed(101);
  SCOPED_TRACE(tb::seed_note(seed));
  std::mt19937_64 rng(seed);
  // The capabilities come from the registers, as a driver reads them.
  DeviceCaps caps;
  {
    auto probe = tb::make_top_sim(GetParam(), tb::AxiMemoryConfig{}, seed);
    caps = from_registers([&](std::uint32_t off) { return probe->read_reg(off); });
  }
  const int cases = GetParam() == "small" ? 16 : 8;
  tb::Coverage coverage;
  for (int i = 0; i < cases; ++i) {
    const std::uint64_t case_seed = rng();
    std::mt19937_64 case_rng(case_seed);
    const GemmCase c = random_case(caps, case_rng, i);
    SCOPED_TRACE("case " + std::to_string(i) + ": " + c.describe());
    auto sim = testing::make_top_for_test(GetParam(), c.memory, case_seed);

    HostMemory host;
    const GemmProgram program(caps, c.x, c.w, c.options, host);
    HostMemory model_host;  // the same program, laid out again for the functional model
    const GemmProgram model_program(caps, c.x, c.w, c.options, model_host);
    FunctionalModel model(caps);
    const RunResult expected =
        model.run(model_host, program.command_address(), program.command_count());
    ASSERT_TRUE(expected.ok()) << expected.describe();

    const tb::TopRunResult run = tb::run_on_top(*sim, host, program.command_address(),
                                                program.command_count(), 5'000'000);
    ASSERT_TRUE(run.done()) << "error " << r::to_string(static_cast<r::ErrCode>(run.err_code()))
                            << " at command " << run.err_info;
    const MatrixI32 got = program.read_output();
    const MatrixI32 want = golden_result(c);
    if (got != want) {
      // Repeat the same run with the waveform of its last 3000 cycles and say where it is.
      auto traced = tb::make_top_sim(GetParam(), c.memory, case_seed);
      HostMemory again;
      const GemmProgram replay(caps, c.x, c.w, c.options, again);
      const char* dir = std::getenv("NMSA_WAVES_DIR");
      std::filesystem::create_directories(dir != nullptr ? dir : "waves");
      const std::string path = std::filesystem::absolute(
          std::filesystem::path(dir != nullptr ? dir : "waves") /
          ("top_gemm_failure_" + GetParam() + "_" + std::to_string(i) + ".fst")).string();
      traced->trace_from(path, run.cycles > 3000 ? run.cycles - 3000 : 0);
      tb::run_on_top(*traced, again, replay.command_address(), replay.command_count(), 5'000'000);
      traced->close_trace();
      ADD_FAILURE() << "results differ from the golden model; waveform of the last 3000 cycles: "
                    << path << " (open the .gtkw beside it in GTKWave)";
      for (Eigen::Index row = 0, shown = 0; row < got.rows() && shown < 5; ++row) {
        for (Eigen::Index col = 0; col < got.cols() && shown < 5; ++col) {
          if (got(row, col) != want(row, col)) {
            ADD_FAILURE() << "y(" << row << ", " << col << ") = " << got(row, col) << ", want "
                          << want(row, col);
            ++shown;
          }
        }
      }
      return;
    }
    const bool sparse = c.options.mode == GemmMode::SPARSE;
    coverage.hit("sparse", sparse);
    coverage.hit("dense", !sparse);
    coverage.hit("int32 output", !c.options.epilogue);
    coverage.hit("int8 output", c.options.epilogue.has_value() && !c.options.relu);
    coverage.hit("int8 output with relu", c.options.relu);
    coverage.hit("narrow int8 rows", c.options.epilogue.has_value() && caps.cols < 8);
    coverage.hit("K over several chunks", c.x.cols() > caps.rows * (sparse ? caps.pattern.m : caps.pattern.n));
    coverage.hit("K not a multiple of the chunk", c.x.cols() % (caps.rows * caps.pattern.m) != 0);
    coverage.hit("N_out over several blocks", c.w.rows() > caps.cols);
    coverage.hit("N_out not a multiple of Cols", c.w.rows() % caps.cols != 0);
    coverage.hit("tiles shorter than the no-bubble length", c.x.rows() < 2 * caps.rows + caps.cols + 6);
    coverage.hit("tiles of the no-bubble length", c.x.rows() >= 2 * caps.rows + caps.cols + 6);
    coverage.hit("read back-pressure", c.memory.p_ar_stall > 0 || c.memory.p_r_gap > 0);
    coverage.hit("write back-pressure", c.memory.p_w_stall > 0 || c.memory.p_aw_stall > 0);
    coverage.hit("several DMA bursts in flight", sim->axi_monitor().max_reads_in_flight() > 1);
    EXPECT_EQ(run.counter(r::TILES_SPARSE_LO_OFFSET), expected.tiles_sparse);
    EXPECT_EQ(run.counter(r::TILES_DENSE_LO_OFFSET), expected.tiles_dense);
    EXPECT_EQ(run.counter(r::MACS_LO_OFFSET), expected.macs);
    EXPECT_EQ(run.counter(r::CYCLES_COMPUTE_LO_OFFSET), expected.beats);
    EXPECT_EQ(run.counter(r::DMA_RD_BYTES_LO_OFFSET), expected.dma_rd_bytes);
    EXPECT_EQ(run.counter(r::DMA_WR_BYTES_LO_OFFSET), expected.dma_wr_bytes);
    EXPECT_EQ(run.counter(r::META_BYTES_LO_OFFSET), expected.meta_bytes);
    EXPECT_EQ(run.counter(r::AXI_ERRORS_LO_OFFSET), 0u);
    EXPECT_EQ(sim->protocol_report(), "");
  }
  std::vector<std::string> required = {
      "dense", "int32 output", "int8 output", "int8 output with relu",
      "K over several chunks", "K not a multiple of the chunk", "N_out over several blocks",
      "N_out not a multiple of Cols", "tiles shorter than the no-bubble length",
      "tiles of the no-bubble length", "read back-pressure", "write back-pressure",
      "several DMA bursts in flight"};
  if (caps.cols < 8) required.push_back("narrow int8 rows");
  if (caps.sparse_supported) required.push_back("sparse");
  coverage.record();
  EXPECT_EQ(coverage.missing(required), std::vector<std::string>{})
      << "coverage of this run:\n" << coverage.report();
}

INSTANTIATE_TEST_SUITE_P(Configs, TopGemmTest, ::testing::ValuesIn(tb::top_config_names()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace nmsa
