// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// report.md: the report document (report_document.hpp) as Markdown. Figures and the summary's
// cards are left out: they are drawings of figures the tables already give.
#include <sstream>
#include <string>
#include <vector>

#include "nmsa/report.hpp"
#include "report_document.hpp"

namespace nmsa {

using namespace report_detail;

namespace {

// Text safe inside a Markdown table cell: pipes escaped, no raw HTML, one line.
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

std::string md_inline(const Inline& text) {
  std::string out;
  for (const Span& s : text.spans) {
    switch (s.style) {
      case Span::Style::kStrong:
      case Span::Style::kBad:
        out += "**" + md(s.text) + "**";
        break;
      case Span::Style::kCode:
        out += "`" + md(s.text) + "`";
        break;
      case Span::Style::kLink:
        out += "[" + md(s.text) + "](" + s.target + ")";
        break;
      case Span::Style::kText:
      case Span::Style::kGood:
      case Span::Style::kMeter:
        out += md(s.text);
        break;
    }
  }
  return out;
}

std::string md_table(const Table& t) {
  std::ostringstream out;
  out << "|";
  for (const auto& h : t.header) out << " " << md(h) << " |";
  out << "\n|";
  for (std::size_t c = 0; c < t.header.size(); ++c) {
    out << (c < t.align.size() && t.align[c] == 'r' ? " ---: |" : " --- |");
  }
  out << "\n";
  for (std::size_t r = 0; r < t.rows.size(); ++r) {
    const bool total = t.last_row_total && r + 1 == t.rows.size();
    out << "|";
    for (std::size_t c = 0; c < t.rows[r].size(); ++c) {
      const std::string cell = md_inline(t.rows[r][c]);
      out << " " << (total && c == 0 && !cell.empty() ? "**" + cell + "**" : cell) << " |";
    }
    out << "\n";
  }
  return out.str() + "\n";
}

std::string md_block(const Block& b) {
  switch (b.kind) {
    case Block::Kind::kParagraph:
    case Block::Kind::kSmallPrint:  // plain: file names in it may hold underscores
      return md_inline(b.text) + "\n\n";
    case Block::Kind::kTable:
      return md_table(b.table);
    case Block::Kind::kList: {
      std::string out;
      for (const Inline& item : b.items) out += "- " + md_inline(item) + "\n";
      return out + "\n";
    }
    case Block::Kind::kHeading:
      return "### " + md_inline(b.text) + "\n\n";
    case Block::Kind::kDetails:
      return "### " + md_inline(b.text) + "\n\n" + md_table(b.table);
    case Block::Kind::kFigure:
    case Block::Kind::kCards:
      return "";
  }
  return "";
}

}  // namespace

namespace report_detail {

std::string render_markdown(const Document& doc) {
  std::ostringstream out;
  out << "# " << md(doc.title) << "\n\n";
  for (std::size_t i = 0; i < doc.subtitle.size(); ++i) {
    out << (i ? " · " : "") << md(doc.subtitle[i]);
  }
  out << "\n\n";
  for (const Section& s : doc.sections) {
    out << "## " << md(s.title) << "\n\n";
    if (s.missing) {
      out << "_not measured" << (s.missing_reason.empty() ? "" : ": " + md(s.missing_reason))
          << "_\n\n";
    }
    for (const Block& b : s.blocks) out << md_block(b);
  }
  return out.str();
}

}  // namespace report_detail

std::string report_markdown(const DeploymentReport& r) {
  return render_markdown(report_document(r));
}

}  // namespace nmsa
