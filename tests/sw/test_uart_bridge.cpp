// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// The host side of the UART backend without a board: the protocol's frames and CRC, its
// constants against the RTL package, the client's handling of damaged and missing responses
// (over an in-process link that plays back scripted bytes), the serial port's errors, and a
// pseudo-terminal on which nothing answers.
#include <pty.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <deque>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include <gtest/gtest.h>

#include "../common/expect_throw.hpp"
#include "nmsa/host_memory.hpp"
#include "nmsa/uart_bridge.hpp"
#include "nmsa/uart_device.hpp"

namespace nmsa {
namespace {

using bridge::Command;
using bridge::Status;
using testing::expect_throw_containing;
using Needles = std::vector<std::string>;
using std::chrono::milliseconds;

TEST(UartBridgeProtocol, Crc16IsCcittFalse) {
  // The check value of CRC-16/CCITT-FALSE.
  const std::string check = "123456789";
  EXPECT_EQ(bridge::crc16(reinterpret_cast<const std::uint8_t*>(check.data()), check.size()),
            0x29B1);
}

TEST(UartBridgeProtocol, RequestLayout) {
  const auto frame = bridge::encode_request(0x03, 0x11223344, 8, {1, 2, 3, 4, 5, 6, 7, 8});
  ASSERT_EQ(frame.size(), bridge::REQUEST_HEADER_BYTES + 8 + bridge::CRC_BYTES);
  EXPECT_EQ(frame[0], bridge::REQUEST_SYNC);
  EXPECT_EQ(frame[1], 0x03);
  EXPECT_EQ((std::vector<std::uint8_t>(frame.begin() + 2, frame.begin() + 8)),
            (std::vector<std::uint8_t>{0x44, 0x33, 0x22, 0x11, 8, 0}));
  // The CRC goes most significant byte first, so the CRC over a whole frame after its sync
  // byte is 0: what the bridge checks.
  EXPECT_EQ(bridge::crc16(frame.data() + 1, frame.size() - 1), 0);
  const std::uint16_t crc = bridge::crc16(frame.data() + 1, frame.size() - 3);
  EXPECT_EQ(frame[frame.size() - 2], crc >> 8);
  EXPECT_EQ(frame[frame.size() - 1], crc & 0xff);
}

// The constants of rtl/board/nmsa_board_pkg.sv, by name.
std::map<std::string, unsigned> rtl_constants() {
  std::ifstream in(std::string(NMSA_SOURCE_DIR) + "/rtl/board/nmsa_board_pkg.sv");
  std::stringstream text;
  text << in.rdbuf();
  const std::string s = text.str();
  std::map<std::string, unsigned> out;
  const std::regex re(
      R"(localparam\s+(?:logic\s*\[\d+:0\]|int unsigned)\s+(\w+)\s*=\s*(\d+)'[hd]([0-9A-Fa-f_]+))");
  for (auto it = std::sregex_iterator(s.begin(), s.end(), re); it != std::sregex_iterator(); ++it) {
    const bool hex = s[static_cast<std::size_t>(it->position(3)) - 1] == 'h';
    std::string digits = (*it)[3];
    digits.erase(std::remove(digits.begin(), digits.end(), '_'), digits.end());
    out[(*it)[1]] = static_cast<unsigned>(std::stoul(digits, nullptr, hex ? 16 : 10));
  }
  const std::regex plain(R"(localparam\s+int unsigned\s+(\w+)\s*=\s*(\d+)\s*;)");
  for (auto it = std::sregex_iterator(s.begin(), s.end(), plain); it != std::sregex_iterator();
       ++it) {
    out[(*it)[1]] = static_cast<unsigned>(std::stoul((*it)[2]));
  }
  return out;
}

TEST(UartBridgeProtocol, ConstantsMatchTheRtlPackage) {
  const auto rtl = rtl_constants();
  const std::map<std::string, unsigned> host = {
      {"ProtocolVersion", bridge::PROTOCOL_VERSION},
      {"ReqSync", bridge::REQUEST_SYNC},
      {"RespSync", bridge::RESPONSE_SYNC},
      {"CmdPing", static_cast<unsigned>(Command::PING)},
      {"CmdRegRead", static_cast<unsigned>(Command::REG_READ)},
      {"CmdRegWrite", static_cast<unsigned>(Command::REG_WRITE)},
      {"CmdMemRead", static_cast<unsigned>(Command::MEM_READ)},
      {"CmdMemWrite", static_cast<unsigned>(Command::MEM_WRITE)},
      {"StatusOk", static_cast<unsigned>(Status::OK)},
      {"StatusBadCrc", static_cast<unsigned>(Status::BAD_CRC)},
      {"StatusBadCmd", static_cast<unsigned>(Status::BAD_CMD)},
      {"StatusBadLen", static_cast<unsigned>(Status::BAD_LEN)},
      {"StatusBadAddr", static_cast<unsigned>(Status::BAD_ADDR)},
      {"StatusTimeout", static_cast<unsigned>(Status::TIMEOUT)},
      {"StatusBusSlvErr", static_cast<unsigned>(Status::BUS_SLVERR)},
      {"StatusBusDecErr", static_cast<unsigned>(Status::BUS_DECERR)},
      {"PingBytes", static_cast<unsigned>(bridge::PING_BYTES)},
  };
  EXPECT_EQ(rtl.size(), host.size()) << "a constant on one side only";
  for (const auto& [name, value] : host) {
    const auto it = rtl.find(name);
    ASSERT_NE(it, rtl.end()) << name << " is not in nmsa_board_pkg.sv";
    EXPECT_EQ(it->second, value) << name;
  }
}

// A link that records what the client writes and plays back scripted response bytes; with
// nothing left to play back, reads time out (at once, to keep the tests fast).
class ScriptedLink final : public ByteLink {
 public:
  std::string name() const override { return "scripted"; }
  void write(const std::uint8_t* data, std::size_t bytes) override {
    written.insert(written.end(), data, data + bytes);
  }
  std::size_t read(std::uint8_t* data, std::size_t bytes, milliseconds) override {
    std::size_t n = 0;
    while (n < bytes && !script.empty()) {
      data[n++] = script.front();
      script.pop_front();
    }
    return n;
  }
  void respond(std::uint8_t command, Status status, const std::vector<std::uint8_t>& payload) {
    std::vector<std::uint8_t> frame = {bridge::RESPONSE_SYNC, command,
                                       static_cast<std::uint8_t>(status),
                                       static_cast<std::uint8_t>(payload.size()),
                                       static_cast<std::uint8_t>(payload.size() >> 8)};
    frame.insert(frame.end(), payload.begin(), payload.end());
    const std::uint16_t crc = bridge::crc16(frame.data() + 1, frame.size() - 1);
    frame.push_back(static_cast<std::uint8_t>(crc >> 8));
    frame.push_back(static_cast<std::uint8_t>(crc));
    script.insert(script.end(), frame.begin(), frame.end());
  }
  std::vector<std::uint8_t> written;
  std::deque<std::uint8_t> script;
};

std::vector<std::uint8_t> ping_payload() {
  // Protocol 1, 64-byte frames, 64 KiB at 0x10000000, 25 MHz, byte timeout 1000 cycles.
  return {1, 0, 64, 0, 0, 0, 0, 0x10, 0, 0, 1, 0, 0x40, 0x78, 0x7d, 0x01,
          0xe8, 0x03, 0, 0, 0, 0, 0, 0};
}

TEST(UartBridgeClient, PingDecodesTheBoard) {
  ScriptedLink link;
  link.respond(0x01, Status::OK, ping_payload());
  bridge::BridgeClient client(link, "uart:test");
  const bridge::BridgeInfo& info = client.ping();
  EXPECT_EQ(info.version, 1);
  EXPECT_EQ(info.max_payload, 64);
  EXPECT_EQ(info.mem_base, 0x10000000u);
  EXPECT_EQ(info.mem_bytes, 65536u);
  EXPECT_EQ(info.clk_hz, 25000000u);
  EXPECT_EQ(info.timeout_clks, 1000u);
  EXPECT_EQ(info.byte_timeout(), milliseconds(1));
  EXPECT_EQ(link.written, bridge::encode_request(0x01, 0, 0));
}

TEST(UartBridgeClient, TransfersAreSplitIntoFrames) {
  ScriptedLink link;
  link.respond(0x01, Status::OK, ping_payload());
  bridge::BridgeClient client(link, "uart:test");
  client.ping();
  link.written.clear();
  // 160 bytes in 64-byte frames: 64 + 64 + 32.
  for (int i = 0; i < 3; ++i) link.respond(0x05, Status::OK, {});
  const std::vector<std::uint8_t> data(160, 0x5c);
  client.write_mem(0x10000100, data.data(), data.size());
  EXPECT_EQ(link.written.size(), 3 * (bridge::REQUEST_HEADER_BYTES + bridge::CRC_BYTES) + 160);
  EXPECT_EQ(link.written[1], 0x05);
  EXPECT_EQ(link.written[6], 64);  // first frame's length
  expect_throw_containing([&] { client.read_mem(0x10000004, 8); }, "multiples of 8");
}

TEST(UartBridgeClient, DamagedAndMissingResponsesNameTheDeviceAndTheRequest) {
  ScriptedLink link;
  link.respond(0x01, Status::OK, ping_payload());
  bridge::BridgeClient client(link, "uart:/dev/ttyTEST");
  client.ping();

  // No response at all.
  expect_throw_containing([&] { client.read_regs(0x24, 1); },
                          Needles{"uart:/dev/ttyTEST", "REG_READ of 1 register(s) at 0x24",
                           "no response within"});
  // A response whose CRC does not match.
  link.respond(0x02, Status::OK, {1, 2, 3, 4});
  link.script[6] ^= 0x01;
  expect_throw_containing([&] { client.read_regs(0x24, 1); }, "CRC mismatch");
  // Something that is not a response: the client drops the rest of it, so that the next
  // request starts in step.
  link.script = {0x41, 0x42, 0x43};
  expect_throw_containing([&] { client.read_regs(0x24, 1); }, "starts with byte 0x41");
  EXPECT_TRUE(link.script.empty());
  // A response cut short.
  link.respond(0x02, Status::OK, {1, 2, 3, 4});
  link.script.resize(7);
  expect_throw_containing([&] { client.read_regs(0x24, 1); }, "incomplete response payload");
  // The response to another command.
  link.respond(0x04, Status::OK, {1, 2, 3, 4});
  expect_throw_containing([&] { client.read_regs(0x24, 1); }, "the response is for MEM_READ");
  // An error status.
  link.respond(0x02, Status::BAD_ADDR, {});
  expect_throw_containing([&] { client.read_regs(0x24, 1); },
                          Needles{"uart:/dev/ttyTEST", "the bridge answered BAD_ADDR"});
  // A good one still works.
  link.respond(0x02, Status::OK, {0x41, 0x53, 0x4d, 0x4e});
  EXPECT_EQ(client.read_regs(0x0, 1).front(), 0x4E4D5341u);
}

TEST(UartBridgeClient, WrongProtocolVersionIsRefused) {
  ScriptedLink link;
  auto payload = ping_payload();
  payload[0] = 9;
  link.respond(0x01, Status::OK, payload);
  bridge::BridgeClient client(link, "uart:test");
  expect_throw_containing([&] { client.ping(); }, Needles{"uart:test", "protocol 9"});
}

TEST(UartDevice, ParsesItsSpec) {
  const UartSpec a = parse_uart_spec("uart:/dev/ttyUSB0@3000000");
  EXPECT_EQ(a.path, "/dev/ttyUSB0");
  EXPECT_EQ(a.baud, 3000000u);
  const UartSpec b = parse_uart_spec("uart:/dev/ttyUSB1");
  EXPECT_EQ(b.path, "/dev/ttyUSB1");
  EXPECT_EQ(b.baud, UART_DEFAULT_BAUD);
  expect_throw_containing([] { parse_uart_spec("uart:"); }, "names no device");
  expect_throw_containing([] { parse_uart_spec("uart:/dev/ttyUSB0@fast"); },
                          "baud rate 'fast' is not a number");
  expect_throw_containing([] { parse_uart_spec("serial:/dev/ttyUSB0"); }, "not a UART device");
}

TEST(UartDevice, SerialPortErrorsNameThePort) {
  expect_throw_containing([] { make_uart_device("uart:/nonexistent/tty"); },
                          Needles{"uart:/nonexistent/tty", "cannot open"});
  expect_throw_containing([] { make_uart_device("uart:/dev/null"); },
                          Needles{"uart:/dev/null", "not a serial port"});
  expect_throw_containing([] { open_serial_link("/dev/null", 1234); },
                          Needles{"/dev/null", "baud rate 1234", "115200"});
}

// A pseudo-terminal whose other side never answers: the backend gives up after its response
// timeout with a message that says so, and does not hang.
TEST(UartDevice, TimesOutWhenTheBoardDoesNotAnswer) {
  int master = -1, slave = -1;
  char name[128] = {};
  termios raw{};
  ::cfmakeraw(&raw);
  ASSERT_EQ(::openpty(&master, &slave, name, &raw, nullptr), 0);
  UartDeviceOptions options;
  options.response_timeout = milliseconds(200);
  const auto start = std::chrono::steady_clock::now();
  expect_throw_containing([&] { make_uart_device(std::string("uart:") + name, options); },
                          Needles{std::string("uart:") + name, "PING", "no response within"});
  const auto elapsed = std::chrono::steady_clock::now() - start;
  // The response timeout, the wait for a quiet line, and scheduling: well under 2 s.
  EXPECT_LT(elapsed, std::chrono::seconds(2));
  EXPECT_GE(elapsed, milliseconds(200));
  // The request did go out on the line.
  std::uint8_t buf[64];
  const ssize_t n = ::read(master, buf, sizeof buf);
  ASSERT_EQ(n, static_cast<ssize_t>(bridge::REQUEST_HEADER_BYTES + bridge::CRC_BYTES));
  EXPECT_EQ(buf[0], bridge::REQUEST_SYNC);
  EXPECT_EQ(buf[1], static_cast<std::uint8_t>(Command::PING));
  ::close(master);
  ::close(slave);
}

TEST(HostMemoryWindow, AllocationsStayInsideTheLimit) {
  HostMemory mem(0x1000);
  mem.alloc(100);
  mem.set_alloc_limit(0x1000 + 256, "board X: board memory");
  EXPECT_EQ(mem.alloc(64, 64), 0x1000u + 128);
  expect_throw_containing([&] { mem.alloc(65, 8); },
                          Needles{"board X: board memory", "a buffer of 65 bytes",
                           "[0x1000, 0x1100)", "64 of 256 bytes are left"});
  EXPECT_EQ(mem.alloc(64, 8), 0x1000u + 192);
  expect_throw_containing([&] { mem.set_alloc_limit(0x1000 + 8, "x"); }, "below existing");
}

}  // namespace
}  // namespace nmsa
