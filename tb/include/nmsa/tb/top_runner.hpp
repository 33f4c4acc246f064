// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// Runs a command stream prepared in a HostMemory (by nmsa::GemmProgram or by hand) on the
// Verilated accelerator, the way a driver does: copy the buffers to device-visible memory, write
// CMD_BASE/CMD_COUNT, set START with the interrupt enabled, wait for the IRQ, read STATUS and the
// counters, copy the buffers back.
#pragma once

#include <array>
#include <cstdint>
#include <functional>

#include "nmsa/host_memory.hpp"
#include "nmsa/regs.hpp"
#include "nmsa/tb/top_sim.hpp"

namespace nmsa::tb {

struct TopRunResult {
  std::uint32_t status = 0;
  std::uint32_t err_info = 0;
  std::uint64_t cycles = 0;  // from the START write to the IRQ
  std::array<std::uint64_t, regs::NUM_COUNTERS> counters{};
  std::uint64_t dma_busy_cycles = 0;  // cycles with an AXI burst in flight or requested

  bool done() const { return (status & regs::STATUS_DONE_MASK) != 0; }
  unsigned err_code() const {
    return (status & regs::STATUS_ERR_CODE_MASK) >> regs::STATUS_ERR_CODE_SHIFT;
  }
  std::uint64_t counter(std::uint32_t lo_offset) const {
    return counters[(lo_offset - regs::COUNTERS_BASE) / 8];
  }
};

// Throws std::runtime_error if the IRQ does not come within timeout_cycles. `progress`, if set,
// is called every 4096 cycles with the cycles since START.
TopRunResult run_on_top(TopSim& sim, HostMemory& host, std::uint64_t cmd_address,
                        std::uint32_t cmd_count, std::uint64_t timeout_cycles,
                        const std::function<void(std::uint64_t)>& progress = {});

}  // namespace nmsa::tb
