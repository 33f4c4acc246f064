// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// The input encoding of fuzz_rtl (docs/fuzzing.md, "The RTL fuzzer"), shared by the fuzz target
// and the seed writer, and the one-tile GEMM program both use: the golden check after every input
// runs it, and the seeds are op streams that load and run it.
//
// An input is a header of kHeaderBytes bytes (host memory timing) followed by ops. Each op is an
// opcode byte (taken modulo kNumOps) and a fixed number of operand bytes; a truncated input reads
// zeros. The ops write host memory and commands, program error ranges and back-pressure, access
// any CSR, and let cycles pass.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "nmsa/isa.hpp"
#include "nmsa/regs.hpp"
#include "nmsa/sparse_format.hpp"

namespace nmsa::fuzz {

// --- Host memory map of an input ------------------------------------------------------------
// Regions the MEM and ERROR_RANGE ops address (by region index), as in tests/rtl's one-tile
// program; commands are free to point anywhere (unwritten memory reads as zero).
constexpr std::array<std::uint64_t, 6> kRegions = {0x1000,  0x10000, 0x20000,
                                                   0x30000, 0x40000, 0x0};
constexpr std::uint64_t kCmdBase = 0x1000;  // CMD ops write slot i at kCmdBase + 32 i
// The golden check's program lives apart, where the input's regions are not.
constexpr std::uint64_t kGoldenBase = 0x1000000;

// --- Header ---------------------------------------------------------------------------------
// byte 0: Verilator seed (random reset values); 1: read latency - 1 (low 4 bits);
// 2: write latency - 1 (low 4 bits); 3: back-pressure, 2 bits per group (AR/AW ready, W ready,
// R gaps, B gaps) indexing kStall; 4: outstanding bursts of the memory - 1 (reads: bits 2:0,
// writes: bits 5:3); 5..7: reserved.
constexpr std::size_t kHeaderBytes = 8;
constexpr std::array<double, 4> kStall = {0.0, 0.05, 0.15, 0.3};
constexpr unsigned kMaxLatency = 16;

// --- Ops ------------------------------------------------------------------------------------
enum Op : std::uint8_t {
  kCsrWrite = 0,    // sel, value[4] (LE), strb (0 means 0xf): a CSR write
  kCsrRead = 1,     // sel: a CSR read
  kCmd = 2,         // slot, 32 raw command bytes at kCmdBase + 32 * slot
  kMem = 3,         // region, offset[2], n, n data bytes: host memory contents
  kWait = 4,        // cycles[2] (low 10 bits): let the device run
  kRun = 5,         // count: CMD_BASE = kCmdBase, CMD_COUNT = count, CTRL = START | IRQ_EN
  kErrorRange = 6,  // region, offset[2], bytes[2], kind: SLVERR/DECERR on read/write/both
  kBackPressure = 7,  // byte, byte: header bytes 3 and 1 anew, between cycles
  kWaitIdle = 8,    // poll STATUS until BUSY = 0, as a driver does (bounded like the end)
  kSoftReset = 9,   // CTRL = SOFT_RESET | IRQ_EN
  kNumOps = 10,
};
constexpr std::array<std::size_t, kNumOps> kOperandBytes = {6, 1, 33, 4, 2, 1, 6, 2, 0, 0};

// CSR selectors: below 128 a defined register (kKnownRegs, modulo its size); from 128 on any
// offset (sel - 128) * 4, 0x000..0x1FC, most of them undefined.
constexpr std::array<std::uint32_t, 19> kKnownRegs = {
    regs::CTRL_OFFSET,        regs::CMD_BASE_LO_OFFSET, regs::CMD_BASE_HI_OFFSET,
    regs::CMD_COUNT_OFFSET,   regs::IRQ_STATUS_OFFSET,  regs::STATUS_OFFSET,
    regs::ERR_INFO_OFFSET,    regs::ID_OFFSET,          regs::VERSION_OFFSET,
    regs::CAP_ARRAY_OFFSET,   regs::CAP_WIDTHS_OFFSET,  regs::CAP_ACT_ENTRIES_OFFSET,
    regs::CAP_WGT_RECORDS_OFFSET, regs::CAP_EPI_ENTRIES_OFFSET, regs::CAP_ACC_ENTRIES_OFFSET,
    regs::CAP_QUEUES_OFFSET,  regs::CAP_DMA_OFFSET,     regs::CAP_PIPELINE_OFFSET,
    regs::COUNTERS_BASE};

inline std::uint32_t csr_offset(std::uint8_t sel) {
  if (sel < 128) {
    if (sel % (kKnownRegs.size() + 1) == kKnownRegs.size()) {
      return regs::COUNTERS_BASE + 4u * ((sel / (kKnownRegs.size() + 1)) % (2 * regs::NUM_COUNTERS));
    }
    return kKnownRegs[sel % (kKnownRegs.size() + 1)];
  }
  return 4u * (sel - 128u);
}

// Builds inputs op by op (the seed writer).
class InputWriter {
 public:
  InputWriter(std::uint8_t seed, std::uint8_t read_lat, std::uint8_t write_lat,
              std::uint8_t stalls, std::uint8_t outstanding) {
    bytes_ = {seed, read_lat, write_lat, stalls, outstanding, 0, 0, 0};
  }
  void csr_write(std::uint8_t sel, std::uint32_t value) {
    op(kCsrWrite, {sel, static_cast<std::uint8_t>(value), static_cast<std::uint8_t>(value >> 8),
                   static_cast<std::uint8_t>(value >> 16), static_cast<std::uint8_t>(value >> 24),
                   0});
  }
  void csr_read(std::uint8_t sel) { op(kCsrRead, {sel}); }
  void command(std::uint8_t slot, const Command& c) {
    const EncodedCommand e = encode(c);
    std::vector<std::uint8_t> operands{slot};
    operands.insert(operands.end(), e.begin(), e.end());
    op(kCmd, operands);
  }
  void memory(std::uint8_t region, std::uint16_t offset, const std::vector<std::uint8_t>& data) {
    for (std::size_t at = 0; at < data.size(); at += 255) {
      const std::size_t n = std::min<std::size_t>(255, data.size() - at);
      const auto off = static_cast<std::uint16_t>(offset + at);
      std::vector<std::uint8_t> operands{region, static_cast<std::uint8_t>(off),
                                         static_cast<std::uint8_t>(off >> 8),
                                         static_cast<std::uint8_t>(n)};
      operands.insert(operands.end(), data.begin() + static_cast<std::ptrdiff_t>(at),
                      data.begin() + static_cast<std::ptrdiff_t>(at + n));
      op(kMem, operands);
    }
  }
  void run(std::uint8_t count) { op(kRun, {count}); }
  void wait_idle() { op(kWaitIdle, {}); }
  void soft_reset() { op(kSoftReset, {}); }
  void error_range(std::uint8_t region, std::uint16_t offset, std::uint16_t bytes,
                   std::uint8_t kind) {
    op(kErrorRange, {region, static_cast<std::uint8_t>(offset), static_cast<std::uint8_t>(offset >> 8),
                     static_cast<std::uint8_t>(bytes), static_cast<std::uint8_t>(bytes >> 8), kind});
  }
  const std::vector<std::uint8_t>& bytes() const { return bytes_; }

 private:
  void op(Op code, const std::vector<std::uint8_t>& operands) {
    bytes_.push_back(code);
    bytes_.insert(bytes_.end(), operands.begin(), operands.end());
  }
  std::vector<std::uint8_t> bytes_;
};

// --- A one-tile GEMM program (docs/isa.md), hand-built, for an N:M build ------------------------
struct Geometry {
  int rows, cols;
  NmPattern pattern;
};

struct TileProgram {
  struct Block {
    std::uint64_t address;
    std::vector<std::uint8_t> bytes;
  };
  std::vector<Block> data;        // activations, weight records, epilogue parameters
  std::vector<Command> commands;  // LOAD epi, LOAD act, LOAD weights, COMPUTE, STORE
  std::uint64_t out_address = 0;
  std::uint64_t out_row_bytes = 0;
  std::vector<std::uint8_t> expected;  // the output rows as the device must write them
};

// Y = X W^T + bias (INT32 output), or requantized INT8 with RELU; sparse or dense COMPUTE.
// Activation, weight, epilogue and output areas at base + 0x0/0x1000/0x2000/0x3000 (a region
// apart is given by `base`), host strides equal to the row sizes.
inline TileProgram make_tile_program(const Geometry& g, std::uint64_t base, int vectors, bool sparse,
                                     bool int32_output, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> dist(-128, 127);
  const int lanes = sparse ? g.pattern.m : g.pattern.n;
  const int k = g.rows * lanes;
  MatrixI8 x(vectors, k), w(g.cols, k);
  for (Eigen::Index i = 0; i < x.size(); ++i) x.data()[i] = static_cast<std::int8_t>(dist(rng));
  for (Eigen::Index i = 0; i < w.size(); ++i) w.data()[i] = static_cast<std::int8_t>(dist(rng));
  if (sparse) w = prune_nm(w, g.pattern);
  const int meta_bits = sparse ? g.pattern.meta_bits() : 0;
  const int record_bytes = (g.cols * g.pattern.n * 8 + g.cols * meta_bits + 63) / 64 * 8;
  const int epi_bytes = 12 * g.cols;
  const int out_row_bytes = int32_output ? 4 * g.cols : g.cols;

  TileProgram p;
  const std::uint64_t act = base, wgt = base + 0x1000, epi = base + 0x2000, out = base + 0x3000;
  // An N:M build's activation entry is Rows*M bytes; a dense COMPUTE reads its first Rows*N
  // (dense part 0).
  const int entry_bytes = g.rows * g.pattern.m;
  std::vector<std::uint8_t> act_bytes(static_cast<std::size_t>(vectors * entry_bytes), 0);
  for (int v = 0; v < vectors; ++v) {
    for (int i = 0; i < k; ++i) {
      act_bytes[static_cast<std::size_t>(v * entry_bytes + i)] = static_cast<std::uint8_t>(x(v, i));
    }
  }
  p.data.push_back({act, act_bytes});
  const CompressedWeights cw = sparse ? compress(w, g.pattern) : CompressedWeights{};
  std::vector<std::uint8_t> records(static_cast<std::size_t>(record_bytes * g.rows), 0);
  for (int r = 0; r < g.rows; ++r) {
    std::uint8_t* rec = &records[static_cast<std::size_t>(r * record_bytes)];
    std::uint64_t meta = 0;
    for (int c = 0; c < g.cols; ++c) {
      for (int j = 0; j < g.pattern.n; ++j) {
        rec[c * g.pattern.n + j] = static_cast<std::uint8_t>(
            sparse ? cw.values(c, r * g.pattern.n + j) : w(c, r * g.pattern.n + j));
      }
      if (sparse) meta |= std::uint64_t{cw.meta(c, r)} << (meta_bits * c);
    }
    for (int b = 0; b < (g.cols * meta_bits + 7) / 8; ++b) {
      rec[g.cols * g.pattern.n + b] = static_cast<std::uint8_t>(meta >> (8 * b));
    }
  }
  p.data.push_back({wgt, records});
  std::vector<std::int32_t> bias(static_cast<std::size_t>(g.cols)), mul(bias.size()), shift(bias.size());
  std::vector<std::uint8_t> epi_data(static_cast<std::size_t>(epi_bytes), 0);
  for (int c = 0; c < g.cols; ++c) {
    bias[c] = 1000 * (c % 2 == 0 ? 1 : -1) + 37 * c;
    mul[c] = 3 + c;
    shift[c] = 10 + c % 3;
    std::memcpy(&epi_data[static_cast<std::size_t>(12 * c)], &bias[c], 4);
    std::memcpy(&epi_data[static_cast<std::size_t>(12 * c + 4)], &mul[c], 4);
    std::memcpy(&epi_data[static_cast<std::size_t>(12 * c + 8)], &shift[c], 4);
  }
  p.data.push_back({epi, epi_data});

  const auto entry = static_cast<std::uint16_t>(entry_bytes);
  Command load_epi = Command::load(LoadTarget::EPILOGUE, 0, 1, static_cast<std::uint16_t>(epi_bytes), epi,
                                   static_cast<std::uint64_t>(epi_bytes));
  Command load_act = Command::load(LoadTarget::ACTIVATIONS, 0, static_cast<std::uint16_t>(vectors),
                                   entry, act, entry);
  Command load_wgt = Command::load(LoadTarget::WEIGHTS, 0, 1,
                                   static_cast<std::uint16_t>(record_bytes * g.rows), wgt,
                                   static_cast<std::uint64_t>(record_bytes * g.rows));
  load_wgt.push_next = true;
  Command compute = Command::compute(0, static_cast<std::uint16_t>(vectors), 0, 1, 0);
  compute.dense = !sparse;
  compute.pop_prev = true;
  compute.push_next = true;
  Command store = Command::store(0, static_cast<std::uint16_t>(vectors), 0, out,
                                 static_cast<std::uint64_t>(out_row_bytes), int32_output,
                                 /*relu=*/!int32_output);
  store.pop_prev = true;
  p.commands = {load_epi, load_act, load_wgt, compute, store};
  p.out_address = out;
  p.out_row_bytes = static_cast<std::uint64_t>(out_row_bytes);

  // In dense mode the device multiplies the first Rows*N bytes of each entry (dense part 0) with
  // the N values of each PE, which is what w holds at those positions.
  // X W^T in plain loops (golden::gemm_i8's definition; Eigen's product in golden.cpp would add
  // 20 s to the fuzz build for 128 multiply-adds).
  std::vector<std::vector<std::int32_t>> acc(vectors, std::vector<std::int32_t>(g.cols, 0));
  for (int v = 0; v < vectors; ++v) {
    for (int c = 0; c < g.cols; ++c) {
      for (int i = 0; i < k; ++i) acc[v][c] += std::int32_t{x(v, i)} * std::int32_t{w(c, i)};
    }
  }
  for (int v = 0; v < vectors; ++v) {
    for (int c = 0; c < g.cols; ++c) {
      if (int32_output) {
        const std::int32_t y = static_cast<std::int32_t>(
            static_cast<std::uint32_t>(acc[v][c]) + static_cast<std::uint32_t>(bias[c]));
        std::uint8_t b[4];
        std::memcpy(b, &y, 4);
        p.expected.insert(p.expected.end(), b, b + 4);
      } else {
        const std::int64_t prod = (std::int64_t{acc[v][c]} + bias[c]) * mul[c];
        const int s = shift[c];
        std::int64_t q = s == 0 ? prod : (prod + (std::int64_t{1} << (s - 1))) >> s;
        q = std::min<std::int64_t>(127, std::max<std::int64_t>(-128, q));
        q = std::max<std::int64_t>(q, 0);
        p.expected.push_back(static_cast<std::uint8_t>(static_cast<std::int8_t>(q)));
      }
    }
  }
  return p;
}

}  // namespace nmsa::fuzz
