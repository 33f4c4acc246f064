// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// nmsa_soak: the fault-injection soak of the accelerator (docs/verification.md, "Soak"). Each
// seed compiles a random legal GEMM with libnmsa, runs it on one Verilated top configuration
// under random AXI latency and back-pressure, and injects one fault chosen by the seed: none, an
// AXI SLVERR/DECERR on the command fetch, a LOAD or a STORE, a long stall of one AXI channel, a
// soft or a hard reset mid-run, illegal metadata, or a corrupt command. Every run is checked:
// the fault is reported with the code and command index of docs/errors.md (or, for none and
// stalls, the result is bit-exact); DONE never comes with a wrong result; nothing is written
// outside the output buffer; the AXI monitors saw no violation; and after the fault (soft reset,
// or the hard reset itself) the same GEMM runs again bit-exact. All randomness comes from the
// seed; a failure prints the command that re-runs that seed alone.
//
//   nmsa_soak --config small --first-seed 1 --seeds 50 --out shard.json
#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "../common/random_matrix.hpp"
#include "nmsa/device_caps.hpp"
#include "nmsa/epilogue.hpp"
#include "nmsa/gemm_program.hpp"
#include "nmsa/golden.hpp"
#include "nmsa/regs.hpp"
#include "nmsa/sparse_format.hpp"
#include "nmsa/tb/sim_context.hpp"
#include "nmsa/tb/top_sim.hpp"

#ifdef NMSA_SOAK_MUTANTS
// nmsa_soak_mutants: the same soak on the `small` top built from tests/mutants/mutants.json, each
// planted bug switched on by its plusarg (NMSA_PLUSARGS).
#include "Vnmsa_top_small_mutants.h"
#include "nmsa/tb/verilated_top_sim.hpp"
#endif

namespace nmsa {
namespace {

// The Verilated top this soak runs: the built configuration of that name, or the mutant model.
std::unique_ptr<tb::TopSim> make_sim(const std::string& config, const tb::AxiMemoryConfig& memory,
                                     std::uint64_t seed) {
#ifdef NMSA_SOAK_MUTANTS
  if (config != "small") {
    throw std::invalid_argument("the mutant model is of the small configuration, not " + config);
  }
  return std::make_unique<tb::VerilatedTopSim<Vnmsa_top_small_mutants>>(memory.data_bytes, memory,
                                                                       seed);
#else
  return tb::make_top_sim(config, memory, seed);
#endif
}

namespace r = regs;

enum class Fault {
  kNone,
  kFetchError,   // SLVERR/DECERR on a beat of the command fetch
  kLoadError,    // on a beat a LOAD reads (activations, weights or epilogue parameters)
  kStoreError,   // on a write a STORE makes
  kStall,        // one AXI channel stalled for thousands of cycles
  kSoftReset,    // CTRL.SOFT_RESET mid-run
  kHardReset,    // rst_ni mid-run
  kIllegalMeta,  // an illegal metadata field in a weight record a sparse COMPUTE loads
  kBadOpcode,    // an undefined opcode or LOAD target
  kBadRange,     // a zero count or a first entry past every buffer
  kStartWhileBusy,  // CTRL.START written again while the run is busy
  kBadBase,         // a CMD_BASE that is not beat-aligned at START
  kBadDeps,         // a dependency flag a LOAD or STORE may not use, or a push left out
};
constexpr std::array<Fault, 13> kFaults = {
    Fault::kNone,      Fault::kFetchError, Fault::kLoadError,       Fault::kStoreError,
    Fault::kStall,     Fault::kSoftReset,  Fault::kHardReset,       Fault::kIllegalMeta,
    Fault::kBadOpcode, Fault::kBadRange,   Fault::kStartWhileBusy, Fault::kBadBase,
    Fault::kBadDeps};

const char* to_string(Fault f) {
  switch (f) {
    case Fault::kNone:
      return "none";
    case Fault::kFetchError:
      return "axi_error_fetch";
    case Fault::kLoadError:
      return "axi_error_load";
    case Fault::kStoreError:
      return "axi_error_store";
    case Fault::kStall:
      return "stall";
    case Fault::kSoftReset:
      return "soft_reset";
    case Fault::kHardReset:
      return "hard_reset";
    case Fault::kIllegalMeta:
      return "illegal_meta";
    case Fault::kBadOpcode:
      return "bad_opcode";
    case Fault::kBadRange:
      return "bad_range";
    case Fault::kStartWhileBusy:
      return "start_while_busy";
    case Fault::kBadBase:
      return "bad_base";
    case Fault::kBadDeps:
      return "bad_deps";
  }
  return "?";
}

// Faults that must end in STATUS.ERROR with a given code and command index.
bool is_error_fault(Fault f) {
  return f == Fault::kFetchError || f == Fault::kLoadError || f == Fault::kStoreError ||
         f == Fault::kIllegalMeta || f == Fault::kBadOpcode || f == Fault::kBadRange ||
         f == Fault::kStartWhileBusy || f == Fault::kBadBase || f == Fault::kBadDeps;
}
bool is_reset_fault(Fault f) { return f == Fault::kSoftReset || f == Fault::kHardReset; }

struct Tally {
  std::uint64_t seeds = 0;
  std::uint64_t cycles = 0;
  std::map<std::string, std::uint64_t> injected, detected, exact, missed;
  std::uint64_t lost_results = 0;
  std::uint64_t recovered_at_irq = 0;      // soft resets written at the interrupt
  std::uint64_t recovered_while_busy = 0;  // of which while STATUS.BUSY was still 1
  nlohmann::json failures = nlohmann::json::array();
};

// One seed's case: the GEMM, the memory, the fault and where it strikes.
struct SoakCase {
  MatrixI8 x, w;
  GemmOptions options;
  tb::AxiMemoryConfig memory;
  Fault fault = Fault::kNone;
  // Where and when.
  std::uint64_t when = 0;  // cycles after START (stall, resets)
  tb::AxiChannel channel = tb::AxiChannel::kAr;
  std::uint64_t stall_cycles = 0;
  unsigned reset_cycles = 1;
  tb::AxiResp resp = tb::AxiResp::kSlvErr;
  std::uint64_t error_addr = 0;  // one byte; the beat holding it answers `resp`
  // Faults written into memory: illegal metadata in column `meta_column` of the weight record
  // at `record_addr`; a corrupt command (an opcode, a LOAD target, a zero count or a first entry
  // of 0xffff).
  std::uint64_t record_addr = 0;
  int meta_column = 0;
  unsigned bad_value = 0;       // the illegal metadata code, opcode or LOAD target
  bool corrupt_target = false;  // bad_opcode: the LOAD target rather than the opcode
  bool zero_count = false;      // bad_range: a zero count rather than a first entry of 0xffff
  std::uint32_t command = 0;    // the command that must be blamed (fetch: at most this)
  std::uint64_t base_offset = 0;  // bad_base: CMD_BASE this many bytes off its beat
  // bad_deps: `command` is written as `deps_command`, itself with other dependency flags. With
  // `deps_unbalanced` a push was left out, so some pop can never be served: BAD_DEPS at whichever
  // command the device finds first (the last one when the stream is fetched, or the oldest
  // waiting one of a deadlock); otherwise a flag the command's engine may not use, BAD_DEPS at it.
  Command deps_command;
  bool deps_unbalanced = false;
  std::string detail;
  // After an error, recover at once: read STATUS and ERR_INFO at the interrupt and write
  // CTRL.SOFT_RESET while bursts may still be in flight, instead of waiting for BUSY to drop.
  bool early_recovery = false;
};

class SeedRun {
 public:
  // `sabotage` breaks the run behind the device's back, to show that the checks fail
  // (docs/verification.md, "Soak"): "output" changes a byte of a result reported as DONE,
  // "outside" one next to the program's memory, "silent" leaves out the injected fault.
  SeedRun(const std::string& config, const DeviceCaps& caps, std::uint64_t seed,
          std::string sabotage)
      : config_(config),
        caps_(caps),
        seed_(seed),
        rng_(mix(config, seed)),
        sabotage_(std::move(sabotage)) {}

  // Runs the seed; returns "" or what went wrong. Adds to `tally`.
  std::string run(Tally& tally, bool verbose);

 private:
  int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  double uniform(double lo, double hi) {
    return std::uniform_real_distribution<double>(lo, hi)(rng_);
  }
  void make_gemm(Fault fault);
  void place_fault(const GemmProgram& program);
  void place_bad_deps(const std::vector<Command>& cmds);
  MatrixI32 golden() const;

  struct Outcome {
    std::uint32_t status = 0;
    std::uint32_t err_info = 0;
    bool injected = true;      // a timed fault struck while the stream ran
    bool recovered = false;    // the soft reset after the error was written at the interrupt
    bool busy_at_irq = false;  // STATUS.BUSY was 1 then
    std::string problem;       // a hang or an exception
  };
  Outcome execute(tb::TopSim& sim, HostMemory& host, const GemmProgram& program, bool with_fault);
  void patch_device(tb::AxiMemory& mem, const GemmProgram& program);
  std::string check_memory(tb::TopSim& sim, const GemmProgram& program,
                           const std::vector<std::uint8_t>& before);

  // Each configuration draws other cases from the same seed numbers.
  static std::uint64_t mix(const std::string& config, std::uint64_t seed) {
    std::uint64_t h = 1469598103934665603ull;  // FNV-1a of the name
    for (const char ch : config) h = (h ^ static_cast<unsigned char>(ch)) * 1099511628211ull;
    return h ^ (seed * 0x9e3779b97f4a7c15ull);
  }

  std::string config_;
  DeviceCaps caps_;
  std::uint64_t seed_;
  std::mt19937_64 rng_;
  std::string sabotage_;
  SoakCase c_;
  std::uint64_t lo_ = 0, hi_ = 0;  // the snapshot window around the program's memory
  std::uint64_t predicted_ = 0;
};

void SeedRun::make_gemm(Fault fault) {
  // Small shapes: a seed takes a fraction of a second on `small` and `default`. One seed in
  // eight takes a larger one, for plans with several row tiles and activation blocks.
  const int scale = pick(0, 7) == 0 ? 3 : 1;
  const int rows = pick(1, 3 * scale * (caps_.rows + caps_.cols));
  const int k = pick(1, 5 * scale * caps_.rows * caps_.pattern.m);
  const int n_out = pick(1, 3 * scale * caps_.cols);
  c_.x = testing::random_i8(rows, k, rng_);
  c_.w = testing::random_i8(n_out, k, rng_);
  const bool sparse = caps_.sparse_supported && (fault == Fault::kIllegalMeta || pick(0, 1) == 0);
  c_.options.mode = sparse ? GemmMode::SPARSE : GemmMode::DENSE;
  if (sparse) c_.w = prune_nm_any_k(c_.w, caps_.pattern);
  const int out_kind = pick(0, 2);  // INT32, INT8, INT8 with ReLU
  if (out_kind != 0) {
    EpilogueParams e;
    for (int ch = 0; ch < n_out; ++ch) {
      e.bias.push_back(pick(-5000, 5000));
      const auto q = quantize_multiplier(uniform(1e-4, 2e-2));
      e.multiplier.push_back(q.multiplier);
      e.shift.push_back(q.shift);
    }
    c_.options.epilogue = e;
    c_.options.relu = out_kind == 2;
  }
  tb::AxiMemoryConfig& m = c_.memory;
  m.data_bytes = static_cast<unsigned>(caps_.axi_bytes());
  m.read_latency = static_cast<unsigned>(pick(1, 40));
  m.write_latency = static_cast<unsigned>(pick(1, 20));
  for (double* p : {&m.p_ar_stall, &m.p_r_gap, &m.p_aw_stall, &m.p_w_stall, &m.p_b_gap}) {
    *p = pick(0, 1) == 0 ? 0.0 : uniform(0.0, 0.4);
  }
  m.max_reads = 1u << pick(0, 3);
  m.max_writes = 1u << pick(0, 3);
  m.random_fill = true;  // a stray write of zeros changes memory too
}

MatrixI32 SeedRun::golden() const {
  const MatrixI32 acc = golden::gemm_i8(c_.x, c_.w);
  if (!c_.options.epilogue) return acc;
  return apply_epilogue(acc, *c_.options.epilogue, c_.options.relu, /*int32_output=*/false);
}

// Chooses where the fault strikes, from the compiled stream, so that it always strikes something
// the run uses, and which command the device must blame.
void SeedRun::place_fault(const GemmProgram& program) {
  const auto& cmds = program.commands();
  const std::uint32_t n = program.command_count();
  c_.resp = pick(0, 1) == 0 ? tb::AxiResp::kSlvErr : tb::AxiResp::kDecErr;
  c_.early_recovery = is_error_fault(c_.fault) && pick(0, 1) == 1;
  const auto beats_of = [this](std::uint64_t bytes) {
    const std::uint64_t b = static_cast<std::uint64_t>(caps_.axi_bytes());
    return static_cast<int>((bytes + b - 1) / b);
  };
  switch (c_.fault) {
    case Fault::kNone:
      break;
    case Fault::kFetchError: {
      c_.command = static_cast<std::uint32_t>(pick(0, static_cast<int>(n) - 1));
      const int beat = pick(0, beats_of(isa::COMMAND_BYTES) - 1);
      c_.error_addr = program.command_address() + isa::COMMAND_BYTES * c_.command +
                      static_cast<std::uint64_t>(beat) * caps_.axi_bytes();
      c_.detail =
          "fetch of command " + std::to_string(c_.command) + " beat " + std::to_string(beat);
      break;
    }
    case Fault::kLoadError:
    case Fault::kStoreError: {
      const Opcode op = c_.fault == Fault::kLoadError ? Opcode::LOAD : Opcode::STORE;
      std::vector<std::uint32_t> candidates;
      for (std::uint32_t i = 0; i < n; ++i) {
        if (cmds[i].opcode == op) candidates.push_back(i);
      }
      const std::uint32_t i =
          candidates[static_cast<std::size_t>(pick(0, static_cast<int>(candidates.size()) - 1))];
      const Command& cmd = cmds[i];
      const int row = pick(0, cmd.rows - 1);
      // A LOAD reads whole beats of its rows; a STORE writes at least the first byte of a row.
      const std::uint64_t row_bytes =
          op == Opcode::LOAD ? cmd.bytes_per_row
                             : static_cast<std::uint64_t>(caps_.cols) * (cmd.int32_output ? 4 : 1);
      const int beat = op == Opcode::LOAD ? pick(0, beats_of(row_bytes) - 1) : 0;
      c_.error_addr = cmd.host_address + static_cast<std::uint64_t>(row) * cmd.host_stride +
                      static_cast<std::uint64_t>(beat) * caps_.axi_bytes();
      // The first command in stream order that touches the byte is the one to blame (the
      // activation cache may load the same rows again; the engines run their commands in order).
      c_.command = i;
      for (std::uint32_t j = 0; j < i; ++j) {
        if (cmds[j].opcode != op) continue;
        const std::uint64_t width = op == Opcode::LOAD ? cmds[j].bytes_per_row
                                                       : static_cast<std::uint64_t>(caps_.cols) *
                                                             (cmds[j].int32_output ? 4 : 1);
        for (int rr = 0; rr < cmds[j].rows; ++rr) {
          const std::uint64_t start = cmds[j].host_address + rr * cmds[j].host_stride;
          if (c_.error_addr >= start && c_.error_addr < start + width) {
            c_.command = std::min(c_.command, j);
          }
        }
      }
      c_.detail = std::string(op == Opcode::LOAD ? "LOAD " : "STORE ") + std::to_string(i) +
                  (op == Opcode::LOAD ? std::string(" (") + std::string(to_string(cmd.target)) + ")"
                                      : std::string()) +
                  " row " + std::to_string(row) + " beat " + std::to_string(beat);
      break;
    }
    case Fault::kStall: {
      c_.channel = static_cast<tb::AxiChannel>(pick(0, 4));
      c_.stall_cycles = static_cast<std::uint64_t>(pick(1000, 8000));
      c_.when = static_cast<std::uint64_t>(pick(0, static_cast<int>(predicted_ * 7 / 10)));
      c_.detail = std::string(to_string(c_.channel)) + " for " + std::to_string(c_.stall_cycles) +
                  " cycles";
      break;
    }
    case Fault::kSoftReset:
    case Fault::kHardReset:
      c_.when = static_cast<std::uint64_t>(pick(1, static_cast<int>(predicted_ * 7 / 10) + 1));
      // At least the 4 cycles of reset docs/integration.md requires.
      c_.reset_cycles = static_cast<unsigned>(pick(4, 16));
      break;
    case Fault::kStartWhileBusy:
      // Early in the run (its command fetch alone outlasts this), so that the second START
      // always meets a busy device and never starts a run of its own.
      c_.when = static_cast<std::uint64_t>(pick(1, 20));
      c_.command = 0xFFFFFFFFu;  // no command is to blame
      c_.detail = "at cycle " + std::to_string(c_.when);
      break;
    case Fault::kBadBase:
      c_.command = 0xFFFFFFFFu;
      c_.base_offset = static_cast<std::uint64_t>(pick(1, caps_.axi_bytes() - 1));
      c_.detail = "CMD_BASE + " + std::to_string(c_.base_offset);
      break;
    case Fault::kBadDeps:
      place_bad_deps(cmds);
      break;
    case Fault::kIllegalMeta: {
      const auto& tiles = program.compute_tiles();
      const auto& tile =
          tiles[static_cast<std::size_t>(pick(0, static_cast<int>(tiles.size()) - 1))];
      const int pe_row = pick(0, caps_.rows - 1);
      const int col = pick(0, caps_.cols - 1);
      std::vector<std::uint8_t> illegal;
      for (int code = 0; code < (1 << caps_.pattern.meta_bits()); ++code) {
        if (!is_legal_group_meta(static_cast<std::uint8_t>(code), caps_.pattern)) {
          illegal.push_back(static_cast<std::uint8_t>(code));
        }
      }
      c_.record_addr = program.weight_record_address(tile.block, tile.k_tile, pe_row);
      c_.meta_column = col;
      c_.bad_value =
          illegal[static_cast<std::size_t>(pick(0, static_cast<int>(illegal.size()) - 1))];
      // The first COMPUTE of the same weight tile loads the record first.
      c_.command = tile.command;
      for (const auto& t : tiles) {
        if (t.block == tile.block && t.k_tile == tile.k_tile)
          c_.command = std::min(c_.command, t.command);
      }
      c_.detail = "tile (block " + std::to_string(tile.block) + ", k-tile " +
                  std::to_string(tile.k_tile) + ") PE row " + std::to_string(pe_row) + " column " +
                  std::to_string(col) + " code " + std::to_string(c_.bad_value);
      break;
    }
    case Fault::kBadOpcode:
    case Fault::kBadRange: {
      c_.command = static_cast<std::uint32_t>(pick(0, static_cast<int>(n) - 1));
      const Command& cmd = cmds[c_.command];
      if (c_.fault == Fault::kBadOpcode) {
        // An undefined opcode, or on a LOAD an undefined target.
        c_.corrupt_target = cmd.opcode == Opcode::LOAD && pick(0, 1) == 0;
        static constexpr std::array<int, 13> kBadOps = {0,  4,  5,  6,  7,  8, 9,
                                                        10, 11, 12, 13, 14, 15};
        c_.bad_value = c_.corrupt_target
                           ? static_cast<unsigned>(pick(3, 15))
                           : static_cast<unsigned>(kBadOps[static_cast<std::size_t>(pick(0, 12))]);
        c_.detail = std::string(c_.corrupt_target ? "target " : "opcode ") +
                    std::to_string(c_.bad_value) + " in command " + std::to_string(c_.command);
      } else {
        // A zero row/beat count, or a first entry (weight record, accumulator row) past every
        // buffer of every configuration.
        c_.zero_count = pick(0, 1) == 0;
        c_.detail = std::string(c_.zero_count ? "zero count" : "first entry 0xffff") +
                    " in command " + std::to_string(c_.command) + " (" +
                    std::string(to_string(cmd.opcode)) + ")";
      }
      break;
    }
  }
}

// bad_deps: either leaves out one push of a counter whose pushes the stream's pops use up exactly
// (then some pop waits forever), or sets a flag the command's engine may not use (POP_PREV or
// PUSH_PREV on a LOAD, POP_NEXT or PUSH_NEXT on a STORE).
void SeedRun::place_bad_deps(const std::vector<Command>& cmds) {
  // Pushes minus pops of the four counters.
  int l2c = 0, c2l = 0, c2s = 0, s2c = 0;
  for (const Command& c : cmds) {
    if (c.opcode == Opcode::LOAD) {
      l2c += c.push_next;
      c2l -= c.pop_next;
    } else if (c.opcode == Opcode::COMPUTE) {
      l2c -= c.pop_prev;
      c2l += c.push_prev;
      c2s += c.push_next;
      s2c -= c.pop_next;
    } else {
      c2s -= c.pop_prev;
      s2c += c.push_prev;
    }
  }
  // The pushes that may be left out: (command, its push_next rather than push_prev).
  std::vector<std::pair<std::uint32_t, bool>> pushes;
  for (std::uint32_t i = 0; i < cmds.size(); ++i) {
    const Command& c = cmds[i];
    const bool load = c.opcode == Opcode::LOAD, compute = c.opcode == Opcode::COMPUTE;
    if (c.push_next && ((load && l2c == 0) || (compute && c2s == 0))) pushes.push_back({i, true});
    if (c.push_prev && ((compute && c2l == 0) || (!load && !compute && s2c == 0))) {
      pushes.push_back({i, false});
    }
  }
  if (!pushes.empty() && pick(0, 1) == 0) {
    const auto [i, next] =
        pushes[static_cast<std::size_t>(pick(0, static_cast<int>(pushes.size()) - 1))];
    c_.deps_unbalanced = true;
    c_.command = i;
    c_.deps_command = cmds[i];
    (next ? c_.deps_command.push_next : c_.deps_command.push_prev) = false;
    c_.detail = std::string(next ? "PUSH_NEXT" : "PUSH_PREV") + " left out of command " +
                std::to_string(i) + " (" + std::string(to_string(cmds[i].opcode)) + ")";
    return;
  }
  std::vector<std::uint32_t> loads_and_stores;
  for (std::uint32_t i = 0; i < cmds.size(); ++i) {
    if (cmds[i].opcode != Opcode::COMPUTE) loads_and_stores.push_back(i);
  }
  c_.command = loads_and_stores[static_cast<std::size_t>(
      pick(0, static_cast<int>(loads_and_stores.size()) - 1))];
  const bool load = cmds[c_.command].opcode == Opcode::LOAD;
  // A LOAD may not use the previous stage's flags, a STORE the next stage's.
  const bool push = pick(0, 1) == 1;
  c_.deps_command = cmds[c_.command];
  Command& d = c_.deps_command;
  (load ? (push ? d.push_prev : d.pop_prev) : (push ? d.push_next : d.pop_next)) = true;
  c_.detail = std::string(push ? "PUSH_" : "POP_") + (load ? "PREV" : "NEXT") + " on " +
              (load ? "LOAD " : "STORE ") + std::to_string(c_.command);
}

// The faults that live in memory: illegal metadata and corrupt commands, written into the
// device's memory only (the host image stays pristine for the recovery run).
void SeedRun::patch_device(tb::AxiMemory& mem, const GemmProgram& program) {
  const auto write_byte = [&mem](std::uint64_t addr, std::uint8_t v) {
    mem.write_bytes(addr, &v, 1);
  };
  const auto read_byte = [&mem](std::uint64_t addr) { return mem.read_bytes(addr, 1)[0]; };
  if (c_.fault == Fault::kIllegalMeta) {
    const int bits = caps_.pattern.meta_bits();
    const std::uint64_t meta_addr =
        c_.record_addr + static_cast<std::uint64_t>(caps_.weight_value_bytes());
    std::vector<std::uint8_t> bytes = mem.read_bytes(meta_addr, 8);
    std::uint64_t meta = 0;
    for (int b = 0; b < 8; ++b)
      meta |= std::uint64_t{bytes[static_cast<std::size_t>(b)]} << (8 * b);
    const int shift = bits * c_.meta_column;
    const std::uint64_t mask = ((1ull << bits) - 1) << shift;
    meta = (meta & ~mask) | (std::uint64_t{c_.bad_value} << shift);
    const int meta_bytes = caps_.weight_meta_bytes();
    for (int b = 0; b < meta_bytes; ++b) {
      write_byte(meta_addr + static_cast<std::uint64_t>(b),
                 static_cast<std::uint8_t>(meta >> (8 * b)));
    }
  } else if (c_.fault == Fault::kBadOpcode || c_.fault == Fault::kBadRange ||
             c_.fault == Fault::kBadDeps) {
    const std::uint64_t at = program.command_address() + isa::COMMAND_BYTES * c_.command;
    if (c_.fault == Fault::kBadOpcode && !c_.corrupt_target) {
      write_byte(at, static_cast<std::uint8_t>((read_byte(at) & 0xf0) | c_.bad_value));
    } else if (c_.fault == Fault::kBadOpcode) {
      write_byte(at + 1, static_cast<std::uint8_t>((read_byte(at + 1) & 0xf0) | c_.bad_value));
    } else if (c_.fault == Fault::kBadDeps) {
      write_byte(at, encode(c_.deps_command)[0]);  // byte 0: the opcode and the four flags
    } else if (c_.zero_count) {
      write_byte(at + isa::FIELD_B_LSB / 8, 0);
      write_byte(at + isa::FIELD_B_LSB / 8 + 1, 0);
    } else {
      write_byte(at + isa::FIELD_A_LSB / 8, 0xff);
      write_byte(at + isa::FIELD_A_LSB / 8 + 1, 0xff);
    }
  }
}

// Starts the program (memory copied in as a driver would) and runs it to its end, injecting the
// fault of this seed when `with_fault`.
SeedRun::Outcome SeedRun::execute(tb::TopSim& sim, HostMemory& host, const GemmProgram& program,
                                  bool with_fault) {
  Outcome out;
  tb::AxiMemory& mem = sim.memory();
  mem.write_bytes(host.alloc_base(),
                  host.read_bytes(host.alloc_base(), host.alloc_end() - host.alloc_base()));
  if (with_fault) {
    patch_device(mem, program);
    if (c_.fault == Fault::kFetchError || c_.fault == Fault::kLoadError) {
      mem.inject_error(c_.error_addr, 1, c_.resp, tb::AxiAccess::kRead);
    } else if (c_.fault == Fault::kStoreError) {
      mem.inject_error(c_.error_addr, 1, c_.resp, tb::AxiAccess::kWrite);
    }
  }
  sim.write_reg(r::IRQ_STATUS_OFFSET, r::IRQ_STATUS_DONE_MASK | r::IRQ_STATUS_ERROR_MASK);
  const std::uint64_t misalign = with_fault && c_.fault == Fault::kBadBase ? c_.base_offset : 0;
  sim.write_reg(r::CMD_BASE_LO_OFFSET,
                static_cast<std::uint32_t>(program.command_address() + misalign));
  sim.write_reg(r::CMD_BASE_HI_OFFSET, static_cast<std::uint32_t>(program.command_address() >> 32));
  sim.write_reg(r::CMD_COUNT_OFFSET, program.command_count());
  sim.write_reg(r::CTRL_OFFSET, r::CTRL_START_MASK | r::CTRL_IRQ_EN_MASK);
  const std::uint64_t start = sim.cycles();
  const std::uint64_t timeout = 20 * predicted_ + c_.stall_cycles + 200000;
  const bool timed = with_fault && (c_.fault == Fault::kStall || is_reset_fault(c_.fault) ||
                                    c_.fault == Fault::kStartWhileBusy);
  bool pending = timed;
  if (timed) out.injected = false;
  while (!sim.irq()) {
    const std::uint64_t t = sim.cycles() - start;
    if (t > timeout) {
      out.problem = "no interrupt within " + std::to_string(timeout) + " cycles of START";
      return out;
    }
    // A stall strikes when its channel has work (the first time from its time on), so that it
    // holds something up.
    if (pending && t >= c_.when && (c_.fault != Fault::kStall || mem.channel_busy(c_.channel))) {
      pending = false;
      out.injected = true;
      if (c_.fault == Fault::kStall) {
        mem.stall(c_.channel, c_.stall_cycles);
      } else if (c_.fault == Fault::kStartWhileBusy) {
        sim.write_reg(r::CTRL_OFFSET, r::CTRL_START_MASK | r::CTRL_IRQ_EN_MASK);
      } else if (c_.fault == Fault::kSoftReset) {
        sim.write_reg(r::CTRL_OFFSET, r::CTRL_SOFT_RESET_MASK | r::CTRL_IRQ_EN_MASK);
        break;
      } else {
        sim.reset(c_.reset_cycles);
        break;
      }
    }
    sim.step();
  }
  if (pending) out.injected = false;  // the run ended before the fault's time
  if (with_fault && c_.early_recovery && sim.irq()) {
    const std::uint32_t status = sim.read_reg(r::STATUS_OFFSET);
    out.err_info = sim.read_reg(r::ERR_INFO_OFFSET);
    out.busy_at_irq = (status & r::STATUS_BUSY_MASK) != 0;
    out.status = status & ~r::STATUS_BUSY_MASK;
    if ((status & r::STATUS_ERROR_MASK) != 0) {
      sim.write_reg(r::CTRL_OFFSET, r::CTRL_SOFT_RESET_MASK | r::CTRL_IRQ_EN_MASK);
      out.recovered = true;
    }
    sim.wait_idle(timeout, 4);
    return out;
  }
  sim.wait_idle(timeout, 4);
  out.status = sim.read_reg(r::STATUS_OFFSET);
  out.err_info = sim.read_reg(r::ERR_INFO_OFFSET);
  return out;
}

// Nothing outside the output buffer changed: the bytes around the program's memory compared with
// their snapshot, and no W beat stored a byte outside the buffer anywhere.
std::string SeedRun::check_memory(tb::TopSim& sim, const GemmProgram& program,
                                  const std::vector<std::uint8_t>& before) {
  const std::uint64_t o_lo = program.output_address();
  const std::uint64_t o_hi =
      o_lo + static_cast<std::uint64_t>(c_.x.rows()) * program.output_row_stride();
  const std::vector<std::uint8_t> after = sim.memory().read_bytes(lo_, hi_ - lo_);
  for (std::uint64_t a = lo_; a < hi_; ++a) {
    if (a >= o_lo && a < o_hi) continue;
    if (after[a - lo_] != before[a - lo_]) {
      std::ostringstream os;
      os << "byte 0x" << std::hex << a << " outside the output buffer [0x" << o_lo << ", 0x" << o_hi
         << ") changed";
      return os.str();
    }
  }
  if (sim.memory().stats().stray_bytes_written != 0) {
    return std::to_string(sim.memory().stats().stray_bytes_written) +
           " bytes written outside the output buffer";
  }
  return "";
}

std::string SeedRun::run(Tally& tally, bool verbose) {
  // The fault first, so that illegal metadata gets a sparse GEMM; a dense-only build has none.
  std::vector<Fault> faults(kFaults.begin(), kFaults.end());
  if (!caps_.sparse_supported) {
    faults.erase(std::remove(faults.begin(), faults.end(), Fault::kIllegalMeta), faults.end());
  }
  c_.fault = faults[static_cast<std::size_t>(pick(0, static_cast<int>(faults.size()) - 1))];
  make_gemm(c_.fault);

  HostMemory host;
  const GemmProgram program(caps_, c_.x, c_.w, c_.options, host);
  PerfModelParams perf;
  perf.dma_read_latency = static_cast<int>(c_.memory.read_latency);
  perf.dma_write_latency = static_cast<int>(c_.memory.write_latency);
  predicted_ = std::max<std::uint64_t>(program.predict_cycles(perf).total, 100);
  place_fault(program);
  const std::string fault = to_string(c_.fault);
  const std::string what =
      fault + (c_.detail.empty() ? "" : " (" + c_.detail + ")") + ", GEMM " +
      std::to_string(c_.x.rows()) + "x" + std::to_string(c_.x.cols()) + "x" +
      std::to_string(c_.w.rows()) + " " + std::string(to_string(c_.options.mode)) +
      (c_.options.epilogue ? (c_.options.relu ? " int8+relu" : " int8") : " int32") + ", " +
      std::to_string(program.command_count()) + " commands";
  if (verbose) std::cout << config_ << " seed " << seed_ << ": " << what << std::endl;

  auto sim = make_sim(config_, c_.memory, seed_);
  const std::uint64_t o_lo = program.output_address();
  const std::uint64_t o_hi =
      o_lo + static_cast<std::uint64_t>(c_.x.rows()) * program.output_row_stride();
  sim->memory().watch_writes(o_lo, o_hi);
  lo_ = host.alloc_base() - 4096;
  hi_ = host.alloc_end() + 4096;
  // The snapshot: the device's memory as the run will find it (the program's image, with any
  // patched fault, over the random fill around it).
  const MatrixI32 want = golden();
  std::vector<std::string> problems;
  auto fail = [&problems](const std::string& p) { problems.push_back(p); };

  Outcome o;
  std::vector<std::uint8_t> before;
  try {
    // execute() copies the image in; take the snapshot from an identical copy made first.
    sim->memory().write_bytes(
        host.alloc_base(),
        host.read_bytes(host.alloc_base(), host.alloc_end() - host.alloc_base()));
    if (sabotage_ != "silent") patch_device(sim->memory(), program);
    before = sim->memory().read_bytes(lo_, hi_ - lo_);
    o = execute(*sim, host, program, /*with_fault=*/sabotage_ != "silent");
    if (sabotage_ == "output" && (o.status & r::STATUS_DONE_MASK) != 0) {
      const std::uint8_t byte = static_cast<std::uint8_t>(sim->memory().read_bytes(o_lo, 1)[0] ^ 1);
      sim->memory().write_bytes(o_lo, &byte, 1);
    }
    if (sabotage_ == "outside") {
      const std::uint8_t byte = static_cast<std::uint8_t>(sim->memory().read_bytes(lo_, 1)[0] ^ 1);
      sim->memory().write_bytes(lo_, &byte, 1);
    }
  } catch (const std::exception& e) {
    o.problem = e.what();
  }
  // A timed fault whose moment never came (the run ended first, or a stalled channel had no
  // more work) was not injected: it is counted as missed and its run checked as `none`.
  if (o.problem.empty() && !o.injected) {
    ++tally.missed[fault];
  } else {
    ++tally.injected[fault];
  }
  if (!o.problem.empty()) {
    fail("fault run: " + o.problem);
  } else {
    const bool done = (o.status & r::STATUS_DONE_MASK) != 0;
    const bool error = (o.status & r::STATUS_ERROR_MASK) != 0;
    const unsigned code = (o.status & r::STATUS_ERR_CODE_MASK) >> r::STATUS_ERR_CODE_SHIFT;
    const std::string seen = std::string(r::to_string(static_cast<r::ErrCode>(code)));
    // Copy the output back and compare: DONE must mean the right result.
    HostMemory& out = host;
    const auto bytes = sim->memory().read_bytes(o_lo, o_hi - o_lo);
    out.write(o_lo, bytes.data(), bytes.size());
    const bool exact = program.read_output() == want;
    if (done && !exact) {
      ++tally.lost_results;
      fail("DONE with a result that differs from the golden model");
    }
    if (is_error_fault(c_.fault)) {
      unsigned want_code = 0;
      switch (c_.fault) {
        case Fault::kIllegalMeta:
          want_code = 1;
          break;
        case Fault::kBadOpcode:
          want_code = 4;
          break;
        case Fault::kBadRange:
          want_code = 5;
          break;
        case Fault::kStartWhileBusy:
          want_code = 6;
          break;
        case Fault::kBadBase:
          want_code = 7;
          break;
        case Fault::kBadDeps:
          want_code = 8;
          break;
        default:
          want_code = c_.resp == tb::AxiResp::kSlvErr ? 2 : 3;
      }
      const bool index_ok = c_.fault == Fault::kFetchError ? o.err_info <= c_.command
                            : c_.deps_unbalanced         ? o.err_info < program.command_count()
                                                         : o.err_info == c_.command;
      if (!error) {
        fail(std::string("not detected: ") + (done ? "DONE" : "neither DONE nor ERROR") +
             (exact ? " (result bit-exact)" : ""));
      } else if (code != want_code || !index_ok || done) {
        fail("reported " + seen + " at command " + std::to_string(o.err_info) +
             (done ? " with DONE" : "") + ", want " +
             std::string(r::to_string(static_cast<r::ErrCode>(want_code))) + " at command " +
             (c_.fault == Fault::kFetchError ? "<= " : "") +
             (c_.deps_unbalanced ? std::string("any") : std::to_string(c_.command)));
      } else {
        ++tally.detected[fault];
      }
    } else if (is_reset_fault(c_.fault) && o.injected) {
      // The reset took effect: nothing reported, nothing running.
      if (o.status != 0) {
        fail("STATUS " + std::to_string(o.status) + " after the reset, want 0");
      } else if (o.err_info != 0) {
        fail("ERR_INFO " + std::to_string(o.err_info) + " after the reset, want 0");
      } else {
        ++tally.detected[fault];
      }
    } else {
      // none, a stall, or a timed fault that was missed.
      if (!done || error) {
        fail("run ended with " + (error ? seen + " at command " + std::to_string(o.err_info)
                                        : std::string("neither DONE nor ERROR")));
      } else if (!exact) {
        fail("result differs from the golden model");
      } else if (o.injected) {
        ++tally.exact[fault];
      }
    }
    const std::string stray = check_memory(*sim, program, before);
    if (!stray.empty()) fail(stray);
    const std::string protocol = sim->protocol_report();
    if (!protocol.empty()) fail("AXI protocol: " + protocol);

    // Recovery: a soft reset after an error (the hard reset recovers by itself), then the same
    // GEMM, unbroken, must run bit-exact.
    if (c_.fault != Fault::kNone && c_.fault != Fault::kStall) {
      try {
        sim->memory().clear_errors();
        if (error) {
          if (o.recovered) {
            ++tally.recovered_at_irq;
            if (o.busy_at_irq) ++tally.recovered_while_busy;
          } else {
            sim->write_reg(r::CTRL_OFFSET, r::CTRL_SOFT_RESET_MASK | r::CTRL_IRQ_EN_MASK);
          }
          sim->wait_idle(100000, 4);
          const std::uint32_t status = sim->read_reg(r::STATUS_OFFSET);
          if (status != 0) fail("STATUS " + std::to_string(status) + " after the soft reset");
        }
        host.fill(o_lo, 0xA5, static_cast<std::size_t>(o_hi - o_lo));
        const Outcome again = execute(*sim, host, program, /*with_fault=*/false);
        const auto bytes2 = sim->memory().read_bytes(o_lo, o_hi - o_lo);
        host.write(o_lo, bytes2.data(), bytes2.size());
        const bool done2 =
            (again.status & (r::STATUS_DONE_MASK | r::STATUS_ERROR_MASK)) == r::STATUS_DONE_MASK;
        const bool exact2 = program.read_output() == want;
        if (!again.problem.empty()) {
          fail("recovery run: " + again.problem);
        } else if (!done2) {
          fail("recovery run ended with STATUS " + std::to_string(again.status) + " at command " +
               std::to_string(again.err_info));
        } else if (!exact2) {
          ++tally.lost_results;
          fail("recovery run: DONE with a result that differs from the golden model");
        }
        const std::string protocol2 = sim->protocol_report();
        if (!protocol2.empty() && protocol.empty()) fail("AXI protocol (recovery): " + protocol2);
        if (sim->memory().stats().stray_bytes_written != 0 && stray.empty()) {
          fail("recovery run wrote outside the output buffer");
        }
      } catch (const std::exception& e) {
        fail(std::string("recovery: ") + e.what());
      }
    }
  }
  tally.cycles += sim->cycles();
  ++tally.seeds;
  if (verbose) {
    std::cout << "    " << sim->cycles() << " cycles (predicted run " << predicted_ << "), STATUS "
              << o.status << ", ERR_INFO " << o.err_info << (o.injected ? "" : ", not injected")
              << (o.recovered ? (o.busy_at_irq ? ", soft reset at the IRQ while busy"
                                               : ", soft reset at the IRQ")
                              : "")
              << std::endl;
  }
  if (problems.empty()) return "";
  std::string text = what + ":";
  for (const auto& p : problems) text += "\n    " + p;
  return text;
}

nlohmann::json to_json(const std::map<std::string, std::uint64_t>& m) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [k, v] : m) j[k] = v;
  return j;
}

}  // namespace
}  // namespace nmsa

int main(int argc, char** argv) {
  using namespace nmsa;
  CLI::App app{"nmsa fault-injection soak (docs/verification.md, \"Soak\")"};
  std::string config = "small";
  std::uint64_t first_seed = 1;
  std::uint64_t seeds = 10;
  std::string out_path;
  bool verbose = false;
  std::string sabotage;
  app.add_option("--config", config, "accelerator configuration (tb::top_config_names())");
  app.add_option("--first-seed", first_seed, "first seed")->check(CLI::PositiveNumber);
  app.add_option("--seeds", seeds, "number of seeds")->check(CLI::PositiveNumber);
  app.add_option("--out", out_path, "shard JSON to write");
  app.add_flag("--verbose", verbose, "one line per seed");
  app.add_option("--sabotage", sabotage, "break every run behind the device's back (self-test)")
      ->check(CLI::IsMember({"output", "outside", "silent"}));
  CLI11_PARSE(app, argc, argv);

  const auto names = tb::top_config_names();
  if (std::find(names.begin(), names.end(), config) == names.end()) {
    std::cerr << "nmsa_soak: --config " << config << ": not a built configuration\n";
    return 2;
  }
  // The capabilities come from the registers, as a driver reads them.
  DeviceCaps caps;
  {
    tb::AxiMemoryConfig probe_mem;
    probe_mem.data_bytes = static_cast<unsigned>(DeviceCaps::named(config).axi_bytes());
    auto probe = make_sim(config, probe_mem, 1);
    caps = from_registers([&](std::uint32_t off) { return probe->read_reg(off); });
  }

  const auto t0 = std::chrono::steady_clock::now();
  Tally tally;
  for (std::uint64_t s = first_seed; s < first_seed + seeds; ++s) {
    std::string failure;
    try {
      SeedRun run(config, caps, s, sabotage);
      failure = run.run(tally, verbose);
    } catch (const std::exception& e) {
      failure = std::string("exception: ") + e.what();
      ++tally.seeds;
    }
    if (!failure.empty()) {
      const std::string rerun = std::string(argv[0]) + " --config " + config + " --first-seed " +
                                std::to_string(s) + " --seeds 1 --verbose";
      std::cout << "FAIL " << config << " seed " << s << ": " << failure
                << "\n    re-run: " << rerun << std::endl;
      tally.failures.push_back(
          {{"config", config}, {"seed", s}, {"message", failure}, {"rerun", rerun}});
    }
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  std::uint64_t injected = 0, detected = 0;
  for (const auto& [k, v] : tally.injected) {
    if (k != "none") injected += v;
  }
  for (const auto& [k, v] : tally.detected) detected += v;
  std::cout << "nmsa_soak " << config << " seeds " << first_seed << ".." << first_seed + seeds - 1
            << ": " << tally.cycles << " cycles, " << injected << " faults injected, " << detected
            << " detected, " << tally.lost_results << " lost results, " << tally.failures.size()
            << " failures, " << wall << " s" << std::endl;
  if (!out_path.empty()) {
    nlohmann::json j;
    j["config"] = config;
    j["first_seed"] = first_seed;
    j["seeds"] = tally.seeds;
    j["cycles_simulated"] = tally.cycles;
    j["wall_seconds"] = wall;
    j["faults_injected"] = to_json(tally.injected);
    j["faults_detected"] = to_json(tally.detected);
    j["results_exact"] = to_json(tally.exact);
    j["injections_missed"] = to_json(tally.missed);
    j["lost_results"] = tally.lost_results;
    j["recovered_at_irq"] = tally.recovered_at_irq;
    j["recovered_while_busy"] = tally.recovered_while_busy;
    j["failures"] = tally.failures;
    const std::filesystem::path parent = std::filesystem::path(out_path).parent_path();
    if (!parent.empty()) std::filesystem::create_directories(parent);
    std::ofstream f(out_path);
    f << j.dump(2) << "\n";
    if (!f) {
      std::cerr << "nmsa_soak: --out " << out_path << ": cannot write\n";
      return 2;
    }
  }
  return tally.failures.empty() && tally.lost_results == 0 ? 0 : 1;
}
