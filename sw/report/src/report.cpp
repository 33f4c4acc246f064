// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// The deployment report itself: the latency percentiles every writer shows, and the three files
// (report_json.cpp writes the data; report_document.cpp the sections, which report_markdown.cpp
// and report_html.cpp render).
#include "nmsa/report.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include "nmsa/file_io.hpp"

namespace nmsa {

std::uint64_t LatencySummary::total_cycles() const {
  std::uint64_t total = 0;
  for (const std::uint64_t c : batch_cycles) total += c;
  return total;
}

double LatencySummary::host_us_p50() const {
  if (batch_host_us.empty()) return 0;
  std::vector<double> v = batch_host_us;
  // Nearest rank, as the cycle percentiles.
  const std::size_t rank = (v.size() + 1) / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(rank - 1), v.end());
  return v[rank - 1];
}

std::uint64_t percentile_cycles(std::vector<std::uint64_t> values, double p) {
  if (!(p > 0.0 && p <= 100.0)) {
    throw std::invalid_argument("percentile_cycles: p = " + std::to_string(p) +
                                " is outside (0, 100]");
  }
  if (values.empty()) return 0;
  const double n = static_cast<double>(values.size());
  // p * n is exact for whole percentiles, and the small margin keeps a rank that is an integer
  // in theory (95% of 20 values: rank 19) from rounding up to the next one.
  auto rank = static_cast<std::size_t>(std::ceil(p * n / 100.0 - 1e-9));
  rank = std::clamp<std::size_t>(rank, 1, values.size());
  const auto nth = values.begin() + static_cast<std::ptrdiff_t>(rank - 1);
  std::nth_element(values.begin(), nth, values.end());
  return *nth;
}

void compute_percentiles(LatencySummary& latency) {
  latency.p50 = percentile_cycles(latency.batch_cycles, 50);
  latency.p95 = percentile_cycles(latency.batch_cycles, 95);
  latency.p99 = percentile_cycles(latency.batch_cycles, 99);
}

double p99_leaves_budget_at(const std::vector<ContentionRun>& runs) {
  if (runs.empty() || runs.front().dense.batch_cycles.empty()) return kNotMeasured;
  const std::uint64_t budget = percentile_cycles(runs.front().dense.batch_cycles, 50);
  for (const ContentionRun& c : runs) {
    if (percentile_cycles(c.sparse.batch_cycles, 99) > budget) return c.load;
  }
  return kNotMeasured;
}

// --- Files ---------------------------------------------------------------------------------------

void write_report(const DeploymentReport& report, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir)) {
    throw std::runtime_error(dir + ": cannot create the report directory (" +
                             (ec ? ec.message() : std::string("a file is in the way")) + ")");
  }
  const std::filesystem::path base(dir);
  write_file_atomically((base / "report.json").string(), report_json(report));
  write_file_atomically((base / "report.md").string(), report_markdown(report));
  write_file_atomically((base / "index.html").string(), report_html(report));
}

}  // namespace nmsa
