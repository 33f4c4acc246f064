// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// index.html: the report document (report_document.hpp) as one page that opens from a file on a
// machine with no network and shows the same thing everywhere: inline CSS, inline SVG figures
// (report_charts.hpp), system fonts, no script and no reference to any other file or host.
#include <algorithm>
#include <sstream>
#include <string>

#include "nmsa/report.hpp"
#include "report_common.hpp"
#include "report_document.hpp"

namespace nmsa {

using namespace report_detail;

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

std::string html_inline(const Inline& text) {
  std::string out;
  for (const Span& s : text.spans) {
    switch (s.style) {
      case Span::Style::kText:
        out += esc(s.text);
        break;
      case Span::Style::kStrong:
        out += "<b>" + esc(s.text) + "</b>";
        break;
      case Span::Style::kCode:
        out += "<code>" + esc(s.text) + "</code>";
        break;
      case Span::Style::kGood:
        out += "<span class=\"badge ok\">" + esc(s.text) + "</span>";
        break;
      case Span::Style::kBad:
        out += "<span class=\"badge bad\">" + esc(s.text) + "</span>";
        break;
      case Span::Style::kLink:
        out += "<a href=\"" + esc(s.target) + "\">" + esc(s.text) + "</a>";
        break;
      case Span::Style::kMeter: {
        const double width = std::clamp(s.fraction, 0.0, 1.0) * 100.0;
        out += "<span class=\"meter\"><span style=\"width:" + fixed(width, 1) +
               "%\"></span></span> " + esc(s.text);
        break;
      }
    }
  }
  return out;
}

std::string html_table(const Table& t) {
  auto num = [&t](std::size_t c) {
    return c < t.align.size() && t.align[c] == 'r' ? " class=\"num\"" : "";
  };
  std::ostringstream out;
  out << "<table" << (t.key_value ? " class=\"kv\"" : "") << ">\n<thead><tr>";
  for (std::size_t c = 0; c < t.header.size(); ++c) {
    out << "<th" << num(c) << ">" << esc(t.header[c]) << "</th>";
  }
  out << "</tr></thead>\n<tbody>\n";
  for (std::size_t r = 0; r < t.rows.size(); ++r) {
    const bool total = t.last_row_total && r + 1 == t.rows.size();
    out << (total ? "<tr class=\"total\">" : "<tr>");
    for (std::size_t c = 0; c < t.rows[r].size(); ++c) {
      out << "<td" << num(c) << ">" << html_inline(t.rows[r][c]) << "</td>";
    }
    out << "</tr>\n";
  }
  out << "</tbody></table>\n";
  return out.str();
}

std::string html_block(const Block& b) {
  switch (b.kind) {
    case Block::Kind::kParagraph:
      return "<p>" + html_inline(b.text) + "</p>\n";
    case Block::Kind::kSmallPrint:
      return "<p><small>" + html_inline(b.text) + "</small></p>\n";
    case Block::Kind::kTable:
      return html_table(b.table);
    case Block::Kind::kList: {
      std::string out = "<ul>\n";
      for (const Inline& item : b.items) out += "<li>" + html_inline(item) + "</li>\n";
      return out + "</ul>\n";
    }
    case Block::Kind::kHeading:
      return "<h3>" + html_inline(b.text) + "</h3>\n";
    case Block::Kind::kFigure:
      return b.svg;
    case Block::Kind::kCards: {
      std::string out = "<div class=\"cards\">\n";
      for (const Card& c : b.cards) {
        out += "<div class=\"card\"><div class=\"k\">" + esc(c.key) + "</div><div class=\"v\">" +
               esc(c.value) + "</div><div class=\"d\">" + esc(c.detail) + "</div></div>\n";
      }
      return out + "</div>\n";
    }
    case Block::Kind::kDetails:
      return "<details><summary>" + html_inline(b.text) + "</summary>\n" + html_table(b.table) +
             "</details>\n";
  }
  return "";
}

}  // namespace

namespace report_detail {

std::string render_html(const Document& doc) {
  std::ostringstream out;
  out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      << "<title>" << esc(doc.title) << "</title>\n<style>" << kCss << "</style>\n</head>\n"
      << "<body>\n<main>\n<header>\n<h1>" << esc(doc.title) << "</h1>\n<p class=\"sub\">";
  for (std::size_t i = 0; i < doc.subtitle.size(); ++i) {
    out << (i ? " &middot; " : "") << esc(doc.subtitle[i]);
  }
  out << "</p>\n<nav>";
  for (const Section& s : doc.sections) {
    out << "<a href=\"#" << s.id << "\">" << esc(s.title) << "</a>";
  }
  out << "</nav>\n</header>\n";
  for (const Section& s : doc.sections) {
    out << "<section id=\"" << s.id << "\">\n<h2>" << esc(s.title) << "</h2>\n";
    if (s.missing) {
      out << "<p class=\"missing\">not measured"
          << (s.missing_reason.empty() ? "" : ": " + esc(s.missing_reason)) << "</p>\n";
    }
    for (const Block& b : s.blocks) out << html_block(b);
    out << "</section>\n";
  }
  if (doc.footer.empty()) {
    out << "<footer>report format " << kReportFormatVersion
        << " &middot; written by libnmsa (report.json holds every figure)</footer>\n";
  } else {
    out << "<footer>" << esc(doc.footer) << "</footer>\n";
  }
  out << "</main>\n</body>\n</html>\n";
  return out.str();
}

}  // namespace report_detail

std::string report_html(const DeploymentReport& r) { return render_html(report_document(r)); }

}  // namespace nmsa
