// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
#include "nmsa/tb/host_memory.hpp"

namespace nmsa::tb {

namespace {

constexpr double kBytesPerCycle = 16.0;
constexpr unsigned kReadLatency = 100;
constexpr unsigned kWriteLatency = 16;
constexpr double kReadGap = 0.02;

}  // namespace

AxiMemoryConfig demo_host_memory(const DeviceCaps& caps) {
  AxiMemoryConfig m;
  m.data_bytes = static_cast<unsigned>(caps.axi_bytes());
  m.read_latency = kReadLatency;
  m.write_latency = kWriteLatency;
  m.bytes_per_cycle = kBytesPerCycle;
  m.p_r_gap = kReadGap;
  m.max_reads = 32;
  m.max_writes = 32;
  return m;
}

PerfModelParams demo_host_memory_perf() {
  PerfModelParams p;
  p.dma_bytes_per_cycle = kBytesPerCycle;
  p.dma_read_latency = static_cast<int>(kReadLatency);
  p.dma_write_latency = static_cast<int>(kWriteLatency);
  return p;
}

}  // namespace nmsa::tb
