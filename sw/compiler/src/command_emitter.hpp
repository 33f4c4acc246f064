// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// The command emitter of the GEMM compiler: for one tiling plan, the schedule of tiles, the
// LOAD, COMPUTE and STORE commands with the buffer slots they use, and the dependency tokens
// between them (the loop nest, the buffers and the token rule: nmsa/gemm_program.hpp).
#pragma once

#include <cstdint>
#include <vector>

#include "gemm_geometry.hpp"
#include "nmsa/device_caps.hpp"
#include "nmsa/gemm_program.hpp"
#include "nmsa/isa.hpp"

namespace nmsa::compiler_detail {

// Host addresses of the operands (dummy ones in a dry run).
struct Addresses {
  std::uint64_t x = 0, w = 0, e = 0, o = 0;
};

struct Emitted {
  std::vector<Command> cmds;
  std::vector<int> window;  // per command: weight batch during which it is issued; -1 = startup
  std::vector<GemmProgram::TileRef> tiles;
  ProgramStats stats;
};

// The command stream of plan `p` for the GEMM `g`, its operands at `addr`. Throws
// std::logic_error when it cannot keep its own invariants (a compiler bug, never bad input).
Emitted emit_commands(const DeviceCaps& caps, const Geometry& g, const TilingPlan& p,
                      const Addresses& addr);

}  // namespace nmsa::compiler_detail
