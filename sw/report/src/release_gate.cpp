// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
#include "nmsa/release_gate.hpp"

#include "nmsa/file_io.hpp"

#include <cmath>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>

#include <nlohmann/json.hpp>

#include "report_common.hpp"

namespace nmsa {

using namespace report_detail;

namespace {

using ReadJson = nlohmann::json;

const ReadJson& require_key(const ReadJson& j, const std::string& file, const char* key) {
  const auto it = j.find(key);
  if (it == j.end()) {
    throw std::runtime_error(file + ": missing key \"" + key +
                             "\" (is it a report.json written by nmsa?)");
  }
  return *it;
}

[[noreturn]] void wrong_type(const std::string& file, const char* key, const ReadJson& v,
                             const char* wanted) {
  throw std::runtime_error(file + ": \"" + key + "\" must be " + wanted + ", not " +
                           v.type_name() + " " + v.dump());
}

double read_accuracy(const ReadJson& j, const std::string& file, const char* key) {
  const ReadJson& v = require_key(j, file, key);
  if (v.is_null()) return kNotMeasured;
  if (!v.is_number()) wrong_type(file, key, v, "a number or null");
  const double a = v.get<double>();
  if (!(std::isfinite(a) && a >= 0.0 && a <= 1.0)) {
    throw std::runtime_error(file + ": \"" + key + "\" = " + v.dump() +
                             " is outside [0, 1] (accuracies are fractions, not percent)");
  }
  return a;
}

double read_speedup(const ReadJson& j, const std::string& file, const char* key) {
  const ReadJson& v = require_key(j, file, key);
  if (v.is_null()) return kNotMeasured;
  if (!v.is_number()) wrong_type(file, key, v, "a number or null");
  const double s = v.get<double>();
  if (!(std::isfinite(s) && s > 0.0)) {
    throw std::runtime_error(file + ": \"" + key + "\" = " + v.dump() +
                             " must be finite and > 0");
  }
  return s;
}

std::uint64_t read_cycles(const ReadJson& j, const std::string& file, const char* key) {
  const ReadJson& v = require_key(j, file, key);
  if (v.is_null()) return 0;
  if (v.is_number_unsigned()) return v.get<std::uint64_t>();
  if (v.is_number_integer()) {
    throw std::runtime_error(file + ": \"" + key + "\" = " + v.dump() + " must be >= 0");
  }
  if (v.is_number_float()) {
    // Another writer may have printed a whole number as 12345.0.
    const double c = v.get<double>();
    if (std::isfinite(c) && c >= 0 && c == std::floor(c) && c < 1.8e19) {
      return static_cast<std::uint64_t>(c);
    }
    throw std::runtime_error(file + ": \"" + key + "\" = " + v.dump() +
                             " must be a whole number of cycles >= 0");
  }
  wrong_type(file, key, v, "a whole number of cycles or null");
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

ReportSummary read_report_summary(const std::string& path) {
  std::string file = path;
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    file = (std::filesystem::path(path) / "report.json").string();
  }
  const std::string text = read_regular_file(file);
  ReadJson j;
  try {
    j = ReadJson::parse(text);
  } catch (const ReadJson::exception& e) {
    // A syntax error, or a number too large for a double (out_of_range.406). Drop nlohmann's
    // "[json.exception.parse_error.101] " prefix: the file name says enough.
    std::string what = e.what();
    const auto bracket = what.find("] ");
    if (what.rfind("[json.exception", 0) == 0 && bracket != std::string::npos) {
      what = what.substr(bracket + 2);
    }
    throw std::runtime_error(file + ": not valid JSON: " + what);
  }
  if (!j.is_object()) {
    throw std::runtime_error(file + ": expected a JSON object (report.json), found " +
                             j.type_name());
  }
  if (const auto it = j.find("report_format"); it != j.end()) {
    if (!it->is_number_integer() || it->get<long long>() > kReportFormatVersion) {
      throw std::runtime_error(file + ": \"report_format\" " + it->dump() +
                               " is not one this nmsa reads (<= " +
                               std::to_string(kReportFormatVersion) + ")");
    }
  }
  ReportSummary s;
  s.source = file;
  s.sparse_int8_accuracy = read_accuracy(j, file, "sparse_int8_accuracy");
  s.effective_speedup = read_speedup(j, file, "effective_speedup");
  s.latency_cycles_p99 = read_cycles(j, file, "latency_cycles_p99");
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
  if (g.reasons.empty()) {
    g.pass = false;
    g.reasons.push_back("no limit set: nothing was checked: FAIL");
  }
  return g;
}

}  // namespace nmsa
