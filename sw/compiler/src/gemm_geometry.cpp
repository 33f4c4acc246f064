// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
#include "gemm_geometry.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string>

namespace nmsa::compiler_detail {

Geometry make_geometry(const DeviceCaps& caps, std::int64_t rows, std::int64_t k,
                       std::int64_t n_out, const GemmOptions& o) {
  if (rows < 1 || k < 1 || n_out < 1) {
    throw std::invalid_argument("GEMM shape " + std::to_string(rows) + " x " + std::to_string(k) +
                                " x " + std::to_string(n_out) +
                                ": every dimension must be at least 1");
  }
  Geometry g;
  g.rows = rows;
  g.k = k;
  g.n_out = n_out;
  g.dense = o.mode == GemmMode::DENSE;
  g.int32_out = !o.epilogue.has_value();
  g.relu = o.relu;
  g.blocks = static_cast<int>(ceil_div(n_out, caps.cols));
  // A K-chunk is what one activation entry holds: ROWS*M positions (ROWS*N on a dense-only
  // device), one sparse tile or dense_parts() dense ones.
  g.k_chunks = static_cast<int>(ceil_div(k, caps.act_entry_bytes()));
  g.k_pad =
      static_cast<std::uint64_t>(g.k_chunks) * static_cast<std::uint64_t>(caps.act_entry_bytes());
  g.x_stride = o.input ? o.input->row_stride : g.k_pad;
  g.k_tiles = g.dense ? static_cast<int>(ceil_div(k, caps.dense_chunk_k())) : g.k_chunks;
  g.parts = g.dense ? caps.dense_parts() : 1;
  const std::uint64_t a = static_cast<std::uint64_t>(caps.axi_bytes());
  g.out_row_bytes = static_cast<std::uint64_t>(caps.cols) * (g.int32_out ? 4u : 1u);
  if (g.out_row_bytes >= a) {
    g.out_pitch = round_up(g.out_row_bytes, a);
  } else {
    g.out_pitch = 1;  // a power of two >= the row, so that no row crosses an AXI word
    while (g.out_pitch < g.out_row_bytes) g.out_pitch *= 2;
  }
  // Rows shorter than a word need a stride that is a multiple of the row size too (docs/isa.md).
  const std::uint64_t stride_unit = g.out_row_bytes >= a ? a : std::lcm(a, g.out_row_bytes);
  g.out_stride = round_up(std::max(static_cast<std::uint64_t>(g.blocks) * g.out_pitch,
                                   o.min_output_row_stride),
                          stride_unit);
  g.epi_needed = g.int32_out ? 1 : g.blocks;
  if (g.k_chunks > 65535 * 4) {
    throw std::invalid_argument("GEMM K = " + std::to_string(k) +
                                " is too long for 16-bit command fields");
  }
  return g;
}

Capacity capacity(const DeviceCaps& caps) {
  Capacity c{};
  c.act_entries = std::min<std::int64_t>(caps.act_entries, 65536);
  c.wgt_tiles = std::min<std::int64_t>(caps.wgt_records, 65536) / caps.rows;
  c.epi_entries = std::min<std::int64_t>(caps.epi_entries, 65536);
  c.acc_entries = std::min<std::int64_t>(caps.acc_entries, 65536);
  c.halves = c.wgt_tiles >= 2 ? 2 : 1;
  c.half_tiles = c.wgt_tiles / c.halves;
  return c;
}

bool epilogue_cached(const Geometry& g, const Capacity& cap) {
  return g.epi_needed <= cap.epi_entries;
}

GemmShape gemm_shape(const Geometry& g) {
  return GemmShape{g.rows, g.k, g.n_out, g.dense};
}

}  // namespace nmsa::compiler_detail
