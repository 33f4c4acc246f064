// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// The report's sections, written once: what each says, in which order, and what it shows when
// its figures were not measured. report_markdown.cpp and report_html.cpp render the result.
#include "report_document.hpp"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "nmsa/release_gate.hpp"
#include "report_charts.hpp"
#include "report_common.hpp"

namespace nmsa::report_detail {

// --- The model's helpers -------------------------------------------------------------------------

Inline& Inline::operator+=(const Inline& more) {
  spans.insert(spans.end(), more.spans.begin(), more.spans.end());
  return *this;
}

Inline operator+(Inline a, const Inline& b) { return a += b; }

namespace {

Inline styled(Span::Style style, const std::string& text, double fraction = 0) {
  Inline i;
  i.spans.push_back({style, text, fraction, ""});
  return i;
}

}  // namespace

Inline strong(const std::string& text) { return styled(Span::Style::kStrong, text); }
Inline code(const std::string& text) { return styled(Span::Style::kCode, text); }

Inline status(bool good, const std::string& good_text, const std::string& bad_text) {
  return good ? styled(Span::Style::kGood, good_text) : styled(Span::Style::kBad, bad_text);
}

Inline link(const std::string& text, const std::string& target) {
  Inline i;
  i.spans.push_back({Span::Style::kLink, text, 0, target});
  return i;
}

Inline meter(double fraction) {
  if (!measured(fraction)) return Inline("n/a");
  return styled(Span::Style::kMeter, percent(fraction, 1), fraction);
}

namespace {

Block block(Block::Kind kind) {
  Block b;
  b.kind = kind;
  return b;
}

}  // namespace

Block paragraph(Inline text) {
  Block b = block(Block::Kind::kParagraph);
  b.text = std::move(text);
  return b;
}

Block small_print(Inline text) {
  Block b = block(Block::Kind::kSmallPrint);
  b.text = std::move(text);
  return b;
}

Block table_block(Table table) {
  Block b = block(Block::Kind::kTable);
  b.table = std::move(table);
  return b;
}

Block list(std::vector<Inline> items) {
  Block b = block(Block::Kind::kList);
  b.items = std::move(items);
  return b;
}

Block heading(const std::string& text) {
  Block b = block(Block::Kind::kHeading);
  b.text = Inline(text);
  return b;
}

Block figure(std::string svg) {
  Block b = block(Block::Kind::kFigure);
  b.svg = std::move(svg);
  return b;
}

Block cards(std::vector<Card> cards) {
  Block b = block(Block::Kind::kCards);
  b.cards = std::move(cards);
  return b;
}

Block details(Inline summary, Table table) {
  Block b = block(Block::Kind::kDetails);
  b.text = std::move(summary);
  b.table = std::move(table);
  return b;
}

// --- The sections --------------------------------------------------------------------------------

namespace {

Section missing_section(Section s, std::string reason = "") {
  s.missing = true;
  s.missing_reason = std::move(reason);
  return s;
}

std::string joined(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

Section summary(const DeploymentReport& r, const Derived& d) {
  Section s{"summary", "Summary", {}, false, ""};
  s.blocks.push_back(cards(
      {{"sparse INT8 top-1", percent(r.sparse_int8_accuracy),
        "dense FP32 " + percent(r.dense_fp32_accuracy)},
       {"quality delta", signed_pp(r.quality_delta_pp),
        "sparse INT8 vs " + or_dash(r.quality_baseline) + ", 95% CI " +
            interval_pp(r.quality_delta_ci95_pp)},
       {"effective speedup", times(r.effective_speedup), "all dense / deployed device cycles"},
       {"p99 latency", has_latency(d.deployed) ? grouped(d.deployed.p99) : "n/a",
        has_latency(d.deployed) ? "cycles per batch (" + microseconds(r, d.deployed.p99) + ")"
                                : ""}}));

  Table t{{"figure", "value"}, {}, "lr", true, false};
  t.rows = {
      {"dataset", or_dash(r.dataset)},
      {"test images",
       r.test_images > 0 ? grouped(static_cast<std::uint64_t>(r.test_images)) : "n/a"},
      {"device", or_dash(r.device)},
      {"clock", clock_label(r)},
  };
  if (!r.clock_source.empty()) t.rows.push_back({"clock source", r.clock_source});
  const std::vector<std::vector<Inline>> figures = {
      {"dense FP32 top-1 (first training run)", percent(r.dense_fp32_accuracy)},
      {"dense INT8 top-1 (first training run)", percent(r.dense_int8_accuracy)},
      {"dense control FP32 top-1 (trained as long as the sparse models)",
       percent(r.control_fp32_accuracy)},
      {"sparse FP32 top-1", percent(r.sparse_fp32_accuracy)},
      {"sparse INT8 top-1 (deployed)", percent(r.sparse_int8_accuracy)},
      {"quality baseline", or_dash(r.quality_baseline)},
      {"quality delta (sparse INT8 - baseline) [95% CI]",
       signed_pp_with_ci(r.quality_delta_pp, r.quality_delta_ci95_pp)},
      {"effective speedup (all dense / deployed cycles)", times(r.effective_speedup)},
      {"all-sparse speedup (predicted)", times(r.all_sparse_speedup_predicted)},
  };
  t.rows.insert(t.rows.end(), figures.begin(), figures.end());
  const std::pair<const char*, std::uint64_t> percentiles[] = {
      {"p50", d.deployed.p50}, {"p95", d.deployed.p95}, {"p99", d.deployed.p99}};
  for (const auto& [name, cycles] : percentiles) {
    t.rows.push_back({std::string("latency ") + name + " per batch",
                      has_latency(d.deployed) ? cycles_and_us(r, cycles) : "n/a"});
  }
  t.rows.push_back({"dense fallbacks", r.fallback_layers.empty() ? "none" : joined(r.fallback_layers)});
  t.rows.push_back({"dense-fallback share of cycles", percent(r.fallback_cycle_share, 1)});
  t.rows.push_back({"PE utilization", percent(r.pe_utilization, 1)});
  t.rows.push_back({"metadata share of deployed weights", percent(d.meta_share, 1)});
  if (!r.targets.empty()) {
    t.rows.push_back({"targets met", std::to_string(d.targets_met) + " of " +
                                         std::to_string(r.targets.size()) + " " +
                                         status(d.targets_met == r.targets.size(), "all met",
                                                "NOT ALL MET")});
  }
  s.blocks.push_back(table_block(std::move(t)));
  return s;
}

Section targets(const DeploymentReport& r) {
  Section s{"targets", "Targets", {}, false, ""};
  if (r.targets.empty()) return missing_section(s, "no targets in this report");
  Table t{{"target", "required", "measured", "status"}, {}, "llrl", false, false};
  for (const auto& target : r.targets) {
    t.rows.push_back({target.name, target.required, target.measured, status(target.met)});
  }
  s.blocks.push_back(table_block(std::move(t)));
  return s;
}

Section layers(const DeploymentReport& r) {
  Section s{"layers", "Supported layer matrix", {}, false, ""};
  if (r.layers.empty()) return missing_section(s);
  Table t{{"layer", "op", "K", "N_out", "placement", "reason", kPrunedAloneHeader},
          {},
          "llrrllr",
          false,
          false};
  for (const auto& l : r.layers) {
    t.rows.push_back({strong(l.name), l.op, std::to_string(l.k), std::to_string(l.n_out),
                      l.placement, or_dash(l.reason), signed_pp(-l.sensitivity_pp)});
  }
  s.blocks.push_back(table_block(std::move(t)));
  s.blocks.push_back(small_print(
      "\"Pruned alone\": validation top-1 change when only this layer is pruned to N:M and "
      "briefly fine-tuned, against an unpruned control fine-tuned alike (the quality gate's "
      "input)."));
  return s;
}

Section speedup(const DeploymentReport& r, const Derived& d) {
  Section s{"speedup", "Speedup", {}, false, ""};
  if (r.layers.empty() && !measured(r.effective_speedup)) return missing_section(s);
  s.blocks.push_back(paragraph(
      "End to end, measured over the whole test set: " + strong(times(r.effective_speedup)) +
      " (all-dense cycles / deployed cycles, same RTL, same batches). With every fallback layer "
      "sparse too, the cycle model predicts " +
      times(r.all_sparse_speedup_predicted) + "."));
  if (!r.layers.empty()) {
    Table t{{"layer", "placement", "deployed cycles", "all-dense cycles", "speedup"},
            {},
            "llrrr",
            false,
            true};
    for (const auto& l : r.layers) {
      t.rows.push_back({l.name, l.placement, grouped(l.deployed_cycles), grouped(l.dense_cycles),
                        times(l.speedup())});
    }
    t.rows.push_back({"all layers", "", grouped(d.layer_deployed_cycles),
                      grouped(d.layer_dense_cycles),
                      times(ratio_or_nan(d.layer_dense_cycles, d.layer_deployed_cycles))});
    s.blocks.push_back(table_block(std::move(t)));
  }
  s.blocks.push_back(figure(speedup_figure(r)));
  return s;
}

Section hardware(const DeploymentReport& r) {
  Section s{"hardware", "Hardware cost at equal area", {}, false, ""};
  if (!r.hardware) return missing_section(s, "no place-and-route results of both designs");
  const HardwareCost& h = *r.hardware;
  s.blocks.push_back(paragraph(
      "The device with N:M support against the dense-only design of the same multipliers (no "
      "decoder, no lane muxes, no metadata path), both placed and routed on " +
      h.device + ". The same-array speedup (" + times(r.effective_speedup) +
      ") runs dense layers on the N:M array; the ratios below charge the N:M support its area."));
  Table t{{"figure", "N:M design", "dense-only"}, {}, "lrr", true, false};
  for (const auto& row : hardware_rows(h)) t.rows.push_back({row.begin(), row.end()});
  s.blocks.push_back(table_block(std::move(t)));
  s.blocks.push_back(small_print("Sources: " + h.sparse_source + "; " + h.dense_source +
                                 ". Dense-only cycles come from the cycle model, which the "
                                 "regression holds exact against the RTL."));
  return s;
}

Section fallback(const DeploymentReport& r) {
  Section s{"fallback", "Dense-fallback impact", {}, false, ""};
  if (r.layers.empty() && r.fallback_layers.empty()) return missing_section(s);
  s.blocks.push_back(paragraph(
      "Layers that run dense on the device: " +
      strong(r.fallback_layers.empty() ? "none" : joined(r.fallback_layers)) + ". They take " +
      grouped(r.fallback_cycles) + " cycles, " + strong(percent(r.fallback_cycle_share, 1)) +
      " of the deployed device time. The speedup is " + times(r.effective_speedup) +
      " with them and would be " + times(r.all_sparse_speedup_predicted) +
      " (predicted) if they ran sparse."));
  Table t{{"fallback layer", "reason", kPrunedAloneHeader, "cycles"}, {}, "llrr", false, false};
  for (const auto& l : r.layers) {
    if (!is_fallback(l)) continue;
    t.rows.push_back({l.name, or_dash(l.reason), signed_pp(-l.sensitivity_pp),
                      grouped(l.deployed_cycles)});
  }
  if (!t.rows.empty()) s.blocks.push_back(table_block(std::move(t)));
  s.blocks.push_back(figure(fallback_figure(r)));
  return s;
}

Section utilization(const DeploymentReport& r) {
  Section s{"utilization", "PE utilization", {}, false, ""};
  if (r.layers.empty() && r.pe_utilization == 0.0) return missing_section(s);
  s.blocks.push_back(paragraph("Deployed run: " + strong(percent(r.pe_utilization, 1)) +
                               " of the peak MACs per cycle of each layer's mode (useful "
                               "dense-equivalent MACs / (cycles x peak))."));
  Table t{{"layer", "placement", "MACs", "cycles", "utilization"}, {}, "llrrl", false, false};
  for (const auto& l : r.layers) {
    t.rows.push_back({l.name, l.placement, grouped(l.macs), grouped(l.deployed_cycles),
                      l.deployed_cycles ? meter(l.utilization) : Inline("-")});
  }
  if (!t.rows.empty()) s.blocks.push_back(table_block(std::move(t)));
  return s;
}

Section metadata(const DeploymentReport& r, const Derived& d) {
  Section s{"metadata", "Metadata overhead", {}, false, ""};
  if (r.weight_bytes_deployed == 0) return missing_section(s);
  const double deployed_share = ratio_or_nan(r.weight_bytes_deployed, r.weight_bytes_dense);
  s.blocks.push_back(paragraph("Metadata is " + strong(percent(d.meta_share, 1)) +
                               " of the deployed weight bytes; the deployed weights are " +
                               percent(deployed_share, 1) + " of the all-INT8-dense size."));
  Table t{{"bytes", "value", "share"}, {}, "lrl", true, false};
  t.rows = {{"weights, all INT8 dense", grouped(r.weight_bytes_dense), ""},
            {"weights as deployed (values + metadata)", grouped(r.weight_bytes_deployed),
             percent(deployed_share, 1) + " of dense"},
            {"of which metadata", grouped(r.meta_bytes), meter(d.meta_share)},
            {"DMA read bytes (deployed run)", grouped(r.dma_read_bytes), ""},
            {"of which metadata (META_BYTES counter)", grouped(r.dma_meta_bytes),
             meter(ratio_or_nan(r.dma_meta_bytes, r.dma_read_bytes))}};
  s.blocks.push_back(table_block(std::move(t)));
  Table per_layer{{"layer", "placement", "dense bytes", "deployed bytes", "metadata bytes",
                   "metadata share"},
                  {},
                  "llrrrr",
                  false,
                  false};
  for (const auto& l : r.layers) {
    if (l.dense_weight_bytes == 0 && l.deployed_weight_bytes == 0) continue;
    per_layer.rows.push_back({l.name, l.placement, grouped(l.dense_weight_bytes),
                              grouped(l.deployed_weight_bytes), grouped(l.meta_bytes),
                              percent(ratio_or_nan(l.meta_bytes, l.deployed_weight_bytes), 1)});
  }
  if (!per_layer.rows.empty()) s.blocks.push_back(details("per layer", std::move(per_layer)));
  return s;
}

// The latency section's second part: the same two models while a second AXI master competes for
// host memory, and the load at which the deployed model's p99 leaves the budget.
void contention(const DeploymentReport& r, const Derived& d, Section& s) {
  if (d.contention.empty() || d.contention.front().dense.batch_cycles.empty()) return;
  const std::uint64_t budget = percentile_cycles(d.contention.front().dense.batch_cycles, 50);
  const double leaves = p99_leaves_budget_at(r.contention);
  s.blocks.push_back(heading("Under contention"));
  s.blocks.push_back(paragraph(
      "A second AXI master takes a share of the host memory with random bursts (seeded; "
      "docs/bandwidth.md) while the deployed and the all-dense model run batches of the test set "
      "on the RTL. The budget is the all-dense model's p50 without contention, " +
      grouped(budget) + " cycles: " +
      (measured(leaves) ? "the deployed model's p99 leaves it at load " + percent(leaves, 0) + "."
                        : "the deployed model's p99 stays inside it at every load run.")));
  Table t{{"load", "run", "batches", "p50 cycles", "p95 cycles", "p99 cycles", "p99.9 cycles",
           "p99 / p50", "deployed p99 within budget"},
          {},
          "llrrrrrrl",
          false,
          false};
  for (const ContentionRun& c : d.contention) {
    for (const LatencySummary* l : {&c.sparse, &c.dense}) {
      if (l->batch_cycles.empty()) continue;
      t.rows.push_back({percent(c.load, 0), l == &c.sparse ? "deployed" : "all dense",
                        std::to_string(l->batch_cycles.size()), grouped(l->p50), grouped(l->p95),
                        grouped(l->p99), grouped(percentile_cycles(l->batch_cycles, 99.9)),
                        fixed(ratio_or_nan(l->p99, l->p50), 3) + "x",
                        // The budget is the deployed model's; the dense model defines it.
                        l == &c.sparse ? status(l->p99 <= budget, "yes", "no") : Inline("-")});
    }
  }
  s.blocks.push_back(table_block(std::move(t)));
  s.blocks.push_back(figure(contention_figure(r, d)));
}

Section latency(const DeploymentReport& r, const Derived& d) {
  Section s{"latency", "Latency", {}, false, ""};
  Table t{{"run", "batch", "batches", "p50 cycles", "p95 cycles", "p99 cycles", "p50", "p95",
           "p99", "total cycles", "host p50"},
          {},
          "lrrrrrrrrrr",
          false,
          false};
  for (const LatencySummary* l : latency_runs(d)) {
    if (!has_latency(*l)) continue;
    t.rows.push_back({run_label(*l, l == &d.deployed ? "deployed" : "all dense"),
                      std::to_string(l->batch_size), std::to_string(l->batch_cycles.size()),
                      grouped(l->p50), grouped(l->p95), grouped(l->p99), microseconds(r, l->p50),
                      microseconds(r, l->p95), microseconds(r, l->p99),
                      grouped(l->total_cycles()),
                      l->batch_host_us.empty()
                          ? std::string("n/a")
                          : fixed(l->host_us_p50(), l->host_us_p50() < 10 ? 2 : 0) +
                                " \xC2\xB5s"});  // U+00B5 micro sign
  }
  if (t.rows.empty()) return missing_section(s);
  s.blocks.push_back(paragraph(
      "Device cycles per batch (START to done of each device run of the batch, summed: "
      "consecutive quantized layers run as one command stream), nearest-rank percentiles; "
      "microseconds at " +
      (has_clock(r) ? clock_label(r) : std::string("an unstated clock (n/a)")) +
      ". Host layers are host time, not device time: \"host p50\" is the median wall-clock time "
      "of a batch's host layers on the machine that ran the report (beside the device time, not "
      "in it; a host figure, not the device's)."));
  s.blocks.push_back(table_block(std::move(t)));
  s.blocks.push_back(figure(latency_figure(r, d)));
  contention(r, d, s);
  return s;
}

Section bandwidth(const DeploymentReport& r) {
  Section s{"bandwidth", "Bandwidth lens", {}, false, ""};
  if (!r.bandwidth_lens || r.bandwidth_lens->families.empty()) {
    return missing_section(s, "no bandwidth sweep in this run (nmsa sweep)");
  }
  const LensResult& lens = *r.bandwidth_lens;
  s.blocks.push_back(paragraph(
      "The deployed network's layers at other host memories, sparse and dense, predicted by the "
      "cycle model (not RTL runs; docs/bandwidth.md). This run's memory gave " +
      (measured(r.memory_bytes_per_cycle) ? fixed(r.memory_bytes_per_cycle, 0) : std::string("n/a")) +
      " bytes per cycle. Below the knee the speedup falls towards the ratio of bytes moved."));
  Table t{{"workload", "knee sparse", "knee dense", "at the knee", "compute-bound",
           "memory-bound", "bytes ratio"},
          {},
          "lrrrrrr",
          false,
          false};
  for (const LensFamily& f : lens.families) {
    t.rows.push_back({f.family, fixed(f.knee_sparse, 0) + " B/cycle",
                      fixed(f.knee_dense, 0) + " B/cycle", times(f.speedup_at_knee),
                      times(f.speedup_compute_bound), times(f.speedup_memory_bound),
                      times(f.bytes_ratio)});
  }
  s.blocks.push_back(table_block(std::move(t)));
  s.blocks.push_back(figure(lens_speedup_svg(lens)));
  return s;
}

// The rollback criteria of the next release decision against this run, as nmsa gate checks them.
void release_decision(const DeploymentReport& r, Section& s) {
  const GateLimits c = release_criteria(r);
  if (!c.any()) return;
  std::vector<Inline> items;
  if (c.max_quality_drop_pp) {
    items.push_back("sparse INT8 top-1 at least " +
                    percent(r.sparse_int8_accuracy - *c.max_quality_drop_pp / 100.0) +
                    " (at most " + fixed(*c.max_quality_drop_pp, 2) + " pp below this run)");
  }
  if (c.min_speedup) {
    items.push_back("effective speedup at least " + fixed(*c.min_speedup, 3) + "x");
  }
  if (c.max_p99_cycles) {
    items.push_back("p99 latency at most " + grouped(*c.max_p99_cycles) + " cycles per batch");
  }
  if (c.bit_exact) {
    items.push_back("every batch bit-exact against the golden and the functional model");
  }
  s.blocks.push_back(heading("Release decision"));
  s.blocks.push_back(paragraph(
      Inline("With this run as the baseline, a candidate is promoted only if it meets every "
             "criterion below, and rolled back otherwise (the tolerances of nmsa triage). ") +
      code("nmsa gate --baseline report.json --candidate candidate/report.json") +
      Inline(" checks them from this report's release_criteria when no limit is given.")));
  s.blocks.push_back(list(std::move(items)));
}

Section validation(const DeploymentReport& r) {
  Section s{"validation", "Validation matrix", {}, false, ""};
  if (r.validation.empty()) return missing_section(s);
  s.blocks.push_back(paragraph(
      "Each claim of this report with the evidence that backs it, the run it comes from and the "
      "role that owns it; nmsa triage names the mechanism behind a claim that stops holding."));
  Table t{{"claim", "evidence", "run", "owner", "status"}, {}, "lllll", false, false};
  for (const auto& v : r.validation) {
    t.rows.push_back({v.claim, v.evidence, v.run, v.owner,
                      v.status == "holds" ? status(true, v.status)
                      : v.status == "does not hold" ? status(false, "", v.status)
                                                    : Inline(v.status)});
  }
  s.blocks.push_back(table_block(std::move(t)));
  release_decision(r, s);
  return s;
}

Section triage(const DeploymentReport& r) {
  Section s{"triage", "Regression triage", {}, false, ""};
  if (r.regressed_workload.empty()) {
    return missing_section(s, "no regressed workload beside this run");
  }
  s.blocks.push_back(paragraph(
      Inline("A workload regressed on purpose runs beside this one (" + r.regressed_workload +
             ") and nmsa triage compares the two reports: the first failing mechanism, its "
             "evidence, owner and rollback criteria are in ") +
      (r.triage_memo.empty() ? Inline("no memo (triage did not run)")
                             : link(r.triage_memo, r.triage_memo)) +
      Inline(".")));
  return s;
}

Section quality(const DeploymentReport& r) {
  Section s{"quality", "Quality", {}, false, ""};
  if (r.quality.empty()) return missing_section(s);
  s.blocks.push_back(paragraph(
      "Top-1 on the test set with its 95% bootstrap interval over the test images. The INT8 "
      "figures of the golden model (Eigen INT8) are what the device computes bit for bit on the "
      "batches it ran; only those marked rtl were measured on the RTL."));
  Table t{{"model", "schedule", "permuted", "FP32 top-1 [95% CI]", "INT8 top-1 [95% CI]",
           "INT8 measured on", "note"},
          {},
          "lllrrll",
          false,
          false};
  for (const auto& q : r.quality) {
    t.rows.push_back({q.deployed ? q.model + " " + status(true, "deployed") : Inline(q.model),
                      q.schedule, q.permuted ? "yes" : "no",
                      percent_with_ci(q.fp32_accuracy, q.fp32_ci95),
                      percent_with_ci(q.int8_accuracy, q.int8_ci95), or_dash(q.int8_measured_on),
                      q.note});
  }
  s.blocks.push_back(table_block(std::move(t)));
  s.blocks.push_back(figure(quality_figure(r)));
  if (!r.comparisons.empty()) {
    s.blocks.push_back(heading("Paired comparisons"));
    s.blocks.push_back(paragraph(
        "Each pair of models classified the same test images. The difference A - B has a 95% "
        "paired bootstrap interval; McNemar's exact test looks only at the images one model gets "
        "right and the other wrong. An interval that spans zero is no measurable difference."));
    Table c{{"comparison", "A", "B", "A - B [95% CI]", "only A / only B right", "McNemar p",
             "verdict", "measured on"},
            {},
            "lllrrrll",
            false,
            false};
    for (const auto& p : r.comparisons) {
      const std::string verdict = p.verdict();
      c.rows.push_back({p.name, p.a, p.b, signed_pp_with_ci(p.delta_pp, p.ci95_pp),
                        grouped(p.only_a) + " / " + grouped(p.only_b), p_value(p.mcnemar_p),
                        verdict == "no measurable difference" ? Inline(verdict) : strong(verdict),
                        or_dash(p.measured_on)});
    }
    s.blocks.push_back(table_block(std::move(c)));
  }
  return s;
}

Section equal_budget(const DeploymentReport& r) {
  Section s{"equal-budget", "Equal latency budget", {}, false, ""};
  if (!r.equal_budget) return missing_section(s, "no equal-latency-budget comparison in this run");
  const EqualBudget& b = *r.equal_budget;
  Table t{{"", "model", "p50 cycles per batch", "p50", "predicted cycles", "INT8 top-1"},
          {},
          "llrrrr",
          false,
          false};
  t.rows = {{"dense (the budget)", b.dense_model, grouped(b.budget_cycles_p50),
             microseconds(r, b.budget_cycles_p50), grouped(b.predicted_budget_cycles),
             percent(b.dense_int8_accuracy)},
            {"wider sparse", b.sparse_model, grouped(b.sparse_cycles_p50),
             microseconds(r, b.sparse_cycles_p50), grouped(b.predicted_sparse_cycles),
             percent(b.sparse_int8_accuracy)}};
  s.blocks.push_back(table_block(std::move(t)));
  s.blocks.push_back(paragraph(
      "The wider shape is the one of " + std::to_string(b.shapes_searched) +
      " candidates whose all-sparse batch the cycle model predicts closest to the budget without "
      "exceeding it: it uses " + percent(b.predicted_budget_use(), 1) +
      " of the predicted budget. Fits the measured budget: " + status(b.fits(), "yes", "no") +
      "; INT8 top-1 " + signed_pp(100.0 * (b.sparse_int8_accuracy - b.dense_int8_accuracy)) +
      " against the dense model of the same training budget at the same latency (" +
      or_dash(b.accuracy_measured_on) + "; its interval is under Quality, paired comparisons)."));
  return s;
}

Section second_model(const DeploymentReport& r) {
  Section s{"second-model", "Second model", {}, false, ""};
  if (!r.second_model) return missing_section(s, "no second model in this run");
  const SecondModelReport& m = *r.second_model;
  s.blocks.push_back(paragraph(strong(m.model) + ", " + std::to_string(m.test_images) +
                               " test images. Device figures: " + or_dash(m.measured_on) +
                               ". Activations: " + or_dash(m.calibration) + "."));
  Table q{{"model", "FP32 top-1", "INT8 top-1"}, {}, "lrr", false, false};
  q.rows = {{"dense (first run)", percent(m.dense_fp32_accuracy), "n/a"},
            {"dense control (equal training)", percent(m.control_fp32_accuracy),
             percent(m.control_int8_accuracy)},
            {"pruned " + status(true, "deployed"), percent(m.sparse_fp32_accuracy),
             percent(m.sparse_int8_accuracy)}};
  s.blocks.push_back(table_block(std::move(q)));
  s.blocks.push_back(paragraph(
      "Deployed INT8 against the control's FP32: " +
      (m.quality_comparison
           ? strong(signed_pp_with_ci(m.quality_comparison->delta_pp,
                                      m.quality_comparison->ci95_pp)) +
                 " (95% paired bootstrap interval; McNemar p " +
                 p_value(m.quality_comparison->mcnemar_p) + ", " +
                 m.quality_comparison->verdict() + ")"
           : strong(signed_pp(m.quality_delta_pp()))) +
      ". Device speedup, all-dense cycles over deployed cycles on the same array and batches "
      "(its dense mode, not the dense-only design of equal area): " +
      strong(times(m.effective_speedup)) + " with the fallbacks, " +
      times(m.sparse_layers_speedup) + " over the layers that run sparse; the dense fallbacks take " +
      percent(m.fallback_cycle_share, 1) + " of the deployed cycles. Host layers run between the "
      "device layers and are not in the device cycles."));
  Table t{{"layer", "op", "K", "N_out", "placement", "reason", "deployed cycles",
           "all-dense cycles", "speedup"},
          {},
          "llrrllrrr",
          false,
          false};
  for (const ReportLayer& l : m.layers) {
    const bool host = l.placement == "host";
    t.rows.push_back({strong(l.name), l.op, l.k > 0 ? std::to_string(l.k) : "",
                      l.n_out > 0 ? std::to_string(l.n_out) : "", l.placement, or_dash(l.reason),
                      host ? "" : grouped(l.deployed_cycles), host ? "" : grouped(l.dense_cycles),
                      host ? "" : times(l.speedup())});
  }
  s.blocks.push_back(table_block(std::move(t)));
  if (m.rtl_batches > 0) {
    s.blocks.push_back(small_print(
        "On the RTL too: " + std::to_string(m.rtl_batches) + " batches; bit-exact with the "
        "functional model in " + std::to_string(m.rtl_batches_bit_exact) + ", device cycles "
        "equal to its prediction for the same command streams in " +
        std::to_string(m.rtl_batches_cycle_exact) + "; of their " + std::to_string(m.rtl_gemms) +
        " device GEMMs, " + std::to_string(m.rtl_gemms_golden_exact) + " checked equal to the "
        "golden model bit for bit; the whole-set run's prediction of those batches within " +
        percent(m.rtl_prediction_max_error, 3) + " of the RTL."));
  }
  return s;
}

Section schedules(const DeploymentReport& r) {
  Section s{"schedule", "Pruning schedules", {}, false, ""};
  if (r.schedules.empty()) return missing_section(s);
  s.blocks.push_back(figure(schedule_figures(r)));
  for (const auto& c : r.schedules) {
    Table t{{"epoch", "weight sparsity", "validation top-1"}, {}, "rrr", false, false};
    for (const auto& p : schedule_points(c)) {
      t.rows.push_back({epoch_text(p.epoch), measured(p.sparsity) ? percent(p.sparsity, 1) : "",
                        measured(p.val_accuracy) ? percent(p.val_accuracy) : ""});
    }
    const std::string points = std::to_string(t.rows.size()) + " points";
    s.blocks.push_back(details(c.name + ": " + points, std::move(t)));
  }
  return s;
}

Section cross_checks(const DeploymentReport& r) {
  Section s{"cross-checks", "Cross-checks", {}, false, ""};
  if (r.batches == 0) return missing_section(s);
  s.blocks.push_back(paragraph("Batches whose device output equals the reference bit for bit."));
  Table t{{"reference", "bit-exact batches", "status"}, {}, "lrl", false, false};
  t.rows = {{"golden model (Eigen INT8)", fraction_of(r.batches_bit_exact_golden, r.batches),
             status(r.batches_bit_exact_golden == r.batches, "ok", "MISMATCH")},
            {"functional model", fraction_of(r.batches_bit_exact_model, r.batches),
             status(r.batches_bit_exact_model == r.batches, "ok", "MISMATCH")}};
  s.blocks.push_back(table_block(std::move(t)));
  return s;
}

Section tags(const DeploymentReport& r) {
  Section s{"tags", "Tags", {}, false, ""};
  if (r.tags.empty()) return missing_section(s);
  Table t{{"tag", "value"}, {}, "ll", true, false};
  for (const auto& [k, v] : r.tags) t.rows.push_back({k, code(v)});
  s.blocks.push_back(table_block(std::move(t)));
  return s;
}

Section notes(const DeploymentReport& r) {
  Section s{"notes", "Notes", {}, false, ""};
  if (r.notes.empty()) {
    s.blocks.push_back(paragraph("none"));
    return s;
  }
  s.blocks.push_back(list({r.notes.begin(), r.notes.end()}));
  return s;
}

}  // namespace

Document report_document(const DeploymentReport& r) {
  const Derived d = derive(r);
  Document doc;
  doc.title = r.title;
  doc.subtitle = {or_dash(r.dataset), or_dash(r.device), clock_label(r)};
  doc.sections = {summary(r, d),      targets(r),        validation(r),   triage(r),
                  layers(r),
                  speedup(r, d),      hardware(r),       fallback(r),     utilization(r),
                  metadata(r, d),     latency(r, d),     bandwidth(r),    quality(r),
                  equal_budget(r),    second_model(r),   schedules(r),    cross_checks(r),
                  tags(r),
                  notes(r)};
  return doc;
}

}  // namespace nmsa::report_detail
