// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// The third nmsa::Device backend: an FPGA board (rtl/board/) over its UART bridge
// (docs/fpga.md). Registers go through the bridge; memory() is a HostMemory confined to the
// board memory window, which run() mirrors to the board:
//
//   1. soft reset, wait until idle (nothing of an earlier run can still write the memory);
//   2. upload the allocated bytes [alloc_base, alloc_end) that differ from what the board holds
//      (the backend remembers what it wrote and read, so a second program re-sends only its
//      own buffers);
//   3. soft reset again, so that the counters describe this run alone; wait until idle;
//   4. IRQ_STATUS cleared, CMD_BASE and CMD_COUNT, START with IRQ_EN (as the RTL backend);
//   5. poll STATUS until BUSY drops (wall-clock timeout: LinkError, after a soft reset);
//   6. read STATUS, ERR_INFO and the counters;
//   7. download what the run wrote: the regions of the stream's STORE commands, decoded with
//      the ISA helpers (downloading only those keeps a run's return trip to its outputs, a small
//      part of the window; nothing else in the window can change during a run).
//
// DeviceRun::cycles is the device's CYCLES_TOTAL counter: clock cycles from the soft reset of
// step 3 to the counter read of step 6, so it includes the link round trips of steps 3-6;
// CYCLES_BUSY (counter index 1) is the run itself.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "nmsa/byte_link.hpp"
#include "nmsa/device.hpp"

namespace nmsa {

struct UartDeviceOptions {
  // Allowance for each response beyond its time on the wire.
  std::chrono::milliseconds response_timeout{1000};
  // From START until the device is idle again.
  std::chrono::milliseconds run_timeout{60000};
  // Between STATUS reads while a run is in flight.
  std::chrono::milliseconds poll_interval{1};
};

// "uart:<device>[@<baud>]", e.g. "uart:/dev/ttyUSB0@1000000". The baud rate defaults to
// 1000000, the rate of both board builds.
struct UartSpec {
  std::string path;
  unsigned baud = 1000000;
};
constexpr unsigned UART_DEFAULT_BAUD = 1000000;

// Throws std::invalid_argument naming the spec when it is not of that form.
UartSpec parse_uart_spec(const std::string& spec);

// Opens the serial port of `spec`, pings the bridge and reads the capability registers. Throws
// LinkError (naming the device) when the port cannot be opened or the board does not answer as
// an nmsa board.
std::unique_ptr<Device> make_uart_device(const std::string& spec,
                                         const UartDeviceOptions& options = {});

// The same over any link; `name` is the device's name (e.g. "uart:/dev/ttyUSB0@1000000") and
// `baud` the link's bit rate, for timeouts.
std::unique_ptr<Device> make_uart_device(std::unique_ptr<ByteLink> link, const std::string& name,
                                         unsigned baud, const UartDeviceOptions& options = {});

}  // namespace nmsa
