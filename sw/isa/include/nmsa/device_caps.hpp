// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// What a device is: array shape, N:M pattern, widths and buffer capacities, as the capability
// registers report them (docs/registers.md), plus the byte sizes of the scratchpad entries that
// docs/isa.md derives from them. Software reads these instead of assuming a configuration.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>

#include "nmsa/regs.hpp"
#include "nmsa/types.hpp"

namespace nmsa {

struct DeviceCaps {
  int rows = 8;  // PE rows (Rows)
  int cols = 8;  // PE columns (Cols)
  NmPattern pattern{2, 4};
  int data_w = 8;
  int acc_w = 32;
  int axi_data_w = 64;  // bits
  std::uint32_t act_entries = 2048;
  std::uint32_t wgt_records = 256;
  std::uint32_t epi_entries = 64;
  std::uint32_t acc_entries = 2048;
  bool sparse_supported = true;  // CAP_ARRAY.SPARSE
  // Width of the AXI4 master's addresses. No capability register holds it; 64 is the width of
  // the DMA engines (rtl/dma, AddrW = 64). A host address range that does not fit is BAD_RANGE.
  int host_addr_bits = 64;
  // Bits of each performance counter (CAP_WIDTHS.COUNTER_W): a counter wraps modulo 2^counter_w.
  int counter_w = 64;

  // --- Structure, for the cycle model (CAP_QUEUES, CAP_DMA, CAP_PIPELINE) ---
  int queue_depth = 8;           // commands per engine queue
  int fetch_chunk = 8;           // commands per command-fetch request
  int fetch_chunks = 2;          // requests' worth of beats the fetch FIFO holds
  int pending_loads = 4;         // LOADs with data outstanding
  int max_burst_beats = 16;      // longest AXI4 burst of the DMA engines
  int max_outstanding = 16;      // bursts in flight per DMA engine
  int read_requests = 8;         // read requests with data outstanding
  int array_latency = 19;        // cycles from a vector entering the array to its results
  int epi_lanes = 4;             // output channels the epilogue takes per cycle
  int epi_latency = 7;           // cycles through the epilogue
  int store_rows = 8;            // finished rows the store engine buffers

  // --- Derived sizes (docs/isa.md, LOAD) ---
  int axi_bytes() const { return axi_data_w / 8; }
  int latency() const { return array_latency; }  // array latency L
  // Activations per PE row: M, or N on the dense-only array.
  int lanes() const { return sparse_supported ? pattern.m : pattern.n; }
  int act_entry_bytes() const { return rows * lanes(); }  // one sparse beat (or dense-only beat)
  int weight_value_bytes() const {
    return cols * pattern.n;
  }  // value of column c slot j at c*N + j
  int weight_meta_bytes() const {
    return sparse_supported ? (cols * pattern.meta_bits() + 7) / 8 : 0;
  }
  int weight_record_bytes() const {
    const int raw = weight_value_bytes() + weight_meta_bytes();
    return (raw + axi_bytes() - 1) / axi_bytes() * axi_bytes();
  }
  int epi_entry_bytes() const { return 12 * cols; }
  int dense_parts() const { return lanes() / pattern.n; }    // dense beats per entry
  int epi_groups() const { return cols / epi_lanes; }       // epilogue cycles per output row
  int sparse_chunk_k() const { return rows * pattern.m; }    // K-positions per sparse tile
  int dense_chunk_k() const { return rows * pattern.n; }     // K-positions per dense tile

  std::uint64_t act_buffer_bytes() const {
    return std::uint64_t{act_entries} * static_cast<std::uint64_t>(act_entry_bytes());
  }
  std::uint64_t wgt_buffer_bytes() const {
    return std::uint64_t{wgt_records} * static_cast<std::uint64_t>(weight_record_bytes());
  }
  std::uint64_t epi_buffer_bytes() const {
    return std::uint64_t{epi_entries} * static_cast<std::uint64_t>(epi_entry_bytes());
  }

  // Throws std::invalid_argument naming the first value that makes no sense or that libnmsa does
  // not support.
  void validate() const;

  std::string describe() const;  // "8x8 2:4, 8/32 bit, AXI 64, act 2048 wgt 256 epi 64 acc 2048"

  // The named configurations of rtl/configs.json with the buffer capacities the top is built
  // with (small, default, large, xlarge, small_1of4, small_2of8, dense_only). Throws on an
  // unknown name.
  static DeviceCaps named(std::string_view name);
};

// Reads ID and the capability registers through `read_reg` (a byte offset in the CSR space) and
// validates them. Throws std::invalid_argument on a wrong ID or on nonsense values.
DeviceCaps from_registers(const std::function<std::uint32_t(std::uint32_t offset)>& read_reg);

// The value a device with capabilities `c` shows in the ID, VERSION or capability register at
// `offset` (the inverse of from_registers, for models of the device); nothing for other offsets.
std::optional<std::uint32_t> capability_register(const DeviceCaps& c, std::uint32_t offset);

// --- implementation ---------------------------------------------------------------------------

inline void DeviceCaps::validate() const {
  auto fail = [this](const std::string& what) {
    throw std::invalid_argument("device capabilities (" + describe() + "): " + what);
  };
  if (rows < 1 || cols < 1 || rows > 255 || cols > 255) fail("ROWS and COLS must be in [1, 255]");
  if (rows + cols < 3) fail("ROWS + COLS must be at least 3 (the array needs latency >= 2)");
  try {
    pattern.validate();
  } catch (const std::invalid_argument& e) {
    fail(e.what());
  }
  if (pattern.m % pattern.n != 0) {
    fail("N must divide M (an activation entry holds exactly M/N dense beats)");
  }
  if (pattern.m / pattern.n > 4) fail("M/N must be at most 4 (the dense part field has 2 bits)");
  if (data_w != 8)
    fail("DATA_W = " + std::to_string(data_w) + ": libnmsa supports 8-bit operands only");
  if (acc_w != 32)
    fail("ACC_W = " + std::to_string(acc_w) + ": libnmsa supports 32-bit accumulators only");
  if (axi_data_w != 32 && axi_data_w != 64 && axi_data_w != 128) {
    fail("AXI_DATA_W = " + std::to_string(axi_data_w) + " bits: must be 32, 64 or 128");
  }
  if (act_entry_bytes() % axi_bytes() != 0) {
    fail("an activation entry (ROWS*M = " + std::to_string(act_entry_bytes()) +
         " bytes) must be a whole number of AXI words");
  }
  if (epi_entry_bytes() % axi_bytes() != 0) {
    fail("an epilogue entry (12*COLS = " + std::to_string(epi_entry_bytes()) +
         " bytes) must be a whole number of AXI words");
  }
  auto check_entries = [&](std::uint32_t v, const char* name) {
    if (v == 0) fail(std::string(name) + " is 0");
    if (v > 65536) {
      fail(std::string(name) + " = " + std::to_string(v) +
           " exceeds 65536, more than a 16-bit command field can address");
    }
  };
  check_entries(act_entries, "ACT_ENTRIES");
  check_entries(wgt_records, "WGT_RECORDS");
  check_entries(epi_entries, "EPI_ENTRIES");
  check_entries(acc_entries, "ACC_ENTRIES");
  if (wgt_records < static_cast<std::uint32_t>(rows)) {
    fail("WGT_RECORDS = " + std::to_string(wgt_records) +
         " cannot hold one tile of ROWS = " + std::to_string(rows) + " records");
  }
  if (host_addr_bits < 12 || host_addr_bits > 64) fail("host address width must be in [12, 64]");
  if (counter_w < 33 || counter_w > 64) {
    fail("COUNTER_W = " + std::to_string(counter_w) + " bits: must be in [33, 64]");
  }
  if (epi_lanes < 1 || cols % epi_lanes != 0) {
    fail("EPI_LANES = " + std::to_string(epi_lanes) + " must divide COLS");
  }
  if (array_latency < rows + cols - 1) {
    fail("ARRAY_LATENCY = " + std::to_string(array_latency) + " is below ROWS + COLS - 1");
  }
  if (queue_depth < 1 || fetch_chunk < 1 || fetch_chunks < 1 || pending_loads < 1 ||
      max_burst_beats < 1 || max_burst_beats > 256 || max_outstanding < 1 || read_requests < 1 ||
      epi_latency < 1 || store_rows < 1) {
    fail("a structural capability (CAP_QUEUES, CAP_DMA, CAP_PIPELINE) is out of range");
  }
}

inline std::string DeviceCaps::describe() const {
  std::ostringstream s;
  s << rows << 'x' << cols << ' ';
  if (sparse_supported) {
    s << pattern.n << ':' << pattern.m;
  } else {
    s << "dense-only";
  }
  s << ", " << data_w << '/' << acc_w
    << " bit, AXI " << axi_data_w << ", act " << act_entries << " wgt " << wgt_records << " epi "
    << epi_entries << " acc " << acc_entries;
  return s.str();
}

inline DeviceCaps DeviceCaps::named(std::string_view name) {
  // The same values as rtl/configs.json (a test compares them). Why these capacities:
  //   default: act 2048 entries (64 KiB) hold the whole K = 1024 of a 64-row tile, or half of it
  //     for 128 rows, which serpentine groups then reuse; acc 2048 rows (64 KiB) hold 16 blocks
  //     of 128 rows, so every weight tile is used for 128 beats (>= L + Rows = 23, no bubble);
  //     wgt 256 records = 32 tiles = two batches of 16; epi 64 entries = 512 output channels
  //     loaded once. The benchmark 256 x 1024 x 256 then moves 0.93 MB, 44 % of what 8 B/cycle
  //     carries during its ideal 262144 cycles, and is predicted at 98.7 % array utilization.
  //   small / small_1of4 / small_2of8: a quarter of the PEs, 256 / 64 / 16 / 256.
  //   large: 16 x 16 with the default buffers and 512 records (32 tiles of 40-byte records); its
  //     peak is 4x the default's on the same 64-bit bus, so large GEMMs are DMA-bound on it.
  //   xlarge: 32 x 32 with large's buffers and 1024 records (32 tiles of 80-byte records), for
  //     the production shapes of make bench; 16x the default's peak on the same 64-bit bus (the
  //     command processor takes at most 64 bits), so it shows where a bigger array stops paying.
  //   dense_only: default with the N:M support compiled out (same multipliers), the baseline
  //     of the equal-area comparison (docs/fpga.md).
  //   tiny: 2 x 2 with small's buffers on a 32-bit AXI bus, one epilogue lane, queues of two
  //     commands and a fetch FIFO of one request of two: the configuration made to fit an iCE40
  //     (docs/fpga.md, "iCE40").
  DeviceCaps c;
  const auto small_buffers = [&c] {
    c.act_entries = 256;
    c.wgt_records = 64;
    c.epi_entries = 16;
    c.acc_entries = 256;
  };
  if (name == "small" || name == "small_1of4" || name == "small_2of8") {
    c.rows = 4;
    c.cols = 4;
    c.pattern = name == "small"        ? NmPattern{2, 4}
                : name == "small_1of4" ? NmPattern{1, 4}
                                       : NmPattern{2, 8};
    small_buffers();
  } else if (name == "tiny") {
    c.rows = 2;
    c.cols = 2;
    small_buffers();
    c.axi_data_w = 32;
    c.epi_lanes = 1;
    c.queue_depth = 2;
    c.fetch_chunk = 2;
    c.fetch_chunks = 1;
    c.pending_loads = 2;
    c.read_requests = 2;
    c.counter_w = 40;
  } else if (name == "default") {
    // the member defaults
  } else if (name == "dense_only") {
    c.sparse_supported = false;
  } else if (name == "large") {
    c.rows = 16;
    c.cols = 16;
    c.act_entries = 2048;
    c.wgt_records = 512;
    c.epi_entries = 64;
    c.acc_entries = 2048;
    c.epi_lanes = 8;
  } else if (name == "xlarge") {
    c.rows = 32;
    c.cols = 32;
    c.act_entries = 2048;
    c.wgt_records = 1024;
    c.epi_entries = 64;
    c.acc_entries = 2048;
    c.epi_lanes = 16;
  } else {
    throw std::invalid_argument(
        "unknown device configuration '" + std::string(name) +
        "' (small, default, large, xlarge, small_1of4, small_2of8, dense_only, tiny)");
  }
  // Derived as nmsa_top derives them: ROWS + COLS + PeLatency - 2, and a row-FIFO credit for
  // every row in flight through the epilogue, rounded up to a power of two.
  c.array_latency = c.rows + c.cols + 3;
  const int groups = c.cols / c.epi_lanes;
  const int needed = (c.epi_latency + groups + 4) / groups + 2;
  c.store_rows = 1;
  while (c.store_rows < needed) c.store_rows *= 2;
  c.validate();
  return c;
}

inline DeviceCaps from_registers(
    const std::function<std::uint32_t(std::uint32_t offset)>& read_reg) {
  const std::uint32_t id = read_reg(regs::ID_OFFSET);
  if (id != regs::ID_RESET) {
    std::ostringstream s;
    s << "capability registers: ID reads 0x" << std::hex << id << ", expected 0x" << regs::ID_RESET
      << " (\"NMSA\"): not an nmsa device";
    throw std::invalid_argument(s.str());
  }
  auto get = [](std::uint32_t reg, std::uint32_t mask, std::uint32_t shift) {
    return static_cast<int>((reg & mask) >> shift);
  };
  const std::uint32_t array = read_reg(regs::CAP_ARRAY_OFFSET);
  const std::uint32_t widths = read_reg(regs::CAP_WIDTHS_OFFSET);
  DeviceCaps c;
  c.rows = get(array, regs::CAP_ARRAY_ROWS_MASK, regs::CAP_ARRAY_ROWS_SHIFT);
  c.cols = get(array, regs::CAP_ARRAY_COLS_MASK, regs::CAP_ARRAY_COLS_SHIFT);
  c.pattern.n = get(array, regs::CAP_ARRAY_N_MASK, regs::CAP_ARRAY_N_SHIFT);
  c.pattern.m = get(array, regs::CAP_ARRAY_M_MASK, regs::CAP_ARRAY_M_SHIFT);
  c.sparse_supported = get(array, regs::CAP_ARRAY_SPARSE_MASK, regs::CAP_ARRAY_SPARSE_SHIFT) != 0;
  c.data_w = get(widths, regs::CAP_WIDTHS_DATA_W_MASK, regs::CAP_WIDTHS_DATA_W_SHIFT);
  c.acc_w = get(widths, regs::CAP_WIDTHS_ACC_W_MASK, regs::CAP_WIDTHS_ACC_W_SHIFT);
  c.axi_data_w = get(widths, regs::CAP_WIDTHS_AXI_DATA_W_MASK, regs::CAP_WIDTHS_AXI_DATA_W_SHIFT);
  c.counter_w = get(widths, regs::CAP_WIDTHS_COUNTER_W_MASK, regs::CAP_WIDTHS_COUNTER_W_SHIFT);
  // A device of register map 0.2 has no COUNTER_W field (it reads 0); its counters are 64 bits.
  if (c.counter_w == 0) c.counter_w = 64;
  c.act_entries = read_reg(regs::CAP_ACT_ENTRIES_OFFSET) & regs::CAP_ACT_ENTRIES_ENTRIES_MASK;
  c.wgt_records = read_reg(regs::CAP_WGT_RECORDS_OFFSET) & regs::CAP_WGT_RECORDS_RECORDS_MASK;
  c.epi_entries = read_reg(regs::CAP_EPI_ENTRIES_OFFSET) & regs::CAP_EPI_ENTRIES_ENTRIES_MASK;
  c.acc_entries = read_reg(regs::CAP_ACC_ENTRIES_OFFSET) & regs::CAP_ACC_ENTRIES_ENTRIES_MASK;
  const std::uint32_t queues = read_reg(regs::CAP_QUEUES_OFFSET);
  c.queue_depth = get(queues, regs::CAP_QUEUES_QUEUE_DEPTH_MASK, regs::CAP_QUEUES_QUEUE_DEPTH_SHIFT);
  c.fetch_chunk = get(queues, regs::CAP_QUEUES_FETCH_CHUNK_MASK, regs::CAP_QUEUES_FETCH_CHUNK_SHIFT);
  c.fetch_chunks =
      get(queues, regs::CAP_QUEUES_FETCH_CHUNKS_MASK, regs::CAP_QUEUES_FETCH_CHUNKS_SHIFT);
  c.pending_loads =
      get(queues, regs::CAP_QUEUES_PENDING_LOADS_MASK, regs::CAP_QUEUES_PENDING_LOADS_SHIFT);
  const std::uint32_t dma = read_reg(regs::CAP_DMA_OFFSET);
  c.max_burst_beats = get(dma, regs::CAP_DMA_MAX_BURST_MASK, regs::CAP_DMA_MAX_BURST_SHIFT);
  c.max_outstanding =
      get(dma, regs::CAP_DMA_MAX_OUTSTANDING_MASK, regs::CAP_DMA_MAX_OUTSTANDING_SHIFT);
  c.read_requests = get(dma, regs::CAP_DMA_READ_REQUESTS_MASK, regs::CAP_DMA_READ_REQUESTS_SHIFT);
  const std::uint32_t pipe = read_reg(regs::CAP_PIPELINE_OFFSET);
  c.array_latency =
      get(pipe, regs::CAP_PIPELINE_ARRAY_LATENCY_MASK, regs::CAP_PIPELINE_ARRAY_LATENCY_SHIFT);
  c.epi_lanes = get(pipe, regs::CAP_PIPELINE_EPI_LANES_MASK, regs::CAP_PIPELINE_EPI_LANES_SHIFT);
  c.epi_latency =
      get(pipe, regs::CAP_PIPELINE_EPI_LATENCY_MASK, regs::CAP_PIPELINE_EPI_LATENCY_SHIFT);
  c.store_rows = get(pipe, regs::CAP_PIPELINE_STORE_ROWS_MASK, regs::CAP_PIPELINE_STORE_ROWS_SHIFT);
  c.validate();
  return c;
}

inline std::optional<std::uint32_t> capability_register(const DeviceCaps& c,
                                                        std::uint32_t offset) {
  namespace r = regs;
  auto u = [](int v, std::uint32_t shift) { return static_cast<std::uint32_t>(v) << shift; };
  switch (offset) {
    case r::ID_OFFSET: return r::ID_RESET;
    case r::VERSION_OFFSET: return r::VERSION_RESET;
    case r::CAP_ARRAY_OFFSET:
      return u(c.rows, r::CAP_ARRAY_ROWS_SHIFT) | u(c.cols, r::CAP_ARRAY_COLS_SHIFT) |
             u(c.pattern.n, r::CAP_ARRAY_N_SHIFT) | u(c.pattern.m, r::CAP_ARRAY_M_SHIFT) |
             (c.sparse_supported ? r::CAP_ARRAY_SPARSE_MASK : 0u);
    case r::CAP_WIDTHS_OFFSET:
      return u(c.data_w, r::CAP_WIDTHS_DATA_W_SHIFT) | u(c.acc_w, r::CAP_WIDTHS_ACC_W_SHIFT) |
             u(c.axi_data_w, r::CAP_WIDTHS_AXI_DATA_W_SHIFT) |
             u(c.counter_w, r::CAP_WIDTHS_COUNTER_W_SHIFT);
    case r::CAP_ACT_ENTRIES_OFFSET: return c.act_entries;
    case r::CAP_WGT_RECORDS_OFFSET: return c.wgt_records;
    case r::CAP_EPI_ENTRIES_OFFSET: return c.epi_entries;
    case r::CAP_ACC_ENTRIES_OFFSET: return c.acc_entries;
    case r::CAP_QUEUES_OFFSET:
      return u(c.queue_depth, r::CAP_QUEUES_QUEUE_DEPTH_SHIFT) |
             u(c.fetch_chunk, r::CAP_QUEUES_FETCH_CHUNK_SHIFT) |
             u(c.fetch_chunks, r::CAP_QUEUES_FETCH_CHUNKS_SHIFT) |
             u(c.pending_loads, r::CAP_QUEUES_PENDING_LOADS_SHIFT);
    case r::CAP_DMA_OFFSET:
      return u(c.max_burst_beats, r::CAP_DMA_MAX_BURST_SHIFT) |
             u(c.max_outstanding, r::CAP_DMA_MAX_OUTSTANDING_SHIFT) |
             u(c.read_requests, r::CAP_DMA_READ_REQUESTS_SHIFT);
    case r::CAP_PIPELINE_OFFSET:
      return u(c.array_latency, r::CAP_PIPELINE_ARRAY_LATENCY_SHIFT) |
             u(c.epi_lanes, r::CAP_PIPELINE_EPI_LANES_SHIFT) |
             u(c.epi_latency, r::CAP_PIPELINE_EPI_LATENCY_SHIFT) |
             u(c.store_rows, r::CAP_PIPELINE_STORE_ROWS_SHIFT);
    default: return std::nullopt;
  }
}

}  // namespace nmsa
