// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// Runs a whole GEMM Y = X * W^T through an nmsa_array, the way the accelerator's controller
// does: the output channels are split into blocks of Cols and K into chunks of one pass, each
// (block, chunk) is a tile whose weights load into the idle bank while the previous tile
// streams, and the tile's partial sums are accumulated on the host side.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "nmsa/tb/array_sim.hpp"
#include "nmsa/types.hpp"

namespace nmsa::tb {

enum class ArrayMode { kSparse, kDense };

const char* to_string(ArrayMode mode);

// Replaces the metadata of one PE of one tile by `code` (used to prove illegal-code handling).
struct MetaCorruption {
  std::size_t tile = 0;
  unsigned row = 0;
  unsigned col = 0;
  std::uint8_t code = 0;
};

struct ArrayGemmOptions {
  // Probability that the feeder leaves a cycle empty although it has a beat ready.
  double gap_probability = 0.0;
  std::uint64_t seed = 1;
  std::optional<MetaCorruption> corrupt_meta;
  // Stop after this many cycles (reset-in-the-middle tests); 0 runs to the end.
  std::uint64_t stop_after_cycles = 0;
};

struct ArrayGemmResult {
  MatrixI32 y;                      // [rows x N_out]
  std::uint64_t cycles = 0;         // first cycle to last result
  std::uint64_t beats = 0;          // activation beats streamed
  std::uint64_t tiles = 0;
  std::uint64_t error_beats = 0;    // results flagged out_err_o (dropped, not accumulated)
  std::uint64_t illegal_loads = 0;  // cycles with wload_illegal_o
  std::uint64_t stall_cycles = 0;   // cycles in which a beat was ready but its bank was not
  bool completed = false;           // false if stopped by stop_after_cycles
  std::uint64_t useful_macs = 0;    // rows * K * N_out (unpadded, dense-equivalent)

  // Useful dense-equivalent MACs over the array's sparse-mode peak during `cycles`.
  double utilization(const ArrayGeometry& g) const;
};

// x: [rows x K] activations, w: [N_out x K] weights; in sparse mode w must be N:M sparse for the
// array's pattern (throws std::invalid_argument naming the first offending group otherwise).
// Throws std::runtime_error if the array stops producing results (cycle timeout).
ArrayGemmResult run_array_gemm(ArraySim& sim, const MatrixI8& x, const MatrixI8& w,
                               ArrayMode mode, const ArrayGemmOptions& options = {});

}  // namespace nmsa::tb
