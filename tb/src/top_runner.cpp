// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
#include "nmsa/tb/top_runner.hpp"

#include <stdexcept>
#include <string>

namespace nmsa::tb {

namespace {

void copy_to_device(const HostMemory& host, AxiMemory& device) {
  const std::uint64_t begin = host.alloc_base();
  const std::uint64_t bytes = host.alloc_end() - begin;
  device.write_bytes(begin, host.read_bytes(begin, bytes));
}

void copy_from_device(const AxiMemory& device, HostMemory& host) {
  const std::uint64_t begin = host.alloc_base();
  const std::uint64_t bytes = host.alloc_end() - begin;
  const auto data = device.read_bytes(begin, bytes);
  host.write(begin, data.data(), data.size());
}

}  // namespace

TopRunResult run_on_top(TopSim& sim, HostMemory& host, std::uint64_t cmd_address,
                        std::uint32_t cmd_count, std::uint64_t timeout_cycles,
                        const std::function<void(std::uint64_t)>& progress) {
  copy_to_device(host, sim.memory());
  sim.write_reg(regs::IRQ_STATUS_OFFSET, regs::IRQ_STATUS_DONE_MASK | regs::IRQ_STATUS_ERROR_MASK);
  sim.write_reg(regs::CMD_BASE_LO_OFFSET, static_cast<std::uint32_t>(cmd_address));
  sim.write_reg(regs::CMD_BASE_HI_OFFSET, static_cast<std::uint32_t>(cmd_address >> 32));
  sim.write_reg(regs::CMD_COUNT_OFFSET, cmd_count);

  TopRunResult result;
  const std::uint64_t start = sim.cycles();
  sim.write_reg(regs::CTRL_OFFSET, regs::CTRL_START_MASK | regs::CTRL_IRQ_EN_MASK);
  while (!sim.irq()) {
    if (sim.cycles() - start > timeout_cycles) {
      throw std::runtime_error("no interrupt within " + std::to_string(timeout_cycles) +
                               " cycles of START (" + std::to_string(cmd_count) + " commands)");
    }
    const auto& monitor = sim.axi_monitor();
    if (monitor.reads_in_flight() + monitor.writes_in_flight() > 0) ++result.dma_busy_cycles;
    sim.step();
    if (progress && (sim.cycles() - start) % 4096 == 0) progress(sim.cycles() - start);
  }
  result.cycles = sim.cycles() - start;
  sim.wait_idle(timeout_cycles, 4);
  result.status = sim.read_reg(regs::STATUS_OFFSET);
  result.err_info = sim.read_reg(regs::ERR_INFO_OFFSET);
  for (std::size_t i = 0; i < regs::NUM_COUNTERS; ++i) {
    result.counters[i] = sim.read_counter(regs::COUNTERS_BASE + static_cast<std::uint32_t>(8 * i));
  }
  copy_from_device(sim.memory(), host);
  return result;
}

}  // namespace nmsa::tb
