// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// The deployment report (report.hpp, release_gate.hpp): nearest-rank percentiles, the JSON keys
// and their values, the HTML page's sections, escaping and self-containment, the Markdown
// figures, the files, and the release gate with the errors of report.json reading.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../common/expect_throw.hpp"
#include "../common/seed.hpp"
#include "../report/sample_report.hpp"
#include "nmsa/release_gate.hpp"
#include "nmsa/report.hpp"

namespace nmsa {
namespace {

using nmsa::testing::make_sample_report;
using nmsa::testing::seed_note;
using nmsa::testing::test_seed;

namespace fs = std::filesystem;

// A fresh directory per test, removed at the end.
class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = fs::temp_directory_path() / ("nmsa_test_report_" + std::to_string(::getpid()) + "_" +
                                         info->test_suite_name() + "_" + info->name());
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }
  std::string str() const { return path_.string(); }

 private:
  fs::path path_;
};

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  ASSERT_TRUE(out.good()) << path;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

using nmsa::testing::expect_throw_containing;

std::size_t count_of(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto pos = text.find(needle); pos != std::string::npos; pos = text.find(needle, pos + 1)) {
    ++n;
  }
  return n;
}

const char* const kSectionIds[] = {"summary",   "targets",     "validation",   "triage",
                                   "layers",
                                   "speedup",   "hardware",    "fallback",     "utilization",
                                   "metadata",  "latency",     "bandwidth",    "quality",
                                   "equal-budget", "second-model", "schedule", "cross-checks", "tags",
                                   "notes"};

// --- Percentiles ---------------------------------------------------------------------------------

TEST(ReportTest, PercentileIsNearestRank) {
  // The textbook example of the nearest-rank method.
  const std::vector<std::uint64_t> v = {15, 20, 35, 40, 50};
  EXPECT_EQ(percentile_cycles(v, 5), 15u);
  EXPECT_EQ(percentile_cycles(v, 30), 20u);
  EXPECT_EQ(percentile_cycles(v, 40), 20u);  // rank exactly 2: not rounded up to 3
  EXPECT_EQ(percentile_cycles(v, 50), 35u);
  EXPECT_EQ(percentile_cycles(v, 100), 50u);
}

TEST(ReportTest, PercentileOfShuffledHundredAndTwenty) {
  const auto seed = test_seed(7);
  std::mt19937_64 rng(seed);
  std::vector<std::uint64_t> twenty(20), hundred(100);
  std::iota(twenty.begin(), twenty.end(), 1);
  std::iota(hundred.begin(), hundred.end(), 1001);
  std::shuffle(twenty.begin(), twenty.end(), rng);
  std::shuffle(hundred.begin(), hundred.end(), rng);
  EXPECT_EQ(percentile_cycles(twenty, 50), 10u) << seed_note(seed);
  EXPECT_EQ(percentile_cycles(twenty, 95), 19u) << seed_note(seed);  // 0.95 * 20 = 19 exactly
  EXPECT_EQ(percentile_cycles(twenty, 99), 20u) << seed_note(seed);
  EXPECT_EQ(percentile_cycles(hundred, 99), 1099u) << seed_note(seed);
  EXPECT_EQ(percentile_cycles(hundred, 100), 1100u) << seed_note(seed);
  EXPECT_EQ(percentile_cycles(hundred, 0.5), 1001u) << seed_note(seed);
}

TEST(ReportTest, PercentileEdgeCases) {
  EXPECT_EQ(percentile_cycles({}, 50), 0u);
  EXPECT_EQ(percentile_cycles({42}, 1), 42u);
  EXPECT_EQ(percentile_cycles({42}, 100), 42u);
  EXPECT_THROW(percentile_cycles({1, 2}, 0), std::invalid_argument);
  EXPECT_THROW(percentile_cycles({1, 2}, 100.5), std::invalid_argument);
  EXPECT_THROW(percentile_cycles({1, 2}, std::nan("")), std::invalid_argument);
}

TEST(ReportTest, ComputePercentilesAndTotal) {
  LatencySummary l;
  for (std::uint64_t c = 100; c >= 1; --c) l.batch_cycles.push_back(c * 10);  // descending
  compute_percentiles(l);
  EXPECT_EQ(l.p50, 500u);
  EXPECT_EQ(l.p95, 950u);
  EXPECT_EQ(l.p99, 990u);
  EXPECT_EQ(l.total_cycles(), 50500u);
  LatencySummary empty;
  compute_percentiles(empty);
  EXPECT_EQ(empty.p99, 0u);
  EXPECT_EQ(empty.total_cycles(), 0u);
}

TEST(ReportTest, HostTimeIsTheMedianOfTheBatches) {
  LatencySummary l;
  EXPECT_EQ(l.host_us_p50(), 0.0);  // not measured
  l.batch_host_us = {5, 1, 3};
  EXPECT_EQ(l.host_us_p50(), 3.0);
  l.batch_host_us = {4, 1, 3, 2};
  EXPECT_EQ(l.host_us_p50(), 2.0);  // nearest rank, as the cycle percentiles
}

TEST(ReportTest, HostTimeStandsBesideTheDeviceLatency) {
  const DeploymentReport r = make_sample_report();
  const auto j = nlohmann::json::parse(report_json(r));
  const auto& deployed = j["latency"]["deployed"];
  EXPECT_EQ(deployed["batch_host_us"].size(), r.deployed_latency.batch_cycles.size());
  EXPECT_DOUBLE_EQ(deployed["host_us_p50"].get<double>(), r.deployed_latency.host_us_p50());
  EXPECT_TRUE(j["latency"]["dense"]["host_us_p50"].is_null());  // not measured
  const std::string md = report_markdown(r);
  EXPECT_NE(md.find("| host p50 |"), std::string::npos);
  char deployed_host[32];
  std::snprintf(deployed_host, sizeof deployed_host, "| %.0f \xC2\xB5s |",
                r.deployed_latency.host_us_p50());
  EXPECT_NE(md.find(deployed_host), std::string::npos) << deployed_host;
  EXPECT_NE(md.find("host p50\" is the median wall-clock time"), std::string::npos);
}

// --- report.json ---------------------------------------------------------------------------------

TEST(ReportTest, JsonHasEveryKeyInOrder) {
  auto j = nlohmann::ordered_json::parse(report_json(make_sample_report()));
  const char* const keys[] = {
      "title", "dataset", "test_images", "device", "clock_mhz", "dense_fp32_accuracy",
      "dense_int8_accuracy", "sparse_fp32_accuracy", "sparse_int8_accuracy",
      "control_fp32_accuracy", "quality_baseline", "quality_delta_pp", "quality_delta_ci95_pp",
      "effective_speedup", "all_sparse_speedup_predicted", "latency_cycles_p50",
      "latency_cycles_p95", "latency_cycles_p99", "latency_us_p50", "latency_us_p95",
      "latency_us_p99", "dense_latency_cycles_p50", "dense_latency_cycles_p95",
      "dense_latency_cycles_p99", "fallback_layers", "fallback_cycles", "fallback_cycle_share",
      "pe_utilization", "weight_bytes_dense", "weight_bytes_deployed", "meta_bytes", "meta_share",
      "dma_read_bytes", "dma_meta_bytes", "batches", "batches_bit_exact_golden",
      "batches_bit_exact_model", "layers", "quality", "quality_comparisons", "schedules", "latency", "equal_budget",
      "targets", "tags", "notes"};
  std::vector<std::string> order;
  for (const auto& item : j.items()) order.push_back(item.key());
  std::size_t last = 0;
  for (const char* key : keys) {
    const auto it = std::find(order.begin(), order.end(), key);
    ASSERT_NE(it, order.end()) << "missing key " << key;
    const auto at = static_cast<std::size_t>(it - order.begin());
    EXPECT_GE(at, last) << key << " out of order";
    last = at;
  }
  EXPECT_EQ(j["report_format"], kReportFormatVersion);
  EXPECT_EQ(j["layers"].size(), 4u);
  EXPECT_EQ(j["layers"][2]["placement"], "device dense");
  EXPECT_TRUE(j["layers"][3]["speedup"].is_null());  // host layer: no device cycles
  EXPECT_EQ(j["latency"]["deployed"]["batch_cycles"].size(), 100u);
  EXPECT_EQ(j["latency"]["others"].size(), 1u);
  EXPECT_TRUE(j["equal_budget"]["fits"].get<bool>());
  EXPECT_EQ(j["tags"].begin().key(), "git");  // insertion order, not sorted
  EXPECT_EQ(j["fallback_layers"], nlohmann::ordered_json::array({"fc3"}));
  const auto& cnn = j["second_model"];
  EXPECT_EQ(cnn["layers"].size(), 3u);
  EXPECT_EQ(cnn["layers"][1]["placement"], "host");
  EXPECT_NEAR(cnn["layers"][2]["speedup"].get<double>(), 13.0 / 7.0, 1e-12);
  EXPECT_NEAR(cnn["quality_delta_pp"].get<double>(), (0.9109 - 0.9131) * 100, 1e-9);
  EXPECT_NEAR(cnn["effective_speedup"].get<double>(), 1.6, 1e-12);
  EXPECT_EQ(cnn["rtl_batches_bit_exact"], 10);
  EXPECT_EQ(cnn["rtl_gemms_golden_exact"], 40);
  EXPECT_DOUBLE_EQ(cnn["rtl_prediction_max_error"].get<double>(), 2e-5);
  EXPECT_EQ(cnn["quality_comparison"]["verdict"], "no measurable difference");
  EXPECT_EQ(cnn["quality_comparison"]["ci95_pp"], nlohmann::ordered_json::array({-0.51, 0.07}));
  EXPECT_TRUE(nlohmann::ordered_json::parse(report_json(DeploymentReport{}))["second_model"]
                  .is_null());
}

TEST(ReportTest, JsonFiguresMatchTheReport) {
  DeploymentReport r = make_sample_report();
  r.deployed_latency.p50 = r.deployed_latency.p95 = r.deployed_latency.p99 = 0;  // stale
  r.clock_mhz = 250.0;
  auto j = nlohmann::json::parse(report_json(r));
  const std::uint64_t p99 = percentile_cycles(r.deployed_latency.batch_cycles, 99);
  EXPECT_EQ(j["latency_cycles_p99"].get<std::uint64_t>(), p99);  // recomputed from the list
  EXPECT_DOUBLE_EQ(j["latency_us_p99"].get<double>(), static_cast<double>(p99) / 250.0);
  EXPECT_EQ(j["dense_latency_cycles_p50"].get<std::uint64_t>(), r.dense_latency.p50);
  EXPECT_DOUBLE_EQ(j["meta_share"].get<double>(),
                   static_cast<double>(r.meta_bytes) /
                       static_cast<double>(r.weight_bytes_deployed));
  EXPECT_DOUBLE_EQ(j["effective_speedup"].get<double>(), r.effective_speedup);
  EXPECT_EQ(j["latency"]["deployed"]["total_cycles"].get<std::uint64_t>(),
            r.deployed_latency.total_cycles());
}

TEST(ReportTest, QualityCarriesIntervalsAndPairedTests) {
  const DeploymentReport r = make_sample_report();
  auto j = nlohmann::json::parse(report_json(r));
  EXPECT_DOUBLE_EQ(j["quality_delta_ci95_pp"][0].get<double>(), r.quality_delta_ci95_pp.lo);
  EXPECT_DOUBLE_EQ(j["quality"][0]["int8_ci95"][1].get<double>(), r.quality[0].int8_ci95.hi);
  ASSERT_EQ(j["quality_comparisons"].size(), 2u);
  EXPECT_EQ(j["quality_comparisons"][0]["verdict"], "no measurable difference");  // [-0.71, 0]
  EXPECT_EQ(j["quality_comparisons"][1]["verdict"], "A better");
  EXPECT_EQ(j["quality_comparisons"][1]["only_a"].get<int>(), 201);
  EXPECT_DOUBLE_EQ(j["equal_budget"]["predicted_budget_use"].get<double>(),
                   r.equal_budget->predicted_budget_use());
  const std::string md = report_markdown(r);
  EXPECT_NE(md.find("-0.36 pp [-0.71, +0.00]"), std::string::npos);
  EXPECT_NE(md.find("| deployed 2:4 vs dense, equal training |"), std::string::npos);
  EXPECT_NE(md.find("no measurable difference"), std::string::npos);
  EXPECT_NE(md.find("89.21% [88.61, 89.81]"), std::string::npos);
  EXPECT_NE(md.find("425 candidates"), std::string::npos);
  EXPECT_NE(report_html(r).find("McNemar"), std::string::npos);
}

TEST(ReportTest, ValidationMatrixInEveryFormat) {
  const DeploymentReport r = make_sample_report();
  auto j = nlohmann::json::parse(report_json(r));
  ASSERT_EQ(j["validation_matrix"].size(), r.validation.size());
  EXPECT_EQ(j["validation_matrix"][1]["owner"], "model optimization lead");
  const std::string md = report_markdown(r);
  EXPECT_NE(md.find("| every device result is bit-exact | 100/100 batches"), std::string::npos);
  EXPECT_NE(md.find("**does not hold**"), std::string::npos);
}

TEST(ReportTest, ContentionAndTheLoadWhereP99LeavesTheBudget) {
  const DeploymentReport r = make_sample_report();
  EXPECT_DOUBLE_EQ(p99_leaves_budget_at(r.contention), 0.9);
  DeploymentReport inside = r;
  inside.contention.pop_back();
  EXPECT_TRUE(std::isnan(p99_leaves_budget_at(inside.contention)));
  EXPECT_TRUE(std::isnan(p99_leaves_budget_at({})));
  auto j = nlohmann::json::parse(report_json(r));
  const auto& c = j["latency"]["contention"];
  EXPECT_EQ(c["budget_cycles"].get<std::uint64_t>(), r.dense_latency.p50);
  EXPECT_EQ(c["sparse_p99_leaves_budget_at_load"].get<double>(), 0.9);
  ASSERT_EQ(c["loads"].size(), 3u);
  EXPECT_EQ(c["loads"][1]["sparse"]["batches"], 10);
  EXPECT_GE(c["loads"][2]["sparse"]["p99_9"].get<std::uint64_t>(),
            c["loads"][2]["sparse"]["p99"].get<std::uint64_t>());
  const std::string md = report_markdown(r);
  EXPECT_NE(md.find("### Under contention"), std::string::npos);
  EXPECT_NE(md.find("the deployed model's p99 leaves it at load 90%"), std::string::npos);
  EXPECT_NE(md.find("| 90% | deployed | 10 |"), std::string::npos);
  EXPECT_NE(md.find("**no**"), std::string::npos);  // the deployed p99 at 90%
  EXPECT_NE(report_html(r).find("aria-label=\"Per-batch latency under contention\""),
            std::string::npos);
  EXPECT_TRUE(nlohmann::json::parse(report_json(DeploymentReport{}))["latency"]["contention"]
                  .is_null());
}

TEST(ReportTest, TheTriageMemoIsLinked) {
  const DeploymentReport r = make_sample_report();
  EXPECT_NE(report_markdown(r).find("[regressed/triage.md](regressed/triage.md)"),
            std::string::npos);
  EXPECT_NE(report_html(r).find("<a href=\"regressed/triage.md\">regressed/triage.md</a>"),
            std::string::npos);
  auto j = nlohmann::json::parse(report_json(r));
  EXPECT_EQ(j["triage_memo"], "regressed/triage.md");
  EXPECT_NE(report_markdown(DeploymentReport{}).find("no regressed workload beside this run"),
            std::string::npos);
}

TEST(ReportTest, BandwidthLensInEveryFormat) {
  const DeploymentReport r = make_sample_report();
  auto j = nlohmann::json::parse(report_json(r));
  EXPECT_EQ(j["memory_bytes_per_cycle"].get<double>(), 16.0);
  ASSERT_EQ(j["bandwidth_lens"]["families"].size(), 1u);
  EXPECT_EQ(j["bandwidth_lens"]["families"][0]["knee_bytes_per_cycle_sparse"].get<double>(), 8.0);
  EXPECT_EQ(j["bandwidth_lens"]["bandwidth_sweep"].size(), 5u);
  const std::string md = report_markdown(r);
  EXPECT_NE(md.find("| mlp | 8 B/cycle | 8 B/cycle |"), std::string::npos);
  EXPECT_NE(report_html(r).find("Effective speedup against host-memory bandwidth"),
            std::string::npos);
  DeploymentReport none = r;
  none.bandwidth_lens.reset();
  EXPECT_TRUE(nlohmann::json::parse(report_json(none))["bandwidth_lens"].is_null());
  EXPECT_NE(report_markdown(none).find("no bandwidth sweep in this run"), std::string::npos);
}

TEST(ReportTest, NotMeasuredBecomesNull) {
  DeploymentReport r;  // nothing measured
  r.layers.push_back(ReportLayer{});
  const std::string text = report_json(r);
  EXPECT_EQ(text.find("nan"), std::string::npos);
  EXPECT_EQ(text.find("NaN"), std::string::npos);
  auto j = nlohmann::json::parse(text);
  for (const char* key : {"dense_fp32_accuracy", "sparse_int8_accuracy", "quality_delta_pp",
                          "effective_speedup", "all_sparse_speedup_predicted",
                          "latency_cycles_p99", "latency_us_p50", "dense_latency_cycles_p95",
                          "meta_share", "equal_budget", "clock_mhz", "quality_delta_ci95_pp",
                          "control_fp32_accuracy"}) {
    EXPECT_TRUE(j[key].is_null()) << key << " = " << j[key].dump();
  }
  EXPECT_TRUE(j["layers"][0]["sensitivity_pp"].is_null());
  EXPECT_TRUE(j["layers"][0]["speedup"].is_null());
  // A measured latency without a stated clock: cycles, but no microseconds.
  r.deployed_latency.batch_cycles = {100, 200};
  r.clock_mhz = 0;
  auto k = nlohmann::json::parse(report_json(r));
  EXPECT_EQ(k["latency_cycles_p99"].get<std::uint64_t>(), 200u);
  EXPECT_TRUE(k["latency_us_p99"].is_null());
}

TEST(ReportTest, SummaryRoundTripsThroughTheFile) {
  TempDir dir;
  DeploymentReport r = make_sample_report();
  write_report(r, dir.str());
  for (const char* name : {"report.json", "report.md", "index.html"}) {
    EXPECT_TRUE(fs::is_regular_file(dir / name)) << name;
    EXPECT_FALSE(fs::exists(dir / (std::string(name) + ".tmp"))) << name;
  }
  for (const std::string& path : {dir / "report.json", dir.str()}) {  // a directory works too
    const ReportSummary s = read_report_summary(path);
    EXPECT_EQ(s.source, dir / "report.json");
    EXPECT_DOUBLE_EQ(s.sparse_int8_accuracy, r.sparse_int8_accuracy);
    EXPECT_DOUBLE_EQ(s.effective_speedup, r.effective_speedup);
    EXPECT_EQ(s.latency_cycles_p99, r.deployed_latency.p99);
    EXPECT_GT(s.latency_cycles_p99, 0u);
  }
  EXPECT_EQ(read_file(dir / "index.html"), report_html(r));
}

TEST(ReportTest, WriteReportNamesTheDirectoryItCannotCreate) {
  TempDir dir;
  write_file(dir / "file", "in the way");
  expect_throw_containing([&] { write_report(make_sample_report(), dir / "file"); },
                          {dir / "file", "cannot create the report directory"});
  expect_throw_containing([&] { write_report(make_sample_report(), dir / "file/sub"); },
                          {dir / "file/sub"});
}

// --- index.html ----------------------------------------------------------------------------------

TEST(ReportTest, HtmlHasEverySectionAndNothingFromOutside) {
  DeploymentReport empty;
  for (const DeploymentReport& r : {make_sample_report(), empty}) {
    const std::string html = report_html(r);
    for (const char* id : kSectionIds) {
      EXPECT_EQ(count_of(html, std::string("<section id=\"") + id + "\">"), 1u) << id;
    }
    EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
    EXPECT_EQ(html.find("http://"), std::string::npos);
    EXPECT_EQ(html.find("https://"), std::string::npos);
    EXPECT_EQ(html.find("<script"), std::string::npos);
    EXPECT_EQ(html.find("<link"), std::string::npos);
    EXPECT_EQ(html.find("@import"), std::string::npos);
    EXPECT_EQ(html.find("url("), std::string::npos);
    EXPECT_EQ(count_of(html, "<section"), count_of(html, "</section>"));
    EXPECT_EQ(count_of(html, "<svg"), count_of(html, "</svg>"));
  }
}

TEST(ReportTest, HtmlSaysNotMeasuredForEveryEmptySection) {
  const std::string html = report_html(DeploymentReport{});
  // Every section except the summary (a table of n/a) and the notes ("none").
  for (const char* id : kSectionIds) {
    const std::string id_s = id;
    if (id_s == "summary" || id_s == "notes") continue;
    const auto start = html.find("<section id=\"" + id_s + "\">");
    const auto end = html.find("</section>", start);
    ASSERT_NE(start, std::string::npos) << id;
    EXPECT_NE(html.substr(start, end - start).find("not measured"), std::string::npos) << id;
  }
  EXPECT_EQ(html.find("<svg"), std::string::npos);  // no empty plots
  EXPECT_NE(html.find("n/a"), std::string::npos);
}

TEST(ReportTest, HtmlDrawsEveryPlot) {
  const std::string html = report_html(make_sample_report());
  for (const char* plot : {"Pruning schedule: weight sparsity against epoch",
                           "Validation accuracy against epoch",
                           "Per-layer device cycles, deployed and all dense",
                           "Per-batch latency, sorted, with p50, p95 and p99",
                           "Test top-1 of every model, FP32 and INT8"}) {
    EXPECT_NE(html.find(std::string("aria-label=\"") + plot + "\""), std::string::npos) << plot;
  }
  EXPECT_GE(count_of(html, "<polyline"), 2u + 2u + 3u);  // schedules x 2 plots, 3 latency runs
  EXPECT_NE(html.find(">p99</text>"), std::string::npos);
  EXPECT_NE(html.find("NOT MET"), std::string::npos);  // the sample misses its PE target
}

TEST(ReportTest, HtmlEscapesText) {
  DeploymentReport r = make_sample_report();
  r.title = "R&D <report>";
  r.layers[0].name = "<b>fc&1</b>";
  r.tags.push_back({"quote", "it's \"x\" <y>"});
  r.schedules[0].name = "a<script>";
  const std::string html = report_html(r);
  EXPECT_NE(html.find("&lt;b&gt;fc&amp;1&lt;/b&gt;"), std::string::npos);
  EXPECT_EQ(html.find("<b>fc&1</b>"), std::string::npos);
  EXPECT_NE(html.find("<title>R&amp;D &lt;report&gt;</title>"), std::string::npos);
  EXPECT_NE(html.find("it&#39;s &quot;x&quot; &lt;y&gt;"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_NE(html.find("a&lt;script&gt;"), std::string::npos);
}

// --- report.md -----------------------------------------------------------------------------------

TEST(ReportTest, MarkdownHasTheHeadlineFigures) {
  const DeploymentReport r = make_sample_report();
  const std::string text = report_markdown(r);
  for (const char* heading :
       {"## Summary", "## Targets", "## Validation matrix", "## Supported layer matrix",
        "## Speedup", "## Dense-fallback impact", "## PE utilization", "## Metadata overhead",
        "## Latency", "## Bandwidth lens", "## Quality", "## Equal latency budget",
        "## Second model", "## Pruning schedules", "## Cross-checks", "## Tags", "## Notes"}) {
    EXPECT_NE(text.find(heading), std::string::npos) << heading;
  }
  char speedup[32];
  std::snprintf(speedup, sizeof speedup, "%.2fx", r.effective_speedup);
  EXPECT_NE(text.find("| sparse INT8 top-1 (deployed) | 89.05% |"), std::string::npos);
  EXPECT_NE(text.find("| dense FP32 top-1 (first training run) | 89.34% |"), std::string::npos);
  EXPECT_NE(text.find(std::string("| ") + speedup + " |"), std::string::npos) << speedup;
  EXPECT_NE(text.find("| quality delta (sparse INT8 - baseline) [95% CI] | -0.36 pp "
                      "[-0.71, +0.00] |"),
            std::string::npos);
  // p99 in cycles and in microseconds at 200 MHz, both with thousands separators.
  auto with_commas = [](std::string digits) {
    for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3) digits.insert(i, ",");
    return digits;
  };
  const std::uint64_t p99 = r.deployed_latency.p99;
  char plain_us[32];
  std::snprintf(plain_us, sizeof plain_us, "%.1f", static_cast<double>(p99) / 200.0);
  const std::string us_text = plain_us;
  const std::string cycles = with_commas(std::to_string(p99));
  const std::string us = with_commas(us_text.substr(0, us_text.find('.'))) +
                         us_text.substr(us_text.find('.')) + " \u00b5s";
  ASSERT_GT(p99, 200000u);  // so that the microseconds have a separator too
  EXPECT_NE(text.find("| latency p99 per batch | " + cycles + " cycles (" + us + ") |"),
            std::string::npos)
      << cycles << " " << us;
  EXPECT_NE(text.find("| PE utilization | >= 90% |"), std::string::npos);
  EXPECT_NE(text.find("**NOT MET**"), std::string::npos);
  EXPECT_NE(text.find("### gradual (permuted)"), std::string::npos);
  EXPECT_NE(text.find("| 0.75 | 28.9% |  |"), std::string::npos);  // a schedule point
  // The second model: its quality delta, speedups with and without its fallbacks, a host layer.
  EXPECT_NE(text.find("**-0.22 pp [-0.51, +0.07]** (95% paired bootstrap interval; McNemar p "
                      "0.0370, no measurable difference)"),
            std::string::npos);
  EXPECT_NE(text.find("**1.60x** with the fallbacks, 1.86x over the layers that run sparse"),
            std::string::npos);
  EXPECT_NE(text.find("| **conv1.pool** | MaxPool |  |  | host |"), std::string::npos);
  EXPECT_NE(text.find("the whole-set run's prediction of those batches within 0.002% of the RTL"),
            std::string::npos);
  EXPECT_NE(text.find("| **conv2** | Conv + ReLU | 144 | 32 | device sparse | - | 7,000,000 | "
                      "13,000,000 | 1.86x |"),
            std::string::npos);
}

// report.md and index.html render one document: the same sections in the same order, and the
// same table cells (a figure from each kind of section, found in both).
TEST(ReportTest, MarkdownAndHtmlShowTheSameSectionsAndFigures) {
  const DeploymentReport r = make_sample_report();
  const std::string text = report_markdown(r);
  const std::string html = report_html(r);
  std::vector<std::string> md_titles, html_titles;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("## ", 0) == 0) md_titles.push_back(line.substr(3));
  }
  for (auto pos = html.find("<h2>"); pos != std::string::npos; pos = html.find("<h2>", pos + 1)) {
    const auto end = html.find("</h2>", pos);
    html_titles.push_back(html.substr(pos + 4, end - pos - 4));
  }
  EXPECT_EQ(md_titles, html_titles);
  EXPECT_EQ(md_titles.size(), std::size(kSectionIds));
  for (const std::string cell : {"36,575,116", "2,681.9", "19.8%", "100 of 100", "829,668",
                                 "quality gate: pruning costs 1.30 pp &gt; 1.00 pp"}) {
    EXPECT_NE(html.find(cell), std::string::npos) << cell;
    const std::string md_cell = cell == "quality gate: pruning costs 1.30 pp &gt; 1.00 pp"
                                    ? "quality gate: pruning costs 1.30 pp > 1.00 pp"
                                    : cell;
    EXPECT_NE(text.find(md_cell), std::string::npos) << md_cell;
  }
}

TEST(ReportTest, MarkdownEscapesTableCells) {
  DeploymentReport r;
  r.targets.push_back({"a|b", "<1", "x", false});
  const std::string text = report_markdown(r);
  EXPECT_NE(text.find("| a\\|b | &lt;1 | x | **NOT MET** |"), std::string::npos) << text;
}

// --- The gate ------------------------------------------------------------------------------------

ReportSummary summary(double accuracy, double speedup, std::uint64_t p99, const char* name) {
  ReportSummary s;
  s.source = name;
  s.sparse_int8_accuracy = accuracy;
  s.effective_speedup = speedup;
  s.latency_cycles_p99 = p99;
  return s;
}

GateLimits all_limits(double drop_pp, double speedup, std::uint64_t p99) {
  GateLimits l;
  l.max_quality_drop_pp = drop_pp;
  l.min_speedup = speedup;
  l.max_p99_cycles = p99;
  return l;
}

const ReportSummary kBaseline = summary(0.8920, 1.60, 12000, "base.json");

TEST(GateTest, PassesWhenEveryLimitHolds) {
  const GateResult g = evaluate_gate(kBaseline, summary(0.8891, 1.70, 11000, "cand.json"),
                                     all_limits(0.5, 1.5, 12000));
  EXPECT_TRUE(g.pass);
  ASSERT_EQ(g.reasons.size(), 3u);
  EXPECT_EQ(g.reasons[0],
            "quality: candidate 88.91% vs baseline 89.20%: drop 0.29 pp <= 0.50 pp: ok");
  EXPECT_EQ(g.reasons[1], "speedup: candidate 1.70x (baseline 1.60x) >= 1.50x: ok");
  EXPECT_EQ(g.reasons[2],
            "p99 latency: candidate 11,000 cycles (baseline 12,000) <= 12,000 cycles: ok");
}

TEST(GateTest, EachLimitFailsOnItsOwn) {
  struct Case {
    ReportSummary candidate;
    std::size_t failing;
    const char* text;
  };
  const Case cases[] = {
      {summary(0.8850, 1.70, 11000, "c"), 0, "drop 0.70 pp > 0.50 pp: FAIL"},
      {summary(0.8900, 1.49, 11000, "c"), 1, "1.49x (baseline 1.60x) < 1.50x: FAIL"},
      {summary(0.8900, 1.70, 12001, "c"), 2,
       "12,001 cycles (baseline 12,000) > 12,000 cycles: FAIL"},
  };
  for (const Case& c : cases) {
    const GateResult g = evaluate_gate(kBaseline, c.candidate, all_limits(0.5, 1.5, 12000));
    EXPECT_FALSE(g.pass) << c.text;
    ASSERT_EQ(g.reasons.size(), 3u);
    for (std::size_t i = 0; i < 3; ++i) {
      const bool failed = g.reasons[i].find(": FAIL") != std::string::npos;
      EXPECT_EQ(failed, i == c.failing) << g.reasons[i];
    }
    EXPECT_NE(g.reasons[c.failing].find(c.text), std::string::npos) << g.reasons[c.failing];
  }
}

TEST(GateTest, ExactlyAtTheLimitPasses) {
  // 0.892 - 0.887 is 0.5 pp in decimal but 0.50000000000000044 pp in binary.
  const GateResult g = evaluate_gate(kBaseline, summary(0.887, 1.5, 12000, "edge.json"),
                                     all_limits(0.5, 1.5, 12000));
  EXPECT_TRUE(g.pass) << g.reasons[0] << "\n" << g.reasons[1] << "\n" << g.reasons[2];
  EXPECT_NE(g.reasons[0].find("drop 0.50 pp <= 0.50 pp: ok"), std::string::npos) << g.reasons[0];
  // Just past it fails, and says so with enough digits to see why.
  const GateResult past = evaluate_gate(kBaseline, summary(0.88699, 1.4999, 12001, "past.json"),
                                        all_limits(0.5, 1.5, 12000));
  EXPECT_FALSE(past.pass);
  EXPECT_NE(past.reasons[0].find("drop 0.501 pp > 0.500 pp: FAIL"), std::string::npos)
      << past.reasons[0];
  EXPECT_NE(past.reasons[1].find("1.4999x (baseline 1.60x) < 1.5000x: FAIL"), std::string::npos)
      << past.reasons[1];
  EXPECT_NE(past.reasons[2].find(": FAIL"), std::string::npos);
}

TEST(GateTest, OnlyTheLimitsSetAreChecked) {
  GateLimits only_speed;
  only_speed.min_speedup = 1.5;
  const GateResult g = evaluate_gate(kBaseline, summary(0.10, 1.6, 99999999, "c"), only_speed);
  EXPECT_TRUE(g.pass);
  ASSERT_EQ(g.reasons.size(), 1u);
  EXPECT_EQ(g.reasons[0].rfind("speedup:", 0), 0u);
  // A gain in quality passes any non-negative drop limit; a negative limit demands a gain.
  GateLimits gain;
  gain.max_quality_drop_pp = -0.2;
  EXPECT_TRUE(evaluate_gate(kBaseline, summary(0.8950, 1, 1, "c"), gain).pass);
  EXPECT_FALSE(evaluate_gate(kBaseline, summary(0.8930, 1, 1, "c"), gain).pass);
}

TEST(GateTest, NoLimitFails) {
  const GateResult g = evaluate_gate(kBaseline, kBaseline, GateLimits{});
  EXPECT_FALSE(g.pass);
  ASSERT_EQ(g.reasons.size(), 1u);
  EXPECT_NE(g.reasons[0].find("nothing was checked"), std::string::npos);
}

TEST(GateTest, NotMeasuredFiguresFail) {
  const ReportSummary none = summary(kNotMeasured, kNotMeasured, 0, "none.json");
  const GateResult g = evaluate_gate(kBaseline, none, all_limits(1, 1, 1000000));
  EXPECT_FALSE(g.pass);
  ASSERT_EQ(g.reasons.size(), 3u);
  for (const auto& reason : g.reasons) {
    EXPECT_NE(reason.find("not measured in none.json: FAIL"), std::string::npos) << reason;
  }
  // A baseline without accuracy cannot anchor the quality check either.
  GateLimits q;
  q.max_quality_drop_pp = 1;
  const GateResult b = evaluate_gate(none, kBaseline, q);
  EXPECT_FALSE(b.pass);
  EXPECT_NE(b.reasons[0].find("not measured in none.json"), std::string::npos) << b.reasons[0];
}

TEST(GateTest, BitExactFailsOnOneBatchAway) {
  GateLimits exact;
  exact.bit_exact = true;
  ReportSummary c = summary(0.89, 1.6, 1000, "c.json");
  c.batches = c.batches_bit_exact_golden = c.batches_bit_exact_model = 100;
  EXPECT_TRUE(evaluate_gate(kBaseline, c, exact).pass);
  c.batches_bit_exact_model = 99;
  const GateResult g = evaluate_gate(kBaseline, c, exact);
  EXPECT_FALSE(g.pass);
  EXPECT_EQ(g.reasons[0], "bit-exact: candidate 100/100 batches equal the golden model, 99/100 the "
                          "functional model: FAIL");
  c.batches = 0;  // nothing run is not bit-exact
  EXPECT_FALSE(evaluate_gate(kBaseline, c, exact).pass);
}

// The report states its release criteria, and the gate reads them back: the tolerances of triage
// around this run's figures.
TEST(GateTest, ReleaseCriteriaRoundTripThroughTheReport) {
  const DeploymentReport r = make_sample_report();
  const GateLimits c = release_criteria(r);
  ASSERT_TRUE(c.max_quality_drop_pp && c.min_speedup && c.max_p99_cycles);
  EXPECT_DOUBLE_EQ(*c.max_quality_drop_pp, 0.3);
  EXPECT_NEAR(*c.min_speedup, r.effective_speedup / 1.02, 1e-12);
  EXPECT_EQ(*c.max_p99_cycles,
            static_cast<std::uint64_t>(std::floor(r.deployed_latency.p99 * 1.05)));
  EXPECT_TRUE(c.bit_exact);
  TempDir dir;
  write_file(dir / "report.json", report_json(r));
  const ReportSummary s = read_report_summary(dir / "report.json");
  EXPECT_EQ(s.release_criteria.max_quality_drop_pp, c.max_quality_drop_pp);
  EXPECT_NEAR(*s.release_criteria.min_speedup, *c.min_speedup, 1e-9);
  EXPECT_EQ(s.release_criteria.max_p99_cycles, c.max_p99_cycles);
  EXPECT_TRUE(s.release_criteria.bit_exact);
  EXPECT_EQ(s.batches, r.batches);
  // The report itself passes its own criteria; the document says how they are checked.
  EXPECT_TRUE(evaluate_gate(s, s, s.release_criteria).pass);
  const std::string md = report_markdown(r);
  EXPECT_NE(md.find("### Release decision"), std::string::npos);
  EXPECT_NE(md.find("`nmsa gate --baseline report.json --candidate candidate/report.json`"),
            std::string::npos);
  // Nothing measured, nothing to hold a candidate to.
  EXPECT_FALSE(release_criteria(DeploymentReport{}).any());
  write_file(dir / "bad.json", R"({"sparse_int8_accuracy": 0.9, "effective_speedup": 2,
                                   "latency_cycles_p99": 10, "release_criteria": [1]})");
  try {
    (void)read_report_summary(dir / "bad.json");
    FAIL() << "a malformed release_criteria was read";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("release_criteria must be an object"), std::string::npos)
        << e.what();
  }
}

// --- Reading report.json -------------------------------------------------------------------------

TEST(GateTest, ReadsNullAsNotMeasured) {
  TempDir dir;
  write_file(dir / "r.json",
             R"({"sparse_int8_accuracy": null, "effective_speedup": null,
                 "latency_cycles_p99": null, "other": [1, 2]})");
  const ReportSummary s = read_report_summary(dir / "r.json");
  EXPECT_TRUE(std::isnan(s.sparse_int8_accuracy));
  EXPECT_TRUE(std::isnan(s.effective_speedup));
  EXPECT_EQ(s.latency_cycles_p99, 0u);
  write_file(dir / "f.json", R"({"sparse_int8_accuracy": 1, "effective_speedup": 2,
                                 "latency_cycles_p99": 12345.0})");
  const ReportSummary f = read_report_summary(dir / "f.json");
  EXPECT_EQ(f.latency_cycles_p99, 12345u);  // a whole number printed as a float
  EXPECT_DOUBLE_EQ(f.sparse_int8_accuracy, 1.0);
}

TEST(GateTest, MalformedReportsNameTheFileAndTheProblem) {
  TempDir dir;
  struct Case {
    const char* name;
    const char* text;
    std::vector<std::string> needles;
  };
  const std::string good_rest = R"("effective_speedup": 1.5, "latency_cycles_p99": 100)";
  const Case cases[] = {
      {"truncated.json", R"({"sparse_int8_accuracy": 0.9,)", {"not valid JSON", "parse error"}},
      {"empty.json", "", {"not valid JSON"}},
      {"array.json", "[1, 2]", {"expected a JSON object", "array"}},
      {"nokey.json", R"({"effective_speedup": 1.5, "latency_cycles_p99": 100})",
       {"missing key \"sparse_int8_accuracy\""}},
      {"nop99.json", R"({"sparse_int8_accuracy": 0.9, "effective_speedup": 1.5})",
       {"missing key \"latency_cycles_p99\""}},
      {"percent.json", R"({"sparse_int8_accuracy": 89.1, )", {"89.1 is outside [0, 1]"}},
      {"negacc.json", R"({"sparse_int8_accuracy": -0.1, )", {"outside [0, 1]"}},
      {"string.json", R"({"sparse_int8_accuracy": "0.9", )",
       {"\"sparse_int8_accuracy\" must be a number or null, not string"}},
      {"bool.json", R"({"sparse_int8_accuracy": true, )", {"not boolean"}},
      {"zerospeed.json", R"({"sparse_int8_accuracy": 0.9, "effective_speedup": 0,
                             "latency_cycles_p99": 100})",
       {"\"effective_speedup\" = 0 must be finite and > 0"}},
      {"negp99.json", R"({"sparse_int8_accuracy": 0.9, "effective_speedup": 1.5,
                          "latency_cycles_p99": -1})",
       {"\"latency_cycles_p99\" = -1 must be >= 0"}},
      {"fracp99.json", R"({"sparse_int8_accuracy": 0.9, "effective_speedup": 1.5,
                           "latency_cycles_p99": 10.5})",
       {"must be a whole number of cycles"}},
      {"strp99.json", R"({"sparse_int8_accuracy": 0.9, "effective_speedup": 1.5,
                          "latency_cycles_p99": "100"})",
       {"not string"}},
      {"future.json", R"({"report_format": 99, "sparse_int8_accuracy": 0.9, )",
       {"\"report_format\" 99 is not one this nmsa reads"}},
  };
  for (const Case& c : cases) {
    std::string text = c.text;
    if (!text.empty() && text.back() == ' ') text += good_rest + "}";  // only the first key bad
    write_file(dir / c.name, text);
    std::vector<std::string> needles = c.needles;
    needles.insert(needles.begin(), dir / c.name);
    expect_throw_containing([&] { read_report_summary(dir / c.name); }, needles);
  }
  expect_throw_containing([&] { read_report_summary(dir / "nosuch.json"); },
                          {dir / "nosuch.json", "cannot read: no such file"});
  expect_throw_containing([&] { read_report_summary(dir.str()); },  // a directory without one
                          {dir / "report.json", "cannot read: no such file"});
  expect_throw_containing([&] { read_report_summary("/dev/zero"); },
                          std::vector<std::string>{"/dev/zero", "not a regular file"});
}

}  // namespace
}  // namespace nmsa
