// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// Functional coverage: named bins that random tests hit, and the check that a run hit all the
// bins it was meant to (a random test that never produced, say, a dense INT8 GEMM with ReLU under
// write back-pressure did not test it).
#pragma once

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <unistd.h>

namespace nmsa::tb {

class Coverage {
 public:
  void hit(const std::string& bin, bool condition = true) {
    if (condition) ++bins_[bin];
  }
  std::uint64_t count(const std::string& bin) const {
    const auto it = bins_.find(bin);
    return it == bins_.end() ? 0 : it->second;
  }
  // The bins of `required` that were never hit.
  std::vector<std::string> missing(const std::vector<std::string>& required) const {
    std::vector<std::string> out;
    for (const auto& bin : required) {
      if (count(bin) == 0) out.push_back(bin);
    }
    return out;
  }
  std::string report() const {
    std::string text;
    for (const auto& [bin, n] : bins_) text += "  " + bin + ": " + std::to_string(n) + "\n";
    return text;
  }
  // make coverage: with NMSA_COVERAGE_DIR set, appends the bins hit to <dir>/bins-<pid>.txt as
  // "<count>\t<bin>" lines, which scripts/coverage_report.py sums against docs/testplan.md.
  void record() const {
    const char* dir = std::getenv("NMSA_COVERAGE_DIR");
    if (dir == nullptr || *dir == '\0') return;
    std::filesystem::create_directories(dir);
    std::ofstream out(std::filesystem::path(dir) / ("bins-" + std::to_string(::getpid()) + ".txt"),
                      std::ios::app);
    for (const auto& [bin, n] : bins_) out << n << '\t' << bin << '\n';
  }

 private:
  std::map<std::string, std::uint64_t> bins_;
};

}  // namespace nmsa::tb
