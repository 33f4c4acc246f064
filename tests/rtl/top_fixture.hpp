// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// Creates the accelerator model for the running test; under `make waves` (NMSA_TRACE=1) the
// whole test is traced into build/waves/<suite>.<test>.fst with a .gtkw beside it.
#pragma once

#include <gtest/gtest.h>

#include "nmsa/tb/top_sim.hpp"

namespace nmsa::testing {

inline std::unique_ptr<tb::TopSim> make_top_for_test(const std::string& config,
                                                     const tb::AxiMemoryConfig& memory,
                                                     std::uint64_t seed) {
  auto sim = tb::make_top_sim(config, memory, seed);
  if (const auto* info = ::testing::UnitTest::GetInstance()->current_test_info()) {
    tb::trace_if_requested(*sim, std::string(info->test_suite_name()) + "." + info->name());
  }
  return sim;
}

}  // namespace nmsa::testing
