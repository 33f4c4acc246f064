// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// The deployment report writers (report.json, report.md, index.html) and the release gate that
// reads report.json back. index.html must open from a file on a machine with no network and show
// the same thing everywhere: inline CSS, inline SVG drawn here, system fonts, no script and no
// reference to any other file or host (the inline <svg> even goes without its xmlns URL, which
// the HTML5 parser supplies).
#include "nmsa/report.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "nmsa/file_io.hpp"

namespace nmsa {

std::uint64_t LatencySummary::total_cycles() const {
  std::uint64_t total = 0;
  for (const std::uint64_t c : batch_cycles) total += c;
  return total;
}

std::uint64_t percentile_cycles(std::vector<std::uint64_t> values, double p) {
  if (!(p > 0.0 && p <= 100.0)) {
    throw std::invalid_argument("percentile_cycles: p = " + std::to_string(p) +
                                " is outside (0, 100]");
  }
  if (values.empty()) return 0;
  const double n = static_cast<double>(values.size());
  // p * n is exact for whole percentiles, and the small margin keeps a rank that is an integer
  // in theory (95% of 20 values: rank 19) from rounding up to the next one.
  auto rank = static_cast<std::size_t>(std::ceil(p * n / 100.0 - 1e-9));
  rank = std::clamp<std::size_t>(rank, 1, values.size());
  const auto nth = values.begin() + static_cast<std::ptrdiff_t>(rank - 1);
  std::nth_element(values.begin(), nth, values.end());
  return *nth;
}

void compute_percentiles(LatencySummary& latency) {
  latency.p50 = percentile_cycles(latency.batch_cycles, 50);
  latency.p95 = percentile_cycles(latency.batch_cycles, 95);
  latency.p99 = percentile_cycles(latency.batch_cycles, 99);
}

namespace {

// The quality gate's measurement, as a column header.
constexpr const char* kPrunedAloneHeader = "val. change, pruned alone";


// --- Figures shared by the three writers ---------------------------------------------------------

bool measured(double v) { return std::isfinite(v); }

bool has_latency(const LatencySummary& l) { return !l.batch_cycles.empty() || l.p99 > 0; }

LatencySummary summarized(LatencySummary l) {
  if (!l.batch_cycles.empty()) compute_percentiles(l);
  return l;
}

bool has_clock(const DeploymentReport& r) { return std::isfinite(r.clock_mhz) && r.clock_mhz > 0; }

// "124.9 MHz (measured Fmax)" or "100.0 MHz (stated, not measured)", or "n/a".
std::string clock_label(const DeploymentReport& r) {
  if (!has_clock(r)) return "n/a";
  char mhz[32];
  std::snprintf(mhz, sizeof mhz, "%.1f MHz", r.clock_mhz);
  return std::string(mhz) + (r.clock_measured ? " (measured Fmax)" : " (stated, not measured)");
}

double ratio_or_nan(std::uint64_t num, std::uint64_t den) {
  return den == 0 ? kNotMeasured : static_cast<double>(num) / static_cast<double>(den);
}

struct Derived {
  LatencySummary deployed;
  LatencySummary dense;
  std::vector<LatencySummary> others;
  double meta_share = kNotMeasured;  // meta_bytes / weight_bytes_deployed
  std::uint64_t layer_deployed_cycles = 0;
  std::uint64_t layer_dense_cycles = 0;
  std::size_t targets_met = 0;
};

Derived derive(const DeploymentReport& r) {
  Derived d;
  d.deployed = summarized(r.deployed_latency);
  d.dense = summarized(r.dense_latency);
  for (const auto& l : r.other_latency) d.others.push_back(summarized(l));
  d.meta_share = ratio_or_nan(r.meta_bytes, r.weight_bytes_deployed);
  for (const auto& l : r.layers) {
    d.layer_deployed_cycles += l.deployed_cycles;
    d.layer_dense_cycles += l.dense_cycles;
  }
  for (const auto& t : r.targets) d.targets_met += t.met ? 1 : 0;
  return d;
}

// All latency runs in the order they are shown: deployed, dense, then the others.
std::vector<const LatencySummary*> latency_runs(const Derived& d) {
  std::vector<const LatencySummary*> runs = {&d.deployed, &d.dense};
  for (const auto& l : d.others) runs.push_back(&l);
  return runs;
}

std::string run_label(const LatencySummary& l, const char* fallback) {
  return l.label.empty() ? fallback : l.label;
}

// --- Text formatting -----------------------------------------------------------------------------

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string percent(double fraction, int digits = 2) {
  return measured(fraction) ? fixed(100.0 * fraction, digits) + "%" : "n/a";
}

std::string signed_pp(double pp) {
  if (!measured(pp)) return "n/a";
  return (pp >= 0 ? "+" : "") + fixed(pp, 2) + " pp";
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

// Layers placed on the device in dense mode although they are supported sparse.
bool is_fallback(const ReportLayer& l) { return l.placement == "device dense"; }

// Every epoch at which a curve has a point, with the sparsity and the accuracy there (NaN when
// the curve has none at that epoch): the rows of the schedule tables.
struct SchedulePoint {
  double epoch;
  double sparsity = kNotMeasured;
  double val_accuracy = kNotMeasured;
};

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

std::string epoch_text(double e) {
  return std::fabs(e - std::round(e)) < 1e-9 ? fixed(e, 0) : fixed(e, 2);
}

// --- report.json ---------------------------------------------------------------------------------

using Json = nlohmann::ordered_json;

Json number(double v) { return measured(v) ? Json(v) : Json(nullptr); }

Json cycles_if(bool known, std::uint64_t v) { return known ? Json(v) : Json(nullptr); }

Json us_if(const DeploymentReport& r, bool known, std::uint64_t cycles) {
  return known && has_clock(r) ? Json(static_cast<double>(cycles) / r.clock_mhz) : Json(nullptr);
}

Json latency_json(const LatencySummary& l) {
  const bool known = has_latency(l);
  Json j;
  j["label"] = l.label;
  j["batch_size"] = l.batch_size;
  j["batches"] = l.batch_cycles.size();
  j["p50"] = cycles_if(known, l.p50);
  j["p95"] = cycles_if(known, l.p95);
  j["p99"] = cycles_if(known, l.p99);
  j["total_cycles"] = cycles_if(!l.batch_cycles.empty(), l.total_cycles());
  j["batch_cycles"] = l.batch_cycles;
  return j;
}

// --- HTML building blocks ------------------------------------------------------------------------

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

// --- SVG plots -----------------------------------------------------------------------------------

const char* const kPalette[] = {"#2563eb", "#ea8c0c", "#0d9f6e", "#8b5cf6", "#dc2626", "#0891b2"};
const char* kDeployedColor = "#2563eb";
const char* kDenseColor = "#ea8c0c";

const char* palette(std::size_t i) { return kPalette[i % (sizeof kPalette / sizeof kPalette[0])]; }

// Approximate width of 11 px system sans-serif text, for laying out legends and margins.
double text_width(const std::string& s) { return 6.4 * static_cast<double>(s.size()); }

std::string truncated(const std::string& s, std::size_t n) {
  return s.size() <= n ? s : s.substr(0, n - 1) + "\xE2\x80\xA6";  // U+2026 ellipsis
}

std::string f1(double v) { return fixed(v, 1); }

struct Tick {
  double at;
  std::string label;
};

struct Axis {
  double lo = 0.0;
  double hi = 1.0;
  std::vector<Tick> ticks;
  bool grid = true;
  std::string title;
};

enum class Scale { kPlain, kCount, kPercent };

// Ticks at 1, 2, 2.5 or 5 times a power of ten; the axis is widened to the outer ticks.
Axis numeric_axis(double lo, double hi, Scale scale, const std::string& title, int target = 5) {
  if (!(hi > lo)) hi = lo + (lo == 0 ? 1.0 : std::fabs(lo) * 0.1);
  const double raw = (hi - lo) / target;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double f = raw / mag;
  const double step = (f <= 1 ? 1 : f <= 2 ? 2 : f <= 2.5 ? 2.5 : f <= 5 ? 5 : 10) * mag;
  Axis a;
  a.title = title;
  a.lo = std::floor(lo / step + 1e-9) * step;
  a.hi = std::ceil(hi / step - 1e-9) * step;
  double unit = 1.0;
  std::string suffix;
  if (scale == Scale::kPercent) {
    unit = 0.01;
    suffix = "%";
  } else if (scale == Scale::kCount) {
    const double top = std::max(std::fabs(a.lo), std::fabs(a.hi));
    if (top >= 1e9) {
      unit = 1e9;
      suffix = "G";
    } else if (top >= 1e6) {
      unit = 1e6;
      suffix = "M";
    } else if (top >= 1e3) {
      unit = 1e3;
      suffix = "k";
    }
  }
  // Enough decimals that neighbouring ticks read differently.
  int decimals = 0;
  while (decimals < 4) {
    const double scaled = step / unit * std::pow(10.0, decimals);
    if (std::fabs(scaled - std::round(scaled)) < 1e-6) break;
    ++decimals;
  }
  const int count = static_cast<int>(std::lround((a.hi - a.lo) / step));
  for (int i = 0; i <= count; ++i) {
    const double v = a.lo + i * step;
    // A plain 0 rather than "0.00M": the origin needs no unit.
    const bool zero = std::fabs(v) < step * 1e-9;
    a.ticks.push_back({v, zero ? "0" : fixed(v / unit, decimals) + suffix});
  }
  return a;
}

// Categories 0..n-1 centered at i + 0.5, labelled without grid lines.
Axis category_axis(const std::vector<std::string>& labels, std::size_t max_chars) {
  Axis a;
  a.lo = 0;
  a.hi = static_cast<double>(std::max<std::size_t>(labels.size(), 1));
  a.grid = false;
  for (std::size_t i = 0; i < labels.size(); ++i) {
    a.ticks.push_back({static_cast<double>(i) + 0.5, truncated(labels[i], max_chars)});
  }
  return a;
}

struct Series {
  std::string label;
  std::string color;
  bool bar = false;  // a filled square in the legend instead of a line
};

// One figure: a plot area with axes, grid, ticks, titles and a legend above it; the content is
// drawn in data coordinates.
class Plot {
 public:
  Plot(int width, int height, Axis x, Axis y, std::vector<Series> legend, int left = 64,
       int right = 18)
      : width_(width), height_(height), left_(left), right_(right), x_(std::move(x)),
        y_(std::move(y)), legend_(std::move(legend)) {
    // The legend is laid out in rows first: the plot area starts below it.
    double cx = left_;
    int rows = legend_.empty() ? 0 : 1;
    for (const Series& s : legend_) {
      const double w = 30 + text_width(s.label) + 14;
      if (cx + w > width_ - right_ && cx > left_) {
        cx = left_;
        ++rows;
      }
      legend_at_.push_back({cx, 12.0 + 16.0 * (rows - 1)});
      cx += w;
    }
    top_ = rows == 0 ? 14 : 12 + 16 * rows + 2;
    bottom_ = x_.title.empty() ? 26 : 42;
  }

  double px(double x) const {
    return left_ + (x - x_.lo) / (x_.hi - x_.lo) * (width_ - left_ - right_);
  }
  double py(double y) const {
    return top_ + (1.0 - (y - y_.lo) / (y_.hi - y_.lo)) * (height_ - top_ - bottom_);
  }
  double x_lo() const { return x_.lo; }
  double y_lo() const { return y_.lo; }
  double y_hi() const { return y_.hi; }

  void line(const std::vector<std::pair<double, double>>& points, const std::string& color,
            const std::string& title, bool dashed = false) {
    if (points.empty()) return;
    body_ << "<polyline fill=\"none\" stroke=\"" << color << "\" stroke-width=\"2\""
          << (dashed ? " stroke-dasharray=\"5 3\"" : "") << " stroke-linejoin=\"round\" points=\"";
    for (std::size_t i = 0; i < points.size(); ++i) {
      body_ << (i ? " " : "") << f1(px(points[i].first)) << "," << f1(py(points[i].second));
    }
    body_ << "\"><title>" << esc(title) << "</title></polyline>\n";
  }

  void dot(double x, double y, const std::string& color, const std::string& title, double r = 3) {
    body_ << "<circle cx=\"" << f1(px(x)) << "\" cy=\"" << f1(py(y)) << "\" r=\"" << f1(r)
          << "\" fill=\"" << color << "\" stroke=\"#fff\" stroke-width=\"1\"><title>" << esc(title)
          << "</title></circle>\n";
  }

  // A rectangle between two corners in data coordinates.
  void rect(double x0, double y0, double x1, double y1, const std::string& color,
            const std::string& title) {
    const double ax = std::min(px(x0), px(x1)), bx = std::max(px(x0), px(x1));
    const double ay = std::min(py(y0), py(y1)), by = std::max(py(y0), py(y1));
    body_ << "<rect x=\"" << f1(ax) << "\" y=\"" << f1(ay) << "\" width=\"" << f1(bx - ax)
          << "\" height=\"" << f1(by - ay) << "\" fill=\"" << color << "\" rx=\"1.5\"><title>"
          << esc(title) << "</title></rect>\n";
  }

  // Text at a data point, shifted by (dx, dy) pixels; anchor is start, middle or end.
  void text(double x, double y, const std::string& s, const char* anchor, double dx = 0,
            double dy = 0, const char* css = "label") {
    body_ << "<text class=\"" << css << "\" x=\"" << f1(px(x) + dx) << "\" y=\"" << f1(py(y) + dy)
          << "\" text-anchor=\"" << anchor << "\">" << esc(s) << "</text>\n";
  }

  // A dashed vertical guide across the plot area, labelled above it.
  void guide(double x, const std::string& label, const char* anchor) {
    body_ << "<line class=\"guide\" x1=\"" << f1(px(x)) << "\" x2=\"" << f1(px(x)) << "\" y1=\""
          << f1(py(y_.lo)) << "\" y2=\"" << f1(py(y_.hi)) << "\"/>\n";
    const double shift = anchor[0] == 'e' ? -3 : anchor[0] == 's' ? 3 : 0;  // off the line
    body_ << "<text class=\"guide-label\" x=\"" << f1(px(x) + shift) << "\" y=\""
          << f1(py(y_.hi) + 11) << "\" text-anchor=\"" << anchor << "\">" << esc(label)
          << "</text>\n";
  }

  std::string svg(const std::string& label) const {
    std::ostringstream out;
    const double x0 = left_, x1 = width_ - right_, y0 = top_, y1 = height_ - bottom_;
    out << "<svg class=\"plot\" viewBox=\"0 0 " << width_ << " " << height_ << "\" width=\""
        << width_ << "\" height=\"" << height_ << "\" role=\"img\" aria-label=\"" << esc(label)
        << "\">\n<title>" << esc(label) << "</title>\n";
    out << "<rect class=\"area\" x=\"" << f1(x0) << "\" y=\"" << f1(y0) << "\" width=\""
        << f1(x1 - x0) << "\" height=\"" << f1(y1 - y0) << "\"/>\n";
    for (const Tick& t : y_.ticks) {
      if (y_.grid) {
        out << "<line class=\"grid\" x1=\"" << f1(x0) << "\" x2=\"" << f1(x1) << "\" y1=\""
            << f1(py(t.at)) << "\" y2=\"" << f1(py(t.at)) << "\"/>\n";
      }
      out << "<text class=\"tick\" x=\"" << f1(x0 - 6) << "\" y=\"" << f1(py(t.at) + 4)
          << "\" text-anchor=\"end\">" << esc(t.label) << "</text>\n";
    }
    for (const Tick& t : x_.ticks) {
      if (x_.grid) {
        out << "<line class=\"grid\" x1=\"" << f1(px(t.at)) << "\" x2=\"" << f1(px(t.at))
            << "\" y1=\"" << f1(y0) << "\" y2=\"" << f1(y1) << "\"/>\n";
      }
      out << "<line class=\"axis\" x1=\"" << f1(px(t.at)) << "\" x2=\"" << f1(px(t.at))
          << "\" y1=\"" << f1(y1) << "\" y2=\"" << f1(y1 + 4) << "\"/>\n";
      out << "<text class=\"tick\" x=\"" << f1(px(t.at)) << "\" y=\"" << f1(y1 + 16)
          << "\" text-anchor=\"middle\">" << esc(t.label) << "</text>\n";
    }
    out << body_.str();
    out << "<line class=\"axis\" x1=\"" << f1(x0) << "\" x2=\"" << f1(x0) << "\" y1=\"" << f1(y0)
        << "\" y2=\"" << f1(y1) << "\"/>\n";
    out << "<line class=\"axis\" x1=\"" << f1(x0) << "\" x2=\"" << f1(x1) << "\" y1=\"" << f1(y1)
        << "\" y2=\"" << f1(y1) << "\"/>\n";
    if (!x_.title.empty()) {
      out << "<text class=\"axis-title\" x=\"" << f1((x0 + x1) / 2) << "\" y=\""
          << f1(height_ - 8) << "\" text-anchor=\"middle\">" << esc(x_.title) << "</text>\n";
    }
    if (!y_.title.empty()) {
      out << "<text class=\"axis-title\" transform=\"translate(13," << f1((y0 + y1) / 2)
          << ") rotate(-90)\" text-anchor=\"middle\">" << esc(y_.title) << "</text>\n";
    }
    for (std::size_t i = 0; i < legend_.size(); ++i) {
      const auto [lx, ly] = legend_at_[i];
      const Series& s = legend_[i];
      if (s.bar) {
        out << "<rect x=\"" << f1(lx + 6) << "\" y=\"" << f1(ly - 9) << "\" width=\"12\" "
            << "height=\"10\" rx=\"1.5\" fill=\"" << s.color << "\"/>\n";
      } else {
        out << "<line x1=\"" << f1(lx) << "\" x2=\"" << f1(lx + 24) << "\" y1=\"" << f1(ly - 4)
            << "\" y2=\"" << f1(ly - 4) << "\" stroke=\"" << s.color
            << "\" stroke-width=\"2.5\"/>\n";
      }
      out << "<text class=\"legend\" x=\"" << f1(lx + 30) << "\" y=\"" << f1(ly) << "\">"
          << esc(s.label) << "</text>\n";
    }
    out << "</svg>\n";
    return out.str();
  }

 private:
  int width_, height_, left_, right_;
  double top_ = 0, bottom_ = 0;
  Axis x_, y_;
  std::vector<Series> legend_;
  std::vector<std::pair<double, double>> legend_at_;
  std::ostringstream body_;
};

std::string figure(const std::string& svg, const std::string& caption) {
  return "<figure>\n" + svg + "<figcaption>" + caption + "</figcaption>\n</figure>\n";
}

// (a) The pruning schedules: sparsity and validation accuracy against the epoch.
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

// (b) Deployed against all-dense cycles per device layer, with the speedup above each pair.
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

// The share of deployed device time per layer, coloured by placement, as one stacked bar.
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

// (c) Per-batch latency of every run, sorted: the value at x is the x-th percentile.
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

std::string quality_label(const QualityRow& q) {
  std::string s = q.model + " " + q.schedule;
  if (q.permuted && q.schedule.find("permut") == std::string::npos) s += " (permuted)";
  return s;
}

// (d) FP32 and INT8 top-1 of every quality row, as horizontal bars.
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

// --- Markdown building blocks --------------------------------------------------------------------

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

std::string cycles_and_us(const DeploymentReport& r, std::uint64_t cycles) {
  return grouped(cycles) + " cycles (" + microseconds(r, cycles) + ")";
}

std::string met_text(bool met) { return met ? "met" : "**NOT MET**"; }

std::string fraction_of(std::uint64_t part, std::uint64_t whole) {
  return grouped(part) + " of " + grouped(whole);
}

}  // namespace

// --- report.json ---------------------------------------------------------------------------------

std::string report_json(const DeploymentReport& r) {
  const Derived d = derive(r);
  const bool lat = has_latency(d.deployed);
  const bool dense_lat = has_latency(d.dense);
  Json j;
  j["report_format"] = kReportFormatVersion;
  j["title"] = r.title;
  j["dataset"] = r.dataset;
  j["test_images"] = r.test_images;
  j["device"] = r.device;
  j["clock_mhz"] = has_clock(r) ? Json(r.clock_mhz) : Json(nullptr);  // 0: no clock stated
  j["clock_measured"] = r.clock_measured;
  j["clock_source"] = r.clock_source;
  if (r.hardware) {
    const HardwareCost& h = *r.hardware;
    j["hardware"] = {{"device", h.device},
                     {"sparse_source", h.sparse_source},
                     {"dense_only_source", h.dense_source},
                     {"sparse_luts", h.sparse_luts},
                     {"dense_only_luts", h.dense_luts},
                     {"sparse_dsps", h.sparse_dsps},
                     {"dense_only_dsps", h.dense_dsps},
                     {"sparse_brams", h.sparse_brams},
                     {"dense_only_brams", h.dense_brams},
                     {"sparse_fmax_mhz", h.sparse_fmax_mhz},
                     {"dense_only_fmax_mhz", h.dense_fmax_mhz},
                     {"cycles_ratio", number(h.cycles_ratio)},
                     {"throughput_ratio", number(h.throughput_ratio())},
                     {"throughput_per_lut_ratio", number(h.per_lut_ratio())},
                     {"throughput_per_dsp_ratio", number(h.per_dsp_ratio())}};
  } else {
    j["hardware"] = nullptr;
  }
  j["dense_fp32_accuracy"] = number(r.dense_fp32_accuracy);
  j["dense_int8_accuracy"] = number(r.dense_int8_accuracy);
  j["sparse_fp32_accuracy"] = number(r.sparse_fp32_accuracy);
  j["sparse_int8_accuracy"] = number(r.sparse_int8_accuracy);
  j["quality_delta_pp"] = number(r.quality_delta_pp);
  j["effective_speedup"] = number(r.effective_speedup);
  j["all_sparse_speedup_predicted"] = number(r.all_sparse_speedup_predicted);
  j["latency_cycles_p50"] = cycles_if(lat, d.deployed.p50);
  j["latency_cycles_p95"] = cycles_if(lat, d.deployed.p95);
  j["latency_cycles_p99"] = cycles_if(lat, d.deployed.p99);
  j["latency_us_p50"] = us_if(r, lat, d.deployed.p50);
  j["latency_us_p95"] = us_if(r, lat, d.deployed.p95);
  j["latency_us_p99"] = us_if(r, lat, d.deployed.p99);
  j["dense_latency_cycles_p50"] = cycles_if(dense_lat, d.dense.p50);
  j["dense_latency_cycles_p95"] = cycles_if(dense_lat, d.dense.p95);
  j["dense_latency_cycles_p99"] = cycles_if(dense_lat, d.dense.p99);
  j["fallback_layers"] = r.fallback_layers;
  j["fallback_cycles"] = r.fallback_cycles;
  j["fallback_cycle_share"] = number(r.fallback_cycle_share);
  j["pe_utilization"] = number(r.pe_utilization);
  j["weight_bytes_dense"] = r.weight_bytes_dense;
  j["weight_bytes_deployed"] = r.weight_bytes_deployed;
  j["meta_bytes"] = r.meta_bytes;
  j["meta_share"] = number(d.meta_share);
  j["dma_read_bytes"] = r.dma_read_bytes;
  j["dma_meta_bytes"] = r.dma_meta_bytes;
  j["batches"] = r.batches;
  j["batches_bit_exact_golden"] = r.batches_bit_exact_golden;
  j["batches_bit_exact_model"] = r.batches_bit_exact_model;
  j["targets_met"] = d.targets_met;
  j["targets_total"] = r.targets.size();

  Json layers = Json::array();
  for (const auto& l : r.layers) {
    Json e;
    e["name"] = l.name;
    e["op"] = l.op;
    e["k"] = l.k;
    e["n_out"] = l.n_out;
    e["placement"] = l.placement;
    e["reason"] = l.reason;
    e["sensitivity_pp"] = number(l.sensitivity_pp);
    e["deployed_cycles"] = l.deployed_cycles;
    e["dense_cycles"] = l.dense_cycles;
    e["speedup"] = number(l.speedup());
    e["macs"] = l.macs;
    e["utilization"] = number(l.utilization);
    e["dense_weight_bytes"] = l.dense_weight_bytes;
    e["deployed_weight_bytes"] = l.deployed_weight_bytes;
    e["meta_bytes"] = l.meta_bytes;
    layers.push_back(std::move(e));
  }
  j["layers"] = std::move(layers);

  Json quality = Json::array();
  for (const auto& q : r.quality) {
    Json e;
    e["model"] = q.model;
    e["schedule"] = q.schedule;
    e["permuted"] = q.permuted;
    e["fp32_accuracy"] = number(q.fp32_accuracy);
    e["int8_accuracy"] = number(q.int8_accuracy);
    e["int8_measured_on"] = q.int8_measured_on;
    e["deployed"] = q.deployed;
    e["note"] = q.note;
    quality.push_back(std::move(e));
  }
  j["quality"] = std::move(quality);

  Json schedules = Json::array();
  for (const auto& c : r.schedules) {
    Json e;
    e["name"] = c.name;
    Json sparsity = Json::array(), acc = Json::array();
    for (const auto& [ep, s] : c.sparsity) {
      sparsity.push_back(Json{{"epoch", number(ep)}, {"sparsity", number(s)}});
    }
    for (const auto& [ep, a] : c.val_accuracy) {
      acc.push_back(Json{{"epoch", number(ep)}, {"val_accuracy", number(a)}});
    }
    e["sparsity"] = std::move(sparsity);
    e["val_accuracy"] = std::move(acc);
    schedules.push_back(std::move(e));
  }
  j["schedules"] = std::move(schedules);

  Json latency;
  latency["deployed"] = latency_json(d.deployed);
  latency["dense"] = latency_json(d.dense);
  latency["others"] = Json::array();
  for (const auto& l : d.others) latency["others"].push_back(latency_json(l));
  j["latency"] = std::move(latency);

  if (r.equal_budget) {
    const EqualBudget& b = *r.equal_budget;
    Json e;
    e["dense_model"] = b.dense_model;
    e["sparse_model"] = b.sparse_model;
    e["budget_cycles_p50"] = b.budget_cycles_p50;
    e["sparse_cycles_p50"] = b.sparse_cycles_p50;
    e["predicted_sparse_cycles"] = b.predicted_sparse_cycles;
    e["dense_int8_accuracy"] = number(b.dense_int8_accuracy);
    e["sparse_int8_accuracy"] = number(b.sparse_int8_accuracy);
    e["fits"] = b.fits();
    j["equal_budget"] = std::move(e);
  } else {
    j["equal_budget"] = nullptr;
  }

  Json targets = Json::array();
  for (const auto& t : r.targets) {
    targets.push_back(
        Json{{"name", t.name}, {"required", t.required}, {"measured", t.measured}, {"met", t.met}});
  }
  j["targets"] = std::move(targets);
  Json tags = Json::object();
  for (const auto& [k, v] : r.tags) tags[k] = v;
  j["tags"] = std::move(tags);
  j["notes"] = r.notes;
  // Names and tags come from models and tools: bytes that are not UTF-8 must not stop the report.
  return j.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

// The equal-area comparison as rows of (figure, N:M design, dense-only design): the same rows in
// report.md and index.html.
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

// --- report.md -----------------------------------------------------------------------------------

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

// --- index.html ----------------------------------------------------------------------------------

namespace {

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

// --- Files ---------------------------------------------------------------------------------------


void write_report(const DeploymentReport& report, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir)) {
    throw std::runtime_error(dir + ": cannot create the report directory (" +
                             (ec ? ec.message() : std::string("a file is in the way")) + ")");
  }
  const std::filesystem::path base(dir);
  write_file_atomically((base / "report.json").string(), report_json(report));
  write_file_atomically((base / "report.md").string(), report_markdown(report));
  write_file_atomically((base / "index.html").string(), report_html(report));
}

// --- The release gate ----------------------------------------------------------------------------

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
  std::ifstream in(file, std::ios::binary);
  if (!in) throw std::runtime_error(file + ": cannot open (" + std::strerror(errno) + ")");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw std::runtime_error(file + ": read error (" + std::strerror(errno) + ")");
  ReadJson j;
  try {
    j = ReadJson::parse(text);
  } catch (const ReadJson::parse_error& e) {
    // Drop nlohmann's "[json.exception.parse_error.101] " prefix: the file name says enough.
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
