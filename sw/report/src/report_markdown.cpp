// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// report.md: the report as Markdown, with the same sections and tables as index.html and no
// figures.
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "nmsa/report.hpp"
#include "report_common.hpp"

namespace nmsa {

using namespace report_detail;

namespace {

std::string md(const std::string& s) {
  std::string out;
  for (const char c : s) {
    if (c == '|') {
      out += "\\|";
    } else if (c == '<') {
      out += "&lt;";
    } else if (c == '\n' || c == '\r') {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

// align holds 'l' or 'r' per column; cells are Markdown text already.
std::string md_table(const std::vector<std::string>& header,
                     const std::vector<std::vector<std::string>>& rows, const std::string& align) {
  std::ostringstream out;
  out << "|";
  for (const auto& h : header) out << " " << h << " |";
  out << "\n|";
  for (std::size_t c = 0; c < header.size(); ++c) {
    out << (c < align.size() && align[c] == 'r' ? " ---: |" : " --- |");
  }
  out << "\n";
  for (const auto& row : rows) {
    out << "|";
    for (const auto& cell : row) out << " " << cell << " |";
    out << "\n";
  }
  return out.str() + "\n";
}

const char* kMdMissing = "_not measured_\n\n";

std::string met_text(bool met) { return met ? "met" : "**NOT MET**"; }

}  // namespace

std::string report_markdown(const DeploymentReport& r) {
  const Derived d = derive(r);
  std::ostringstream out;
  out << "# " << md(r.title) << "\n\n";
  out << "Dataset: " << md(or_dash(r.dataset)) << " · test images: " << r.test_images
      << " · device: " << md(or_dash(r.device)) << " · clock: " << md(clock_label(r)) << "\n\n";
  if (!r.clock_source.empty()) out << "Clock: " << md(r.clock_source) << "\n\n";

  out << "## Summary\n\n";
  std::vector<std::vector<std::string>> rows = {
      {"dense FP32 top-1", percent(r.dense_fp32_accuracy)},
      {"dense INT8 top-1", percent(r.dense_int8_accuracy)},
      {"sparse FP32 top-1", percent(r.sparse_fp32_accuracy)},
      {"sparse INT8 top-1 (deployed)", percent(r.sparse_int8_accuracy)},
      {"quality delta (sparse INT8 - dense FP32)", signed_pp(r.quality_delta_pp)},
      {"effective speedup (all dense / deployed cycles)", times(r.effective_speedup)},
      {"all-sparse speedup (predicted)", times(r.all_sparse_speedup_predicted)},
  };
  const char* pct_names[] = {"p50", "p95", "p99"};
  const std::uint64_t pct_values[] = {d.deployed.p50, d.deployed.p95, d.deployed.p99};
  for (int i = 0; i < 3; ++i) {
    rows.push_back({std::string("latency ") + pct_names[i] + " per batch",
                    has_latency(d.deployed) ? cycles_and_us(r, pct_values[i]) : "n/a"});
  }
  rows.push_back({"dense-fallback share of cycles", percent(r.fallback_cycle_share, 1)});
  rows.push_back({"PE utilization", percent(r.pe_utilization, 1)});
  rows.push_back({"metadata share of deployed weights", percent(d.meta_share, 1)});
  if (!r.targets.empty()) {
    rows.push_back({"targets met", std::to_string(d.targets_met) + " of " +
                                       std::to_string(r.targets.size())});
  }
  out << md_table({"figure", "value"}, rows, "lr");
  out << "### Targets\n\n";
  if (r.targets.empty()) {
    out << kMdMissing;
  } else {
    rows.clear();
    for (const auto& t : r.targets) {
      rows.push_back({md(t.name), md(t.required), md(t.measured), met_text(t.met)});
    }
    out << md_table({"target", "required", "measured", "status"}, rows, "lllr");
  }

  out << "## Supported layer matrix\n\n";
  if (r.layers.empty()) {
    out << kMdMissing;
  } else {
    rows.clear();
    for (const auto& l : r.layers) {
      rows.push_back({md(l.name), md(l.op), std::to_string(l.k), std::to_string(l.n_out),
                      md(l.placement), md(or_dash(l.reason)), signed_pp(-l.sensitivity_pp)});
    }
    out << md_table({"layer", "op", "K", "N_out", "placement", "reason", kPrunedAloneHeader}, rows,
                    "llrrllr");
  }

  out << "## Speedup\n\n";
  if (r.layers.empty() && !measured(r.effective_speedup)) {
    out << kMdMissing;
  } else {
    rows.clear();
    for (const auto& l : r.layers) {
      rows.push_back({md(l.name), md(l.placement), grouped(l.deployed_cycles),
                      grouped(l.dense_cycles), times(l.speedup())});
    }
    rows.push_back({"**all layers**", "", grouped(d.layer_deployed_cycles),
                    grouped(d.layer_dense_cycles),
                    times(ratio_or_nan(d.layer_dense_cycles, d.layer_deployed_cycles))});
    out << md_table({"layer", "placement", "deployed cycles", "all-dense cycles", "speedup"}, rows,
                    "llrrr");
    out << "End to end (measured, whole test set): **" << times(r.effective_speedup)
        << "**; with every fallback layer sparse too (predicted): "
        << times(r.all_sparse_speedup_predicted) << ".\n\n";
  }

  out << "## Hardware cost at equal area\n\n";
  if (!r.hardware) {
    out << kMdMissing;
  } else {
    out << "The device with N:M support against the dense-only design of the same multipliers, "
           "both placed and routed on "
        << md(r.hardware->device) << ". The same-array speedup (" << times(r.effective_speedup)
        << ") runs dense layers on the N:M array; this one charges the N:M support its area.\n\n"
        << md_table({"figure", "N:M design", "dense-only"}, hardware_rows(*r.hardware), "lrr")
        << "\nSources: " << md(r.hardware->sparse_source) << "; " << md(r.hardware->dense_source)
        << ". Dense-only cycles from the cycle model (exact against the RTL).\n\n";
  }

  out << "## Dense-fallback impact\n\n";
  if (r.layers.empty() && r.fallback_layers.empty()) {
    out << kMdMissing;
  } else {
    out << "Fallback layers: "
        << (r.fallback_layers.empty() ? std::string("none") : [&] {
             std::string s;
             for (const auto& n : r.fallback_layers) s += (s.empty() ? "" : ", ") + md(n);
             return s;
           }())
        << ". They take " << grouped(r.fallback_cycles) << " cycles, "
        << percent(r.fallback_cycle_share, 1) << " of the deployed device time. If they ran "
        << "sparse too, the speedup would be " << times(r.all_sparse_speedup_predicted)
        << " (predicted) instead of " << times(r.effective_speedup) << ".\n\n";
  }

  out << "## PE utilization\n\n";
  if (r.layers.empty() && r.pe_utilization == 0.0) {
    out << kMdMissing;
  } else {
    out << "Deployed run: **" << percent(r.pe_utilization, 1)
        << "** of the peak MACs per cycle of each layer's mode.\n\n";
    rows.clear();
    for (const auto& l : r.layers) {
      rows.push_back({md(l.name), md(l.placement), grouped(l.macs), grouped(l.deployed_cycles),
                      percent(l.utilization, 1)});
    }
    if (!rows.empty()) {
      out << md_table({"layer", "placement", "MACs", "cycles", "utilization"}, rows, "llrrr");
    }
  }

  out << "## Metadata overhead\n\n";
  if (r.weight_bytes_deployed == 0) {
    out << kMdMissing;
  } else {
    rows = {{"weights, all INT8 dense", grouped(r.weight_bytes_dense)},
            {"weights as deployed (values + metadata)", grouped(r.weight_bytes_deployed)},
            {"of which metadata", grouped(r.meta_bytes) + " (" + percent(d.meta_share, 1) + ")"},
            {"deployed / dense", percent(ratio_or_nan(r.weight_bytes_deployed,
                                                      r.weight_bytes_dense), 1)},
            {"DMA read bytes (deployed run)", grouped(r.dma_read_bytes)},
            {"of which metadata (META_BYTES)",
             grouped(r.dma_meta_bytes) + " (" +
                 percent(ratio_or_nan(r.dma_meta_bytes, r.dma_read_bytes), 1) + ")"}};
    out << md_table({"bytes", "value"}, rows, "lr");
  }

  out << "## Latency\n\n";
  rows.clear();
  for (const LatencySummary* l : latency_runs(d)) {
    if (!has_latency(*l)) continue;
    rows.push_back({md(run_label(*l, l == &d.deployed ? "deployed" : "all dense")),
                    std::to_string(l->batch_size), std::to_string(l->batch_cycles.size()),
                    grouped(l->p50), grouped(l->p95), grouped(l->p99), microseconds(r, l->p50),
                    microseconds(r, l->p95), microseconds(r, l->p99), grouped(l->total_cycles())});
  }
  if (rows.empty()) {
    out << kMdMissing;
  } else {
    out << "Device cycles per batch (nearest-rank percentiles); microseconds at "
        << (has_clock(r) ? clock_label(r) : "an unstated clock (n/a)") << ".\n\n";
    out << md_table({"run", "batch", "batches", "p50 cycles", "p95 cycles", "p99 cycles",
                     "p50", "p95", "p99", "total cycles"},
                    rows, "lrrrrrrrrr");
  }

  out << "## Quality\n\n";
  if (r.quality.empty()) {
    out << kMdMissing;
  } else {
    rows.clear();
    for (const auto& q : r.quality) {
      rows.push_back({md(q.model) + (q.deployed ? " **(deployed)**" : ""), md(q.schedule),
                      q.permuted ? "yes" : "no", percent(q.fp32_accuracy), percent(q.int8_accuracy),
                      md(or_dash(q.int8_measured_on)), md(q.note)});
    }
    out << md_table({"model", "schedule", "permuted", "FP32 top-1", "INT8 top-1",
                     "INT8 measured on", "note"},
                    rows, "lllrrll");
  }

  out << "## Equal latency budget\n\n";
  if (!r.equal_budget) {
    out << kMdMissing;
  } else {
    const EqualBudget& b = *r.equal_budget;
    rows = {{"dense (the budget)", md(b.dense_model), grouped(b.budget_cycles_p50), "-",
             percent(b.dense_int8_accuracy)},
            {"wider sparse", md(b.sparse_model), grouped(b.sparse_cycles_p50),
             grouped(b.predicted_sparse_cycles), percent(b.sparse_int8_accuracy)}};
    out << md_table({"", "model", "p50 cycles per batch", "predicted", "INT8 top-1"}, rows,
                    "llrrr");
    out << "Fits the budget: **" << (b.fits() ? "yes" : "no") << "**; INT8 top-1 "
        << signed_pp(100.0 * (b.sparse_int8_accuracy - b.dense_int8_accuracy))
        << " against the dense model.\n\n";
  }

  out << "## Pruning schedules\n\n";
  if (r.schedules.empty()) out << kMdMissing;
  for (const auto& c : r.schedules) {
    out << "### " << md(c.name) << "\n\n";
    rows.clear();
    for (const auto& p : schedule_points(c)) {
      rows.push_back({epoch_text(p.epoch), measured(p.sparsity) ? percent(p.sparsity, 1) : "",
                      measured(p.val_accuracy) ? percent(p.val_accuracy) : ""});
    }
    out << md_table({"epoch", "weight sparsity", "validation top-1"}, rows, "rrr");
  }

  out << "## Cross-checks\n\n";
  if (r.batches == 0) {
    out << kMdMissing;
  } else {
    out << "- bit-exact against the golden model: "
        << fraction_of(r.batches_bit_exact_golden, r.batches) << " batches ("
        << (r.batches_bit_exact_golden == r.batches ? "ok" : "**MISMATCH**") << ")\n";
    out << "- bit-exact against the functional model: "
        << fraction_of(r.batches_bit_exact_model, r.batches) << " batches ("
        << (r.batches_bit_exact_model == r.batches ? "ok" : "**MISMATCH**") << ")\n\n";
  }

  out << "## Tags\n\n";
  if (r.tags.empty()) {
    out << kMdMissing;
  } else {
    rows.clear();
    for (const auto& [k, v] : r.tags) rows.push_back({md(k), "`" + md(v) + "`"});
    out << md_table({"tag", "value"}, rows, "ll");
  }

  out << "## Notes\n\n";
  if (r.notes.empty()) out << "_none_\n";
  for (const auto& n : r.notes) out << "- " << md(n) << "\n";
  return out.str();
}

}  // namespace nmsa
