// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
#include "nmsa/tb/sim_context.hpp"

#include <cstdlib>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#if VM_COVERAGE
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>

#include <unistd.h>

#include "verilated_cov.h"
#endif

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

std::uint64_t x_initial_seed(std::uint64_t seed) {
  const char* env = std::getenv("NMSA_X_SEED");
  if (env == nullptr || *env == '\0') return seed;
  char* end = nullptr;
  const unsigned long long x = std::strtoull(env, &end, 10);
  if (end == nullptr || *end != '\0') {
    throw std::invalid_argument(std::string("NMSA_X_SEED='") + env + "' is not a decimal number");
  }
  // splitmix64 of both, so that every model of a run still gets its own power-up state.
  std::uint64_t z = seed ^ (x * 0x9e3779b97f4a7c15ull) ^ 0x5851f42d4c957f2dull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

std::unique_ptr<VerilatedContext> make_context(std::uint64_t seed) {
  auto context = std::make_unique<VerilatedContext>();
  // Verilator's seed must be in [1, 2^31); 0 would abort.
  const int verilator_seed = static_cast<int>(x_initial_seed(seed) % 0x7fffffffull) + 1;
  context->randReset(2);  // randomize every X-initialised register
  context->randSeed(verilator_seed);
  // The plusargs $test$plusargs sees (the mutant model's switches); Verilator requires the
  // arguments to be set, none or some, before a model asks.
  std::vector<std::string> args{"nmsa"};
  if (const char* env = std::getenv("NMSA_PLUSARGS"); env != nullptr) {
    std::istringstream words(env);
    for (std::string word; words >> word;) args.push_back(word);
  }
  std::vector<const char*> argv;
  for (const std::string& a : args) argv.push_back(a.c_str());
  context->commandArgs(static_cast<int>(argv.size()), argv.data());
  return context;
}

std::string seed_note(std::uint64_t seed) {
  return "seed " + std::to_string(seed) + " (re-run with NMSA_SEED=" + std::to_string(seed) + ")";
}

#if VM_COVERAGE
namespace {

// The counts of every coverage point this process has seen, by verilator_coverage's key. Every
// context writes its points to a scratch file (Verilator offers no other way to read them), whose
// counts are added here; the tally is rewritten after each context so that a test that dies
// later still leaves what it covered.
class CoverageTally {
 public:
  void add(VerilatedContext& context, const std::filesystem::path& dir) {
    const std::lock_guard<std::mutex> lock(mutex_);
    std::filesystem::create_directories(dir);
    const std::string stem = std::to_string(::getpid());
    const std::filesystem::path scratch = dir / (stem + ".part");
    context.coveragep()->write(scratch.c_str());
    std::ifstream in(scratch);
    std::string line;
    while (std::getline(in, line)) {
      // C '<key>' <count>
      const std::size_t open = line.find('\'');
      const std::size_t close = line.rfind('\'');
      if (line.rfind("C ", 0) != 0 || open == std::string::npos || close <= open) continue;
      counts_[line.substr(open + 1, close - open - 1)] += std::stoull(line.substr(close + 1));
    }
    in.close();
    std::filesystem::remove(scratch);
    const std::filesystem::path tally = dir / (stem + ".dat");
    const std::filesystem::path next = dir / (stem + ".dat.next");
    {
      std::ofstream out(next);
      out << "# SystemC::Coverage-3\n";
      for (const auto& [key, count] : counts_) out << "C '" << key << "' " << count << "\n";
    }
    std::filesystem::rename(next, tally);  // a reader never sees half a file
  }

 private:
  std::mutex mutex_;
  std::map<std::string, std::uint64_t> counts_;
};

}  // namespace

void record_coverage(VerilatedContext& context) {
  const char* dir = std::getenv("NMSA_COVERAGE_DIR");
  if (dir == nullptr || *dir == '\0') return;
  static CoverageTally tally;
  tally.add(context, dir);
}
#else
void record_coverage(VerilatedContext&) {}
#endif

}  // namespace nmsa::tb
