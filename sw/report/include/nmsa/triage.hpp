// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// `nmsa triage` (docs/triage.md): why a candidate deployment report regressed against a baseline.
// The figures of the two report.json files are compared mechanism by mechanism, in the order the
// execution flow runs them:
//
//   1. model and graph lowering      a layer no longer placed on the device sparse
//   2. sparse-format conversion      metadata or weight bytes grown; the device agreeing with the
//                                    functional model but not the golden one (the program itself
//                                    computes another GEMM)
//   3. scheduling and memory         DMA bytes grown (the tiling plan, the buffers), or less host
//                                    bandwidth
//   4. execution                     the device disagreeing with the functional model; cycles per
//                                    layer or the speedup down with the bytes unchanged
//   5. result assembly and quality   accuracy down beyond the tolerance
//   6. latency tail                  p99 grown against p50
//
// The first failing mechanism is the one to fix: later ones may only be its consequences. Each
// finding carries the figures that prove it and the role that owns the mechanism.
#pragma once

#include <string>
#include <vector>

namespace nmsa {

// What counts as a regression (relative changes are fractions of the baseline's figure).
struct TriageLimits {
  double quality_drop_pp = 0.3;    // sparse INT8 accuracy
  double cycles_growth = 0.02;     // per-layer cycles, effective speedup
  double bytes_growth = 0.01;      // metadata, weight and DMA bytes
  double p99_over_p50_growth = 0.05;
};

struct TriageFinding {
  int order = 0;          // 1..6, the mechanism's place in the execution flow
  std::string mechanism;  // "model and graph lowering", ...
  std::string owner;      // "compiler sparsity pass owner", ...
  std::vector<std::string> evidence;  // the figures that prove it, baseline -> candidate
};

struct TriageResult {
  std::string baseline_file, candidate_file;
  std::vector<std::string> tag_changes;  // "rtl configuration: default: ... -> small: ..."
  std::vector<TriageFinding> findings;   // every failing mechanism, in execution order
  std::string reproduce_candidate;       // a command that reruns the failing workload
  std::string reproduce_baseline;        // and one that runs the stable comparator
  std::vector<std::string> rollback_criteria;
  bool regressed() const { return !findings.empty(); }
};

// Reads both reports (a directory stands for its report.json). Throws std::runtime_error naming
// the file and the key for an unreadable or malformed report, and naming the tag when the two
// runs were measured on conditions that make them incomparable: another test set, batch size or
// data split. Other tags that differ (revision, configuration, recipes) are listed as evidence.
TriageResult triage_reports(const std::string& baseline, const std::string& candidate,
                            const TriageLimits& limits = {});

std::string triage_text(const TriageResult& r);
std::string triage_json(const TriageResult& r);
std::string triage_memo(const TriageResult& r);  // Markdown

}  // namespace nmsa
