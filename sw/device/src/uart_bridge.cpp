// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
#include "nmsa/uart_bridge.hpp"

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <utility>

namespace nmsa::bridge {

namespace {

std::string hex(std::uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

std::uint32_t le32(const std::uint8_t* p) {
  return static_cast<std::uint32_t>(p[0]) | static_cast<std::uint32_t>(p[1]) << 8 |
         static_cast<std::uint32_t>(p[2]) << 16 | static_cast<std::uint32_t>(p[3]) << 24;
}

void put_le32(std::vector<std::uint8_t>& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}

// Longest the client waits for the line to go quiet after a damaged response.
constexpr std::chrono::milliseconds kMaxDrain{3000};

}  // namespace

std::string to_string(Command c) {
  switch (c) {
    case Command::PING: return "PING";
    case Command::REG_READ: return "REG_READ";
    case Command::REG_WRITE: return "REG_WRITE";
    case Command::MEM_READ: return "MEM_READ";
    case Command::MEM_WRITE: return "MEM_WRITE";
  }
  return "command " + hex(static_cast<std::uint8_t>(c));
}

std::string to_string(Status s) {
  switch (s) {
    case Status::OK: return "OK";
    case Status::BAD_CRC: return "BAD_CRC (the request arrived damaged: CRC or UART framing)";
    case Status::BAD_CMD: return "BAD_CMD (unknown command)";
    case Status::BAD_LEN: return "BAD_LEN (length not allowed for the command)";
    case Status::BAD_ADDR:
      return "BAD_ADDR (range outside the registers or the memory window, or misaligned)";
    case Status::TIMEOUT: return "TIMEOUT (the request stopped in the middle)";
    case Status::BUS_SLVERR: return "BUS_SLVERR (a register access answered SLVERR)";
    case Status::BUS_DECERR: return "BUS_DECERR (a register access answered DECERR)";
  }
  return "status " + hex(static_cast<std::uint8_t>(s));
}

std::uint16_t crc16(const std::uint8_t* data, std::size_t bytes, std::uint16_t crc) {
  for (std::size_t i = 0; i < bytes; ++i) {
    crc = static_cast<std::uint16_t>(crc ^ (data[i] << 8));
    for (int b = 0; b < 8; ++b) {
      crc = static_cast<std::uint16_t>((crc & 0x8000) ? (crc << 1) ^ 0x1021 : crc << 1);
    }
  }
  return crc;
}

std::vector<std::uint8_t> encode_request(std::uint8_t command, std::uint32_t address,
                                         std::uint16_t length,
                                         const std::vector<std::uint8_t>& payload) {
  std::vector<std::uint8_t> out;
  out.reserve(REQUEST_HEADER_BYTES + payload.size() + CRC_BYTES);
  out.push_back(REQUEST_SYNC);
  out.push_back(command);
  put_le32(out, address);
  out.push_back(static_cast<std::uint8_t>(length));
  out.push_back(static_cast<std::uint8_t>(length >> 8));
  out.insert(out.end(), payload.begin(), payload.end());
  const std::uint16_t crc = crc16(out.data() + 1, out.size() - 1);
  out.push_back(static_cast<std::uint8_t>(crc >> 8));
  out.push_back(static_cast<std::uint8_t>(crc));
  return out;
}

std::chrono::milliseconds BridgeInfo::byte_timeout() const {
  if (clk_hz == 0) return std::chrono::milliseconds(0);
  return std::chrono::milliseconds((std::uint64_t{timeout_clks} * 1000 + clk_hz - 1) / clk_hz);
}

std::string BridgeInfo::describe() const {
  char buf[160];
  std::snprintf(buf, sizeof buf,
                "protocol %u, %u KiB of memory at 0x%08x, %u-byte frames, %.6g MHz clock",
                version, mem_bytes / 1024, mem_base, max_payload, clk_hz / 1e6);
  return buf;
}

BridgeInfo decode_ping(const std::vector<std::uint8_t>& payload, const std::string& device) {
  if (payload.size() != PING_BYTES) {
    throw LinkError(device + ": PING answered " + std::to_string(payload.size()) +
                    " bytes, expected " + std::to_string(PING_BYTES));
  }
  const std::uint8_t* p = payload.data();
  BridgeInfo info;
  info.version = static_cast<std::uint16_t>(p[0] | p[1] << 8);
  info.max_payload = static_cast<std::uint16_t>(p[2] | p[3] << 8);
  info.mem_base = le32(p + 4);
  info.mem_bytes = le32(p + 8);
  info.clk_hz = le32(p + 12);
  info.timeout_clks = le32(p + 16);
  info.irq = (p[20] & 1) != 0;
  return info;
}

BridgeClient::BridgeClient(ByteLink& link, std::string device, BridgeTimeouts timeouts)
    : link_(link), device_(std::move(device)), timeouts_(timeouts) {
  if (timeouts_.baud == 0) throw std::invalid_argument(device_ + ": baud rate 0");
}

std::chrono::milliseconds BridgeClient::wire_time(std::size_t bytes) const {
  // 10 bits a byte (start, 8 data, stop), rounded up, twice over for a slow USB UART.
  return std::chrono::milliseconds((bytes * 10 * 1000 * 2 + timeouts_.baud - 1) / timeouts_.baud);
}

std::size_t BridgeClient::frame_bytes() const {
  return info_.max_payload != 0 ? info_.max_payload : 32;  // 32: the smallest a bridge allows
}

void BridgeClient::fail_and_resync(const std::string& message) {
  // The bridge may still be sending, or waiting out its byte timeout before an error response:
  // drop whatever arrives until the line has been quiet for longer than that timeout.
  const auto quiet = info_.byte_timeout() + std::chrono::milliseconds(50);
  const auto give_up = std::chrono::steady_clock::now() + kMaxDrain;
  std::uint8_t scratch[256];
  bool quieted = false;
  try {
    while (std::chrono::steady_clock::now() < give_up) {
      if (link_.read(scratch, sizeof scratch, quiet) == 0) {
        quieted = true;
        break;
      }
    }
  } catch (const LinkError&) {
    // The link itself failed: the first message says what was being done.
  }
  throw LinkError(device_ + ": " + message +
                  (quieted ? "" : " (and the line did not go quiet afterwards)"));
}

void BridgeClient::read_exactly(std::uint8_t* data, std::size_t bytes,
                                std::chrono::milliseconds timeout, const std::string& what,
                                const char* part) {
  const std::size_t got = link_.read(data, bytes, timeout);
  if (got != bytes) {
    fail_and_resync(what + ": " + (got == 0 ? "no " : "incomplete ") + part + " within " +
                    std::to_string(timeout.count()) + " ms (got " + std::to_string(got) + " of " +
                    std::to_string(bytes) + " bytes; is the board programmed and the baud rate " +
                    std::to_string(timeouts_.baud) + "?)");
  }
}

Response BridgeClient::exchange(const std::vector<std::uint8_t>& request, const std::string& what) {
  link_.write(request.data(), request.size());
  // The response may come only after the bridge's byte timeout (an error after a damaged
  // request), and after the request's own time on the wire.
  const auto first = timeouts_.response + info_.byte_timeout() +
                     wire_time(request.size() + RESPONSE_HEADER_BYTES);
  std::uint8_t head[RESPONSE_HEADER_BYTES];
  read_exactly(head, 1, first, what, "response");
  if (head[0] != RESPONSE_SYNC) {
    fail_and_resync(what + ": the response starts with byte " + hex(head[0]) + ", not " +
                    hex(RESPONSE_SYNC));
  }
  read_exactly(head + 1, RESPONSE_HEADER_BYTES - 1, timeouts_.response + wire_time(8), what,
               "response header");
  Response r;
  r.command = head[1];
  r.status = static_cast<Status>(head[2]);
  const std::size_t length = head[3] | head[4] << 8;
  if (info_.max_payload != 0 && length > info_.max_payload) {
    fail_and_resync(what + ": the response announces " + std::to_string(length) +
                    " payload bytes, more than a frame holds (" +
                    std::to_string(info_.max_payload) + ")");
  }
  std::vector<std::uint8_t> rest(length + CRC_BYTES);
  read_exactly(rest.data(), rest.size(), timeouts_.response + wire_time(rest.size()), what,
               "response payload");
  std::uint16_t crc = crc16(head + 1, RESPONSE_HEADER_BYTES - 1);
  crc = crc16(rest.data(), rest.size(), crc);
  if (crc != 0) fail_and_resync(what + ": the response arrived damaged (CRC mismatch)");
  r.payload.assign(rest.begin(), rest.begin() + static_cast<std::ptrdiff_t>(length));
  return r;
}

Response BridgeClient::transact(Command command, std::uint32_t address, std::uint16_t length,
                                const std::vector<std::uint8_t>& payload,
                                std::size_t expected_payload, const std::string& what) {
  const auto cmd = static_cast<std::uint8_t>(command);
  Response r = exchange(encode_request(cmd, address, length, payload), what);
  if (r.command != cmd) {
    fail_and_resync(what + ": the response is for " +
                    to_string(static_cast<Command>(r.command)));
  }
  if (r.status != Status::OK) {
    throw LinkError(device_ + ": " + what + ": the bridge answered " + to_string(r.status));
  }
  if (r.payload.size() != expected_payload) {
    throw LinkError(device_ + ": " + what + ": the response holds " +
                    std::to_string(r.payload.size()) + " bytes, expected " +
                    std::to_string(expected_payload));
  }
  return r;
}

const BridgeInfo& BridgeClient::ping() {
  const Response r = transact(Command::PING, 0, 0, {}, PING_BYTES, "PING");
  const BridgeInfo info = decode_ping(r.payload, device_);
  if (info.version != PROTOCOL_VERSION) {
    throw LinkError(device_ + ": the board speaks bridge protocol " + std::to_string(info.version) +
                    ", this host " + std::to_string(PROTOCOL_VERSION) +
                    " (rebuild the bitstream or the host from the same revision)");
  }
  if (info.max_payload < 32 || info.max_payload % 8 != 0) {
    throw LinkError(device_ + ": PING reports a frame size of " +
                    std::to_string(info.max_payload) + " bytes, not a multiple of 8 from 32 on");
  }
  info_ = info;
  return info_;
}

std::vector<std::uint32_t> BridgeClient::read_regs(std::uint32_t offset, std::size_t count) {
  std::vector<std::uint32_t> out;
  out.reserve(count);
  const std::size_t per_frame = frame_bytes() / 4;
  while (out.size() < count) {
    const std::size_t n = std::min(per_frame, count - out.size());
    const auto at = static_cast<std::uint32_t>(offset + 4 * out.size());
    const std::string what = "REG_READ of " + std::to_string(n) + " register(s) at " + hex(at);
    const Response r = transact(Command::REG_READ, at, static_cast<std::uint16_t>(4 * n), {},
                                4 * n, what);
    for (std::size_t i = 0; i < n; ++i) out.push_back(le32(r.payload.data() + 4 * i));
  }
  return out;
}

void BridgeClient::write_regs(std::uint32_t offset, const std::vector<std::uint32_t>& values) {
  const std::size_t per_frame = frame_bytes() / 4;
  for (std::size_t done = 0; done < values.size();) {
    const std::size_t n = std::min(per_frame, values.size() - done);
    const auto at = static_cast<std::uint32_t>(offset + 4 * done);
    std::vector<std::uint8_t> payload;
    for (std::size_t i = 0; i < n; ++i) put_le32(payload, values[done + i]);
    const std::string what = "REG_WRITE of " + std::to_string(n) + " register(s) at " + hex(at);
    transact(Command::REG_WRITE, at, static_cast<std::uint16_t>(4 * n), payload, 0, what);
    done += n;
  }
}

namespace {
void check_mem_range(const std::string& device, const char* op, std::uint64_t address,
                     std::size_t bytes) {
  if (address % 8 != 0 || bytes % 8 != 0 || address + bytes > (std::uint64_t{1} << 32)) {
    throw std::invalid_argument(device + ": " + op + " of " + std::to_string(bytes) +
                                " bytes at " + hex(address) +
                                ": address and length must be multiples of 8 below 4 GiB");
  }
}
}  // namespace

std::vector<std::uint8_t> BridgeClient::read_mem(std::uint64_t address, std::size_t bytes) {
  check_mem_range(device_, "MEM_READ", address, bytes);
  std::vector<std::uint8_t> out;
  out.reserve(bytes);
  while (out.size() < bytes) {
    const std::size_t n = std::min(frame_bytes(), bytes - out.size());
    const auto at = static_cast<std::uint32_t>(address + out.size());
    const std::string what = "MEM_READ of " + std::to_string(n) + " bytes at " + hex(at);
    const Response r =
        transact(Command::MEM_READ, at, static_cast<std::uint16_t>(n), {}, n, what);
    out.insert(out.end(), r.payload.begin(), r.payload.end());
  }
  return out;
}

void BridgeClient::write_mem(std::uint64_t address, const std::uint8_t* data, std::size_t bytes) {
  check_mem_range(device_, "MEM_WRITE", address, bytes);
  for (std::size_t done = 0; done < bytes;) {
    const std::size_t n = std::min(frame_bytes(), bytes - done);
    const auto at = static_cast<std::uint32_t>(address + done);
    const std::string what = "MEM_WRITE of " + std::to_string(n) + " bytes at " + hex(at);
    transact(Command::MEM_WRITE, at, static_cast<std::uint16_t>(n),
             std::vector<std::uint8_t>(data + done, data + done + n), 0, what);
    done += n;
  }
}

}  // namespace nmsa::bridge
