// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// A fast, bit-exact functional model of the nmsa accelerator top: it executes a command stream
// from host memory exactly as docs/isa.md defines it (scratchpads, accumulator SRAM, epilogue,
// dependency tokens, fetch-time checks, illegal-metadata detection) without modelling cycles.
// It is the reference the RTL top is checked against, and the fast backend for software work.
//
// Semantics the RTL must match (docs/isa.md, with the resolutions written down here):
//
// * Fetch-time checks, per command in stream order. When a command breaks several rules, the
//   first in this order wins (the order of the RTL checker, rtl/ctrl/nmsa_cmd.sv):
//   BAD_OPCODE, then BAD_DEPS (flags), then BAD_ALIGN, then BAD_RANGE.
//   - BAD_OPCODE: opcode 0 or 4..15; LOAD target 3..15. Reserved bits are ignored.
//   - BAD_DEPS: LOAD with POP_PREV or PUSH_PREV, STORE with POP_NEXT or PUSH_NEXT.
//   - BAD_ALIGN (A = AXI_DATA_W / 8): LOAD host address, stride and bytes per row multiples of A.
//     STORE rows of A bytes or more: address and stride multiples of A. Shorter rows (INT8 with
//     Cols < A): address % A + row bytes <= A and stride a multiple of the row size (docs/isa.md),
//     and every row must lie in one AXI word, which given the former holds iff stride % A == 0,
//     or the address is a multiple of the row size and the row size divides A.
//   - BAD_RANGE: rows / beats / bytes per row equal to 0; a LOAD whose bytes run past the end
//     of its buffer (first_entry * entry_bytes + rows * bytes_per_row > capacity); a COMPUTE
//     whose Rows weight records, last activation entry (first + (beats-1) * stride) or
//     accumulator rows (first + beats) fall outside their buffers, or, in dense mode, a part with
//     (part + 1) * N > M (the part is ignored in sparse mode); a STORE whose accumulator rows or
//     epilogue entry fall outside; a host range (address + (rows-1) * stride + row bytes) above
//     2^host_addr_bits.
//   - After the last command: a token counter popped more than pushed over the whole stream is
//     BAD_DEPS at index CMD_COUNT - 1.
//   - A token counter that would pass 255 is BAD_DEPS with ERR_INFO = all ones (the counters do
//     not know which command is to blame; docs/errors.md). The model evaluates it
//     deterministically as the running balance in stream order (pushes minus pops of commands
//     0..i above 255); the RTL's 8-bit counters see the same streams overflow unless an engine's
//     queue holds pops that are already fetched, which a compiled program never relies on.
//   - CMD_BASE not a multiple of A is BAD_ALIGN, not fitting the address width BAD_RANGE, both
//     with ERR_INFO = all ones.
//   The fetcher is taken to run ahead of the engines: when a fetch-time check fails, the model
//   reports it and executes nothing. (On the RTL, commands before the failing one may already
//   have run; only the error code and index are comparable.)
// * Execution: three in-order engine queues and four token counters; the model repeatedly runs
//   the oldest head command whose pops are available, atomically. Each counter has one consumer
//   engine, so which commands complete does not depend on that order. A COMPUTE whose tile has
//   an illegal metadata field (sparse mode only) reports ILLEGAL_META with its index, computes
//   nothing and stops the stream. When no head can run and commands remain (a token cycle), the
//   model reports BAD_DEPS with the index of the oldest command not yet executed; the RTL must
//   detect the same quiescence instead of hanging.
// * Hazards: the hardware runs the engines concurrently, so a stream whose tokens do not order a
//   conflicting pair of scratchpad/accumulator accesses has a timing-dependent result. The model
//   tracks happens-before through the tokens (vector clocks: the k-th pop of a counter follows
//   the k-th push; each engine completes its commands in order) and lists every unordered
//   conflict in RunResult::hazards. A correct program has none.
// * Scratchpads are byte arrays (never-written bytes read 0 in the model; they are undefined on
//   the RTL, so a correct program never reads them) and keep their contents between runs.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "nmsa/device_caps.hpp"
#include "nmsa/host_memory.hpp"
#include "nmsa/isa.hpp"
#include "nmsa/regs.hpp"

namespace nmsa {

// ERR_INFO when no command is to blame (docs/errors.md).
constexpr std::uint32_t NO_COMMAND = 0xFFFFFFFFu;

struct RunResult {
  regs::ErrCode error = regs::ErrCode::NONE;
  std::uint32_t error_index = 0;  // ERR_INFO.CMD_INDEX
  std::string error_message;      // what was wrong, for people

  // Performance counters (docs/registers.md), as the model can know them.
  std::uint64_t tiles_sparse = 0;
  std::uint64_t tiles_dense = 0;
  std::uint64_t macs =
      0;  // dense-equivalent: Rows*Cols*M per sparse beat, Rows*Cols*N per dense beat
  std::uint64_t beats = 0;         // activation vectors issued (the CYCLES_COMPUTE of an ideal run)
  std::uint64_t dma_rd_bytes = 0;  // command fetch + LOAD bytes
  std::uint64_t dma_wr_bytes = 0;  // bytes written (strobes set)
  std::uint64_t meta_bytes = 0;    // LOAD bytes landing in the metadata field of a weight record
  std::uint64_t illegal_meta_fields = 0;  // illegal fields in the failing tile (registers.md)
  std::uint64_t illegal_meta_rows = 0;    // PE rows of it with an illegal field (errors.md)
  std::uint64_t commands_executed = 0;

  std::vector<std::string> hazards;  // unordered conflicting accesses (empty for a correct stream)
  std::uint64_t hazard_count = 0;    // all of them, also those not listed

  bool ok() const { return error == regs::ErrCode::NONE; }
  std::string describe() const;  // "NONE" or "BAD_RANGE at command 12: ..."
};

struct CommandError {
  regs::ErrCode code = regs::ErrCode::NONE;
  std::string message;
};

// The fetch-time checks of one decoded command (flag, alignment and range rules, in that order;
// not the stream-wide token balance). Empty when the command passes.
std::optional<CommandError> check_command(const DeviceCaps& caps, const Command& c);

struct ModelOptions {
  bool check_hazards = true;
  std::size_t max_hazard_reports = 16;
};

class FunctionalModel {
 public:
  explicit FunctionalModel(const DeviceCaps& caps, ModelOptions options = {});

  // Runs `count` commands at `cmd_base` (CMD_BASE, CMD_COUNT, then START).
  RunResult run(HostMemory& mem, std::uint64_t cmd_base, std::uint32_t count);

  void reset();  // scratchpads and accumulators to zero (the model's stand-in for "undefined")

  const DeviceCaps& caps() const { return caps_; }
  const std::vector<std::uint8_t>& act_scratchpad() const { return act_; }
  const std::vector<std::uint8_t>& weight_scratchpad() const { return wgt_; }
  const std::vector<std::uint8_t>& epilogue_scratchpad() const { return epi_; }
  const std::vector<std::int32_t>& accumulators() const { return acc_; }  // [acc_entries x cols]

 private:
  struct Execution;
  DeviceCaps caps_;
  ModelOptions options_;
  std::vector<std::uint8_t> act_;
  std::vector<std::uint8_t> wgt_;
  std::vector<std::uint8_t> epi_;
  std::vector<std::int32_t> acc_;
};

}  // namespace nmsa
