// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// Several GEMM programs as one command stream: a network's consecutive device layers run from one
// START, each layer reading the previous layer's output where its STOREs left it in host memory
// (GemmOptions::input and min_output_row_stride, gemm_program.hpp), with no host round trip in
// between.
//
// The ISA has no STORE-to-LOAD token, so the order between layers goes through the compute
// engine, as every other LOAD<->STORE edge of a program does. Between program i and i + 1 the
// chain puts a barrier COMPUTE:
//
//   program i's last STORE         + PUSH_PREV   (store -> compute: "all of layer i is written")
//   barrier COMPUTE, dense, 1 beat   POP_NEXT + PUSH_PREV (compute -> load: "buffers free")
//   program i + 1's first LOAD     + POP_NEXT
//
// The engines run their queues in order, so everything of program i + 1 on every engine follows
// everything of program i on it, and its first LOAD (with all loads after it) waits until layer
// i's last result is in host memory and layer i's computes are done with the scratchpads. The
// barrier itself reads weight records 0..Rows-1 and activation entry 0, whatever they hold (dense
// mode: no metadata to decode), and overwrites accumulator row 0, which no STORE reads before
// program i + 1's computes overwrite it. It costs about Rows + array latency cycles a layer.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "nmsa/cycle_model.hpp"
#include "nmsa/device_caps.hpp"
#include "nmsa/gemm_program.hpp"
#include "nmsa/host_memory.hpp"
#include "nmsa/isa.hpp"
#include "nmsa/types.hpp"

namespace nmsa {

// The commands of `programs` in order with a barrier between each two. Throws
// std::invalid_argument for no program, a null one, a program without a STORE or LOAD, or one
// whose last STORE already pushes or whose first LOAD already pops a token (the chain could not
// add its own).
std::vector<Command> chain_commands(const std::vector<const GemmProgram*>& programs);

// One layer of a chain: its weights [N_out x K] (K the previous layer's N_out) and how it runs.
// Every layer but the last needs an epilogue: the next layer reads INT8.
struct ChainLayer {
  MatrixI8 weights;
  GemmOptions options;
};

class ProgramChain {
 public:
  // Compiles the layers into `mem` (which must outlive the chain): layer 0 reads x, every later
  // layer the previous one's output (GemmOptions::input, the previous output's row stride made
  // at least this layer's padded K), then writes the chained stream. Throws
  // std::invalid_argument naming the layer for no layers, a K that does not match the previous
  // N_out, a hidden layer without an epilogue, or an input given in a layer's options.
  ProgramChain(const DeviceCaps& caps, const MatrixI8& x, std::vector<ChainLayer> layers,
               HostMemory& mem);

  std::size_t size() const { return programs_.size(); }
  const GemmProgram& program(std::size_t i) const { return *programs_.at(i); }
  // The last layer's result (GemmProgram::read_output).
  MatrixI32 read_output() const { return programs_.back()->read_output(); }

  std::uint64_t command_address() const { return cmd_addr_; }
  std::uint32_t command_count() const { return static_cast<std::uint32_t>(commands_.size()); }
  const std::vector<Command>& commands() const { return commands_; }
  // Layer i's commands are [first_command(i), first_command(i + 1)): its program's, with the
  // barrier it waits behind (none for layer 0); first_command(size()) is command_count().
  std::size_t first_command(std::size_t layer) const { return first_command_.at(layer); }
  // The layer whose commands hold stream index `command`.
  std::size_t layer_of_command(std::size_t command) const;

  // The whole stream's cycles by the cycle model (exact against the RTL, as for one program), the
  // ideal cycles those of all its GEMMs.
  CyclePrediction predict_cycles(const PerfModelParams& params = {}) const;
  // `prediction` (of this chain) split into one share per layer: layer i's share runs from the
  // end of layer i - 1's last STORE (from START for layer 0) to the end of its own; the last
  // layer's runs to the done interrupt. The shares sum to prediction.total.
  std::vector<std::uint64_t> layer_cycles(const CyclePrediction& prediction) const;

 private:
  DeviceCaps caps_;
  std::vector<std::unique_ptr<GemmProgram>> programs_;
  std::vector<Command> commands_;
  std::vector<std::size_t> first_command_;
  std::uint64_t cmd_addr_ = 0;
};

}  // namespace nmsa
