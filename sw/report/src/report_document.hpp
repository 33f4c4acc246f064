// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// The deployment report as a document: sections of paragraphs, tables, lists and figures, built
// once from a DeploymentReport (report_document.cpp) and rendered to Markdown
// (report_markdown.cpp) and HTML (report_html.cpp). The renderers know the formats and nothing
// about the report, so every section is written once, and report.md and index.html say the same
// thing. report.json is the DeploymentReport itself (report_json.cpp).
#pragma once

#include <string>
#include <vector>

#include "nmsa/report.hpp"

namespace nmsa::report_detail {

// A piece of inline text and how it is shown. Text is plain: the renderers escape it.
struct Span {
  enum class Style {
    kText,
    kStrong,
    kCode,
    kGood,   // a status that is fine ("met", "ok"): a green badge, plain in Markdown
    kBad,    // a status that is not ("NOT MET"): a red badge, bold in Markdown
    kMeter,  // a share in [0, 1] (fraction), drawn as a bar before the text in HTML
    kLink,   // text linking to `target`, a path relative to the report directory
  };
  Style style = Style::kText;
  std::string text;
  double fraction = 0;
  std::string target;
};

// A run of spans: a paragraph, a table cell, a list item.
struct Inline {
  std::vector<Span> spans;

  Inline() = default;
  Inline(const std::string& text) : spans{{Span::Style::kText, text, 0, ""}} {}  // NOLINT: implicit
  Inline(const char* text) : Inline(std::string(text)) {}                    // NOLINT: implicit
  Inline& operator+=(const Inline& more);
  bool empty() const { return spans.empty(); }
};
Inline operator+(Inline a, const Inline& b);
Inline strong(const std::string& text);
Inline code(const std::string& text);
Inline status(bool good, const std::string& good_text = "met",
              const std::string& bad_text = "NOT MET");
Inline link(const std::string& text, const std::string& target);
Inline meter(double fraction);  // the share as a percentage, with a bar in HTML; n/a if unmeasured

struct Table {
  std::vector<std::string> header;
  std::vector<std::vector<Inline>> rows;
  std::string align;            // 'l' or 'r' per column
  bool key_value = false;       // the first column names the figure in its row
  bool last_row_total = false;  // the last row sums the rows above it
};

// A headline figure: shown as a card above the summary in HTML; Markdown leaves cards out (the
// summary table carries the same figures).
struct Card {
  std::string key, value, detail;
};

struct Block {
  enum class Kind {
    kParagraph,
    kSmallPrint,  // a footnote to the block before it
    kTable,
    kList,
    kHeading,  // a subheading inside a section
    kFigure,   // an SVG figure with its caption (HTML only; report_charts.hpp)
    kCards,
    kDetails,  // a collapsible table: `text` is its summary line
  };
  Kind kind = Kind::kParagraph;
  Inline text;
  Table table;
  std::vector<Inline> items;
  std::string svg;
  std::vector<Card> cards;
};

Block paragraph(Inline text);
Block small_print(Inline text);
Block table_block(Table table);
Block list(std::vector<Inline> items);
Block heading(const std::string& text);
Block figure(std::string svg);  // an empty svg adds nothing when rendered
Block cards(std::vector<Card> cards);
Block details(Inline summary, Table table);

struct Section {
  std::string id;     // HTML anchor
  std::string title;
  std::vector<Block> blocks;
  // Why the section is empty, when it is: rendered as "not measured" (and the reason, if any).
  bool missing = false;
  std::string missing_reason;
};

struct Document {
  std::string title;
  std::vector<std::string> subtitle;  // dataset, device, clock
  std::vector<Section> sections;
  std::string footer;  // empty: the deployment report's (its format and report.json)
};

Document report_document(const DeploymentReport& r);

std::string render_markdown(const Document& doc);
std::string render_html(const Document& doc);

}  // namespace nmsa::report_detail
