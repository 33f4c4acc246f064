// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
#include "report_charts.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <sstream>
#include <utility>
#include <vector>

#include "svg_chart.hpp"

namespace nmsa::report_detail {

namespace {

const char* kDeployedColor = "#2563eb";
const char* kDenseColor = "#ea8c0c";

std::string quality_label(const QualityRow& q) {
  std::string s = q.model + " " + q.schedule;
  if (q.permuted && q.schedule.find("permut") == std::string::npos) s += " (permuted)";
  return s;
}

}  // namespace

std::string schedule_figures(const DeploymentReport& r) {
  double max_epoch = 0, max_sparsity = 0;
  double min_acc = 1, max_acc = 0;
  bool any_sparsity = false, any_acc = false;
  std::vector<Series> legend;
  for (std::size_t i = 0; i < r.schedules.size(); ++i) {
    const ScheduleCurve& c = r.schedules[i];
    legend.push_back({c.name, palette(i)});
    for (const auto& [e, s] : c.sparsity) {
      max_epoch = std::max(max_epoch, e);
      max_sparsity = std::max(max_sparsity, s);
      any_sparsity = true;
    }
    for (const auto& [e, a] : c.val_accuracy) {
      max_epoch = std::max(max_epoch, e);
      min_acc = std::min(min_acc, a);
      max_acc = std::max(max_acc, a);
      any_acc = true;
    }
  }
  std::string out;
  const Axis epochs = numeric_axis(0, std::max(max_epoch, 1.0), Scale::kPlain, "epoch", 8);
  if (any_sparsity) {
    // Headroom above the final sparsity, so the curves do not run along the frame.
    Plot p(600, 260, epochs, numeric_axis(0, std::max(max_sparsity * 1.08, 0.05), Scale::kPercent,
                                          "weight sparsity"),
           legend);
    for (std::size_t i = 0; i < r.schedules.size(); ++i) {
      const ScheduleCurve& c = r.schedules[i];
      if (c.sparsity.empty()) continue;
      // Sparsity holds between pruning events: a step curve, held to the curve's last epoch.
      double last_epoch = c.sparsity.back().first;
      for (const auto& pt : c.val_accuracy) last_epoch = std::max(last_epoch, pt.first);
      std::vector<std::pair<double, double>> steps;
      for (std::size_t k = 0; k < c.sparsity.size(); ++k) {
        if (k > 0) steps.push_back({c.sparsity[k].first, c.sparsity[k - 1].second});
        steps.push_back(c.sparsity[k]);
      }
      steps.push_back({last_epoch, c.sparsity.back().second});
      p.line(steps, palette(i), c.name + ": sparsity");
      if (c.sparsity.size() <= 40) {
        for (const auto& [e, s] : c.sparsity) {
          p.dot(e, s, palette(i), c.name + ": epoch " + epoch_text(e) + ", sparsity " +
                                      percent(s, 1), 2.5);
        }
      }
    }
    out += figure(p.svg("Pruning schedule: weight sparsity against epoch"),
                  "Weight sparsity of the prunable layers at each pruning event (held until the "
                  "next one).");
  }
  if (any_acc) {
    const double pad = std::max((max_acc - min_acc) * 0.15, 0.002);
    Plot p(600, 260, epochs,
           numeric_axis(std::max(0.0, min_acc - pad), std::min(1.0, max_acc + pad),
                        Scale::kPercent, "validation top-1"),
           legend);
    for (std::size_t i = 0; i < r.schedules.size(); ++i) {
      const ScheduleCurve& c = r.schedules[i];
      p.line(c.val_accuracy, palette(i), c.name + ": validation accuracy");
      for (const auto& [e, a] : c.val_accuracy) {
        p.dot(e, a, palette(i), c.name + ": epoch " + epoch_text(e) + ", " + percent(a));
      }
    }
    out += figure(p.svg("Validation accuracy against epoch"),
                  "Validation top-1 at the end of each epoch (epoch 0: before fine-tuning). The "
                  "axis does not start at 0.");
  }
  return out;
}

std::string speedup_figure(const DeploymentReport& r) {
  std::vector<const ReportLayer*> layers;
  std::vector<std::string> names;
  std::uint64_t top = 0;
  for (const auto& l : r.layers) {
    if (l.deployed_cycles == 0 && l.dense_cycles == 0) continue;
    layers.push_back(&l);
    names.push_back(l.name);
    top = std::max({top, l.deployed_cycles, l.dense_cycles});
  }
  if (layers.empty()) return "";
  const double width = std::max(600.0, 140.0 + 90.0 * layers.size());
  Plot p(static_cast<int>(width), 260, category_axis(names, 14),
         numeric_axis(0, static_cast<double>(top) * 1.12, Scale::kCount, "cycles (test set)"),
         {{"deployed", kDeployedColor, true}, {"all dense", kDenseColor, true}});
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const ReportLayer& l = *layers[i];
    const double x = static_cast<double>(i);
    p.rect(x + 0.16, 0, x + 0.49, static_cast<double>(l.deployed_cycles), kDeployedColor,
           l.name + " deployed (" + l.placement + "): " + grouped(l.deployed_cycles) + " cycles");
    p.rect(x + 0.51, 0, x + 0.84, static_cast<double>(l.dense_cycles), kDenseColor,
           l.name + " all dense: " + grouped(l.dense_cycles) + " cycles");
    const double peak = static_cast<double>(std::max(l.deployed_cycles, l.dense_cycles));
    p.text(x + 0.5, peak, times(l.speedup()), "middle", 0, -5, "value");
  }
  return figure(p.svg("Per-layer device cycles, deployed and all dense"),
                "Device cycles of each layer over the test set, as deployed and all dense (same "
                "RTL, same batches); the label is the layer's speedup.");
}

std::string fallback_figure(const DeploymentReport& r) {
  std::uint64_t total = 0;
  for (const auto& l : r.layers) total += l.deployed_cycles;
  if (total == 0) return "";
  const double w = 600, left = 10, right = 10, bar_y = 8, bar_h = 30;
  std::ostringstream out;
  out << "<svg class=\"plot\" viewBox=\"0 0 600 70\" width=\"600\" height=\"70\" role=\"img\" "
         "aria-label=\"Share of deployed device cycles per layer\">\n"
         "<title>Share of deployed device cycles per layer</title>\n";
  double x = left;
  for (const auto& l : r.layers) {
    if (l.deployed_cycles == 0) continue;
    const double share = static_cast<double>(l.deployed_cycles) / static_cast<double>(total);
    const double seg = share * (w - left - right);
    const char* color = is_fallback(l) ? kDenseColor : kDeployedColor;
    out << "<rect x=\"" << f1(x) << "\" y=\"" << bar_y << "\" width=\"" << f1(std::max(seg, 0.5))
        << "\" height=\"" << bar_h << "\" fill=\"" << color << "\" stroke=\"#fff\"><title>"
        << esc(l.name + " (" + l.placement + "): " + grouped(l.deployed_cycles) + " cycles, " +
               percent(share, 1))
        << "</title></rect>\n";
    const std::string label = l.name + " " + percent(share, 1);
    if (seg > text_width(label) + 8) {
      out << "<text class=\"on-bar\" x=\"" << f1(x + seg / 2) << "\" y=\"" << bar_y + 19
          << "\" text-anchor=\"middle\">" << esc(label) << "</text>\n";
    }
    x += seg;
  }
  out << "<rect x=\"" << left << "\" y=\"52\" width=\"12\" height=\"10\" rx=\"1.5\" fill=\""
      << kDeployedColor << "\"/><text class=\"legend\" x=\"" << left + 18
      << "\" y=\"61\">sparse on the device</text>\n"
      << "<rect x=\"" << left + 170 << "\" y=\"52\" width=\"12\" height=\"10\" rx=\"1.5\" fill=\""
      << kDenseColor << "\"/><text class=\"legend\" x=\"" << left + 188
      << "\" y=\"61\">dense fallback on the device</text>\n</svg>\n";
  return figure(out.str(), "Share of the deployed run's device cycles spent in each layer.");
}

std::string latency_figure(const DeploymentReport& r, const Derived& d) {
  std::uint64_t top = 0;
  std::vector<Series> legend;
  std::vector<std::pair<const LatencySummary*, std::string>> runs;
  std::size_t i = 0;
  for (const LatencySummary* l : latency_runs(d)) {
    const char* color = i == 0 ? kDeployedColor : i == 1 ? kDenseColor : palette(i + 1);
    ++i;
    if (l->batch_cycles.empty()) continue;
    runs.push_back({l, color});
    const std::string name = run_label(*l, l == &d.deployed ? "deployed" : "all dense");
    legend.push_back({name, color});
    top = std::max(top, *std::max_element(l->batch_cycles.begin(), l->batch_cycles.end()));
  }
  if (runs.empty()) return "";
  Plot p(600, 280, numeric_axis(0, 100, Scale::kPlain, "percentile of batches", 10),
         numeric_axis(0, static_cast<double>(top) * 1.08, Scale::kCount, "cycles per batch"),
         legend);
  p.guide(50, "p50", "middle");
  p.guide(95, "p95", "end");
  p.guide(99, "p99", "start");
  for (const auto& [l, color] : runs) {
    std::vector<std::uint64_t> sorted = l->batch_cycles;
    std::sort(sorted.begin(), sorted.end());
    const std::string name = run_label(*l, l == &d.deployed ? "deployed" : "all dense");
    // The nearest-rank percentile as a step function of p, sampled finely enough for any list.
    std::vector<std::pair<double, double>> curve;
    const std::size_t n = sorted.size();
    const std::size_t samples = std::min<std::size_t>(n, 500);
    for (std::size_t k = 0; k < samples; ++k) {
      const double q0 = 100.0 * static_cast<double>(k) / static_cast<double>(samples);
      const double q1 = 100.0 * static_cast<double>(k + 1) / static_cast<double>(samples);
      // The nearest rank of q1 (as in percentile_cycles), read off the sorted list.
      const auto rank = static_cast<std::size_t>(
          std::ceil(q1 * static_cast<double>(n) / 100.0 - 1e-9));
      const auto v = static_cast<double>(sorted[std::clamp<std::size_t>(rank, 1, n) - 1]);
      curve.push_back({q0, v});
      curve.push_back({q1, v});
    }
    p.line(curve, color, name + ": sorted per-batch cycles");
    const std::pair<double, std::uint64_t> marks[] = {{50, l->p50}, {95, l->p95}, {99, l->p99}};
    for (const auto& [q, v] : marks) {
      p.dot(q, static_cast<double>(v), color,
            name + " p" + fixed(q, 0) + ": " + grouped(v) + " cycles (" + microseconds(r, v) +
                ")",
            3.5);
    }
  }
  return figure(p.svg("Per-batch latency, sorted, with p50, p95 and p99"),
                "Device cycles of each batch, sorted (the value at x is the x-th percentile); dots "
                "mark p50, p95 and p99." +
                    (has_clock(r) ? " At " + esc(fixed(r.clock_mhz, 0)) + " MHz, 1,000 cycles "
                                    "are " + esc(microseconds(r, 1000)) + "."
                                  : std::string()));
}

std::string contention_figure(const DeploymentReport& r, const Derived& d) {
  if (d.contention.empty() || d.contention.front().dense.batch_cycles.empty()) return "";
  const std::uint64_t budget = percentile_cycles(d.contention.front().dense.batch_cycles, 50);
  std::uint64_t top = budget;
  double max_load = 0;
  for (const ContentionRun& c : d.contention) {
    max_load = std::max(max_load, c.load);
    for (const auto* l : {&c.sparse, &c.dense}) {
      for (const std::uint64_t v : l->batch_cycles) top = std::max(top, v);
    }
  }
  Plot p(600, 300, numeric_axis(0, std::max(max_load, 0.1), Scale::kPercent,
                                "background load of the second master (share of the bandwidth)"),
         numeric_axis(0, static_cast<double>(top) * 1.08, Scale::kCount, "cycles per batch"),
         {{"deployed p50", kDeployedColor}, {"all dense p50", kDenseColor},
          {"p99: dashed; dots: batches", "#64748b"}, {"budget", "#dc2626"}});
  const double spread = std::max(max_load, 0.1) / 80;  // the two runs' dots side by side
  const std::pair<const char*, double> modes[] = {{kDeployedColor, -spread}, {kDenseColor, spread}};
  for (const auto& [color, dx] : modes) {
    const bool sparse = color == kDeployedColor;
    const char* name = sparse ? "deployed" : "all dense";
    std::vector<std::pair<double, double>> p50, p99;
    for (const ContentionRun& c : d.contention) {
      const LatencySummary& l = sparse ? c.sparse : c.dense;
      if (l.batch_cycles.empty()) continue;
      for (const std::uint64_t v : l.batch_cycles) {
        p.dot(c.load + dx, static_cast<double>(v), color,
              std::string(name) + " at load " + percent(c.load, 0) + ": " + grouped(v) +
                  " cycles",
              2);
      }
      p50.push_back({c.load, static_cast<double>(l.p50)});
      p99.push_back({c.load, static_cast<double>(l.p99)});
    }
    p.line(p50, color, std::string(name) + " p50");
    p.line(p99, color, std::string(name) + " p99", true);
  }
  p.line({{0, static_cast<double>(budget)}, {std::max(max_load, 0.1), static_cast<double>(budget)}},
         "#dc2626", "budget: " + grouped(budget) + " cycles (all dense p50 without contention)",
         true);
  const double leaves = p99_leaves_budget_at(r.contention);
  return figure(p.svg("Per-batch latency under contention"),
                "Each dot a batch; solid lines p50, dashed p99; the red line is the budget, the "
                "all-dense model's p50 without contention. " +
                    (measured(leaves) ? "The deployed model's p99 leaves it at load " +
                                            percent(leaves, 0) + "."
                                      : std::string("The deployed model's p99 stays inside it at "
                                                    "every load run.")));
}

std::string quality_figure(const DeploymentReport& r) {
  double lo = 1, hi = 0;
  for (const auto& q : r.quality) {
    for (const double a : {q.fp32_accuracy, q.int8_accuracy}) {
      if (!measured(a)) continue;
      lo = std::min(lo, a);
      hi = std::max(hi, a);
    }
  }
  if (hi < lo) return "";
  std::vector<std::string> labels;
  std::size_t longest = 0;
  // Rows top to bottom, so category i (from the bottom) is row n-1-i.
  for (auto it = r.quality.rbegin(); it != r.quality.rend(); ++it) {
    labels.push_back(quality_label(*it) + (it->deployed ? " \xE2\x98\x85" : ""));  // U+2605 star
    longest = std::max(longest, std::min<std::size_t>(labels.back().size(), 44));
  }
  const int left = static_cast<int>(std::clamp(text_width(std::string(longest, 'x')) + 14, 80.0,
                                               300.0));
  // Differences of tenths of a point would vanish on a 0-100% axis: the axis starts just below
  // the lowest accuracy, and the caption says so.
  const double pad = std::max((hi - lo) * 0.25, 0.005);
  Axis x = numeric_axis(std::max(0.0, lo - pad), std::min(1.0, hi + pad * 0.3), Scale::kPercent,
                        "test top-1");
  Axis y;
  y.lo = 0;
  y.hi = static_cast<double>(labels.size());
  y.grid = false;
  for (std::size_t i = 0; i < labels.size(); ++i) {
    y.ticks.push_back({static_cast<double>(i) + 0.5, truncated(labels[i], 44)});
  }
  const double axis_lo = x.lo;
  const int height = 96 + 34 * static_cast<int>(labels.size());
  Plot p(std::max(600, left + 470), height, x, y,
         {{"FP32", "#64748b", true}, {"INT8", kDeployedColor, true}}, left, 60);
  const std::size_t n = r.quality.size();
  for (std::size_t k = 0; k < n; ++k) {
    const QualityRow& q = r.quality[k];
    const double row = static_cast<double>(n - 1 - k);
    const std::string name = quality_label(q);
    if (measured(q.fp32_accuracy)) {
      p.rect(axis_lo, row + 0.52, q.fp32_accuracy, row + 0.86, "#64748b",
             name + ": FP32 " + percent(q.fp32_accuracy));
      p.text(q.fp32_accuracy, row + 0.69, percent(q.fp32_accuracy), "start", 4, 4, "value");
    }
    if (measured(q.int8_accuracy)) {
      p.rect(axis_lo, row + 0.14, q.int8_accuracy, row + 0.48, kDeployedColor,
             name + ": INT8 " + percent(q.int8_accuracy) + " (" + q.int8_measured_on + ")");
      p.text(q.int8_accuracy, row + 0.31, percent(q.int8_accuracy), "start", 4, 4, "value");
    }
  }
  return figure(p.svg("Test top-1 of every model, FP32 and INT8"),
                "Test top-1 of each model in FP32 and after INT8 quantization; \xE2\x98\x85 marks "
                "the deployed model. The axis starts at " +
                    esc(percent(axis_lo, 0)) + ", not 0.");
}

}  // namespace nmsa::report_detail
