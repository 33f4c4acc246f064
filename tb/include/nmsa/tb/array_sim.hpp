// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// A cycle-level handle on one Verilated nmsa_array configuration. Every named configuration of
// rtl/configs.json is compiled into its own model; this interface hides which one, so tests and
// benchmarks run unchanged on all of them.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nmsa/types.hpp"

namespace nmsa::tb {

struct ArrayGeometry {
  // Pipeline stages of one PE (nmsa_pkg::PeLatency; the array tests measure the latency).
  static constexpr unsigned kPeLatency = 5;

  unsigned rows = 0;
  unsigned cols = 0;
  NmPattern pattern;
  unsigned data_w = 8;
  unsigned acc_w = 32;
  bool sparse = true;  // false: the dense-only array (Sparse = 0)

  // Cycles from a beat entering to its partial sums leaving (docs/architecture.md).
  unsigned latency() const { return rows + cols + kPeLatency - 2; }
  // Activation lanes per PE row: M, or N on the dense-only array.
  unsigned lanes() const { return static_cast<unsigned>(sparse ? pattern.m : pattern.n); }
  // K-positions covered by one pass: Rows*M in sparse mode, Rows*N in dense mode.
  unsigned chunk_k(bool dense) const {
    return rows * static_cast<unsigned>(dense ? pattern.n : pattern.m);
  }
  // Peak dense-equivalent MACs per cycle: in sparse mode, or dense on the dense-only array.
  std::uint64_t peak_macs_per_cycle() const {
    return std::uint64_t{rows} * cols * static_cast<unsigned>(sparse ? pattern.m : pattern.n);
  }
};

// The array's inputs during one cycle.
struct ArrayInputs {
  bool wload_valid = false;
  unsigned wload_row = 0;
  bool wload_bank = false;
  bool wload_dense = false;
  std::vector<std::int8_t> wload_val;    // [cols * N]: column c, slot j at c*N + j
  std::vector<std::uint8_t> wload_meta;  // [cols]: the metadata field of column c
  bool in_valid = false;
  bool in_bank = false;
  std::vector<std::int8_t> in_act;       // [rows * lanes]: lane r*lanes + l
};

// The array's outputs during one cycle (before its rising edge).
struct ArrayOutputs {
  bool out_valid = false;
  bool out_err = false;
  bool wload_illegal = false;
  bool bank_busy[2] = {false, false};
  std::vector<std::int32_t> out_psum;    // [cols]
};

class ArraySim {
 public:
  virtual ~ArraySim() = default;
  virtual const ArrayGeometry& geometry() const = 0;
  // Holds reset for `cycles` cycles with all inputs idle.
  virtual void reset(unsigned cycles) = 0;
  void reset() { reset(4); }
  // Drives `in` for one cycle, returns what the outputs showed during it, then clocks.
  virtual const ArrayOutputs& step(const ArrayInputs& in) = 0;
  // bank_busy_o[bank] in the coming cycle (it depends on registers only), for deciding that
  // cycle's weight load.
  virtual bool bank_busy(unsigned bank) const = 0;
  virtual std::uint64_t cycles() const = 0;

  // Inputs sized for this geometry, all idle.
  ArrayInputs idle_inputs() const;
};

// Both defined in the file that CMake generates from rtl/configs.json (one entry per model).

// Names of the compiled configurations, in rtl/configs.json order.
std::vector<std::string> array_config_names();

// Builds the named configuration; registers are randomized from `seed` before reset.
// Throws std::invalid_argument naming the configuration if it was not compiled in.
std::unique_ptr<ArraySim> make_array_sim(const std::string& config, std::uint64_t seed);

}  // namespace nmsa::tb
