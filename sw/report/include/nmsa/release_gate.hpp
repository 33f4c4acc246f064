// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// The release gate, `nmsa gate`: a candidate deployment report (report.json, report.hpp)
// checked against a baseline report and limits on quality, speedup and p99 latency.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "nmsa/report.hpp"

namespace nmsa {

// The figures of a report.json that the gate compares. A key that is present but null (not
// measured) reads as NaN, or 0 for latency_cycles_p99 (no run takes 0 cycles); a check on a
// figure that was not measured fails.
struct ReportSummary {
  std::string source;  // the file, for messages
  double sparse_int8_accuracy = kNotMeasured;
  double effective_speedup = kNotMeasured;
  std::uint64_t latency_cycles_p99 = 0;
};

// Reads report.json (a directory stands for the report.json in it). Throws std::runtime_error
// naming the file when it cannot be read, is not JSON, or lacks one of the keys above (or holds
// one of the wrong type or out of range: accuracy outside [0, 1], speedup not finite or <= 0,
// p99 not a non-negative integer).
ReportSummary read_report_summary(const std::string& path);

struct GateLimits {
  std::optional<double> max_quality_drop_pp;  // candidate accuracy >= baseline - this (pp)
  std::optional<double> min_speedup;          // candidate effective_speedup >= this
  std::optional<std::uint64_t> max_p99_cycles;  // candidate latency_cycles_p99 <= this
};

struct GateResult {
  bool pass = true;
  std::vector<std::string> reasons;  // one line per check, passed or failed, with the figures
};

// Checks every limit that is set, one reason line each; passes iff all of them pass. A limit is
// met exactly at its value. With no limit set nothing is checked and the gate fails (a release
// gate that checks nothing must not look like a pass); `nmsa gate` refuses that as a usage error.
GateResult evaluate_gate(const ReportSummary& baseline, const ReportSummary& candidate,
                         const GateLimits& limits);

}  // namespace nmsa
