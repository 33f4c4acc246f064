// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// A failing workload beside its stable comparator (docs/triage.md): the first batches of the test
// set run twice more on the RTL, once on the demo's host memory and once on a memory with a
// fraction of its bandwidth, each as a deployment report of its own; nmsa triage of the two names
// the first failing mechanism, and its memo is linked from the demo's report.
#pragma once

#include <string>

#include "nmsa/report.hpp"
#include "test_set.hpp"

namespace nmsa::demo {

// One workload's device runs over the same rows: the deployed and the all-dense model on the
// RTL, and the deployed model on the functional model.
struct WorkloadRuns {
  TestSetRun deployed, dense, model;
};

// `full` (the demo's report) restricted to a workload: its speedup, latency, per-layer cycles,
// DMA bytes and bit-exactness from `runs`, on a host memory of `bytes_per_cycle`. The accuracies
// stay the full run's: the models are the same and every batch is checked bit for bit, so a
// memory cannot change an output without the report saying so.
DeploymentReport workload_report(const DeploymentReport& full, const WorkloadRuns& runs,
                                 double bytes_per_cycle, const std::string& what);

// Writes out_dir/regressed/{comparator,candidate}/ (each a report) and the triage of the two as
// out_dir/regressed/triage.{md,json}; sets full.regressed_workload and full.triage_memo. Returns
// the triage's first failing mechanism ("" when it found none).
std::string triage_regressed_workload(DeploymentReport& full, const WorkloadRuns& comparator,
                                      const WorkloadRuns& regressed,
                                      double regressed_bytes_per_cycle,
                                      const std::string& out_dir);

}  // namespace nmsa::demo
