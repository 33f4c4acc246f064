// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
#include "nmsa/release_gate.hpp"

#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

#include "report_common.hpp"
#include "report_reader.hpp"

namespace nmsa {

using namespace report_detail;

namespace {

// A count that older gate-only files may lack: 0 when absent.
std::uint64_t read_optional_count(const ReadJson& j, const std::string& file, const char* key) {
  return j.contains(key) ? read_cycles(j, file, key) : 0;
}

// Two values printed with `digits` decimals, or more when a failed check would otherwise print
// as "0.50 > 0.50".
std::pair<std::string, std::string> distinct(double a, double b, int digits, bool ok) {
  std::string sa = fixed(a, digits), sb = fixed(b, digits);
  while (!ok && a != b && sa == sb && digits < 8) {
    ++digits;
    sa = fixed(a, digits);
    sb = fixed(b, digits);
  }
  return {sa, sb};
}

}  // namespace

GateLimits release_criteria(const DeploymentReport& r, const TriageLimits& limits) {
  GateLimits g;
  g.bit_exact = r.batches > 0;
  if (measured(r.sparse_int8_accuracy)) g.max_quality_drop_pp = limits.quality_drop_pp;
  if (measured(r.effective_speedup) && r.effective_speedup > 0) {
    g.min_speedup = r.effective_speedup / (1.0 + limits.cycles_growth);
  }
  const std::uint64_t p99 = derive(r).deployed.p99;
  if (p99 > 0) {
    g.max_p99_cycles = static_cast<std::uint64_t>(
        std::floor(static_cast<double>(p99) * (1.0 + limits.p99_over_p50_growth)));
  }
  return g;
}

ReportSummary read_report_summary(const std::string& path) {
  const ReadReport report = read_report_json(path);
  const std::string& file = report.file;
  const ReadJson& j = report.json;
  ReportSummary s;
  s.source = file;
  s.sparse_int8_accuracy = read_accuracy(j, file, "sparse_int8_accuracy");
  s.effective_speedup = read_speedup(j, file, "effective_speedup");
  s.latency_cycles_p99 = read_cycles(j, file, "latency_cycles_p99");
  s.batches = read_optional_count(j, file, "batches");
  s.batches_bit_exact_golden = read_optional_count(j, file, "batches_bit_exact_golden");
  s.batches_bit_exact_model = read_optional_count(j, file, "batches_bit_exact_model");
  if (const auto c = j.find("release_criteria"); c != j.end() && !c->is_null()) {
    const std::string where = file + ": release_criteria";
    if (!c->is_object()) throw std::runtime_error(where + " must be an object");
    const double drop = read_optional_number(*c, where, "max_quality_drop_pp");
    const double speedup = read_optional_number(*c, where, "min_speedup");
    const std::uint64_t p99 = read_cycles(*c, where, "max_p99_cycles");
    if (measured(drop)) s.release_criteria.max_quality_drop_pp = drop;
    if (measured(speedup)) s.release_criteria.min_speedup = speedup;
    if (p99 > 0) s.release_criteria.max_p99_cycles = p99;
    const auto exact = c->find("bit_exact");
    s.release_criteria.bit_exact = exact != c->end() && exact->is_boolean() && exact->get<bool>();
  }
  return s;
}

GateResult evaluate_gate(const ReportSummary& baseline, const ReportSummary& candidate,
                         const GateLimits& limits) {
  GateResult g;
  auto check = [&g](bool ok, const std::string& line) {
    g.pass = g.pass && ok;
    g.reasons.push_back(line + (ok ? ": ok" : ": FAIL"));
  };
  const std::string cand = candidate.source.empty() ? "candidate" : candidate.source;
  const std::string base = baseline.source.empty() ? "baseline" : baseline.source;
  if (limits.max_quality_drop_pp) {
    const double limit = *limits.max_quality_drop_pp;
    if (!measured(candidate.sparse_int8_accuracy) || !measured(baseline.sparse_int8_accuracy)) {
      check(false, "quality: sparse_int8_accuracy not measured in " +
                       (measured(candidate.sparse_int8_accuracy) ? base : cand));
    } else {
      const double drop =
          (baseline.sparse_int8_accuracy - candidate.sparse_int8_accuracy) * 100.0;
      // Accuracies are ratios of image counts, so the drop is inexact in binary: a drop equal to
      // the limit in decimal must not fail by 1e-15.
      const bool ok = drop <= limit + 1e-9;
      const auto [d, l] = distinct(drop, limit, 2, ok);
      check(ok, "quality: candidate " + percent(candidate.sparse_int8_accuracy) + " vs baseline " +
                    percent(baseline.sparse_int8_accuracy) + ": drop " + d + " pp " +
                    (ok ? "<=" : ">") + " " + l + " pp");
    }
  }
  if (limits.min_speedup) {
    const double limit = *limits.min_speedup;
    if (!measured(candidate.effective_speedup)) {
      check(false, "speedup: effective_speedup not measured in " + cand);
    } else {
      const bool ok = candidate.effective_speedup >= limit * (1 - 1e-12);
      const auto [c, l] = distinct(candidate.effective_speedup, limit, 2, ok);
      check(ok, "speedup: candidate " + c + "x (baseline " + times(baseline.effective_speedup) +
                    ") " + (ok ? ">=" : "<") + " " + l + "x");
    }
  }
  if (limits.max_p99_cycles) {
    const std::uint64_t limit = *limits.max_p99_cycles;
    if (candidate.latency_cycles_p99 == 0) {
      check(false, "p99 latency: latency_cycles_p99 not measured in " + cand);
    } else {
      const bool ok = candidate.latency_cycles_p99 <= limit;
      check(ok, "p99 latency: candidate " + grouped(candidate.latency_cycles_p99) +
                    " cycles (baseline " +
                    (baseline.latency_cycles_p99 ? grouped(baseline.latency_cycles_p99) : "n/a") +
                    ") " + (ok ? "<=" : ">") + " " + grouped(limit) + " cycles");
    }
  }
  if (limits.bit_exact) {
    const bool ok = candidate.batches > 0 &&
                    candidate.batches_bit_exact_golden == candidate.batches &&
                    candidate.batches_bit_exact_model == candidate.batches;
    check(ok, "bit-exact: candidate " + std::to_string(candidate.batches_bit_exact_golden) + "/" +
                  std::to_string(candidate.batches) + " batches equal the golden model, " +
                  std::to_string(candidate.batches_bit_exact_model) + "/" +
                  std::to_string(candidate.batches) + " the functional model");
  }
  if (g.reasons.empty()) {
    g.pass = false;
    g.reasons.push_back("no limit set: nothing was checked: FAIL");
  }
  return g;
}

}  // namespace nmsa
