// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// nmsa_top's registers through the AXI4-Lite port: reset values and capabilities, read/write and
// read-only behaviour, byte strobes, undefined addresses, counters, an empty command stream.
#include <gtest/gtest.h>

#include "nmsa/device_caps.hpp"
#include "nmsa/regs.hpp"
#include "nmsa/tb/sim_context.hpp"
#include "nmsa/tb/top_sim.hpp"
#include "top_fixture.hpp"

namespace nmsa {
namespace {

namespace r = regs;

class TopCsrTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    seed_ = tb::test_seed(11);
    tb::AxiMemoryConfig mem;
    sim_ = testing::make_top_for_test(GetParam(), mem, seed_);
  }
  void TearDown() override { EXPECT_EQ(sim_->protocol_report(), ""); }

  std::uint64_t seed_ = 1;
  std::unique_ptr<tb::TopSim> sim_;
};

TEST_P(TopCsrTest, ResetValuesAndCapabilities) {
  SCOPED_TRACE(tb::seed_note(seed_));
  EXPECT_EQ(sim_->read_reg(r::ID_OFFSET), r::ID_RESET);
  EXPECT_EQ(sim_->read_reg(r::VERSION_OFFSET), r::VERSION_RESET);
  const std::uint32_t cap = sim_->read_reg(r::CAP_ARRAY_OFFSET);
  const unsigned rows = (cap & r::CAP_ARRAY_ROWS_MASK) >> r::CAP_ARRAY_ROWS_SHIFT;
  const unsigned cols = (cap & r::CAP_ARRAY_COLS_MASK) >> r::CAP_ARRAY_COLS_SHIFT;
  const DeviceCaps want = DeviceCaps::named(GetParam());
  EXPECT_EQ(rows, static_cast<unsigned>(want.rows));
  EXPECT_EQ(cols, static_cast<unsigned>(want.cols));
  EXPECT_EQ((cap & r::CAP_ARRAY_N_MASK) >> r::CAP_ARRAY_N_SHIFT, 2u);
  EXPECT_EQ((cap & r::CAP_ARRAY_M_MASK) >> r::CAP_ARRAY_M_SHIFT, 4u);
  const std::uint32_t widths = sim_->read_reg(r::CAP_WIDTHS_OFFSET);
  EXPECT_EQ((widths & r::CAP_WIDTHS_DATA_W_MASK) >> r::CAP_WIDTHS_DATA_W_SHIFT, 8u);
  EXPECT_EQ((widths & r::CAP_WIDTHS_ACC_W_MASK) >> r::CAP_WIDTHS_ACC_W_SHIFT, 32u);
  EXPECT_EQ((widths & r::CAP_WIDTHS_AXI_DATA_W_MASK) >> r::CAP_WIDTHS_AXI_DATA_W_SHIFT,
            static_cast<unsigned>(want.axi_data_w));
  EXPECT_GT(sim_->read_reg(r::CAP_ACT_ENTRIES_OFFSET), 0u);
  EXPECT_GT(sim_->read_reg(r::CAP_ACC_ENTRIES_OFFSET), 0u);
  // The queue and FIFO depths of the configuration reach the registers software sizes by.
  const DeviceCaps got = from_registers([&](std::uint32_t off) { return sim_->read_reg(off); });
  EXPECT_EQ(got.queue_depth, want.queue_depth);
  EXPECT_EQ(got.fetch_chunk, want.fetch_chunk);
  EXPECT_EQ(got.fetch_chunks, want.fetch_chunks);
  EXPECT_EQ(got.pending_loads, want.pending_loads);
  EXPECT_EQ(got.read_requests, want.read_requests);
  EXPECT_EQ(got.counter_w, want.counter_w);  // CAP_WIDTHS.COUNTER_W from the top's CounterW
  EXPECT_EQ(sim_->read_reg(r::STATUS_OFFSET), 0u);
  EXPECT_EQ(sim_->read_reg(r::CTRL_OFFSET), 0u);
  EXPECT_EQ(sim_->read_reg(r::CMD_COUNT_OFFSET), 0u);
  EXPECT_FALSE(sim_->irq());
}

TEST_P(TopCsrTest, ReadWriteReadOnlyAndStrobes) {
  sim_->write_reg(r::CMD_BASE_LO_OFFSET, 0x12345678);
  sim_->write_reg(r::CMD_BASE_HI_OFFSET, 0x9abcdef0);
  sim_->write_reg(r::CMD_COUNT_OFFSET, 77);
  EXPECT_EQ(sim_->read_reg(r::CMD_BASE_LO_OFFSET), 0x12345678u);
  EXPECT_EQ(sim_->read_reg(r::CMD_BASE_HI_OFFSET), 0x9abcdef0u);
  EXPECT_EQ(sim_->read_reg(r::CMD_COUNT_OFFSET), 77u);
  // Only byte 1 written.
  EXPECT_EQ(sim_->try_write_reg(r::CMD_BASE_LO_OFFSET, 0xffffffff, 0x2), tb::AxiResp::kOkay);
  EXPECT_EQ(sim_->read_reg(r::CMD_BASE_LO_OFFSET), 0x1234ff78u);
  // Read-only registers ignore writes, with OKAY.
  EXPECT_EQ(sim_->try_write_reg(r::ID_OFFSET, 0), tb::AxiResp::kOkay);
  EXPECT_EQ(sim_->read_reg(r::ID_OFFSET), r::ID_RESET);
  EXPECT_EQ(sim_->try_write_reg(r::STATUS_OFFSET, 0xffffffff), tb::AxiResp::kOkay);
  EXPECT_EQ(sim_->read_reg(r::STATUS_OFFSET), 0u);
  // IRQ_EN is read/write; START and SOFT_RESET read as 0.
  sim_->write_reg(r::CTRL_OFFSET, r::CTRL_IRQ_EN_MASK);
  EXPECT_EQ(sim_->read_reg(r::CTRL_OFFSET), r::CTRL_IRQ_EN_MASK);
}

TEST_P(TopCsrTest, UndefinedAddressesAnswerSlverr) {
  std::uint32_t value = 123;
  for (std::uint32_t offset : {0x03Cu, 0x0FCu, 0x200u, 0xFFCu}) {
    EXPECT_EQ(sim_->try_read_reg(offset, value), tb::AxiResp::kSlvErr) << offset;
    EXPECT_EQ(value, 0u) << offset;
    EXPECT_EQ(sim_->try_write_reg(offset, 1), tb::AxiResp::kSlvErr) << offset;
  }
  // Registers still answer normally afterwards.
  EXPECT_EQ(sim_->read_reg(r::ID_OFFSET), r::ID_RESET);
}

TEST_P(TopCsrTest, CountersCountAndLatchHighHalf) {
  const std::uint64_t first = sim_->read_counter(r::CYCLES_TOTAL_LO_OFFSET);
  for (int i = 0; i < 100; ++i) sim_->step();
  const std::uint64_t second = sim_->read_counter(r::CYCLES_TOTAL_LO_OFFSET);
  EXPECT_GT(second, first + 100);
  EXPECT_EQ(sim_->read_counter(r::CYCLES_BUSY_LO_OFFSET), 0u);
  EXPECT_EQ(sim_->read_counter(r::MACS_LO_OFFSET), 0u);
  // Counters are read-only: a write is ignored.
  sim_->write_reg(r::COUNTERS_BASE, 0);
  EXPECT_GE(sim_->read_counter(r::CYCLES_TOTAL_LO_OFFSET), second);
}

TEST_P(TopCsrTest, EmptyStreamFinishesWithDoneAndIrq) {
  sim_->write_reg(r::CTRL_OFFSET, r::CTRL_IRQ_EN_MASK);
  sim_->write_reg(r::CMD_COUNT_OFFSET, 0);
  sim_->write_reg(r::CTRL_OFFSET, r::CTRL_IRQ_EN_MASK | r::CTRL_START_MASK);
  sim_->wait_idle(1000, 4);
  const std::uint32_t status = sim_->read_reg(r::STATUS_OFFSET);
  EXPECT_TRUE(status & r::STATUS_DONE_MASK);
  EXPECT_FALSE(status & r::STATUS_ERROR_MASK);
  EXPECT_TRUE(sim_->irq());
  EXPECT_EQ(sim_->read_reg(r::IRQ_STATUS_OFFSET), r::IRQ_STATUS_DONE_MASK);
  sim_->write_reg(r::IRQ_STATUS_OFFSET, r::IRQ_STATUS_DONE_MASK);  // w1c
  EXPECT_EQ(sim_->read_reg(r::IRQ_STATUS_OFFSET), 0u);
  EXPECT_FALSE(sim_->irq());
}

INSTANTIATE_TEST_SUITE_P(Configs, TopCsrTest, ::testing::ValuesIn(tb::top_config_names()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace nmsa
