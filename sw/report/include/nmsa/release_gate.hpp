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
#include "nmsa/triage.hpp"

namespace nmsa {

struct GateLimits {
  std::optional<double> max_quality_drop_pp;  // candidate accuracy >= baseline - this (pp)
  std::optional<double> min_speedup;          // candidate effective_speedup >= this
  std::optional<std::uint64_t> max_p99_cycles;  // candidate latency_cycles_p99 <= this
  bool bit_exact = false;  // every candidate batch equal to the golden and the functional model
  bool any() const { return max_quality_drop_pp || min_speedup || max_p99_cycles || bit_exact; }
};

// The release criteria of a run as the baseline of the next release decision: a candidate is
// promoted only if its sparse INT8 top-1 drops by at most limits.quality_drop_pp, its effective
// speedup stays within limits.cycles_growth and its p99 within limits.p99_over_p50_growth of this
// run's, and every batch is bit-exact; otherwise it is rolled back. The same tolerances as nmsa
// triage. A figure this run did not measure sets no limit.
GateLimits release_criteria(const DeploymentReport& r, const TriageLimits& limits = {});

// The figures of a report.json that the gate compares. A key that is present but null (not
// measured) reads as NaN, or 0 for latency_cycles_p99 (no run takes 0 cycles); a check on a
// figure that was not measured fails.
struct ReportSummary {
  std::string source;  // the file, for messages
  double sparse_int8_accuracy = kNotMeasured;
  double effective_speedup = kNotMeasured;
  std::uint64_t latency_cycles_p99 = 0;
  std::uint64_t batches = 0, batches_bit_exact_golden = 0, batches_bit_exact_model = 0;
  GateLimits release_criteria;  // the report's own "release_criteria" (none in older reports)
};

// Reads report.json (a directory stands for the report.json in it). Throws std::runtime_error
// naming the file when it cannot be read, is not JSON, or lacks one of the keys above (or holds
// one of the wrong type or out of range: accuracy outside [0, 1], speedup not finite or <= 0,
// p99 not a non-negative integer).
ReportSummary read_report_summary(const std::string& path);

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
