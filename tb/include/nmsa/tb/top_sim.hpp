// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// A cycle-level handle on one Verilated nmsa_top configuration with its environment: host memory
// (AxiMemory) on the AXI4 master, an AXI4-Lite master on the CSR port, and protocol monitors on
// both. Tests drive it through registers and memory only, as a driver would.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nmsa/tb/axi.hpp"

namespace nmsa::tb {

class TopSim {
 public:
  virtual ~TopSim() = default;

  // One clock cycle of the DUT, the memory, the CSR master and the monitors.
  virtual void step() = 0;
  // Holds reset (rst_ni low) for `cycles` cycles; also mid-run, as a hard reset. The interfaces
  // reset with the accelerator: the host memory drops the bursts in flight (keeping its
  // contents), the CSR master abandons its access, and the monitors start over.
  virtual void reset(unsigned cycles) = 0;
  virtual std::uint64_t cycles() const = 0;
  virtual bool irq() const = 0;

  virtual AxiMemory& memory() = 0;
  virtual const Axi4Monitor& axi_monitor() const = 0;
  virtual const AxiLiteMonitor& csr_monitor() const = 0;

  // Writes an FST trace of every following cycle into `path`, until close_trace(), which also
  // writes a GTKWave save file (`path` with .gtkw) grouping the main signals.
  virtual void trace_to(const std::string& path) = 0;
  virtual void close_trace() = 0;
  // Starts trace_to(path) when the simulation reaches `cycle` (a window before a failure).
  virtual void trace_from(const std::string& path, std::uint64_t cycle) = 0;

  // Register access through the AXI4-Lite master; each call steps the simulation until the
  // response. Throws std::runtime_error on a timeout or (write_reg/read_reg) an error response.
  std::uint32_t read_reg(std::uint32_t offset);
  void write_reg(std::uint32_t offset, std::uint32_t value);
  // The raw response, for tests of undefined addresses.
  AxiResp try_read_reg(std::uint32_t offset, std::uint32_t& value);
  AxiResp try_write_reg(std::uint32_t offset, std::uint32_t value, std::uint8_t strb = 0xf);
  // A counter (COUNTER_W bits) by the offset of its _LO register (regs::<NAME>_LO_OFFSET).
  std::uint64_t read_counter(std::uint32_t lo_offset);

  // Steps until STATUS.BUSY is 0 (checked every `poll` cycles without bus traffic: the IRQ line
  // and a side-band look would hide bugs, so it reads STATUS like a driver). Throws on timeout.
  void wait_idle(std::uint64_t timeout_cycles, unsigned poll = 64);

  // Protocol violations seen by the monitors, empty if none.
  std::string protocol_report() const;

 protected:
  virtual AxiLiteMaster& csr_master() = 0;
};

// With NMSA_TRACE=1 in the environment, traces the whole run into
// $NMSA_WAVES_DIR/<name>.fst (default directory: waves) and returns the path; otherwise "".
std::string trace_if_requested(TopSim& sim, const std::string& name);

// Writes the GTKWave save file for an nmsa_top trace (scripts/make_gtkw.py); returns its path,
// or "" if it could not be written.
std::string write_gtkw(const std::string& fst_path);

std::vector<std::string> top_config_names();
// The model of configuration `config` with its host memory. The memory's bus is the
// configuration's AXI data width: memory.data_bytes is set from it (the other fields, latency,
// faults and so on, are the caller's).
std::unique_ptr<TopSim> make_top_sim(const std::string& config, const AxiMemoryConfig& memory,
                                     std::uint64_t seed);

}  // namespace nmsa::tb
