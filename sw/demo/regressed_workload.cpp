// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
#include "regressed_workload.hpp"

#include <cstdio>
#include <filesystem>
#include <stdexcept>

#include "nmsa/file_io.hpp"
#include "nmsa/triage.hpp"

namespace nmsa::demo {

namespace {

std::string bytes_per_cycle_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g B/cycle", v);
  return buf;
}

}  // namespace

DeploymentReport workload_report(const DeploymentReport& full, const WorkloadRuns& runs,
                                 double bytes_per_cycle, const std::string& what) {
  if (runs.deployed.layers.size() != full.layers.size() ||
      runs.dense.layers.size() != full.layers.size()) {
    throw std::logic_error("workload_report: the runs do not have the report's layers");
  }
  const auto rows = static_cast<Eigen::Index>(runs.deployed.logits.rows());
  DeploymentReport r = full;
  r.title = full.title + ": " + what;
  r.memory_bytes_per_cycle = bytes_per_cycle;
  r.effective_speedup = static_cast<double>(runs.dense.total_cycles()) /
                        static_cast<double>(runs.deployed.total_cycles());
  r.deployed_latency = full_batch_latency("deployed", runs.deployed, rows);
  r.dense_latency = full_batch_latency("all dense", runs.dense, rows);
  r.batches = runs.deployed.batches();
  r.batches_bit_exact_golden = runs.deployed.batches_matching_golden;
  r.batches_bit_exact_model = matching_batches(runs.deployed, runs.model);
  // Utilization is useful work over cycles, and the useful work scales with the rows run.
  const double row_share = static_cast<double>(rows) / static_cast<double>(full.test_images);
  r.dma_read_bytes = r.dma_meta_bytes = 0;
  r.fallback_cycles = 0;
  std::uint64_t full_total = 0, total = 0;
  for (std::size_t i = 0; i < r.layers.size(); ++i) {
    ReportLayer& l = r.layers[i];
    const std::uint64_t full_cycles = l.deployed_cycles;
    l.deployed_cycles = runs.deployed.layers[i].cycles;
    l.dense_cycles = runs.dense.layers[i].cycles;
    l.macs = static_cast<std::uint64_t>(static_cast<double>(l.macs) * row_share);
    l.utilization = l.deployed_cycles == 0 ? 0.0
                                           : l.utilization * row_share *
                                                 static_cast<double>(full_cycles) /
                                                 static_cast<double>(l.deployed_cycles);
    r.dma_read_bytes += runs.deployed.layers[i].dma_rd_bytes;
    r.dma_meta_bytes += runs.deployed.layers[i].meta_bytes;
    if (l.placement == "device dense") r.fallback_cycles += l.deployed_cycles;
    full_total += full_cycles;
    total += l.deployed_cycles;
  }
  r.fallback_cycle_share =
      total == 0 ? 0.0 : static_cast<double>(r.fallback_cycles) / static_cast<double>(total);
  r.pe_utilization = total == 0 ? 0.0
                                : full.pe_utilization * row_share *
                                      static_cast<double>(full_total) / static_cast<double>(total);
  // The full run's other figures are not this workload's.
  r.other_latency.clear();
  r.contention.clear();
  r.equal_budget.reset();
  r.targets.clear();
  r.validation.clear();
  r.regressed_workload.clear();
  r.triage_memo.clear();
  r.tags.push_back({"workload", what});
  r.notes = {"A workload of the demo: the first " + std::to_string(r.batches) + " batches (" +
                 std::to_string(rows) + " images) of the test set on the RTL, host memory at " +
                 bytes_per_cycle_text(bytes_per_cycle) + " (" + what + "). Speedup, latency, "
                 "cycles and bytes are this workload's; the accuracies are the full run's, whose "
                 "models these are (every batch here is checked bit for bit).",
             "The demo's full report is two directories up (../../index.html)."};
  return r;
}

std::string triage_regressed_workload(DeploymentReport& full, const WorkloadRuns& comparator,
                                      const WorkloadRuns& regressed,
                                      double regressed_bytes_per_cycle,
                                      const std::string& out_dir) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(out_dir) / "regressed";
  const std::string what = "host memory at " + bytes_per_cycle_text(regressed_bytes_per_cycle) +
                           " instead of " + bytes_per_cycle_text(full.memory_bytes_per_cycle);
  write_report(workload_report(full, comparator, full.memory_bytes_per_cycle, "stable comparator"),
               (dir / "comparator").string());
  write_report(workload_report(full, regressed, regressed_bytes_per_cycle, "regressed: " + what),
               (dir / "candidate").string());
  const TriageResult t =
      triage_reports((dir / "comparator").string(), (dir / "candidate").string());
  write_files_atomically({{(dir / "triage.md").string(), triage_memo(t)},
                          {(dir / "triage.json").string(), triage_json(t)}});
  full.regressed_workload = what + ", the first " + std::to_string(comparator.deployed.batches()) +
                            " batches beside the same batches on this run's memory";
  full.triage_memo = "regressed/triage.md";
  return t.findings.empty() ? "" : t.findings.front().mechanism;
}

}  // namespace nmsa::demo
