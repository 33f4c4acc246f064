// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// A small SVG charting library for the report's index.html: numeric and category axes with
// ticks, and a Plot that draws lines, dots, bars, text and guides in data coordinates inside a
// frame with grid lines, tick labels, axis titles and a legend. The SVG is inline markup with
// system fonts and no script, so the page shows the same everywhere, offline (the <svg> even goes
// without its xmlns URL, which the HTML5 parser supplies).
#pragma once

#include <algorithm>
#include <cstddef>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "report_common.hpp"

namespace nmsa::report_detail {

// A colour per series, in order (six, then again).
const char* palette(std::size_t i);

// Approximate width of 11 px system sans-serif text, for laying out legends and margins.
double text_width(const std::string& s);

// `s` cut to `n` characters, the last an ellipsis.
std::string truncated(const std::string& s, std::size_t n);

// One decimal: the precision of every coordinate in the SVG.
std::string f1(double v);

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
Axis numeric_axis(double lo, double hi, Scale scale, const std::string& title, int target = 5);

// Categories 0..n-1 centered at i + 0.5, labelled without grid lines.
Axis category_axis(const std::vector<std::string>& labels, std::size_t max_chars);

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

// An <svg> and its caption as an HTML figure.
std::string figure(const std::string& svg, const std::string& caption);

}  // namespace nmsa::report_detail
