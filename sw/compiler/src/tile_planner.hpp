// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// The tile planner of the GEMM compiler: which tiling plan a GEMM runs with. The candidate plans
// that fit the device are ranked by a quick analytic estimate; the most promising few are
// compiled with dummy addresses and ranked by the cycle model when the caller gives the host
// memory (GemmOptions::memory), else by a coarse estimate per weight batch.
#pragma once

#include "command_emitter.hpp"
#include "gemm_geometry.hpp"
#include "nmsa/cycle_model.hpp"
#include "nmsa/device_caps.hpp"
#include "nmsa/gemm_program.hpp"

namespace nmsa::compiler_detail {

struct Chosen {
  TilingPlan plan;
  Emitted program;
  CyclePrediction cycles;
};

// The plan (options.plan, or the best candidate) and its program with dummy addresses; with
// `want_cycles`, also its prediction for `params`. Candidates are ranked for options.memory by
// predict_stream_cycles() when it is given, else by window_estimate() with `params`.
Chosen choose_plan(const DeviceCaps& caps, const Geometry& g, const GemmOptions& options,
                   const PerfModelParams& params, bool want_cycles);

}  // namespace nmsa::compiler_detail
