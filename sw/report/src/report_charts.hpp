// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// The figures of the report's index.html, drawn with svg_chart.hpp. Each is an HTML <figure>
// with its caption, or nothing when the report has no figures to draw.
#pragma once

#include <string>

#include "nmsa/report.hpp"
#include "report_common.hpp"

namespace nmsa::report_detail {

// (a) The pruning schedules: sparsity and validation accuracy against the epoch.
std::string schedule_figures(const DeploymentReport& r);

// (b) Deployed against all-dense cycles per device layer, with the speedup above each pair.
std::string speedup_figure(const DeploymentReport& r);

// The share of deployed device time per layer, coloured by placement, as one stacked bar.
std::string fallback_figure(const DeploymentReport& r);

// (c) Per-batch latency of every run, sorted: the value at x is the x-th percentile.
std::string latency_figure(const DeploymentReport& r, const Derived& d);

// Per-batch latency against the background load of a second AXI master, deployed and all dense:
// every batch a dot, p50 and p99 as lines, and the budget (the dense p50 without contention).
std::string contention_figure(const DeploymentReport& r, const Derived& d);

// (d) FP32 and INT8 top-1 of every quality row, as horizontal bars.
std::string quality_figure(const DeploymentReport& r);

}  // namespace nmsa::report_detail
