// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// The GEMM compiler: Y = X * W^T (X [rows x K] INT8, W [N_out x K] INT8, N:M sparse in sparse
// mode) on an nmsa device. It lays the operands out in host memory in the device's formats
// (docs/isa.md, docs/format.md), cuts the GEMM into tiles that fit every buffer of the device,
// and emits the command stream with dependency tokens so that loads, compute and stores overlap.
//
// Tiling. A tile is one COMPUTE: one weight tile (Rows records: output block b of Cols channels,
// K-tile kt) streamed against the activation rows of a row tile (R rows = beats). Loop nest:
//
//   for each row tile (R rows)
//     for each group of B output blocks           (B * R accumulator rows live)
//       for each activation block (c K-chunks)     (serpentine: odd groups walk K backwards)
//         for each K-chunk of the block, for each dense part (dense mode), for each block b:
//           COMPUTE (b, kt) over the R rows; the last one of (row tile, b) is followed by its STORE
//
// Buffers: the activation scratchpad is a cache of slots of R*c entries (one activation block of
// one row tile), replaced by Belady's rule (the block used farthest in the future goes first),
// so a row tile's whole K stays resident when it fits and groups reuse what they can; the weight
// scratchpad is two halves that alternate between batches of consecutive weight tiles (one LOAD
// each); the accumulator SRAM is a ring of slots of R rows, one per live output block, reused as
// soon as its STORE is done; the epilogue buffer holds every output block's parameters when they
// fit, otherwise it is an LRU cache refilled per block.
//
// Tokens. The compiler records which command reads and writes which buffer slot; every
// cross-engine hazard (read after write, write after read) becomes an ordering edge; LOAD<->STORE
// edges (epilogue parameters) are routed through the nearest COMPUTE. Each consumer pops one
// token when its newest required producer moved on, and that producer pushes it, so every
// counter is balanced, every pop follows its push in stream order (no deadlock with any queue
// depth), and the functional model's hazard check finds nothing to report.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nmsa/cycle_model.hpp"
#include "nmsa/device_caps.hpp"
#include "nmsa/epilogue.hpp"
#include "nmsa/host_memory.hpp"
#include "nmsa/isa.hpp"
#include "nmsa/types.hpp"

namespace nmsa {

enum class GemmMode { SPARSE, DENSE };
std::string_view to_string(GemmMode m);

struct TilingPlan {
  int beats_per_tile = 0;    // R: activation rows per row tile (the last row tile may be shorter)
  int blocks_per_group = 0;  // B: output blocks whose accumulators are live together
  int chunks_per_act_block = 0;  // c: K-chunks (activation entries) per row of one activation slot
  int weight_batch_tiles = 0;  // most weight tiles per weight LOAD (<= half the weight scratchpad)
  std::string describe() const;
  bool operator==(const TilingPlan& o) const;
};

// Activations another program's STORE writes: [rows x K] INT8 at `address`, row r at
// address + r * row_stride (ProgramChain, program_chain.hpp).
struct ExternalInput {
  std::uint64_t address = 0;
  std::uint64_t row_stride = 0;
};

struct GemmOptions {
  GemmMode mode = GemmMode::SPARSE;
  std::optional<EpilogueParams> epilogue;  // INT8 output when set; INT32 accumulators otherwise
  bool relu = false;
  std::optional<TilingPlan> plan;  // default: the best of a few candidate plans
  // The host memory the program will run with: the candidate plans are then ranked by their
  // predicted cycles on it (predict_cycles). Without it they are ranked by a coarse estimate, as
  // before this option existed (see tile_planner.cpp).
  std::optional<PerfModelParams> memory;
  // Read the activations from there instead of writing them (the constructor without X). Every
  // activation LOAD reads whole K-chunks, so each row's bytes from K up to the padded K are read
  // too: the row stride must be at least that padded K (multiplied by zero weights, what those
  // bytes hold never changes the result).
  std::optional<ExternalInput> input;
  // The output's host row stride is at least this (rounded up as the device needs), so that a
  // following program can read this output as its ExternalInput.
  std::uint64_t min_output_row_stride = 0;
};

// Bytes the program moves (what the device's DMA counters will show).
struct ProgramStats {
  std::uint64_t commands = 0;
  std::uint64_t compute_tiles = 0;
  std::uint64_t beats = 0;
  std::uint64_t command_bytes = 0;
  std::uint64_t act_bytes = 0;
  std::uint64_t weight_bytes = 0;  // whole records, metadata included
  std::uint64_t meta_bytes = 0;    // the metadata part of weight_bytes
  std::uint64_t epilogue_bytes = 0;
  std::uint64_t output_bytes = 0;
  std::uint64_t dma_read_bytes() const {
    return command_bytes + act_bytes + weight_bytes + epilogue_bytes;
  }
  std::uint64_t dma_bytes() const { return dma_read_bytes() + output_bytes; }
};

class GemmProgram {
 public:
  // Compiles and writes everything (operands, epilogue, output buffer, commands) into `mem`,
  // which must outlive the program. Throws std::invalid_argument naming the problem for bad
  // shapes, weights that are not N:M sparse in sparse mode, mismatched epilogue parameters, or a
  // device whose buffers cannot hold a single minimal tile.
  GemmProgram(const DeviceCaps& caps, const MatrixI8& x, const MatrixI8& w,
              const GemmOptions& options, HostMemory& mem);
  // The same for `rows` activation rows already in memory at options.input, which must be set
  // (and is checked: aligned to the AXI word, its stride a whole number of words and at least
  // padded_k()).
  GemmProgram(const DeviceCaps& caps, Eigen::Index rows, const MatrixI8& w,
              const GemmOptions& options, HostMemory& mem);

  // K padded to whole activation entries: the bytes of one activation row every LOAD reads.
  static std::uint64_t padded_k(const DeviceCaps& caps, Eigen::Index k);

  std::uint64_t command_address() const { return cmd_addr_; }
  std::uint32_t command_count() const { return static_cast<std::uint32_t>(commands_.size()); }
  const std::vector<Command>& commands() const { return commands_; }

  // The result [rows x N_out] read back from host memory: INT8 values (as int32) with an
  // epilogue, INT32 accumulators otherwise.
  MatrixI32 read_output() const;
  bool int32_output() const { return int32_output_; }

  const TilingPlan& plan() const { return plan_; }
  const ProgramStats& stats() const { return stats_; }
  CyclePrediction predict_cycles(const PerfModelParams& params = {}) const;
  // The GEMM as the cycle model's figures need it (predict_stream_cycles).
  GemmShape shape() const { return GemmShape{rows_, k_, n_out_, dense_}; }

  // Layout in host memory.
  std::uint64_t activation_address() const { return x_addr_; }
  std::uint64_t activation_row_stride() const { return x_stride_; }
  std::uint64_t weight_address() const { return w_addr_; }
  std::uint64_t epilogue_address() const { return e_addr_; }
  std::uint64_t output_address() const { return o_addr_; }
  std::uint64_t output_row_stride() const { return out_stride_; }
  // Host address of the weight record of PE row `pe_row` of tile (output block, K-tile).
  std::uint64_t weight_record_address(int block, int k_tile, int pe_row) const;

  // Which tile every COMPUTE computes (for tests and traces).
  struct TileRef {
    std::uint32_t command = 0;
    int row_tile = 0;
    int block = 0;
    int k_tile = 0;
  };
  const std::vector<TileRef>& compute_tiles() const { return tiles_; }

 private:
  // Both constructors: x is null for an external input.
  void build(const MatrixI8* x, Eigen::Index rows, const MatrixI8& w, const GemmOptions& options,
             HostMemory& mem);

  DeviceCaps caps_;
  HostMemory* mem_;
  Eigen::Index rows_ = 0, k_ = 0, n_out_ = 0;
  int blocks_ = 0, k_tiles_ = 0;
  std::uint64_t k_pad_ = 0;
  std::uint64_t x_stride_ = 0;
  bool dense_ = false;
  bool int32_output_ = false;
  TilingPlan plan_;
  std::vector<Command> commands_;
  std::vector<TileRef> tiles_;
  ProgramStats stats_;
  std::uint64_t x_addr_ = 0, w_addr_ = 0, e_addr_ = 0, o_addr_ = 0, cmd_addr_ = 0;
  std::uint64_t out_stride_ = 0, out_block_pitch_ = 0;
};

// Plans and predicts without writing memory: the plan compile would choose (or `options.plan`)
// and its predicted cycles and bytes, for GEMMs of shape rows x K x N_out.
struct GemmEstimate {
  TilingPlan plan;
  ProgramStats stats;
  CyclePrediction cycles;
};
// `params` describes the host memory for the prediction (and for the plan's estimate when
// `options.memory` is not given).
GemmEstimate estimate_gemm(const DeviceCaps& caps, Eigen::Index rows, Eigen::Index k,
                           Eigen::Index n_out, const GemmOptions& options,
                           const PerfModelParams& params = {});

}  // namespace nmsa
