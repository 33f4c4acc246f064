// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// nmsa_fifo against a queue, cycle for cycle: random pushes, pops and flushes, with the FIFO
// empty, full and in between. The FIFO keeps its head in a register (rtl/mem/nmsa_fifo.sv); what
// it must show is exactly what a FIFO read straight from its memory shows: an entry pushed in
// cycle t visible in cycle t + 1, the next entry in the cycle after a pop, in_ready_o low only
// when Depth entries are held, and count_o the number held. Both variants: the memory read
// asynchronously (LUT RAM) and synchronously (BlockRam, block RAM on iCE40).
#include <cstdint>
#include <deque>
#include <memory>
#include <random>

#include <gtest/gtest.h>

#include "Vnmsa_fifo_w8d4.h"
#include "Vnmsa_fifo_w8d4_bram.h"
#include "nmsa/tb/sim_context.hpp"

namespace nmsa {
namespace {

constexpr unsigned kDepth = 4;

template <typename Model>
class FifoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    seed_ = tb::test_seed(7);
    context_ = tb::make_context(seed_);
    dut_ = std::make_unique<Model>(context_.get(), "fifo");
    tb::begin_reset(*dut_);
    dut_->flush_i = 0;
    dut_->in_valid_i = 0;
    dut_->out_ready_i = 0;
    tick();
    dut_->rst_ni = 1;
    dut_->eval();
  }
  void TearDown() override {
    dut_->final();
    tb::record_coverage(*context_);
  }

  void tick() {
    dut_->clk_i = 1;
    dut_->eval();
    dut_->clk_i = 0;
    dut_->eval();
  }

  // The outputs of this cycle against the queue.
  void expect_matches(const std::deque<std::uint8_t>& q, int cycle) {
    ASSERT_EQ(dut_->out_valid_o != 0, !q.empty()) << "cycle " << cycle << ", " << tb::seed_note(seed_);
    ASSERT_EQ(dut_->in_ready_o != 0, q.size() < kDepth) << "cycle " << cycle;
    ASSERT_EQ(dut_->count_o, q.size()) << "cycle " << cycle;
    if (!q.empty()) ASSERT_EQ(dut_->out_data_o, q.front()) << "cycle " << cycle;
  }

  // Runs `cycles` cycles with push and pop probabilities in percent.
  void run(int cycles, int push_pct, int pop_pct, int flush_pct, std::deque<std::uint8_t>& q,
           std::mt19937_64& rng) {
    std::uniform_int_distribution<int> pct(0, 99);
    std::uniform_int_distribution<int> byte(0, 255);
    for (int c = 0; c < cycles; ++c) {
      expect_matches(q, c);
      dut_->in_valid_i = pct(rng) < push_pct;
      dut_->in_data_i = static_cast<std::uint8_t>(byte(rng));
      dut_->out_ready_i = pct(rng) < pop_pct;
      dut_->flush_i = pct(rng) < flush_pct;
      dut_->eval();
      const bool push = dut_->in_valid_i && dut_->in_ready_o;
      const bool pop = dut_->out_valid_o && dut_->out_ready_i;
      const std::uint8_t data = dut_->in_data_i;
      tick();
      if (dut_->flush_i) {
        q.clear();
        continue;
      }
      if (pop) q.pop_front();
      if (push) q.push_back(data);
    }
  }

  std::uint64_t seed_ = 0;
  std::unique_ptr<VerilatedContext> context_;
  std::unique_ptr<Model> dut_;
};

using FifoVariants = ::testing::Types<Vnmsa_fifo_w8d4, Vnmsa_fifo_w8d4_bram>;
TYPED_TEST_SUITE(FifoTest, FifoVariants);

TYPED_TEST(FifoTest, MatchesAQueueCycleForCycle) {
  std::mt19937_64 rng(this->seed_);
  std::deque<std::uint8_t> q;
  // Mostly filling (full most of the time), mostly draining (empty), balanced, and with flushes.
  this->run(2000, 90, 30, 0, q, rng);
  this->run(2000, 30, 90, 0, q, rng);
  this->run(4000, 60, 60, 0, q, rng);
  this->run(4000, 70, 50, 2, q, rng);
  // Simultaneous push and pop at every fill level.
  this->run(2000, 100, 100, 0, q, rng);
  this->expect_matches(q, -1);
}

TYPED_TEST(FifoTest, FillsToDepthThenDrainsInOrder) {
  this->dut_->in_valid_i = 1;
  for (unsigned i = 0; i < kDepth; ++i) {
    this->dut_->in_data_i = static_cast<std::uint8_t>(0x10 + i);
    this->dut_->eval();
    ASSERT_TRUE(this->dut_->in_ready_o) << "entry " << i;
    this->tick();
  }
  this->dut_->eval();
  EXPECT_FALSE(this->dut_->in_ready_o);
  EXPECT_EQ(this->dut_->count_o, kDepth);
  this->dut_->in_valid_i = 0;
  this->dut_->out_ready_i = 1;
  for (unsigned i = 0; i < kDepth; ++i) {
    this->dut_->eval();
    ASSERT_TRUE(this->dut_->out_valid_o) << "entry " << i;
    EXPECT_EQ(this->dut_->out_data_o, 0x10 + i);
    this->tick();
  }
  this->dut_->eval();
  EXPECT_FALSE(this->dut_->out_valid_o);
  EXPECT_EQ(this->dut_->count_o, 0u);
}

}  // namespace
}  // namespace nmsa
