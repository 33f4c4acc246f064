// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
#include "report_common.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace nmsa::report_detail {

namespace {

LatencySummary summarized(LatencySummary l) {
  if (!l.batch_cycles.empty()) compute_percentiles(l);
  return l;
}

}  // namespace

bool measured(double v) { return std::isfinite(v); }

bool has_latency(const LatencySummary& l) { return !l.batch_cycles.empty() || l.p99 > 0; }

bool has_clock(const DeploymentReport& r) { return std::isfinite(r.clock_mhz) && r.clock_mhz > 0; }

std::string clock_label(const DeploymentReport& r) {
  if (!has_clock(r)) return "n/a";
  char mhz[32];
  std::snprintf(mhz, sizeof mhz, "%.1f MHz", r.clock_mhz);
  return std::string(mhz) + (r.clock_measured ? " (measured Fmax)" : " (stated, not measured)");
}

double ratio_or_nan(std::uint64_t num, std::uint64_t den) {
  return den == 0 ? kNotMeasured : static_cast<double>(num) / static_cast<double>(den);
}

Derived derive(const DeploymentReport& r) {
  Derived d;
  d.deployed = summarized(r.deployed_latency);
  d.dense = summarized(r.dense_latency);
  for (const auto& l : r.other_latency) d.others.push_back(summarized(l));
  for (const auto& c : r.contention) {
    d.contention.push_back({c.load, summarized(c.sparse), summarized(c.dense)});
  }
  d.meta_share = ratio_or_nan(r.meta_bytes, r.weight_bytes_deployed);
  for (const auto& l : r.layers) {
    d.layer_deployed_cycles += l.deployed_cycles;
    d.layer_dense_cycles += l.dense_cycles;
  }
  for (const auto& t : r.targets) d.targets_met += t.met ? 1 : 0;
  return d;
}

std::vector<const LatencySummary*> latency_runs(const Derived& d) {
  std::vector<const LatencySummary*> runs = {&d.deployed, &d.dense};
  for (const auto& l : d.others) runs.push_back(&l);
  return runs;
}

std::string run_label(const LatencySummary& l, const char* fallback) {
  return l.label.empty() ? fallback : l.label;
}

bool is_fallback(const ReportLayer& l) { return l.placement == "device dense"; }

std::vector<SchedulePoint> schedule_points(const ScheduleCurve& c) {
  std::map<double, SchedulePoint> by_epoch;
  for (const auto& [e, s] : c.sparsity) {
    by_epoch.emplace(e, SchedulePoint{e}).first->second.sparsity = s;
  }
  for (const auto& [e, a] : c.val_accuracy) {
    by_epoch.emplace(e, SchedulePoint{e}).first->second.val_accuracy = a;
  }
  std::vector<SchedulePoint> out;
  for (const auto& [e, p] : by_epoch) out.push_back(p);
  return out;
}

std::vector<std::vector<std::string>> hardware_rows(const HardwareCost& h) {
  auto mhz = [](double v) { return fixed(v, 1) + " MHz"; };
  return {
      {"LUT4 cells", grouped(h.sparse_luts), grouped(h.dense_luts)},
      {"DSPs (MULT18X18D)", grouped(h.sparse_dsps), grouped(h.dense_dsps)},
      {"block RAMs", grouped(h.sparse_brams), grouped(h.dense_brams)},
      {"Fmax (median of seeds)", mhz(h.sparse_fmax_mhz), mhz(h.dense_fmax_mhz)},
      {"LUT overhead of N:M support",
       percent(static_cast<double>(h.sparse_luts) / static_cast<double>(h.dense_luts) - 1.0, 1),
       ""},
      {"deployed model: cycles ratio (dense-only / deployed)", times(h.cycles_ratio), ""},
      {"throughput (MACs/s) ratio", times(h.throughput_ratio()), ""},
      {"throughput per LUT ratio (iso-area speedup)", times(h.per_lut_ratio()), ""},
      {"throughput per DSP ratio", times(h.per_dsp_ratio()), ""},
  };
}

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string percent(double fraction, int digits) {
  return measured(fraction) ? fixed(100.0 * fraction, digits) + "%" : "n/a";
}

std::string signed_pp(double pp) {
  if (!measured(pp)) return "n/a";
  return (pp >= 0 ? "+" : "") + fixed(pp, 2) + " pp";
}

std::string percent_with_ci(double fraction, const Interval& ci95) {
  if (!measured(ci95.lo) || !measured(ci95.hi)) return percent(fraction);
  return percent(fraction) + " [" + fixed(100.0 * ci95.lo, 2) + ", " + fixed(100.0 * ci95.hi, 2) +
         "]";
}

std::string interval_pp(const Interval& ci95_pp) {
  if (!measured(ci95_pp.lo) || !measured(ci95_pp.hi)) return "n/a";
  const auto bound = [](double v) { return (v >= 0 ? "+" : "") + fixed(v, 2); };
  return "[" + bound(ci95_pp.lo) + ", " + bound(ci95_pp.hi) + "]";
}

std::string signed_pp_with_ci(double pp, const Interval& ci95_pp) {
  if (!measured(ci95_pp.lo) || !measured(ci95_pp.hi)) return signed_pp(pp);
  return signed_pp(pp) + " " + interval_pp(ci95_pp);
}

std::string p_value(double p) {
  if (!measured(p)) return "n/a";
  return p < 1e-4 ? "< 0.0001" : fixed(p, 4);
}

std::string times(double x) { return measured(x) ? fixed(x, 2) + "x" : "n/a"; }

std::string grouped(std::uint64_t v) {
  const std::string digits = std::to_string(v);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string microseconds(const DeploymentReport& r, std::uint64_t cycles) {
  if (!has_clock(r)) return "n/a";
  const double us = static_cast<double>(cycles) / r.clock_mhz;
  const std::string text = fixed(us, us < 10 ? 2 : 1);
  const auto point = text.find('.');
  // Thousands separators on the whole part, as on the cycle counts beside it.
  return grouped(std::stoull(text.substr(0, point))) + text.substr(point) +
         " \xC2\xB5s";  // U+00B5 micro sign
}

std::string or_dash(const std::string& s) { return s.empty() ? "-" : s; }

std::string cycles_and_us(const DeploymentReport& r, std::uint64_t cycles) {
  return grouped(cycles) + " cycles (" + microseconds(r, cycles) + ")";
}

std::string fraction_of(std::uint64_t part, std::uint64_t whole) {
  return grouped(part) + " of " + grouped(whole);
}

std::string epoch_text(double e) {
  return std::fabs(e - std::round(e)) < 1e-9 ? fixed(e, 0) : fixed(e, 2);
}

std::string esc(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (const char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

}  // namespace nmsa::report_detail
