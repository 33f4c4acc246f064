// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
#include "nmsa/tb/top_sim.hpp"

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <stdexcept>

#include "nmsa/regs.hpp"

namespace nmsa::tb {

AxiResp TopSim::try_read_reg(std::uint32_t offset, std::uint32_t& value) {
  AxiResp resp = AxiResp::kOkay;
  value = csr_master().read(offset, [this] { step(); }, 1000, &resp);
  return resp;
}

AxiResp TopSim::try_write_reg(std::uint32_t offset, std::uint32_t value, std::uint8_t strb) {
  return csr_master().write(offset, value, [this] { step(); }, 1000, strb);
}

std::uint32_t TopSim::read_reg(std::uint32_t offset) {
  std::uint32_t value = 0;
  const AxiResp resp = try_read_reg(offset, value);
  if (resp != AxiResp::kOkay) {
    throw std::runtime_error("CSR read of offset " + std::to_string(offset) + " answered " +
                             to_string(resp));
  }
  return value;
}

void TopSim::write_reg(std::uint32_t offset, std::uint32_t value) {
  const AxiResp resp = try_write_reg(offset, value);
  if (resp != AxiResp::kOkay) {
    throw std::runtime_error("CSR write of offset " + std::to_string(offset) + " answered " +
                             to_string(resp));
  }
}

std::uint64_t TopSim::read_counter(std::uint32_t lo_offset) {
  const std::uint64_t lo = read_reg(lo_offset);  // latches HI
  const std::uint64_t hi = read_reg(lo_offset + 4);
  return hi << 32 | lo;
}

void TopSim::wait_idle(std::uint64_t timeout_cycles, unsigned poll) {
  const std::uint64_t start = cycles();
  for (;;) {
    const std::uint32_t status = read_reg(regs::STATUS_OFFSET);
    if ((status & regs::STATUS_BUSY_MASK) == 0) return;
    if (cycles() - start > timeout_cycles) {
      throw std::runtime_error("device still busy after " + std::to_string(timeout_cycles) +
                               " cycles (STATUS = " + std::to_string(status) + ")");
    }
    for (unsigned i = 0; i < poll; ++i) step();
  }
}

std::string TopSim::protocol_report() const {
  std::string report;
  if (!axi_monitor().violations().empty()) report += axi_monitor().report();
  if (!csr_monitor().violations().empty()) report += csr_monitor().report();
  return report;
}

std::string trace_if_requested(TopSim& sim, const std::string& name) {
  const char* enabled = std::getenv("NMSA_TRACE");
  if (enabled == nullptr || std::string(enabled) != "1") return "";
  const char* dir_env = std::getenv("NMSA_WAVES_DIR");
  const std::filesystem::path dir = dir_env != nullptr && *dir_env != '\0' ? dir_env : "waves";
  std::filesystem::create_directories(dir);
  std::string file = name;
  for (char& c : file) {
    if (c == '/' || c == ' ') c = '_';
  }
  const std::string path = (dir / (file + ".fst")).string();
  sim.trace_to(path);
  std::cout << "tracing to " << path << std::endl;
  return path;
}

std::string write_gtkw(const std::string& fst_path) {
  const std::string gtkw = fst_path.substr(0, fst_path.rfind('.')) + ".gtkw";
  const std::string command = "python3 '" NMSA_SOURCE_DIR "/scripts/make_gtkw.py' '" + fst_path +
                              "' '" + gtkw + "' > /dev/null";
  return std::system(command.c_str()) == 0 ? gtkw : "";
}

}  // namespace nmsa::tb
