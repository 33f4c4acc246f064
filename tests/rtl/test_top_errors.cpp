// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// Every error case of docs/errors.md on nmsa_top: the sticky error code and command index, the
// error counters, that nothing is reported as done, that the IRQ rises, that the bus protocol
// stays clean, and that a normal run succeeds after a soft reset.
#include <gtest/gtest.h>

#include "nmsa/device_caps.hpp"
#include "nmsa/tb/coverage.hpp"
#include "nmsa/tb/sim_context.hpp"
#include "one_tile_program.hpp"
#include "top_fixture.hpp"

namespace nmsa {
namespace {

using testing::err_code;
using testing::OneTileProgram;
namespace r = regs;

class TopErrorTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    seed_ = tb::test_seed(23);
    rng_.seed(seed_);
    tb::AxiMemoryConfig mem;
    mem.read_latency = 7;
    mem.p_ar_stall = 0.2;
    mem.p_r_gap = 0.2;
    mem.p_w_stall = 0.2;
    sim_ = testing::make_top_for_test(GetParam(), mem, seed_);
    program_ = std::make_unique<OneTileProgram>(*sim_, rng_);
  }
  void TearDown() override { coverage_.record(); }

  // The error is reported as `code` at command `index`, nothing as done, with the IRQ raised;
  // after a soft reset everything is clear and the unmodified program runs correctly.
  void expect_error_then_recovery(std::uint32_t status, unsigned code, std::uint32_t index) {
    SCOPED_TRACE(tb::seed_note(seed_));
    const std::string_view seen = r::to_string(static_cast<r::ErrCode>(err_code(status)));
    EXPECT_EQ(err_code(status), code) << seen;
    coverage_.hit("error " + std::string(seen), (status & r::STATUS_ERROR_MASK) != 0);
    EXPECT_TRUE(status & r::STATUS_ERROR_MASK);
    EXPECT_FALSE(status & r::STATUS_DONE_MASK);
    EXPECT_FALSE(status & r::STATUS_BUSY_MASK);
    EXPECT_EQ(sim_->read_reg(r::ERR_INFO_OFFSET), index);
    EXPECT_EQ(sim_->read_reg(r::IRQ_STATUS_OFFSET), r::IRQ_STATUS_ERROR_MASK);
    EXPECT_TRUE(sim_->irq());

    // START is ignored while the error is set.
    sim_->write_reg(r::CTRL_OFFSET, r::CTRL_START_MASK | r::CTRL_IRQ_EN_MASK);
    EXPECT_EQ(sim_->read_reg(r::STATUS_OFFSET), status);

    sim_->write_reg(r::CTRL_OFFSET, r::CTRL_SOFT_RESET_MASK | r::CTRL_IRQ_EN_MASK);
    sim_->wait_idle(10000, 4);
    EXPECT_EQ(sim_->read_reg(r::STATUS_OFFSET), 0u);
    EXPECT_EQ(sim_->read_reg(r::ERR_INFO_OFFSET), 0u);
    EXPECT_EQ(sim_->read_reg(r::IRQ_STATUS_OFFSET), 0u);
    EXPECT_EQ(sim_->read_counter(r::AXI_ERRORS_LO_OFFSET), 0u);
    EXPECT_EQ(sim_->read_reg(r::CTRL_OFFSET), r::CTRL_IRQ_EN_MASK);  // kept

    sim_->memory().clear_errors();
    program_->write_memory(sim_->memory());
    program_->clear_output(sim_->memory());
    const std::uint32_t again = program_->run(*sim_);
    EXPECT_EQ(again & (r::STATUS_DONE_MASK | r::STATUS_ERROR_MASK), r::STATUS_DONE_MASK)
        << "code " << err_code(again);
    coverage_.hit("run after soft reset from an error",
                  (again & (r::STATUS_DONE_MASK | r::STATUS_ERROR_MASK)) == r::STATUS_DONE_MASK);
    EXPECT_TRUE(program_->output_correct(sim_->memory()));
    EXPECT_EQ(sim_->protocol_report(), "");
    sim_->write_reg(r::IRQ_STATUS_OFFSET, r::IRQ_STATUS_DONE_MASK);  // acknowledge, as a driver
  }

  std::uint64_t seed_ = 1;
  std::mt19937_64 rng_;
  std::unique_ptr<tb::TopSim> sim_;
  std::unique_ptr<OneTileProgram> program_;
  tb::Coverage coverage_;  // what the device really reported (docs/testplan.md)
};

// The configurations whose array has N:M support, and those without.
std::vector<std::string> top_configs_with_sparse(bool sparse) {
  std::vector<std::string> out;
  for (const std::string& name : tb::top_config_names()) {
    if (DeviceCaps::named(name).sparse_supported == sparse) out.push_back(name);
  }
  return out;
}

class TopSparseErrorTest : public TopErrorTest {};
class TopDenseOnlyErrorTest : public TopErrorTest {};

TEST_P(TopSparseErrorTest, IllegalMetadata) {
  std::uint8_t illegal = 0;  // 2:4: 0b0000 (idx_lo == idx_hi) is illegal
  ASSERT_FALSE(is_legal_group_meta(illegal, program_->pattern));
  program_->set_meta(sim_->memory(), program_->rows - 1, program_->cols - 1, illegal);
  program_->clear_output(sim_->memory());
  const std::uint32_t status = program_->run(*sim_);
  EXPECT_EQ(sim_->read_counter(r::ILLEGAL_META_LO_OFFSET), 1u);
  // The STORE never ran: the output is untouched.
  EXPECT_EQ(sim_->memory().read_bytes(OneTileProgram::kOutBase, 1)[0], 0xEE);
  expect_error_then_recovery(status, 1, 3);
}

TEST_P(TopErrorTest, SlverrOnActivationLoad) {
  // One beat of the bus answers SLVERR.
  const auto beat = static_cast<std::uint64_t>(program_->bus_bytes);
  sim_->memory().inject_error(OneTileProgram::kActBase + beat, beat, tb::AxiResp::kSlvErr);
  const std::uint32_t status = program_->run(*sim_);
  EXPECT_EQ(sim_->read_counter(r::AXI_ERRORS_LO_OFFSET), 1u);
  expect_error_then_recovery(status, 2, 1);
}

TEST_P(TopErrorTest, DecerrOnStore) {
  sim_->memory().inject_error(OneTileProgram::kOutBase, 4096, tb::AxiResp::kDecErr);
  const std::uint32_t status = program_->run(*sim_);
  EXPECT_GE(sim_->read_counter(r::AXI_ERRORS_LO_OFFSET), 1u);
  expect_error_then_recovery(status, 3, 4);
}

TEST_P(TopErrorTest, DecerrOnCommandFetch) {
  sim_->memory().inject_error(OneTileProgram::kCmdBase + 32 * 2, 32, tb::AxiResp::kDecErr);
  const std::uint32_t status = program_->run(*sim_);
  EXPECT_GE(sim_->read_counter(r::AXI_ERRORS_LO_OFFSET), 1u);
  EXPECT_EQ(err_code(status), 3u);
  // Reported against the next command to dispatch: the first two are fine, so at most 2.
  EXPECT_LE(sim_->read_reg(r::ERR_INFO_OFFSET), 2u);
  expect_error_then_recovery(status, 3, sim_->read_reg(r::ERR_INFO_OFFSET));
}

TEST_P(TopErrorTest, BadOpcodeAndTarget) {
  // encode() refuses undefined fields, so the bad commands are patched into memory by hand.
  auto start_with_patch = [this](std::size_t index, std::size_t byte, std::uint8_t value) {
    program_->write_commands(sim_->memory(), program_->commands);
    sim_->memory().write_bytes(OneTileProgram::kCmdBase + 32 * index + byte,
                               std::vector<std::uint8_t>{value});
    sim_->write_reg(r::CMD_BASE_LO_OFFSET, static_cast<std::uint32_t>(OneTileProgram::kCmdBase));
    sim_->write_reg(r::CMD_COUNT_OFFSET, static_cast<std::uint32_t>(program_->commands.size()));
    sim_->write_reg(r::CTRL_OFFSET, r::CTRL_START_MASK | r::CTRL_IRQ_EN_MASK);
    sim_->wait_idle(100000, 8);
    return sim_->read_reg(r::STATUS_OFFSET);
  };
  // Opcode 7 in place of the COMPUTE (byte 0 holds the opcode and the token flags).
  expect_error_then_recovery(start_with_patch(3, 0, 0x07), 4, 3);
  // Opcode 0: all-zero memory is not a command.
  expect_error_then_recovery(start_with_patch(2, 0, 0x00), 4, 2);
  // LOAD target 3 (bits 11:8).
  expect_error_then_recovery(start_with_patch(0, 1, 0x03), 4, 0);
}

TEST_P(TopErrorTest, BadRange) {
  const std::uint32_t act_entries = sim_->read_reg(r::CAP_ACT_ENTRIES_OFFSET);
  auto cmds = program_->commands;
  cmds[1].first_entry = static_cast<std::uint16_t>(act_entries - 1);  // 12 rows past the end
  expect_error_then_recovery(program_->run(*sim_, cmds), 5, 1);

  const std::uint32_t acc_entries = sim_->read_reg(r::CAP_ACC_ENTRIES_OFFSET);
  cmds = program_->commands;
  cmds[3].first_acc_row = static_cast<std::uint16_t>(acc_entries - 2);
  expect_error_then_recovery(program_->run(*sim_, cmds), 5, 3);

  cmds = program_->commands;
  cmds[4].rows = 0;
  expect_error_then_recovery(program_->run(*sim_, cmds), 5, 4);

  // A LOAD that starts past the end of its buffer, and one that ends exactly at it.
  cmds = program_->commands;
  cmds[1].first_entry = static_cast<std::uint16_t>(act_entries + 3);
  expect_error_then_recovery(program_->run(*sim_, cmds), 5, 1);
  cmds = program_->commands;
  cmds[1].first_entry = static_cast<std::uint16_t>(act_entries - cmds[1].rows);
  cmds[3].first_act_entry = cmds[1].first_entry;
  EXPECT_EQ(program_->run(*sim_, cmds) & (r::STATUS_DONE_MASK | r::STATUS_ERROR_MASK),
            r::STATUS_DONE_MASK);
  sim_->write_reg(r::IRQ_STATUS_OFFSET, r::IRQ_STATUS_DONE_MASK);

  // A COMPUTE whose last activation vector lies past the buffer, and one whose first does.
  cmds = program_->commands;
  cmds[3].first_act_entry = static_cast<std::uint16_t>(act_entries - cmds[3].beats + 1);
  expect_error_then_recovery(program_->run(*sim_, cmds), 5, 3);
  cmds = program_->commands;
  cmds[3].first_act_entry = static_cast<std::uint16_t>(act_entries);
  expect_error_then_recovery(program_->run(*sim_, cmds), 5, 3);
}

TEST_P(TopErrorTest, BadAlign) {
  const int half_beat = program_->bus_bytes / 2;
  auto cmds = program_->commands;
  cmds[1].host_address += half_beat;
  expect_error_then_recovery(program_->run(*sim_, cmds), 7, 1);
  cmds = program_->commands;
  cmds[4].host_stride = program_->out_row_bytes() + half_beat;
  expect_error_then_recovery(program_->run(*sim_, cmds), 7, 4);
}

TEST_P(TopErrorTest, BadDependencies) {
  auto cmds = program_->commands;
  cmds[0].pop_prev = true;  // a LOAD has no previous stage
  expect_error_then_recovery(program_->run(*sim_, cmds), 8, 0);
  // A STORE that waits for a second token nobody gives: the stream could never finish.
  cmds = program_->commands;
  cmds.push_back(cmds[4]);
  expect_error_then_recovery(program_->run(*sim_, cmds), 8, 5);
}

// The stream pops as many tokens as it pushes, but in a cycle: the weight LOAD waits for a token
// its COMPUTE gives only when done, and the COMPUTE waits for the LOAD's. With nothing in flight
// the run control calls it a deadlock and names the oldest command that waits.
TEST_P(TopErrorTest, TokenCycleIsADeadlock) {
  auto cmds = program_->commands;
  cmds[2].pop_next = true;
  cmds[3].push_prev = true;
  program_->clear_output(sim_->memory());
  const std::uint32_t status = program_->run(*sim_, cmds);
  EXPECT_EQ(sim_->read_counter(r::TILES_SPARSE_LO_OFFSET) +
                sim_->read_counter(r::TILES_DENSE_LO_OFFSET), 0u);
  EXPECT_EQ(sim_->memory().read_bytes(OneTileProgram::kOutBase, 1)[0], 0xEE);
  expect_error_then_recovery(status, 8, 2);
}

// A LOAD waiting for a token nobody pushes, with enough LOADs behind it to fill its queue, the
// command processor's registers and its fetch FIFO: the stream's last command is never fetched,
// so its balance check never runs, and only the deadlock detector can end the run, naming the
// waiting LOAD.
TEST_P(TopErrorTest, DeadlockWithTheFetchBlockedIsBadDeps) {
  Command waiting = program_->commands[1];
  waiting.pop_next = true;
  std::vector<Command> cmds(64, program_->commands[1]);
  cmds[0] = waiting;
  expect_error_then_recovery(program_->run(*sim_, cmds), 8, 0);
}

// 256 LOADs that each give the compute stage a token nobody takes: the 256th would take the
// counter past 255.
TEST_P(TopErrorTest, TokenCounterOverflowIsBadDeps) {
  Command load = program_->commands[1];
  load.push_next = true;
  const std::vector<Command> cmds(256, load);
  expect_error_then_recovery(program_->run(*sim_, cmds), 8, 0xFFFFFFFFu);
}

// CMD_BASE must be aligned to the AXI beat like every host address.
TEST_P(TopErrorTest, MisalignedCommandBase) {
  program_->write_commands(sim_->memory(), program_->commands);
  sim_->write_reg(r::CMD_BASE_LO_OFFSET,
                  static_cast<std::uint32_t>(OneTileProgram::kCmdBase + program_->bus_bytes / 2));
  sim_->write_reg(r::CMD_COUNT_OFFSET, 5);
  sim_->write_reg(r::CTRL_OFFSET, r::CTRL_START_MASK | r::CTRL_IRQ_EN_MASK);
  sim_->wait_idle(100000, 8);
  EXPECT_EQ(sim_->read_counter(r::DMA_RD_BYTES_LO_OFFSET), 0u);  // nothing fetched
  expect_error_then_recovery(sim_->read_reg(r::STATUS_OFFSET), 7, 0xFFFFFFFFu);
}

TEST_P(TopErrorTest, StartWhileBusy) {
  program_->write_commands(sim_->memory(), program_->commands);
  sim_->write_reg(r::CMD_BASE_LO_OFFSET, static_cast<std::uint32_t>(OneTileProgram::kCmdBase));
  sim_->write_reg(r::CMD_COUNT_OFFSET, 5);
  sim_->write_reg(r::CTRL_OFFSET, r::CTRL_START_MASK | r::CTRL_IRQ_EN_MASK);
  ASSERT_TRUE(sim_->read_reg(r::STATUS_OFFSET) & r::STATUS_BUSY_MASK);
  sim_->write_reg(r::CTRL_OFFSET, r::CTRL_START_MASK | r::CTRL_IRQ_EN_MASK);
  sim_->wait_idle(100000, 8);
  expect_error_then_recovery(sim_->read_reg(r::STATUS_OFFSET), 6, 0xFFFFFFFFu);
}

TEST_P(TopErrorTest, SoftResetWhileRunning) {
  program_->write_commands(sim_->memory(), program_->commands);
  sim_->write_reg(r::CMD_BASE_LO_OFFSET, static_cast<std::uint32_t>(OneTileProgram::kCmdBase));
  sim_->write_reg(r::CMD_COUNT_OFFSET, 5);
  sim_->write_reg(r::CTRL_OFFSET, r::CTRL_START_MASK);
  for (int i = 0; i < 40; ++i) sim_->step();
  sim_->write_reg(r::CTRL_OFFSET, r::CTRL_SOFT_RESET_MASK);
  sim_->wait_idle(10000, 4);
  EXPECT_EQ(sim_->read_reg(r::STATUS_OFFSET), 0u);
  program_->clear_output(sim_->memory());
  const std::uint32_t status = program_->run(*sim_);
  EXPECT_EQ(status & (r::STATUS_DONE_MASK | r::STATUS_ERROR_MASK), r::STATUS_DONE_MASK);
  coverage_.hit("run after soft reset mid-run",
                (status & (r::STATUS_DONE_MASK | r::STATUS_ERROR_MASK)) == r::STATUS_DONE_MASK);
  EXPECT_TRUE(program_->output_correct(sim_->memory()));
  EXPECT_EQ(sim_->protocol_report(), "");
}

// START written while a soft reset drains the device: START_WHILE_BUSY, recorded once the reset
// has finished, so the interrupt it raises keeps its cause.
TEST_P(TopErrorTest, StartDuringSoftResetIsReportedAfterIt) {
  program_->write_commands(sim_->memory(), program_->commands);
  sim_->write_reg(r::CMD_BASE_LO_OFFSET, static_cast<std::uint32_t>(OneTileProgram::kCmdBase));
  sim_->write_reg(r::CMD_COUNT_OFFSET, 5);
  sim_->write_reg(r::CTRL_OFFSET, r::CTRL_START_MASK | r::CTRL_IRQ_EN_MASK);
  for (int i = 0; i < 40; ++i) sim_->step();
  sim_->write_reg(r::CTRL_OFFSET, r::CTRL_SOFT_RESET_MASK | r::CTRL_IRQ_EN_MASK);
  ASSERT_TRUE(sim_->read_reg(r::STATUS_OFFSET) & r::STATUS_BUSY_MASK)
      << "the soft reset finished before the START could meet it";
  sim_->write_reg(r::CTRL_OFFSET, r::CTRL_START_MASK | r::CTRL_IRQ_EN_MASK);
  sim_->wait_idle(10000, 8);
  expect_error_then_recovery(sim_->read_reg(r::STATUS_OFFSET), 6, 0xFFFFFFFFu);
}

// A sparse COMPUTE is an opcode the dense-only array does not execute: refused before it runs.
TEST_P(TopDenseOnlyErrorTest, SparseComputeIsBadOpcode) {
  ASSERT_FALSE(program_->sparse);
  auto cmds = program_->commands;
  cmds[3].dense = false;
  program_->clear_output(sim_->memory());
  const std::uint32_t status = program_->run(*sim_, cmds);
  EXPECT_EQ(sim_->read_counter(r::TILES_SPARSE_LO_OFFSET), 0u);
  EXPECT_EQ(sim_->memory().read_bytes(OneTileProgram::kOutBase, 1)[0], 0xEE);
  expect_error_then_recovery(status, 4, 3);
}

INSTANTIATE_TEST_SUITE_P(Configs, TopErrorTest, ::testing::ValuesIn(tb::top_config_names()),
                         [](const auto& info) { return info.param; });
INSTANTIATE_TEST_SUITE_P(Configs, TopSparseErrorTest,
                         ::testing::ValuesIn(top_configs_with_sparse(true)),
                         [](const auto& info) { return info.param; });
INSTANTIATE_TEST_SUITE_P(Configs, TopDenseOnlyErrorTest,
                         ::testing::ValuesIn(top_configs_with_sparse(false)),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace nmsa
