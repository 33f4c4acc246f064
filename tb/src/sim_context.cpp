// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
#include "nmsa/tb/sim_context.hpp"

#include <cstdlib>
#include <stdexcept>

namespace nmsa::tb {

std::uint64_t test_seed(std::uint64_t fallback) {
  const char* env = std::getenv("NMSA_SEED");
  if (env == nullptr || *env == '\0') return fallback;
  char* end = nullptr;
  const unsigned long long value = std::strtoull(env, &end, 10);
  if (end == nullptr || *end != '\0') {
    throw std::invalid_argument(std::string("NMSA_SEED='") + env + "' is not a decimal number");
  }
  return value;
}

std::unique_ptr<VerilatedContext> make_context(std::uint64_t seed) {
  auto context = std::make_unique<VerilatedContext>();
  // Verilator's seed must be in [1, 2^31); 0 would abort.
  const int verilator_seed = static_cast<int>(seed % 0x7fffffffull) + 1;
  context->randReset(2);  // randomize every X-initialised register
  context->randSeed(verilator_seed);
  return context;
}

std::string seed_note(std::uint64_t seed) {
  return "seed " + std::to_string(seed) + " (re-run with NMSA_SEED=" + std::to_string(seed) + ")";
}

}  // namespace nmsa::tb
