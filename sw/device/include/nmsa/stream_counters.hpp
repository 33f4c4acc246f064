// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// What a command stream adds to the device's performance counters (docs/registers.md) when it
// runs without an error: every counter but the cycle counts follows from the commands alone. The
// functional model counts with these rules, and the runtime uses them to give each layer of a
// chained stream (program_chain.hpp) its own share of counters the device keeps per run.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "nmsa/device.hpp"
#include "nmsa/device_caps.hpp"
#include "nmsa/functional_model.hpp"
#include "nmsa/isa.hpp"

namespace nmsa {

struct StreamCounters {
  std::uint64_t beats = 0;  // activation vectors issued (CYCLES_COMPUTE of an ideal run)
  std::uint64_t macs = 0;   // dense-equivalent: Rows*Cols*M a sparse beat, Rows*Cols*N a dense one
  std::uint64_t tiles_sparse = 0;
  std::uint64_t tiles_dense = 0;
  std::uint64_t dma_rd_bytes = 0;  // command fetch + LOAD bytes
  std::uint64_t dma_wr_bytes = 0;  // STORE bytes
  std::uint64_t meta_bytes = 0;    // LOAD bytes landing in the metadata field of a weight record
  StreamCounters& operator+=(const StreamCounters& o);
  bool operator==(const StreamCounters& o) const;
  bool operator!=(const StreamCounters& o) const { return !(*this == o); }
  std::string describe() const;  // "beats 12, MACs 384, ..."
};
std::ostream& operator<<(std::ostream& os, const StreamCounters& c);

// These counters as a device reported them after a run, and as the functional model counted.
StreamCounters run_counters(const DeviceRun& run);
StreamCounters run_counters(const RunResult& result);

// The bytes of weight LOAD `c` that land in the metadata fields of the records it writes (0 for
// any other command).
std::uint64_t loaded_metadata_bytes(const DeviceCaps& caps, const Command& c);

// One command's share, its 32 fetched bytes included.
StreamCounters command_counters(const DeviceCaps& caps, const Command& c);

// The sum over `cmds[first, first + count)`.
StreamCounters stream_counters(const DeviceCaps& caps, const std::vector<Command>& cmds,
                               std::size_t first, std::size_t count);

}  // namespace nmsa
