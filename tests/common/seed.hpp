// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// Seeds of the software tests: NMSA_SEED if set, else the test's default; printed, so that any
// run can be repeated.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <string>

namespace nmsa::testing {

inline std::uint64_t test_seed(std::uint64_t fallback) {
  const char* env = std::getenv("NMSA_SEED");
  const std::uint64_t seed =
      env != nullptr && *env != '\0' ? std::strtoull(env, nullptr, 10) : fallback;
  std::cout << "[   seed   ] " << seed << " (re-run with NMSA_SEED=" << seed << ")\n";
  return seed;
}

inline std::string seed_note(std::uint64_t seed) {
  return "seed " + std::to_string(seed) + " (re-run with NMSA_SEED=" + std::to_string(seed) + ")";
}

}  // namespace nmsa::testing
