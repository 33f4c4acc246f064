// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// The cycle model: how many cycles a command stream takes on a device, from the START register
// write to the done interrupt, predicted without running it. It replays the stream on an
// event-driven model of the command processor, the engines, the dependency tokens, the DMA
// engines and the host memory, with the RTL's timing; what it models and what it leaves out is
// written at the top of cycle_model.cpp. The GEMM compiler ranks tiling plans with it, and
// GemmProgram::predict_cycles gives it for a compiled program.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "nmsa/device_caps.hpp"
#include "nmsa/isa.hpp"

namespace nmsa {

// The host memory the cycle model (predict_cycles) assumes. The device's structure (queue
// depths, bursts in flight, pipeline depths) comes from DeviceCaps, i.e. its capability registers.
struct PerfModelParams {
  // Host memory.
  // Bandwidth in bytes per cycle, shared by reads and writes as in tb::AxiMemoryConfig (a token
  // bucket; reads first); 0: AXI_DATA_W / 8. Each direction moves at most one beat per cycle, so
  // from 2 * AXI_DATA_W / 8 on (e.g. for a memory without a limit) nothing is shared.
  double dma_bytes_per_cycle = 0;
  int dma_read_latency = 24;   // cycles from a read burst's AR handshake to its first beat
  int dma_write_latency = 16;  // cycles from a burst's last write beat to its response
  // Share of the cycles in which a channel can move a beat: 1 for a memory that never stalls,
  // 1 - p for one that withholds READY or a due beat with probability p in each cycle (random
  // back-pressure, tb::AxiMemoryConfig's p_*). Each direction then moves at most this many beats
  // per cycle on average; the model spreads them evenly, so under back-pressure its prediction
  // is an expectation, not exact (docs/verification.md states the tolerance).
  double channel_beat_rate = 1.0;
};

struct CyclePrediction {
  std::uint64_t total = 0;           // predicted cycles from START to DONE
  std::uint64_t startup = 0;         // until the first beat enters the array
  std::uint64_t steady = 0;          // from the first beat to the last beat into the array
  std::uint64_t tail = 0;            // after the last beat (array latency, last stores)
  std::uint64_t compute_cycles = 0;  // beats + no-bubble-rule bubbles, ignoring DMA
  std::uint64_t bubble_cycles = 0;   // of which bubbles (tiles shorter than L + Rows)
  std::uint64_t dma_cycles = 0;      // all DMA bytes / bandwidth, ignoring compute
  std::uint64_t ideal_cycles = 0;    // useful MACs / peak MACs per cycle of the mode
  // Per STORE, in stream order: the cycles the stream would have taken had it ended with that
  // STORE (its last response, the completion, the done). A chain of programs splits its total
  // at its programs' last STOREs (ProgramChain::predict_layer_cycles).
  std::vector<std::uint64_t> store_ends;
  double utilization() const {
    return total == 0 ? 0.0 : static_cast<double>(ideal_cycles) / static_cast<double>(total);
  }
  std::string describe() const;
};

// A GEMM a command stream computes, as far as the figures beside the total need it: its MACs
// set the ideal cycles.
struct GemmShape {
  std::int64_t rows = 0, k = 0, n_out = 0;
  bool dense = false;  // peak MACs per cycle: Rows * Cols * N dense, Rows * Cols * M sparse
};

// The payload a LOAD or STORE moves over the DMA (a STORE row is Cols INT8 values or Cols INT32
// accumulators); 0 for a COMPUTE.
std::uint64_t payload_bytes(const DeviceCaps& caps, const Command& c);

// The prediction for the command stream `cmds` at host address `cmd_addr`, which computes the
// GEMMs `gemms` (one, or several chained: program_chain.hpp); nothing if it takes more than
// `limit` cycles. Throws std::logic_error when the stream cannot finish (a token deadlock, which
// the device would report as BAD_DEPS).
std::optional<CyclePrediction> predict_stream_cycles(
    const DeviceCaps& caps, const std::vector<GemmShape>& gemms, const std::vector<Command>& cmds,
    std::uint64_t cmd_addr, const PerfModelParams& params,
    double limit = std::numeric_limits<double>::infinity());

}  // namespace nmsa
