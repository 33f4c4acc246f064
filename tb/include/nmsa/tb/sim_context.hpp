// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// Seeds shared by every simulation: the test seed comes from NMSA_SEED (or a default), and the
// Verilator context randomizes every unreset register from it (--x-initial unique), so a missing
// reset shows up as a failure rather than as luck.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "verilated.h"

namespace nmsa::tb {

// The seed of this run: NMSA_SEED if set (decimal), otherwise `fallback`.
std::uint64_t test_seed(std::uint64_t fallback = 1);

// The seed of the power-up state (--x-initial unique) of a model created with `seed`: `seed`
// itself, or with NMSA_X_SEED set (decimal) a mix of both, so that the same stimulus runs again
// from other random register contents (make sim-long runs the random GEMMs under three).
std::uint64_t x_initial_seed(std::uint64_t seed);

// A Verilator context whose reset values are random but reproducible from x_initial_seed(seed),
// with the plusargs of NMSA_PLUSARGS (space-separated, e.g. "+nmsa_mutant_fifo_full_flag").
std::unique_ptr<VerilatedContext> make_context(std::uint64_t seed);

// Drives rst_ni low with a falling edge whatever its (random) power-up value, so that
// asynchronously reset flops clear before the first clock edge, where assertions sample them.
// The caller then clocks the model and releases rst_ni.
template <typename Model>
void begin_reset(Model& model) {
  model.clk_i = 0;
  model.rst_ni = 1;
  model.eval();
  model.rst_ni = 0;
  model.eval();
}

// "seed 1234 (re-run with NMSA_SEED=1234)" for failure messages.
std::string seed_note(std::uint64_t seed);

// Code coverage (make coverage): in a model built with coverage points and with NMSA_COVERAGE_DIR
// set, adds this context's counts to the process's tally in <dir>/<pid>.dat (verilator_coverage's
// format). Call it while the context's models are alive: the points live in the models. A no-op
// in other builds and without the variable.
void record_coverage(VerilatedContext& context);

}  // namespace nmsa::tb
