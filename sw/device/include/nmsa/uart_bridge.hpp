// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// The host side of the board's UART bridge (rtl/board/nmsa_uart_bridge.sv; docs/fpga.md, "The
// protocol"): frames, their CRC, and a client that reads and writes the accelerator's registers
// and the board memory over a ByteLink. The constants are those of rtl/board/nmsa_board_pkg.sv
// (a test compares them).
//
//   request:  A5 | cmd | addr (4, LE) | len (2, LE) | payload (len bytes, writes only) | crc (2)
//   response: 5A | cmd | status | len (2, LE) | payload (len bytes, reads only) | crc (2)
//
// CRC-16/CCITT-FALSE over every byte after the sync byte, most significant byte first.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "nmsa/byte_link.hpp"

namespace nmsa::bridge {

constexpr std::uint16_t PROTOCOL_VERSION = 1;
constexpr std::uint8_t REQUEST_SYNC = 0xA5;
constexpr std::uint8_t RESPONSE_SYNC = 0x5A;
constexpr std::size_t REQUEST_HEADER_BYTES = 8;   // sync, cmd, addr, len
constexpr std::size_t RESPONSE_HEADER_BYTES = 5;  // sync, cmd, status, len
constexpr std::size_t CRC_BYTES = 2;
constexpr std::size_t PING_BYTES = 24;

enum class Command : std::uint8_t {
  PING = 0x01,
  REG_READ = 0x02,
  REG_WRITE = 0x03,
  MEM_READ = 0x04,
  MEM_WRITE = 0x05,
};

enum class Status : std::uint8_t {
  OK = 0x00,
  BAD_CRC = 0x01,     // CRC mismatch, or a UART framing error inside the frame
  BAD_CMD = 0x02,     // unknown command byte
  BAD_LEN = 0x03,     // length not allowed for the command
  BAD_ADDR = 0x04,    // range outside the CSRs or the memory window, or misaligned
  TIMEOUT = 0x05,     // the line went quiet in the middle of a frame
  BUS_SLVERR = 0x06,  // a CSR access answered SLVERR
  BUS_DECERR = 0x07,  // a CSR access answered DECERR
};

std::string to_string(Command c);  // "REG_READ", or "command 0x7e" for an unknown byte
std::string to_string(Status s);   // "BAD_CRC (CRC mismatch or a UART framing error)", ...

// CRC-16/CCITT-FALSE (polynomial 0x1021, initial value 0xFFFF, no reflection, no final XOR).
std::uint16_t crc16(const std::uint8_t* data, std::size_t bytes, std::uint16_t crc = 0xFFFF);

// The bytes of one request. `command` is a raw byte so that tests can send unknown commands;
// `length` is written as given (for reads it is the length asked for, with no payload).
std::vector<std::uint8_t> encode_request(std::uint8_t command, std::uint32_t address,
                                         std::uint16_t length,
                                         const std::vector<std::uint8_t>& payload = {});

struct Response {
  std::uint8_t command = 0;
  Status status = Status::OK;
  std::vector<std::uint8_t> payload;
};

// What PING reports.
struct BridgeInfo {
  std::uint16_t version = 0;
  std::uint16_t max_payload = 0;  // bytes per frame
  std::uint32_t mem_base = 0;     // the memory window
  std::uint32_t mem_bytes = 0;
  std::uint32_t clk_hz = 0;       // the board's clock
  std::uint32_t timeout_clks = 0; // the bridge's byte timeout inside a frame
  bool irq = false;               // the accelerator's interrupt line

  std::chrono::milliseconds byte_timeout() const;  // timeout_clks at clk_hz, rounded up
  std::string describe() const;  // "protocol 1, 128 KiB at 0x10000000, 1024-byte frames, 25 MHz"
};

// Decodes a PING payload; throws LinkError naming `device` if it has the wrong size.
BridgeInfo decode_ping(const std::vector<std::uint8_t>& payload, const std::string& device);

struct BridgeTimeouts {
  unsigned baud = 1000000;  // the link's bit rate: how long a frame takes on the wire
  // Allowance for a response beyond its time on the wire (USB latency, host scheduling).
  std::chrono::milliseconds response{1000};
};

// Requests and responses over a link, one at a time. Every failure throws LinkError with a
// message that starts with `device` and says which request and what went wrong: no response in
// time, a damaged or unexpected response (after which the client waits until the line is quiet
// and drops what arrived, so that the next request starts in step), or an error status.
class BridgeClient {
 public:
  BridgeClient(ByteLink& link, std::string device, BridgeTimeouts timeouts = {});

  // Checks the protocol version and learns the frame size and the memory window.
  const BridgeInfo& ping();
  const BridgeInfo& info() const { return info_; }  // from the last ping()

  // `count` consecutive 32-bit registers from byte offset `offset` (4-aligned, < 4096).
  std::vector<std::uint32_t> read_regs(std::uint32_t offset, std::size_t count);
  void write_regs(std::uint32_t offset, const std::vector<std::uint32_t>& values);
  // Board memory: 8-byte-aligned address and length (std::invalid_argument otherwise), split
  // into frames of at most info().max_payload bytes.
  std::vector<std::uint8_t> read_mem(std::uint64_t address, std::size_t bytes);
  void write_mem(std::uint64_t address, const std::uint8_t* data, std::size_t bytes);

  // One raw exchange (for tests that send damaged frames): writes `request` as it is and
  // returns the response, whose own framing and CRC are checked but whose status is not.
  Response exchange(const std::vector<std::uint8_t>& request, const std::string& what);

  const std::string& device() const { return device_; }

 private:
  Response transact(Command command, std::uint32_t address, std::uint16_t length,
                    const std::vector<std::uint8_t>& payload, std::size_t expected_payload,
                    const std::string& what);
  std::chrono::milliseconds wire_time(std::size_t bytes) const;
  void read_exactly(std::uint8_t* data, std::size_t bytes, std::chrono::milliseconds timeout,
                    const std::string& what, const char* part);
  [[noreturn]] void fail_and_resync(const std::string& message);
  std::size_t frame_bytes() const;

  ByteLink& link_;
  std::string device_;
  BridgeTimeouts timeouts_;
  BridgeInfo info_;
};

}  // namespace nmsa::bridge
