// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// One hand-built tile through nmsa_top on every accelerator configuration (sparse, or dense on
// the dense-only one), and the counters it moves. The random GEMM tests use the compiler in libnmsa; this test pins the byte layout of
// docs/isa.md independently of it.
#include <gtest/gtest.h>

#include "nmsa/tb/sim_context.hpp"
#include "one_tile_program.hpp"
#include "top_fixture.hpp"

namespace nmsa {
namespace {

class TopSmokeTest : public ::testing::TestWithParam<std::string> {};

TEST_P(TopSmokeTest, OneTileInt32) {
  const std::uint64_t seed = tb::test_seed(5);
  SCOPED_TRACE(tb::seed_note(seed));
  std::mt19937_64 rng(seed);
  tb::AxiMemoryConfig mem_config;
  mem_config.read_latency = 10;
  auto sim = testing::make_top_for_test(GetParam(), mem_config, seed);
  const testing::OneTileProgram program(*sim, rng);

  const std::uint32_t status = program.run(*sim);
  ASSERT_EQ(testing::err_code(status), 0u) << "at command " << sim->read_reg(regs::ERR_INFO_OFFSET);
  ASSERT_TRUE(status & regs::STATUS_DONE_MASK);
  EXPECT_TRUE(program.output_correct(sim->memory()));
  EXPECT_TRUE(sim->irq());

  const auto pes = static_cast<std::uint64_t>(program.rows * program.cols);
  EXPECT_EQ(sim->read_counter(regs::TILES_SPARSE_LO_OFFSET), program.sparse ? 1u : 0u);
  EXPECT_EQ(sim->read_counter(regs::TILES_DENSE_LO_OFFSET), program.sparse ? 0u : 1u);
  EXPECT_EQ(sim->read_counter(regs::CYCLES_COMPUTE_LO_OFFSET),
            static_cast<std::uint64_t>(program.vectors));
  EXPECT_EQ(sim->read_counter(regs::MACS_LO_OFFSET),
            static_cast<std::uint64_t>(program.vectors) * pes *
                static_cast<std::uint64_t>(program.lanes()));
  EXPECT_EQ(sim->read_counter(regs::META_BYTES_LO_OFFSET),
            pes * static_cast<std::uint64_t>(program.meta_bits()) / 8);
  const std::uint64_t read_bytes = 5 * 32 + program.epi_bytes() +
                                   program.vectors * program.rows * program.lanes() +
                                   program.record_bytes() * program.rows;
  EXPECT_EQ(sim->read_counter(regs::DMA_RD_BYTES_LO_OFFSET), read_bytes);
  EXPECT_EQ(sim->read_counter(regs::DMA_WR_BYTES_LO_OFFSET),
            static_cast<std::uint64_t>(program.vectors) * program.out_row_bytes());
  EXPECT_EQ(sim->read_counter(regs::AXI_ERRORS_LO_OFFSET), 0u);
  EXPECT_EQ(sim->read_counter(regs::ILLEGAL_META_LO_OFFSET), 0u);
  const std::uint64_t busy = sim->read_counter(regs::CYCLES_BUSY_LO_OFFSET);
  EXPECT_GT(busy, static_cast<std::uint64_t>(program.vectors));
  EXPECT_GE(sim->read_counter(regs::CYCLES_TOTAL_LO_OFFSET), busy);
  EXPECT_EQ(sim->protocol_report(), "");
}

INSTANTIATE_TEST_SUITE_P(Configs, TopSmokeTest, ::testing::ValuesIn(tb::top_config_names()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace nmsa
