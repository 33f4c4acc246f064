// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// What the GEMM compiler derives from a GEMM and a device before it plans: the padded, blocked
// geometry of the operands and the buffer capacities a plan must fit. The planner, the emitter
// and GemmProgram share it.
#pragma once

#include <cstdint>

#include "nmsa/cycle_model.hpp"
#include "nmsa/device_caps.hpp"
#include "nmsa/gemm_program.hpp"

namespace nmsa::compiler_detail {

inline std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}
inline std::uint64_t round_up(std::uint64_t a, std::uint64_t b) {
  return (a + b - 1) / b * b;
}

// Largest piece of one activation LOAD, so that weight LOADs queued behind it are not held up
// for long (the load engine is in order).
constexpr std::int64_t ACT_PIECE_BYTES = 2048;

// Shapes derived from the GEMM and the device.
struct Geometry {
  std::int64_t rows = 0, k = 0, n_out = 0;
  int blocks = 0;    // output blocks of Cols channels
  int k_chunks = 0;  // activation entries per row (K_pad / (Rows*M))
  int k_tiles = 0;   // weight tiles along K: k_chunks (sparse) or ceil(K / (Rows*N)) (dense)
  int parts = 1;     // dense beats per activation entry used (1 in sparse mode)
  bool dense = false;
  bool int32_out = false;
  bool relu = false;
  std::uint64_t k_pad = 0;
  std::uint64_t x_stride = 0;       // host activation row stride: k_pad, or the external input's
  std::uint64_t out_row_bytes = 0;  // one STORE row (Cols * element size)
  std::uint64_t out_pitch = 0;      // distance of output blocks within a host row
  std::uint64_t out_stride = 0;     // host output row stride
  int epi_needed = 0;               // epilogue entries the GEMM uses
};

Geometry make_geometry(const DeviceCaps& caps, std::int64_t rows, std::int64_t k,
                       std::int64_t n_out, const GemmOptions& o);

// Buffer capacities as the compiler uses them (16-bit command fields address at most 65536).
struct Capacity {
  std::int64_t act_entries, wgt_tiles, epi_entries, acc_entries;
  std::int64_t halves, half_tiles;  // weight scratchpad split for double buffering
};

Capacity capacity(const DeviceCaps& caps);

bool epilogue_cached(const Geometry& g, const Capacity& cap);

// What the cycle model needs to know of the GEMM besides its commands.
GemmShape gemm_shape(const Geometry& g);

}  // namespace nmsa::compiler_detail
