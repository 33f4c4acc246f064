// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// index.html: the report as one page that opens from a file on a machine with no network and
// shows the same thing everywhere: inline CSS, inline SVG figures (report_charts.hpp), system
// fonts, no script and no reference to any other file or host.
#include <algorithm>
#include <cstdint>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "nmsa/report.hpp"
#include "report_charts.hpp"
#include "report_common.hpp"

namespace nmsa {

using namespace report_detail;

namespace {

const char* kMissing = "<p class=\"missing\">not measured</p>\n";

std::string missing(const std::string& what) {
  return "<p class=\"missing\">not measured: " + esc(what) + "</p>\n";
}

// A table whose cells are HTML already (callers escape text); align holds 'l' or 'r' per column.
std::string html_table(const std::vector<std::string>& header,
                       const std::vector<std::vector<std::string>>& rows, const std::string& align,
                       const std::string& css_class = "") {
  std::ostringstream out;
  out << "<table" << (css_class.empty() ? "" : " class=\"" + css_class + "\"") << ">\n<thead><tr>";
  for (std::size_t c = 0; c < header.size(); ++c) {
    out << "<th" << (c < align.size() && align[c] == 'r' ? " class=\"num\"" : "") << ">"
        << esc(header[c]) << "</th>";
  }
  out << "</tr></thead>\n<tbody>\n";
  for (const auto& row : rows) {
    out << "<tr>";
    for (std::size_t c = 0; c < row.size(); ++c) {
      out << "<td" << (c < align.size() && align[c] == 'r' ? " class=\"num\"" : "") << ">"
          << row[c] << "</td>";
    }
    out << "</tr>\n";
  }
  out << "</tbody></table>\n";
  return out.str();
}

std::string status_badge(bool ok, const char* yes = "met", const char* no = "NOT MET") {
  return ok ? std::string("<span class=\"badge ok\">") + yes + "</span>"
            : std::string("<span class=\"badge bad\">") + no + "</span>";
}

// A bar inside a table cell, for shares and utilizations (fraction in [0, 1]).
std::string meter(double fraction) {
  if (!measured(fraction)) return "n/a";
  const double w = std::clamp(fraction, 0.0, 1.0) * 100.0;
  return "<span class=\"meter\"><span style=\"width:" + fixed(w, 1) + "%\"></span></span> " +
         percent(fraction, 1);
}

const char* kCss = R"(
:root { color-scheme: light; }
* { box-sizing: border-box; }
body { margin: 0; background: #f4f6f9; color: #1f2937;
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial,
    sans-serif; }
main { max-width: 1060px; margin: 0 auto; padding: 28px 28px 56px; }
header h1 { margin: 0 0 4px; font-size: 27px; letter-spacing: -0.01em; }
header .sub { margin: 0; color: #4b5563; }
nav { margin: 14px 0 4px; display: flex; flex-wrap: wrap; gap: 6px; }
nav a { font-size: 13px; color: #1d4ed8; text-decoration: none; padding: 2px 9px;
  border: 1px solid #cbd5e1; border-radius: 999px; background: #fff; }
section { background: #fff; border: 1px solid #e2e8f0; border-radius: 10px;
  padding: 18px 24px 20px; margin: 18px 0; }
h2 { font-size: 19px; margin: 0 0 12px; padding-bottom: 6px; border-bottom: 1px solid #e5e7eb; }
h3 { font-size: 15px; margin: 16px 0 6px; }
p { margin: 8px 0; }
table { border-collapse: collapse; font-size: 14px; margin: 8px 0 4px; }
th, td { padding: 5px 12px; border-bottom: 1px solid #e5e7eb; text-align: left;
  vertical-align: top; }
thead th { background: #f1f5f9; font-weight: 600; border-bottom: 1px solid #cbd5e1; }
tbody tr:hover { background: #f8fafc; }
.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
table.kv td:first-child { color: #4b5563; }
tr.total td { font-weight: 600; border-top: 1px solid #94a3b8; }
code { font: 13px/1.4 ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace;
  background: #f1f5f9; padding: 1px 5px; border-radius: 4px; word-break: break-all; }
.missing { color: #6b7280; font-style: italic; }
.badge { display: inline-block; font-size: 12px; font-weight: 700; padding: 1px 8px;
  border-radius: 999px; }
.badge.ok { background: #dcfce7; color: #166534; }
.badge.bad { background: #fee2e2; color: #991b1b; }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(190px, 1fr)); gap: 12px;
  margin: 4px 0 16px; }
.card { border: 1px solid #e2e8f0; border-radius: 8px; padding: 10px 14px; background: #f8fafc; }
.card .k { font-size: 12px; color: #6b7280; text-transform: uppercase; letter-spacing: 0.04em; }
.card .v { font-size: 24px; font-weight: 650; font-variant-numeric: tabular-nums; }
.card .d { font-size: 12px; color: #4b5563; }
.meter { display: inline-block; width: 90px; height: 9px; background: #e5e7eb; border-radius: 5px;
  vertical-align: middle; overflow: hidden; }
.meter span { display: block; height: 100%; background: #2563eb; }
figure { margin: 14px 0 6px; }
figcaption { font-size: 13px; color: #4b5563; max-width: 640px; }
svg.plot { display: block; max-width: 100%; height: auto; }
svg .area { fill: #fff; }
svg .grid { stroke: #e5e7eb; stroke-width: 1; }
svg .axis { stroke: #6b7280; stroke-width: 1; }
svg .guide { stroke: #94a3b8; stroke-width: 1; stroke-dasharray: 3 3; }
svg text { font-family: system-ui, -apple-system, "Segoe UI", Roboto, Arial, sans-serif;
  font-size: 11px; fill: #374151; }
svg .axis-title { font-size: 12px; fill: #4b5563; }
svg .legend { font-size: 12px; }
svg .value { font-size: 11px; font-weight: 600; fill: #111827; }
svg .guide-label { font-size: 11px; fill: #64748b; }
svg .on-bar { font-size: 11px; font-weight: 600; fill: #fff; }
details { margin: 8px 0; }
summary { cursor: pointer; color: #1d4ed8; font-size: 14px; }
ul { margin: 6px 0; padding-left: 22px; }
footer { color: #6b7280; font-size: 12px; text-align: center; }
)";

struct SectionDef {
  const char* id;
  const char* title;
};

const SectionDef kSections[] = {
    {"summary", "Summary"},
    {"targets", "Targets"},
    {"layers", "Supported layer matrix"},
    {"speedup", "Speedup"},
    {"hardware", "Hardware cost"},
    {"fallback", "Dense-fallback impact"},
    {"utilization", "PE utilization"},
    {"metadata", "Metadata overhead"},
    {"latency", "Latency"},
    {"quality", "Quality"},
    {"equal-budget", "Equal latency budget"},
    {"schedule", "Pruning schedules"},
    {"cross-checks", "Cross-checks"},
    {"tags", "Tags"},
    {"notes", "Notes"},
};

std::string card(const std::string& key, const std::string& value, const std::string& detail) {
  return "<div class=\"card\"><div class=\"k\">" + esc(key) + "</div><div class=\"v\">" +
         esc(value) + "</div><div class=\"d\">" + esc(detail) + "</div></div>\n";
}

std::string html_summary(const DeploymentReport& r, const Derived& d) {
  std::ostringstream out;
  out << "<div class=\"cards\">\n"
      << card("sparse INT8 top-1", percent(r.sparse_int8_accuracy),
              "dense FP32 " + percent(r.dense_fp32_accuracy))
      << card("quality delta", signed_pp(r.quality_delta_pp), "sparse INT8 vs dense FP32")
      << card("effective speedup", times(r.effective_speedup),
              "all dense / deployed device cycles")
      << card("p99 latency", has_latency(d.deployed) ? grouped(d.deployed.p99) : "n/a",
              has_latency(d.deployed)
                  ? "cycles per batch (" + microseconds(r, d.deployed.p99) + ")"
                  : "")
      << "</div>\n";
  std::vector<std::vector<std::string>> rows = {
      {"dataset", esc(or_dash(r.dataset))},
      {"test images",
       r.test_images > 0 ? grouped(static_cast<std::uint64_t>(r.test_images)) : "n/a"},
      {"device", esc(or_dash(r.device))},
      {"clock", esc(clock_label(r))},
      {"dense FP32 / INT8 top-1",
       percent(r.dense_fp32_accuracy) + " / " + percent(r.dense_int8_accuracy)},
      {"sparse FP32 / INT8 top-1 (deployed)",
       percent(r.sparse_fp32_accuracy) + " / " + percent(r.sparse_int8_accuracy)},
      {"quality delta (sparse INT8 &minus; dense FP32)", esc(signed_pp(r.quality_delta_pp))},
      {"effective speedup (measured)", times(r.effective_speedup)},
      {"all-sparse speedup (predicted)", times(r.all_sparse_speedup_predicted)},
  };
  const char* names[] = {"p50", "p95", "p99"};
  const std::uint64_t values[] = {d.deployed.p50, d.deployed.p95, d.deployed.p99};
  for (int i = 0; i < 3; ++i) {
    rows.push_back({std::string("latency ") + names[i] + " per batch",
                    has_latency(d.deployed) ? esc(cycles_and_us(r, values[i])) : "n/a"});
  }
  std::string fallbacks;
  for (const auto& n : r.fallback_layers) fallbacks += (fallbacks.empty() ? "" : ", ") + n;
  rows.push_back({"dense fallbacks", esc(fallbacks.empty() ? "none" : fallbacks) + " (" +
                                         percent(r.fallback_cycle_share, 1) + " of cycles)"});
  rows.push_back({"PE utilization", percent(r.pe_utilization, 1)});
  rows.push_back({"metadata share of deployed weights", percent(d.meta_share, 1)});
  rows.push_back({"targets", r.targets.empty()
                                 ? std::string("<span class=\"missing\">none given</span>")
                                 : std::to_string(d.targets_met) + " of " +
                                       std::to_string(r.targets.size()) + " met " +
                                       status_badge(d.targets_met == r.targets.size(), "all met",
                                                    "NOT ALL MET") +
                                       " (<a href=\"#targets\">details</a>)"});
  out << html_table({"figure", "value"}, rows, "ll", "kv");
  return out.str();
}

std::string html_targets(const DeploymentReport& r) {
  if (r.targets.empty()) return missing("no targets in this report");
  std::vector<std::vector<std::string>> rows;
  for (const auto& t : r.targets) {
    rows.push_back({esc(t.name), esc(t.required), esc(t.measured), status_badge(t.met)});
  }
  return html_table({"target", "required", "measured", "status"}, rows, "llrl");
}

std::string html_layers(const DeploymentReport& r) {
  if (r.layers.empty()) return kMissing;
  std::vector<std::vector<std::string>> rows;
  for (const auto& l : r.layers) {
    rows.push_back({"<b>" + esc(l.name) + "</b>", esc(l.op), std::to_string(l.k),
                    std::to_string(l.n_out), esc(l.placement), esc(or_dash(l.reason)),
                    esc(signed_pp(-l.sensitivity_pp))});
  }
  return html_table({"layer", "op", "K", "N_out", "placement", "reason", kPrunedAloneHeader}, rows,
                    "llrrllr") +
         "<p><small>&ldquo;Pruned alone&rdquo;: validation top-1 change when only this layer "
         "is pruned to N:M and briefly fine-tuned, against an unpruned control fine-tuned "
         "alike (the quality gate's input).</small></p>\n";
}

std::string html_speedup(const DeploymentReport& r, const Derived& d) {
  if (r.layers.empty() && !measured(r.effective_speedup)) return kMissing;
  std::ostringstream out;
  out << "<p>End to end, measured over the whole test set: <b>" << times(r.effective_speedup)
      << "</b> (all-dense cycles / deployed cycles, same RTL, same batches). With every fallback "
         "layer sparse too, the cycle model predicts "
      << times(r.all_sparse_speedup_predicted) << ".</p>\n";
  std::vector<std::vector<std::string>> rows;
  for (const auto& l : r.layers) {
    rows.push_back({esc(l.name), esc(l.placement), grouped(l.deployed_cycles),
                    grouped(l.dense_cycles), times(l.speedup())});
  }
  if (!rows.empty()) {
    std::string table = html_table({"layer", "placement", "deployed cycles", "all-dense cycles",
                                    "speedup"},
                                   rows, "llrrr");
    const std::string total_row =
        "<tr class=\"total\"><td>all layers</td><td></td><td class=\"num\">" +
        grouped(d.layer_deployed_cycles) + "</td><td class=\"num\">" +
        grouped(d.layer_dense_cycles) + "</td><td class=\"num\">" +
        times(ratio_or_nan(d.layer_dense_cycles, d.layer_deployed_cycles)) + "</td></tr>\n";
    table.insert(table.rfind("</tbody>"), total_row);
    out << table;
  }
  out << speedup_figure(r);
  return out.str();
}

std::string html_hardware(const DeploymentReport& r) {
  if (!r.hardware) return missing("no place-and-route results of both designs");
  const HardwareCost& h = *r.hardware;
  std::vector<std::vector<std::string>> rows;
  for (auto row : hardware_rows(h)) {
    for (auto& cell : row) cell = esc(cell);
    rows.push_back(row);
  }
  std::ostringstream out;
  out << "<p>The device with N:M support against the dense-only design of the same multipliers "
         "(no decoder, no lane muxes, no metadata path), both placed and routed on "
      << esc(h.device) << ". The same-array speedup (" << esc(times(r.effective_speedup))
      << ") runs dense layers on the N:M array; the ratios below charge the N:M support its "
         "area.</p>\n"
      << html_table({"figure", "N:M design", "dense-only"}, rows, "lrr")
      << "<p class=\"note\">Sources: " << esc(h.sparse_source) << "; " << esc(h.dense_source)
      << ". Dense-only cycles come from the cycle model, which the regression holds exact against "
         "the RTL.</p>\n";
  return out.str();
}

std::string html_fallback(const DeploymentReport& r) {
  if (r.layers.empty() && r.fallback_layers.empty()) return kMissing;
  std::ostringstream out;
  std::string names;
  for (const auto& n : r.fallback_layers) names += (names.empty() ? "" : ", ") + esc(n);
  out << "<p>Layers that run dense on the device: <b>" << (names.empty() ? "none" : names)
      << "</b>. They take " << grouped(r.fallback_cycles) << " cycles, <b>"
      << percent(r.fallback_cycle_share, 1)
      << "</b> of the deployed device time. The speedup is " << times(r.effective_speedup)
      << " with them and would be " << times(r.all_sparse_speedup_predicted)
      << " (predicted) if they ran sparse.</p>\n";
  std::vector<std::vector<std::string>> rows;
  for (const auto& l : r.layers) {
    if (!is_fallback(l)) continue;
    rows.push_back({esc(l.name), esc(or_dash(l.reason)), esc(signed_pp(-l.sensitivity_pp)),
                    grouped(l.deployed_cycles)});
  }
  if (!rows.empty()) {
    out << html_table({"fallback layer", "reason", kPrunedAloneHeader, "cycles"}, rows, "llrr");
  }
  out << fallback_figure(r);
  return out.str();
}

std::string html_utilization(const DeploymentReport& r) {
  if (r.layers.empty() && r.pe_utilization == 0.0) return kMissing;
  std::ostringstream out;
  out << "<p>Deployed run: <b>" << percent(r.pe_utilization, 1)
      << "</b> of the peak MACs per cycle of each layer's mode (useful dense-equivalent MACs / "
         "(cycles &times; peak)).</p>\n";
  std::vector<std::vector<std::string>> rows;
  for (const auto& l : r.layers) {
    rows.push_back({esc(l.name), esc(l.placement), grouped(l.macs), grouped(l.deployed_cycles),
                    l.deployed_cycles ? meter(l.utilization) : "-"});
  }
  if (!rows.empty()) {
    out << html_table({"layer", "placement", "MACs", "cycles", "utilization"}, rows, "llrrl");
  }
  return out.str();
}

std::string html_metadata(const DeploymentReport& r, const Derived& d) {
  if (r.weight_bytes_deployed == 0) return kMissing;
  std::ostringstream out;
  out << "<p>Metadata is <b>" << percent(d.meta_share, 1)
      << "</b> of the deployed weight bytes; the deployed weights are "
      << percent(ratio_or_nan(r.weight_bytes_deployed, r.weight_bytes_dense), 1)
      << " of the all-INT8-dense size.</p>\n";
  std::vector<std::vector<std::string>> rows = {
      {"weights, all INT8 dense", grouped(r.weight_bytes_dense), ""},
      {"weights as deployed (values + metadata)", grouped(r.weight_bytes_deployed),
       percent(ratio_or_nan(r.weight_bytes_deployed, r.weight_bytes_dense), 1) + " of dense"},
      {"of which metadata", grouped(r.meta_bytes), meter(d.meta_share)},
      {"DMA read bytes (deployed run)", grouped(r.dma_read_bytes), ""},
      {"of which metadata (META_BYTES counter)", grouped(r.dma_meta_bytes),
       meter(ratio_or_nan(r.dma_meta_bytes, r.dma_read_bytes))}};
  out << html_table({"bytes", "value", "share"}, rows, "lrl", "kv");
  rows.clear();
  for (const auto& l : r.layers) {
    if (l.dense_weight_bytes == 0 && l.deployed_weight_bytes == 0) continue;
    rows.push_back({esc(l.name), esc(l.placement), grouped(l.dense_weight_bytes),
                    grouped(l.deployed_weight_bytes), grouped(l.meta_bytes),
                    percent(ratio_or_nan(l.meta_bytes, l.deployed_weight_bytes), 1)});
  }
  if (!rows.empty()) {
    out << "<details><summary>per layer</summary>\n"
        << html_table({"layer", "placement", "dense bytes", "deployed bytes", "metadata bytes",
                       "metadata share"},
                      rows, "llrrrr")
        << "</details>\n";
  }
  return out.str();
}

std::string html_latency(const DeploymentReport& r, const Derived& d) {
  std::vector<std::vector<std::string>> rows;
  for (const LatencySummary* l : latency_runs(d)) {
    if (!has_latency(*l)) continue;
    rows.push_back({esc(run_label(*l, l == &d.deployed ? "deployed" : "all dense")),
                    std::to_string(l->batch_size), std::to_string(l->batch_cycles.size()),
                    grouped(l->p50), grouped(l->p95), grouped(l->p99), microseconds(r, l->p50),
                    microseconds(r, l->p95), microseconds(r, l->p99)});
  }
  if (rows.empty()) return kMissing;
  std::ostringstream out;
  out << "<p>Device cycles per batch, nearest-rank percentiles; microseconds at "
      << (has_clock(r) ? esc(clock_label(r)) : "an unstated clock (n/a)")
      << ".</p>\n"
      << html_table({"run", "batch", "batches", "p50 cycles", "p95 cycles", "p99 cycles", "p50",
                     "p95", "p99"},
                    rows, "lrrrrrrrr")
      << latency_figure(r, d);
  return out.str();
}

std::string html_quality(const DeploymentReport& r) {
  if (r.quality.empty()) return kMissing;
  std::vector<std::vector<std::string>> rows;
  for (const auto& q : r.quality) {
    rows.push_back({esc(q.model) + (q.deployed ? " <span class=\"badge ok\">deployed</span>" : ""),
                    esc(q.schedule), q.permuted ? "yes" : "no", percent(q.fp32_accuracy),
                    percent(q.int8_accuracy), esc(or_dash(q.int8_measured_on)), esc(q.note)});
  }
  return html_table({"model", "schedule", "permuted", "FP32 top-1", "INT8 top-1",
                     "INT8 measured on", "note"},
                    rows, "lllrrll") +
         quality_figure(r);
}

std::string html_equal_budget(const DeploymentReport& r) {
  if (!r.equal_budget) return missing("no equal-latency-budget comparison in this run");
  const EqualBudget& b = *r.equal_budget;
  std::vector<std::vector<std::string>> rows = {
      {"dense (the budget)", esc(b.dense_model), grouped(b.budget_cycles_p50),
       microseconds(r, b.budget_cycles_p50), "-", percent(b.dense_int8_accuracy)},
      {"wider sparse", esc(b.sparse_model), grouped(b.sparse_cycles_p50),
       microseconds(r, b.sparse_cycles_p50), grouped(b.predicted_sparse_cycles),
       percent(b.sparse_int8_accuracy)}};
  std::ostringstream out;
  out << html_table({"", "model", "p50 cycles per batch", "p50", "predicted cycles", "INT8 top-1"},
                    rows, "llrrrr")
      << "<p>Fits the budget: " << status_badge(b.fits(), "yes", "no") << " &nbsp; INT8 top-1 "
      << esc(signed_pp(100.0 * (b.sparse_int8_accuracy - b.dense_int8_accuracy)))
      << " against the dense model at the same latency.</p>\n";
  return out.str();
}

std::string html_schedule(const DeploymentReport& r) {
  if (r.schedules.empty()) return kMissing;
  std::ostringstream out;
  out << schedule_figures(r);
  for (const auto& c : r.schedules) {
    std::vector<std::vector<std::string>> rows;
    for (const auto& p : schedule_points(c)) {
      rows.push_back({epoch_text(p.epoch), measured(p.sparsity) ? percent(p.sparsity, 1) : "",
                      measured(p.val_accuracy) ? percent(p.val_accuracy) : ""});
    }
    out << "<details><summary>" << esc(c.name) << ": " << rows.size() << " points</summary>\n"
        << html_table({"epoch", "weight sparsity", "validation top-1"}, rows, "rrr")
        << "</details>\n";
  }
  return out.str();
}

std::string html_cross_checks(const DeploymentReport& r) {
  if (r.batches == 0) return kMissing;
  std::vector<std::vector<std::string>> rows = {
      {"golden model (Eigen INT8)", fraction_of(r.batches_bit_exact_golden, r.batches),
       status_badge(r.batches_bit_exact_golden == r.batches, "ok", "MISMATCH")},
      {"functional model", fraction_of(r.batches_bit_exact_model, r.batches),
       status_badge(r.batches_bit_exact_model == r.batches, "ok", "MISMATCH")}};
  return "<p>Batches whose device output equals the reference bit for bit.</p>\n" +
         html_table({"reference", "bit-exact batches", "status"}, rows, "lrl");
}

std::string html_tags(const DeploymentReport& r) {
  if (r.tags.empty()) return kMissing;
  std::vector<std::vector<std::string>> rows;
  for (const auto& [k, v] : r.tags) rows.push_back({esc(k), "<code>" + esc(v) + "</code>"});
  return html_table({"tag", "value"}, rows, "ll", "kv");
}

std::string html_notes(const DeploymentReport& r) {
  if (r.notes.empty()) return "<p class=\"missing\">none</p>\n";
  std::string out = "<ul>\n";
  for (const auto& n : r.notes) out += "<li>" + esc(n) + "</li>\n";
  return out + "</ul>\n";
}

}  // namespace

std::string report_html(const DeploymentReport& r) {
  const Derived d = derive(r);
  std::map<std::string, std::string> body = {
      {"summary", html_summary(r, d)},       {"targets", html_targets(r)},
      {"layers", html_layers(r)},            {"speedup", html_speedup(r, d)},
      {"hardware", html_hardware(r)},
      {"fallback", html_fallback(r)},        {"utilization", html_utilization(r)},
      {"metadata", html_metadata(r, d)},     {"latency", html_latency(r, d)},
      {"quality", html_quality(r)},          {"equal-budget", html_equal_budget(r)},
      {"schedule", html_schedule(r)},        {"cross-checks", html_cross_checks(r)},
      {"tags", html_tags(r)},                {"notes", html_notes(r)},
  };
  std::ostringstream out;
  out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      << "<title>" << esc(r.title) << "</title>\n<style>" << kCss << "</style>\n</head>\n<body>\n"
      << "<main>\n<header>\n<h1>" << esc(r.title) << "</h1>\n<p class=\"sub\">"
      << esc(or_dash(r.dataset)) << " &middot; " << esc(or_dash(r.device)) << " &middot; "
      << esc(clock_label(r))
      << "</p>\n<nav>";
  for (const SectionDef& s : kSections) {
    out << "<a href=\"#" << s.id << "\">" << s.title << "</a>";
  }
  out << "</nav>\n</header>\n";
  for (const SectionDef& s : kSections) {
    out << "<section id=\"" << s.id << "\">\n<h2>" << s.title << "</h2>\n" << body[s.id]
        << "</section>\n";
  }
  out << "<footer>report format " << kReportFormatVersion
      << " &middot; written by libnmsa (report.json holds every figure)</footer>\n"
      << "</main>\n</body>\n</html>\n";
  return out.str();
}

}  // namespace nmsa
