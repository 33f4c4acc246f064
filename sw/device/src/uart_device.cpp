// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
#include "nmsa/uart_device.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include "nmsa/isa.hpp"
#include "nmsa/uart_bridge.hpp"

namespace nmsa {

namespace {

namespace r = regs;

// CMD_BASE_LO, CMD_BASE_HI and CMD_COUNT go out in one REG_WRITE of consecutive registers.
static_assert(r::CMD_BASE_HI_OFFSET == r::CMD_BASE_LO_OFFSET + 4 &&
                  r::CMD_COUNT_OFFSET == r::CMD_BASE_LO_OFFSET + 8,
              "CMD_BASE_LO, CMD_BASE_HI and CMD_COUNT must be consecutive registers");

std::string hex(std::uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

std::uint64_t align_down8(std::uint64_t v) { return v & ~std::uint64_t{7}; }
std::uint64_t align_up8(std::uint64_t v) { return (v + 7) & ~std::uint64_t{7}; }

// A byte range [begin, end).
struct Range {
  std::uint64_t begin;
  std::uint64_t end;
};

class UartDevice final : public Device {
 public:
  UartDevice(std::unique_ptr<ByteLink> link, std::string name, unsigned baud,
             const UartDeviceOptions& options)
      : link_(std::move(link)),
        name_(std::move(name)),
        options_(options),
        client_(*link_, name_, bridge::BridgeTimeouts{baud, options.response_timeout}),
        info_(client_.ping()),
        memory_(info_.mem_base),
        image_(info_.mem_bytes),
        known_(info_.mem_bytes / 8, false) {
    memory_.set_alloc_limit(std::uint64_t{info_.mem_base} + info_.mem_bytes,
                            name_ + ": board memory");
    try {
      caps_ = from_registers([this](std::uint32_t offset) { return read_reg(offset); });
    } catch (const std::invalid_argument& e) {
      throw LinkError(name_ + ": " + e.what());
    }
  }

  std::string name() const override { return name_; }

  std::uint32_t read_reg(std::uint32_t offset) override {
    return client_.read_regs(offset, 1).front();
  }
  void write_reg(std::uint32_t offset, std::uint32_t value) override {
    client_.write_regs(offset, {value});
  }

  HostMemory& memory() override { return memory_; }

  DeviceRun run(std::uint64_t address, std::uint32_t count, const ProgressFn& progress) override {
    try {
      return run_on_board(address, count, progress);
    } catch (...) {
      // A run cut short may have changed the memory behind the image's back (half an upload,
      // stores never downloaded): forget the image, so the next run uploads everything.
      std::fill(known_.begin(), known_.end(), false);
      throw;
    }
  }

 private:
  DeviceRun run_on_board(std::uint64_t address, std::uint32_t count, const ProgressFn& progress) {
    soft_reset();
    upload();
    soft_reset();
    client_.write_regs(r::IRQ_STATUS_OFFSET, {r::IRQ_STATUS_DONE_MASK | r::IRQ_STATUS_ERROR_MASK});
    client_.write_regs(r::CMD_BASE_LO_OFFSET, {static_cast<std::uint32_t>(address),
                                               static_cast<std::uint32_t>(address >> 32), count});
    client_.write_regs(r::CTRL_OFFSET, {r::CTRL_START_MASK | r::CTRL_IRQ_EN_MASK});

    using Clock = std::chrono::steady_clock;
    const auto start = Clock::now();
    std::uint32_t status = 0;
    for (;;) {
      status = read_reg(r::STATUS_OFFSET);
      if ((status & r::STATUS_BUSY_MASK) == 0) break;
      const auto elapsed = Clock::now() - start;
      if (elapsed > options_.run_timeout) {
        // Leave the board idle rather than running a stream nobody waits for.
        try {
          soft_reset();
        } catch (const LinkError&) {
          // The timeout is the error to report; the next run starts with a soft reset anyway.
        }
        throw LinkError(name_ + ": the run of " + std::to_string(count) + " commands at " +
                        hex(address) + " was still busy after " +
                        std::to_string(options_.run_timeout.count()) + " ms (STATUS " +
                        hex(status) + "); the accelerator was soft-reset");
      }
      if (progress) {
        // The board's clock does not pause: wall time at its frequency is the cycle count.
        progress(static_cast<std::uint64_t>(
            std::chrono::duration<double>(elapsed).count() * info_.clk_hz));
      }
      std::this_thread::sleep_for(options_.poll_interval);
    }

    DeviceRun out;
    out.done = (status & r::STATUS_DONE_MASK) != 0;
    out.error = static_cast<r::ErrCode>((status & r::STATUS_ERR_CODE_MASK) >>
                                        r::STATUS_ERR_CODE_SHIFT);
    out.error_index = read_reg(r::ERR_INFO_OFFSET);
    // Each _LO read latches its _HI half, and REG_READ reads in address order.
    const auto words = client_.read_regs(r::COUNTERS_BASE, 2 * r::NUM_COUNTERS);
    for (std::size_t i = 0; i < r::NUM_COUNTERS; ++i) {
      out.counters[i] = std::uint64_t{words[2 * i + 1]} << 32 | words[2 * i];
    }
    out.cycles = out.counter(r::CYCLES_TOTAL_LO_OFFSET);
    download(stored_ranges(address, count));
    return out;
  }

  void soft_reset() {
    write_reg(r::CTRL_OFFSET, r::CTRL_SOFT_RESET_MASK);
    // A soft reset waits for AXI transactions in flight, which the board memory answers within
    // a few hundred cycles: a few reads of STATUS are plenty.
    for (int i = 0; i < 100; ++i) {
      if ((read_reg(r::STATUS_OFFSET) & r::STATUS_BUSY_MASK) == 0) return;
    }
    throw LinkError(name_ + ": STATUS.BUSY stays set after a soft reset");
  }

  std::uint64_t window_begin() const { return info_.mem_base; }
  std::uint64_t window_end() const { return std::uint64_t{info_.mem_base} + info_.mem_bytes; }

  // Sends the allocated bytes the board does not hold yet, frame by frame.
  void upload() {
    const std::uint64_t lo = align_down8(memory_.alloc_base());
    const std::uint64_t hi = std::min(align_up8(memory_.alloc_end()), window_end());
    if (hi <= lo) return;
    const std::vector<std::uint8_t> bytes = memory_.read_bytes(lo, hi - lo);
    const std::uint64_t frame = info_.max_payload;
    for (std::uint64_t block = lo; block < hi; block += frame) {
      const std::uint64_t end = std::min(block + frame, hi);
      std::uint64_t first = end, last = block;
      for (std::uint64_t w = block; w < end; w += 8) {
        if (!same_as_board(w, bytes.data() + (w - lo))) {
          first = std::min(first, w);
          last = w + 8;
        }
      }
      if (first >= last) continue;
      const std::uint8_t* data = bytes.data() + (first - lo);
      client_.write_mem(first, data, last - first);
      remember(first, data, last - first);
    }
  }

  bool same_as_board(std::uint64_t address, const std::uint8_t* word) const {
    const std::uint64_t offset = address - window_begin();
    return known_[offset / 8] && std::equal(word, word + 8, image_.begin() + offset);
  }

  void remember(std::uint64_t address, const std::uint8_t* data, std::uint64_t bytes) {
    const std::uint64_t offset = address - window_begin();
    std::copy(data, data + bytes, image_.begin() + offset);
    std::fill(known_.begin() + offset / 8, known_.begin() + (offset + bytes) / 8, true);
  }

  // The 8-byte-aligned window ranges the STORE commands of the stream write, merged.
  std::vector<Range> stored_ranges(std::uint64_t address, std::uint32_t count) const {
    std::vector<Range> ranges;
    for (std::uint32_t i = 0; i < count; ++i) {
      const std::uint64_t at = address + std::uint64_t{isa::COMMAND_BYTES} * i;
      if (at < window_begin() || at + isa::COMMAND_BYTES > window_end()) break;
      const auto bytes = memory_.read_bytes(at, isa::COMMAND_BYTES);
      Command c;
      try {
        c = decode(bytes.data());
      } catch (const std::invalid_argument&) {
        continue;  // the device reports it (BAD_OPCODE) and writes nothing for it
      }
      if (c.opcode != Opcode::STORE) continue;
      const std::uint64_t row_bytes =
          static_cast<std::uint64_t>(caps_.cols) * (c.int32_output ? 4 : 1);
      for (std::uint64_t row = 0; row < c.rows; ++row) {
        if (c.host_stride != 0 &&
            row > (std::numeric_limits<std::uint64_t>::max() - c.host_address) / c.host_stride) {
          break;
        }
        const std::uint64_t begin = c.host_address + row * c.host_stride;
        const std::uint64_t lo = std::max(align_down8(begin), window_begin());
        const std::uint64_t hi = std::min(align_up8(begin + row_bytes), window_end());
        if (lo < hi) ranges.push_back({lo, hi});
      }
    }
    std::sort(ranges.begin(), ranges.end(),
              [](const Range& a, const Range& b) { return a.begin < b.begin; });
    std::vector<Range> merged;
    for (const Range& range : ranges) {
      // Ranges a few words apart go in one read: a frame costs more than the bytes between.
      if (!merged.empty() && range.begin <= merged.back().end + 16) {
        merged.back().end = std::max(merged.back().end, range.end);
      } else {
        merged.push_back(range);
      }
    }
    return merged;
  }

  void download(const std::vector<Range>& ranges) {
    for (const Range& range : ranges) {
      const auto bytes = client_.read_mem(range.begin, range.end - range.begin);
      memory_.write(range.begin, bytes.data(), bytes.size());
      remember(range.begin, bytes.data(), bytes.size());
    }
  }

  std::unique_ptr<ByteLink> link_;
  std::string name_;
  UartDeviceOptions options_;
  bridge::BridgeClient client_;
  bridge::BridgeInfo info_;
  HostMemory memory_;
  // What the board memory holds, as far as this backend wrote or read it (per 8-byte word).
  std::vector<std::uint8_t> image_;
  std::vector<bool> known_;
  DeviceCaps caps_;
};

}  // namespace

UartSpec parse_uart_spec(const std::string& spec) {
  const std::string prefix = "uart:";
  const std::string form = "expected uart:<device>[@<baud>], e.g. uart:/dev/ttyUSB0@1000000";
  if (spec.compare(0, prefix.size(), prefix) != 0) {
    throw std::invalid_argument("'" + spec + "' is not a UART device: " + form);
  }
  UartSpec out;
  std::string rest = spec.substr(prefix.size());
  const std::size_t at = rest.rfind('@');
  if (at != std::string::npos) {
    const std::string baud = rest.substr(at + 1);
    if (baud.empty() || baud.size() > 9 ||
        !std::all_of(baud.begin(), baud.end(), [](unsigned char ch) { return std::isdigit(ch); })) {
      throw std::invalid_argument("'" + spec + "': baud rate '" + baud + "' is not a number (" +
                                  form + ")");
    }
    out.baud = static_cast<unsigned>(std::stoul(baud));
    rest.resize(at);
  }
  if (rest.empty()) throw std::invalid_argument("'" + spec + "' names no device (" + form + ")");
  out.path = rest;
  return out;
}

std::unique_ptr<Device> make_uart_device(const std::string& spec,
                                         const UartDeviceOptions& options) {
  const UartSpec s = parse_uart_spec(spec);
  std::unique_ptr<ByteLink> link;
  try {
    link = open_serial_link(s.path, s.baud);
  } catch (const LinkError& e) {
    throw LinkError("uart:" + std::string(e.what()));
  }
  return make_uart_device(std::move(link), "uart:" + s.path + "@" + std::to_string(s.baud),
                          s.baud, options);
}

std::unique_ptr<Device> make_uart_device(std::unique_ptr<ByteLink> link, const std::string& name,
                                         unsigned baud, const UartDeviceOptions& options) {
  return std::make_unique<UartDevice>(std::move(link), name, baud, options);
}

}  // namespace nmsa
