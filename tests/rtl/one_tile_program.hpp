// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// A hand-built program of one tile for nmsa_top (any configuration with AXI data width 64): the
// host memory laid out exactly as docs/isa.md says, independently of the compiler in libnmsa.
// The smoke and error tests start from it and break one thing at a time. The tile is sparse, or
// dense on a device without N:M support (CAP_ARRAY.SPARSE = 0).
#pragma once

#include <cstring>
#include <random>
#include <vector>

#include "../common/random_matrix.hpp"
#include "nmsa/golden.hpp"
#include "nmsa/isa.hpp"
#include "nmsa/regs.hpp"
#include "nmsa/sparse_format.hpp"
#include "nmsa/tb/top_sim.hpp"

namespace nmsa::testing {

struct OneTileProgram {
  static constexpr std::uint64_t kCmdBase = 0x1000;
  static constexpr std::uint64_t kActBase = 0x10000;
  static constexpr std::uint64_t kWgtBase = 0x20000;
  static constexpr std::uint64_t kEpiBase = 0x30000;
  static constexpr std::uint64_t kOutBase = 0x40000;

  int rows = 0, cols = 0, vectors = 0;
  int bus_bytes = 8;  // the AXI data width, in bytes
  NmPattern pattern;
  bool sparse = true;
  MatrixI8 x, w;
  std::vector<Command> commands;  // LOAD epi, LOAD act, LOAD weights, COMPUTE, STORE

  // Reads the geometry from the capability registers and lays out a random tile.
  OneTileProgram(tb::TopSim& sim, std::mt19937_64& rng, int vectors_ = 12) : vectors(vectors_) {
    const std::uint32_t cap = sim.read_reg(regs::CAP_ARRAY_OFFSET);
    rows = static_cast<int>((cap & regs::CAP_ARRAY_ROWS_MASK) >> regs::CAP_ARRAY_ROWS_SHIFT);
    cols = static_cast<int>((cap & regs::CAP_ARRAY_COLS_MASK) >> regs::CAP_ARRAY_COLS_SHIFT);
    pattern.n = static_cast<int>((cap & regs::CAP_ARRAY_N_MASK) >> regs::CAP_ARRAY_N_SHIFT);
    pattern.m = static_cast<int>((cap & regs::CAP_ARRAY_M_MASK) >> regs::CAP_ARRAY_M_SHIFT);
    sparse = (cap & regs::CAP_ARRAY_SPARSE_MASK) != 0;
    const std::uint32_t widths = sim.read_reg(regs::CAP_WIDTHS_OFFSET);
    bus_bytes = static_cast<int>((widths & regs::CAP_WIDTHS_AXI_DATA_W_MASK) >>
                                 regs::CAP_WIDTHS_AXI_DATA_W_SHIFT) / 8;
    const int k = rows * lanes();
    x = random_i8(vectors, k, rng);
    w = random_i8(cols, k, rng);
    if (sparse) w = prune_nm(w, pattern);
    write_memory(sim.memory());

    const auto entry_bytes = static_cast<std::uint16_t>(k);
    Command load_epi = Command::load(LoadTarget::EPILOGUE, 0, 1, epi_bytes(), kEpiBase, epi_bytes());
    Command load_act = Command::load(LoadTarget::ACTIVATIONS, 0, static_cast<std::uint16_t>(vectors),
                                     entry_bytes, kActBase, entry_bytes);
    Command load_wgt = Command::load(LoadTarget::WEIGHTS, 0, 1,
                                     static_cast<std::uint16_t>(record_bytes() * rows), kWgtBase,
                                     record_bytes() * rows);
    load_wgt.push_next = true;
    Command compute = Command::compute(0, static_cast<std::uint16_t>(vectors), 0, 1, 0);
    compute.dense = !sparse;
    compute.pop_prev = true;
    compute.push_next = true;
    Command store = Command::store(0, static_cast<std::uint16_t>(vectors), 0, kOutBase,
                                   out_row_bytes(), /*int32_output=*/true);
    store.pop_prev = true;
    commands = {load_epi, load_act, load_wgt, compute, store};
  }

  std::uint16_t epi_bytes() const { return static_cast<std::uint16_t>(12 * cols); }
  std::uint16_t out_row_bytes() const { return static_cast<std::uint16_t>(4 * cols); }
  int lanes() const { return sparse ? pattern.m : pattern.n; }  // activations per PE row
  int meta_bits() const { return sparse ? pattern.meta_bits() : 0; }  // per column in a record
  std::uint16_t record_bytes() const {
    const int payload_bits = cols * pattern.n * 8 + cols * meta_bits();
    const int word_bits = 8 * bus_bytes;
    return static_cast<std::uint16_t>((payload_bits + word_bits - 1) / word_bits * bus_bytes);
  }
  std::uint64_t record_address(int pe_row) const {
    return kWgtBase + static_cast<std::uint64_t>(record_bytes()) * pe_row;
  }

  void write_memory(tb::AxiMemory& mem) const {
    mem.write_bytes(kActBase, reinterpret_cast<const std::uint8_t*>(x.data()),
                    static_cast<std::size_t>(x.size()));
    // Sparse: the compressed values and metadata; dense: the N weights of each PE as they are.
    const CompressedWeights cw = sparse ? compress(w, pattern) : CompressedWeights{};
    for (int r = 0; r < rows; ++r) {
      std::vector<std::uint8_t> record(record_bytes(), 0);
      std::uint64_t meta = 0;
      for (int c = 0; c < cols; ++c) {
        for (int j = 0; j < pattern.n; ++j) {
          record[c * pattern.n + j] = static_cast<std::uint8_t>(
              sparse ? cw.values(c, r * pattern.n + j) : w(c, r * pattern.n + j));
        }
        if (sparse) meta |= std::uint64_t{cw.meta(c, r)} << (meta_bits() * c);
      }
      for (int b = 0; b < (cols * meta_bits() + 7) / 8; ++b) {
        record[cols * pattern.n + b] = static_cast<std::uint8_t>(meta >> (8 * b));
      }
      mem.write_bytes(record_address(r), record);
    }
    std::vector<std::uint8_t> epi(epi_bytes(), 0);
    for (int c = 0; c < cols; ++c) {
      const std::int32_t bias = 1000 + c;
      std::memcpy(&epi[12 * c], &bias, 4);
    }
    mem.write_bytes(kEpiBase, epi);
  }

  // Overwrites the metadata field of PE (row, col) in host memory.
  void set_meta(tb::AxiMemory& mem, int pe_row, int col, std::uint8_t code) const {
    const std::uint64_t meta_addr = record_address(pe_row) + cols * pattern.n;
    std::vector<std::uint8_t> bytes = mem.read_bytes(meta_addr, 8);
    std::uint64_t meta = 0;
    for (int b = 0; b < 8; ++b) meta |= std::uint64_t{bytes[b]} << (8 * b);
    const std::uint64_t mask = ((1ull << meta_bits()) - 1) << (meta_bits() * col);
    meta = (meta & ~mask) | (std::uint64_t{code} << (meta_bits() * col));
    for (int b = 0; b < 8; ++b) bytes[b] = static_cast<std::uint8_t>(meta >> (8 * b));
    mem.write_bytes(meta_addr, bytes);
  }

  void write_commands(tb::AxiMemory& mem, const std::vector<Command>& cmds) const {
    for (std::size_t i = 0; i < cmds.size(); ++i) {
      const auto bytes = encode(cmds[i]);
      mem.write_bytes(kCmdBase + 32 * i, bytes.data(), bytes.size());
    }
  }

  // Writes `cmds`, starts the device and waits until it is idle; returns STATUS.
  std::uint32_t run(tb::TopSim& sim, const std::vector<Command>& cmds) const {
    write_commands(sim.memory(), cmds);
    sim.write_reg(regs::CMD_BASE_LO_OFFSET, static_cast<std::uint32_t>(kCmdBase));
    sim.write_reg(regs::CMD_BASE_HI_OFFSET, 0);
    sim.write_reg(regs::CMD_COUNT_OFFSET, static_cast<std::uint32_t>(cmds.size()));
    sim.write_reg(regs::CTRL_OFFSET, regs::CTRL_START_MASK | regs::CTRL_IRQ_EN_MASK);
    sim.wait_idle(200000, 8);
    return sim.read_reg(regs::STATUS_OFFSET);
  }
  std::uint32_t run(tb::TopSim& sim) const { return run(sim, commands); }

  // The INT32 results in host memory equal X * W^T + bias.
  ::testing::AssertionResult output_correct(tb::AxiMemory& mem) const {
    const MatrixI32 want = golden::gemm_i8(x, w);
    for (int v = 0; v < vectors; ++v) {
      for (int c = 0; c < cols; ++c) {
        std::int32_t got = 0;
        mem.read_bytes(kOutBase + static_cast<std::uint64_t>(out_row_bytes()) * v + 4 * c,
                       reinterpret_cast<std::uint8_t*>(&got), 4);
        if (got != want(v, c) + 1000 + c) {
          return ::testing::AssertionFailure()
                 << "vector " << v << " column " << c << ": got " << got << ", want "
                 << want(v, c) + 1000 + c;
        }
      }
    }
    return ::testing::AssertionSuccess();
  }

  void clear_output(tb::AxiMemory& mem) const {
    mem.write_bytes(kOutBase, std::vector<std::uint8_t>(out_row_bytes() * vectors, 0xEE));
  }
};

inline unsigned err_code(std::uint32_t status) {
  return (status & regs::STATUS_ERR_CODE_MASK) >> regs::STATUS_ERR_CODE_SHIFT;
}

}  // namespace nmsa::testing
