// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// The board core (rtl/board/) driven through the UART backend over a pseudo-terminal: the host
// code a board user runs (termios, the bridge protocol, the uart: backend) against the Verilated
// board, without hardware. The simulated board runs the `small` accelerator with 4 clock cycles
// a UART bit (CMakeLists.txt).
#include <chrono>
#include <random>

#include <gtest/gtest.h>

#include "../common/device_checks.hpp"
#include "../common/expect_throw.hpp"
#include "../common/random_matrix.hpp"
#include "nmsa/device.hpp"
#include "nmsa/epilogue.hpp"
#include "nmsa/gemm_program.hpp"
#include "nmsa/golden.hpp"
#include "nmsa/isa.hpp"
#include "nmsa/sparse_format.hpp"
#include "nmsa/tb/board_sim.hpp"
#include "nmsa/tb/rtl_device.hpp"
#include "nmsa/tb/sim_context.hpp"
#include "nmsa/uart_bridge.hpp"
#include "nmsa/uart_device.hpp"

namespace nmsa {
namespace {

namespace r = regs;
using BridgeCommand = bridge::Command;
using bridge::Status;
using testing::expect_throw_containing;
using Needles = std::vector<std::string>;

// Generous: the simulated board is much slower than a real one and shares the machine with the
// rest of the regression.
UartDeviceOptions sim_options() {
  UartDeviceOptions o;
  o.response_timeout = std::chrono::seconds(10);
  o.run_timeout = std::chrono::seconds(120);
  return o;
}

class BoardUartTest : public ::testing::Test {
 protected:
  BoardUartTest() : seed_(tb::test_seed(11)), sim_(seed_) {}

  // The raw protocol over the board's serial port, for requests the backend never sends.
  struct RawClient {
    explicit RawClient(const tb::BoardSim& sim)
        : link(open_serial_link(sim.tty_path(), UART_DEFAULT_BAUD)),
          client(*link, sim.spec(),
                 bridge::BridgeTimeouts{UART_DEFAULT_BAUD, sim_options().response_timeout}) {
      client.ping();
    }
    std::unique_ptr<ByteLink> link;
    bridge::BridgeClient client;
  };

  std::uint64_t seed_;
  tb::BoardSim sim_;
};

TEST_F(BoardUartTest, GemmsMatchTheGoldenModelAndTheRtlBackendsCounters) {
  SCOPED_TRACE(tb::seed_note(seed_));
  auto board = make_uart_device(sim_.spec(), sim_options());
  auto rtl = tb::make_rtl_device(tb::board_sim_params().config, tb::AxiMemoryConfig{}, seed_);
  const DeviceCaps caps = board->caps();
  ASSERT_EQ(caps.describe(), rtl->caps().describe());
  EXPECT_EQ(board->name(), sim_.spec() + "@1000000");

  std::mt19937_64 rng(seed_);
  // Sparse with INT32 output, then dense with an INT8 epilogue and ReLU: rows of 16 and of 4
  // bytes, the second narrower than a bus word, so the download of STORE regions is exercised
  // on both kinds. K is not a multiple of a tile, so padding is in the program too.
  for (const GemmMode mode : {GemmMode::SPARSE, GemmMode::DENSE}) {
    const int rows = 6, k = 40, n = 6;
    const MatrixI8 x = testing::random_i8(rows, k, rng);
    MatrixI8 w = testing::random_i8(n, k, rng);
    GemmOptions options;
    options.mode = mode;
    if (mode == GemmMode::SPARSE) w = prune_nm_any_k(w, caps.pattern);
    MatrixI32 expected = golden::gemm_i8(x, w);
    if (mode == GemmMode::DENSE) {
      const EpilogueParams e = testing::random_epilogue(n, rng);
      options.epilogue = e;
      options.relu = true;
      expected = apply_epilogue(expected, e, true, false);
    }
    SCOPED_TRACE(std::string(to_string(mode)));
    const GemmProgram on_board(caps, x, w, options, board->memory());
    const GemmProgram on_rtl(caps, x, w, options, rtl->memory());
    const DeviceRun a = board->run(on_board.command_address(), on_board.command_count());
    const DeviceRun b = rtl->run(on_rtl.command_address(), on_rtl.command_count());
    ASSERT_TRUE(a.ok()) << a.describe();
    ASSERT_TRUE(b.ok()) << b.describe();
    EXPECT_EQ(on_board.read_output(), expected);
    EXPECT_EQ(on_board.read_output(), on_rtl.read_output());
    // The cycle counters differ: the board memory's timing is not the harness's memory model's.
    testing::expect_same_work_counters(a, b);
    // cycles is CYCLES_TOTAL: from the soft reset before START to the counter read, so it
    // covers the run (CYCLES_BUSY) and the link's round trips around it.
    EXPECT_EQ(a.cycles, a.counter(r::CYCLES_TOTAL_LO_OFFSET));
    EXPECT_GT(a.counter(r::CYCLES_BUSY_LO_OFFSET), 0u);
    EXPECT_GT(a.cycles, a.counter(r::CYCLES_BUSY_LO_OFFSET));
  }
  EXPECT_EQ(sim_.line_errors(), 0u);
}

TEST_F(BoardUartTest, DeviceErrorsComeBackAsOnTheRtlBackend) {
  // A STORE beyond the accumulators: BAD_RANGE at command 0, as test_device checks for the
  // other backends.
  auto board = make_uart_device(sim_.spec(), sim_options());
  const DeviceCaps caps = board->caps();
  const auto out = board->memory().alloc(64);
  const auto cmd_addr = board->memory().alloc(32);
  const Command store = Command::store(static_cast<std::uint16_t>(caps.acc_entries - 1), 2, 0,
                                       out, 64, /*int32_output=*/true);
  const auto bytes = encode(store);
  board->memory().write(cmd_addr, bytes.data(), bytes.size());
  const DeviceRun run = board->run(cmd_addr, 1);
  EXPECT_FALSE(run.ok());
  EXPECT_EQ(run.error, r::ErrCode::BAD_RANGE);
  EXPECT_EQ(run.error_index, 0u);
  EXPECT_EQ(board->read_reg(r::ERR_INFO_OFFSET), 0u);
}

TEST_F(BoardUartTest, RunOverItsTimeLimitIsStoppedAndReported) {
  SCOPED_TRACE(tb::seed_note(seed_));
  // 200 LOADs of the whole activation scratchpad: far longer than the first STATUS read.
  {
    UartDeviceOptions options = sim_options();
    options.run_timeout = std::chrono::milliseconds(0);
    auto board = make_uart_device(sim_.spec(), options);
    const DeviceCaps caps = board->caps();
    const auto bytes = static_cast<std::uint16_t>(caps.act_entry_bytes());
    const auto rows = static_cast<std::uint16_t>(caps.act_entries);
    const auto data = board->memory().alloc(std::uint64_t{rows} * bytes);
    const auto cmds = board->memory().alloc(200 * isa::COMMAND_BYTES);
    const auto load = encode(Command::load(LoadTarget::ACTIVATIONS, 0, rows, bytes, data, bytes));
    for (std::uint64_t i = 0; i < 200; ++i) {
      board->memory().write(cmds + i * isa::COMMAND_BYTES, load.data(), load.size());
    }
    expect_throw_containing([&] { board->run(cmds, 200); },
                            Needles{sim_.spec(), "the run of 200 commands", "still busy after 0 ms",
                                    "soft-reset"});
    // The soft reset stopped the stream: idle, neither done nor in error.
    EXPECT_EQ(board->read_reg(r::STATUS_OFFSET) &
                  (r::STATUS_BUSY_MASK | r::STATUS_DONE_MASK | r::STATUS_ERROR_MASK),
              0u);
  }
  // And the board runs the next program normally.
  auto board = make_uart_device(sim_.spec(), sim_options());
  std::mt19937_64 rng(seed_);
  const MatrixI8 x = testing::random_i8(3, 16, rng);
  const MatrixI8 w = prune_nm_any_k(testing::random_i8(4, 16, rng), board->caps().pattern);
  const GemmProgram program(board->caps(), x, w, GemmOptions{}, board->memory());
  const DeviceRun run = board->run(program.command_address(), program.command_count());
  ASSERT_TRUE(run.ok()) << run.describe();
  EXPECT_EQ(program.read_output(), golden::gemm_i8(x, w));
}

TEST_F(BoardUartTest, RegistersThroughTheBridge) {
  {
    auto board = make_uart_device(sim_.spec(), sim_options());
    EXPECT_EQ(board->read_reg(r::ID_OFFSET), r::ID_RESET);
    board->write_reg(r::CMD_BASE_LO_OFFSET, 0x12345678);
    board->write_reg(r::CMD_BASE_HI_OFFSET, 0x9abcdef0);
    board->write_reg(r::CMD_COUNT_OFFSET, 77);
    EXPECT_EQ(board->read_reg(r::CMD_BASE_LO_OFFSET), 0x12345678u);
    EXPECT_EQ(board->read_reg(r::CMD_BASE_HI_OFFSET), 0x9abcdef0u);
    EXPECT_EQ(board->read_reg(r::CMD_COUNT_OFFSET), 77u);
  }  // the port is free again (one user at a time)

  // Several registers in one frame, an odd count (the last word of the frame half full).
  RawClient raw(sim_);
  raw.client.write_regs(r::CMD_BASE_LO_OFFSET, {1, 2, 3});
  EXPECT_EQ(raw.client.read_regs(r::CMD_BASE_LO_OFFSET, 3), (std::vector<std::uint32_t>{1, 2, 3}));
  const auto caps = raw.client.read_regs(r::ID_OFFSET, 8);
  EXPECT_EQ(caps[0], r::ID_RESET);
  EXPECT_EQ(caps[1], r::VERSION_RESET);

  // The CSRs answer SLVERR where no register is; the bridge passes that on.
  expect_throw_containing([&] { raw.client.read_regs(0x080, 1); },
                          Needles{sim_.spec(), "REG_READ of 1 register(s) at 0x80", "BUS_SLVERR"});
  expect_throw_containing([&] { raw.client.write_regs(0x080, {5}); },
                          Needles{"REG_WRITE", "BUS_SLVERR"});
  // Outside the 4 KiB register space, and misaligned: refused before any access.
  expect_throw_containing([&] { raw.client.read_regs(0xffc, 2); }, "BAD_ADDR");
  expect_throw_containing([&] { raw.client.read_regs(0x002, 1); }, "BAD_ADDR");
  EXPECT_EQ(raw.client.read_regs(r::CMD_COUNT_OFFSET, 1).front(), 3u);

  // A second user of the port is turned away while the first has it.
  expect_throw_containing([&] { make_uart_device(sim_.spec(), sim_options()); },
                          Needles{sim_.spec(), "in use by another process"});
}

TEST_F(BoardUartTest, MemoryWindowThroughTheBridge) {
  SCOPED_TRACE(tb::seed_note(seed_));
  RawClient raw(sim_);
  const bridge::BridgeInfo& info = raw.client.info();
  const tb::BoardSimParams& params = tb::board_sim_params();
  EXPECT_EQ(info.version, bridge::PROTOCOL_VERSION);
  EXPECT_EQ(info.mem_base, params.mem_base);
  EXPECT_EQ(info.mem_bytes, params.mem_bytes);
  EXPECT_EQ(info.max_payload, params.max_payload);
  EXPECT_EQ(info.clk_hz, params.clk_hz);
  EXPECT_EQ(info.timeout_clks, params.timeout_clks);

  // Three frames' worth at an address that is not frame-aligned, and the window's last word.
  std::mt19937_64 rng(seed_);
  std::vector<std::uint8_t> data(2 * info.max_payload + 200);
  for (auto& b : data) b = static_cast<std::uint8_t>(rng());
  const std::uint64_t at = info.mem_base + 8 * 37;
  raw.client.write_mem(at, data.data(), data.size());
  EXPECT_EQ(raw.client.read_mem(at, data.size()), data);
  const std::uint64_t last = info.mem_base + info.mem_bytes - 8;
  raw.client.write_mem(last, data.data(), 8);
  EXPECT_EQ(raw.client.read_mem(last, 8),
            std::vector<std::uint8_t>(data.begin(), data.begin() + 8));

  // Across the window's end and below its start: BAD_ADDR, nothing written.
  expect_throw_containing([&] { raw.client.read_mem(last, 16); },
                          Needles{"MEM_READ of 16 bytes", "BAD_ADDR"});
  expect_throw_containing([&] { raw.client.write_mem(info.mem_base - 8, data.data(), 8); },
                          "BAD_ADDR");
  EXPECT_EQ(raw.client.read_mem(at, 8), std::vector<std::uint8_t>(data.begin(), data.begin() + 8));

}

TEST_F(BoardUartTest, AllocationsStayInTheMemoryWindow) {
  auto board = make_uart_device(sim_.spec(), sim_options());
  const tb::BoardSimParams& params = tb::board_sim_params();
  EXPECT_EQ(board->memory().alloc_base(), params.mem_base);
  EXPECT_EQ(board->memory().alloc_limit(), std::uint64_t{params.mem_base} + params.mem_bytes);
  expect_throw_containing([&] { board->memory().alloc(params.mem_bytes + 1); },
                          Needles{sim_.spec(), "board memory", "does not fit the window"});
}

// Damaged requests: each gets an error response, has no effect, and the bridge answers the next
// request normally.
class BoardUartFrameTest : public BoardUartTest {
 protected:
  void expect_status(const std::vector<std::uint8_t>& request, Status status,
                     std::uint8_t echoed_command) {
    RawClient raw(sim_);
    const bridge::Response response = raw.client.exchange(request, "damaged request");
    EXPECT_EQ(response.status, status) << bridge::to_string(response.status);
    EXPECT_EQ(response.command, echoed_command);
    EXPECT_TRUE(response.payload.empty());
    // Nothing was executed, and the bridge is in step again.
    EXPECT_EQ(raw.client.read_regs(r::CMD_COUNT_OFFSET, 1).front(), 0u);
    EXPECT_EQ(raw.client.read_regs(r::ID_OFFSET, 1).front(), r::ID_RESET);
    EXPECT_EQ(sim_.line_errors(), 0u);
  }

  static std::vector<std::uint8_t> write_count(std::uint32_t value) {
    return bridge::encode_request(static_cast<std::uint8_t>(BridgeCommand::REG_WRITE),
                                  r::CMD_COUNT_OFFSET, 4,
                                  {static_cast<std::uint8_t>(value), 0, 0, 0});
  }
};

TEST_F(BoardUartFrameTest, CorruptedFrameIsAnsweredBadCrc) {
  std::vector<std::uint8_t> request = write_count(7);
  request[8] ^= 0x10;  // a payload bit flipped on the line
  expect_status(request, Status::BAD_CRC, static_cast<std::uint8_t>(BridgeCommand::REG_WRITE));
}

TEST_F(BoardUartFrameTest, TruncatedFrameIsAnsweredTimeout) {
  std::vector<std::uint8_t> request = write_count(7);
  request.resize(6);  // the line went quiet in the middle of the address
  expect_status(request, Status::TIMEOUT, static_cast<std::uint8_t>(BridgeCommand::REG_WRITE));
}

TEST_F(BoardUartFrameTest, UnknownCommandIsAnsweredBadCmd) {
  expect_status(bridge::encode_request(0x7e, 0, 4, {1, 2, 3, 4}), Status::BAD_CMD, 0x7e);
}

TEST_F(BoardUartFrameTest, TooLongFrameIsAnsweredBadLen) {
  // A write of more than a frame holds, sent whole: the bridge drops the rest of it.
  const std::vector<std::uint8_t> payload(tb::board_sim_params().max_payload + 8, 0xa5);
  expect_status(bridge::encode_request(static_cast<std::uint8_t>(BridgeCommand::MEM_WRITE),
                                       tb::board_sim_params().mem_base,
                                       static_cast<std::uint16_t>(payload.size()), payload),
                Status::BAD_LEN, static_cast<std::uint8_t>(BridgeCommand::MEM_WRITE));
}

TEST_F(BoardUartFrameTest, NoiseBeforeARequestIsSkipped) {
  RawClient raw(sim_);
  std::vector<std::uint8_t> request = {0x00, 0xff, 0x13};
  const auto ping = bridge::encode_request(static_cast<std::uint8_t>(BridgeCommand::PING), 0, 0);
  request.insert(request.end(), ping.begin(), ping.end());
  const bridge::Response response = raw.client.exchange(request, "PING after noise");
  EXPECT_EQ(response.status, Status::OK);
  EXPECT_EQ(response.payload.size(), bridge::PING_BYTES);
}

}  // namespace
}  // namespace nmsa
