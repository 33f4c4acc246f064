// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// What the report's writers share (report.json, report.md, index.html, and the release gate's
// messages): the figures derived from a DeploymentReport, and how numbers and text are written.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nmsa/report.hpp"

namespace nmsa::report_detail {

// The quality gate's measurement, as a column header.
inline constexpr const char* kPrunedAloneHeader = "val. change, pruned alone";

// --- Figures shared by the three writers ---------------------------------------------------------

bool measured(double v);
bool has_latency(const LatencySummary& l);
bool has_clock(const DeploymentReport& r);
// "124.9 MHz (measured Fmax)" or "100.0 MHz (stated, not measured)", or "n/a".
std::string clock_label(const DeploymentReport& r);
double ratio_or_nan(std::uint64_t num, std::uint64_t den);

struct Derived {
  LatencySummary deployed;
  LatencySummary dense;
  std::vector<LatencySummary> others;
  std::vector<ContentionRun> contention;  // percentiles recomputed from the batch lists
  double meta_share = kNotMeasured;  // meta_bytes / weight_bytes_deployed
  std::uint64_t layer_deployed_cycles = 0;
  std::uint64_t layer_dense_cycles = 0;
  std::size_t targets_met = 0;
};

Derived derive(const DeploymentReport& r);

// All latency runs in the order they are shown: deployed, dense, then the others.
std::vector<const LatencySummary*> latency_runs(const Derived& d);
std::string run_label(const LatencySummary& l, const char* fallback);

// Layers placed on the device in dense mode although they are supported sparse.
bool is_fallback(const ReportLayer& l);

// Every epoch at which a curve has a point, with the sparsity and the accuracy there (NaN when
// the curve has none at that epoch): the rows of the schedule tables.
struct SchedulePoint {
  double epoch;
  double sparsity = kNotMeasured;
  double val_accuracy = kNotMeasured;
};

std::vector<SchedulePoint> schedule_points(const ScheduleCurve& c);

// The equal-area comparison as rows of (figure, N:M design, dense-only design): the same rows in
// report.md and index.html.
std::vector<std::vector<std::string>> hardware_rows(const HardwareCost& h);

// --- Text formatting -----------------------------------------------------------------------------

std::string fixed(double v, int digits);
std::string percent(double fraction, int digits = 2);
std::string signed_pp(double pp);
// "89.12% [88.50, 89.73]": an accuracy and its 95% interval, in percent.
std::string percent_with_ci(double fraction, const Interval& ci95);
// "[-0.51, +0.05]": an interval of differences in pp, or "n/a".
std::string interval_pp(const Interval& ci95_pp);
// "-0.23 pp [-0.51, +0.05]": a difference and its 95% interval.
std::string signed_pp_with_ci(double pp, const Interval& ci95_pp);
// McNemar's p, "0.0021" or "< 0.0001".
std::string p_value(double p);
std::string times(double x);
std::string grouped(std::uint64_t v);
std::string microseconds(const DeploymentReport& r, std::uint64_t cycles);
std::string cycles_and_us(const DeploymentReport& r, std::uint64_t cycles);
std::string fraction_of(std::uint64_t part, std::uint64_t whole);
std::string or_dash(const std::string& s);
std::string epoch_text(double e);
// Text escaped for HTML (index.html and its inline SVG).
std::string esc(const std::string& s);

}  // namespace nmsa::report_detail
