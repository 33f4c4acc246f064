// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// The device interface a driver has: registers, host memory the device reads and writes, and
// running a command stream. Backends: the Verilated accelerator (cycle-accurate, in the harness
// library, nmsa::tb::make_rtl_device), the bit-exact functional model (make_model_device) and an
// FPGA board over its UART (make_uart_device, uart_device.hpp). The runtime, the CLI and the
// tests use only this interface.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "nmsa/device_caps.hpp"
#include "nmsa/host_memory.hpp"
#include "nmsa/regs.hpp"

namespace nmsa {

struct DeviceRun {
  regs::ErrCode error = regs::ErrCode::NONE;
  std::uint32_t error_index = 0;
  bool done = false;
  // Cycles from START to completion; the functional model has no clock and reports 0. A board
  // reports its CYCLES_TOTAL counter, which also counts the link's round trips around the run
  // (uart_device.hpp); its CYCLES_BUSY counter is the run alone.
  std::uint64_t cycles = 0;
  std::array<std::uint64_t, regs::NUM_COUNTERS> counters{};  // in register order

  bool ok() const { return done && error == regs::ErrCode::NONE; }
  std::uint64_t counter(std::uint32_t lo_offset) const {
    return counters[(lo_offset - regs::COUNTERS_BASE) / 8];
  }
  std::string describe() const;  // "done in 1234 cycles" or "BAD_RANGE at command 7"
};

// Called now and then during a long run with the cycles simulated so far.
using ProgressFn = std::function<void(std::uint64_t cycles)>;

class Device {
 public:
  virtual ~Device() = default;
  virtual std::string name() const = 0;  // e.g. "rtl:default", "model:default"

  virtual std::uint32_t read_reg(std::uint32_t offset) = 0;
  virtual void write_reg(std::uint32_t offset, std::uint32_t value) = 0;

  // Buffers the device can reach: allocate, write inputs, read results here.
  virtual HostMemory& memory() = 0;

  // Runs `count` commands from `address` to completion (or error).
  virtual DeviceRun run(std::uint64_t address, std::uint32_t count,
                        const ProgressFn& progress = {}) = 0;

  // The capabilities, read from the registers.
  DeviceCaps caps() { return from_registers([this](std::uint32_t off) { return read_reg(off); }); }
};

// The functional model of a named configuration (rtl/configs.json).
std::unique_ptr<Device> make_model_device(const std::string& config);

}  // namespace nmsa
