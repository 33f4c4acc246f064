// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
#include "nmsa/stream_counters.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "nmsa/cycle_model.hpp"

namespace nmsa {

StreamCounters& StreamCounters::operator+=(const StreamCounters& o) {
  beats += o.beats;
  macs += o.macs;
  tiles_sparse += o.tiles_sparse;
  tiles_dense += o.tiles_dense;
  dma_rd_bytes += o.dma_rd_bytes;
  dma_wr_bytes += o.dma_wr_bytes;
  meta_bytes += o.meta_bytes;
  return *this;
}

bool StreamCounters::operator==(const StreamCounters& o) const {
  return beats == o.beats && macs == o.macs && tiles_sparse == o.tiles_sparse &&
         tiles_dense == o.tiles_dense && dma_rd_bytes == o.dma_rd_bytes &&
         dma_wr_bytes == o.dma_wr_bytes && meta_bytes == o.meta_bytes;
}

std::string StreamCounters::describe() const {
  return "beats " + std::to_string(beats) + ", MACs " + std::to_string(macs) + ", tiles " +
         std::to_string(tiles_sparse) + " sparse and " + std::to_string(tiles_dense) +
         " dense, DMA bytes " + std::to_string(dma_rd_bytes) + " read and " +
         std::to_string(dma_wr_bytes) + " written, metadata bytes " + std::to_string(meta_bytes);
}

std::ostream& operator<<(std::ostream& os, const StreamCounters& c) { return os << c.describe(); }

StreamCounters run_counters(const DeviceRun& run) {
  namespace rg = regs;
  StreamCounters c;
  c.beats = run.counter(rg::CYCLES_COMPUTE_LO_OFFSET);
  c.macs = run.counter(rg::MACS_LO_OFFSET);
  c.tiles_sparse = run.counter(rg::TILES_SPARSE_LO_OFFSET);
  c.tiles_dense = run.counter(rg::TILES_DENSE_LO_OFFSET);
  c.dma_rd_bytes = run.counter(rg::DMA_RD_BYTES_LO_OFFSET);
  c.dma_wr_bytes = run.counter(rg::DMA_WR_BYTES_LO_OFFSET);
  c.meta_bytes = run.counter(rg::META_BYTES_LO_OFFSET);
  return c;
}

StreamCounters run_counters(const RunResult& result) {
  StreamCounters c;
  c.beats = result.beats;
  c.macs = result.macs;
  c.tiles_sparse = result.tiles_sparse;
  c.tiles_dense = result.tiles_dense;
  c.dma_rd_bytes = result.dma_rd_bytes;
  c.dma_wr_bytes = result.dma_wr_bytes;
  c.meta_bytes = result.meta_bytes;
  return c;
}

std::uint64_t loaded_metadata_bytes(const DeviceCaps& caps, const Command& c) {
  if (c.opcode != Opcode::LOAD || c.target != LoadTarget::WEIGHTS || c.rows == 0) return 0;
  const auto record = static_cast<std::uint64_t>(caps.weight_record_bytes());
  const auto values = static_cast<std::uint64_t>(caps.weight_value_bytes());
  const auto meta = static_cast<std::uint64_t>(caps.weight_meta_bytes());
  const std::uint64_t start = std::uint64_t{c.first_entry} * record;
  const std::uint64_t end = start + std::uint64_t{c.rows} * c.bytes_per_row;
  std::uint64_t bytes = 0;
  for (std::uint64_t r = start / record; r <= (end - 1) / record; ++r) {
    const std::uint64_t lo = std::max(r * record + values, start);
    const std::uint64_t hi = std::min(r * record + values + meta, end);
    if (hi > lo) bytes += hi - lo;
  }
  return bytes;
}

StreamCounters command_counters(const DeviceCaps& caps, const Command& c) {
  StreamCounters s;
  s.dma_rd_bytes = isa::COMMAND_BYTES;
  switch (c.opcode) {
    case Opcode::LOAD:
      s.dma_rd_bytes += payload_bytes(caps, c);
      s.meta_bytes = loaded_metadata_bytes(caps, c);
      break;
    case Opcode::STORE:
      s.dma_wr_bytes = payload_bytes(caps, c);
      break;
    case Opcode::COMPUTE: {
      const auto lanes = static_cast<std::uint64_t>(c.dense ? caps.pattern.n : caps.pattern.m);
      s.beats = c.beats;
      s.macs = std::uint64_t{c.beats} * static_cast<std::uint64_t>(caps.rows * caps.cols) * lanes;
      (c.dense ? s.tiles_dense : s.tiles_sparse) = 1;
      break;
    }
  }
  return s;
}

StreamCounters stream_counters(const DeviceCaps& caps, const std::vector<Command>& cmds,
                               std::size_t first, std::size_t count) {
  if (first > cmds.size() || count > cmds.size() - first) {
    throw std::out_of_range("stream_counters: commands [" + std::to_string(first) + ", " +
                            std::to_string(first + count) + ") of " +
                            std::to_string(cmds.size()));
  }
  StreamCounters s;
  for (std::size_t i = first; i < first + count; ++i) s += command_counters(caps, cmds[i]);
  return s;
}

}  // namespace nmsa
