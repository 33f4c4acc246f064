// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
#include "svg_chart.hpp"

#include <cmath>

namespace nmsa::report_detail {

namespace {

const char* const kPalette[] = {"#2563eb", "#ea8c0c", "#0d9f6e", "#8b5cf6", "#dc2626", "#0891b2"};

}  // namespace

const char* palette(std::size_t i) { return kPalette[i % (sizeof kPalette / sizeof kPalette[0])]; }

double text_width(const std::string& s) { return 6.4 * static_cast<double>(s.size()); }

std::string truncated(const std::string& s, std::size_t n) {
  return s.size() <= n ? s : s.substr(0, n - 1) + "\xE2\x80\xA6";  // U+2026 ellipsis
}

std::string f1(double v) { return fixed(v, 1); }

Axis numeric_axis(double lo, double hi, Scale scale, const std::string& title, int target) {
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

std::string figure(const std::string& svg, const std::string& caption) {
  return "<figure>\n" + svg + "<figcaption>" + caption + "</figcaption>\n</figure>\n";
}

}  // namespace nmsa::report_detail
