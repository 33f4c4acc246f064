// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// nmsa triage on regressions built on purpose, one mechanism each: triage must name that
// mechanism first, with its owner and the figures that prove it, and leave a stable candidate
// alone.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>
#include <unistd.h>

#include "../report/triage_cases.hpp"
#include "nmsa/report.hpp"
#include "nmsa/triage.hpp"

namespace nmsa {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

Json baseline_json() { return testing::triage_baseline_json(); }

class TriageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("nmsa_test_triage_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write(const std::string& name, const Json& j) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path) << j.dump(2);
    return path;
  }
  // Triage of the baseline against a candidate made from it by `regress`.
  TriageResult triage_of(const std::function<void(Json&)>& regress) {
    Json cand = baseline_json();
    regress(cand);
    return triage_reports(write("a.json", baseline_json()), write("b.json", cand));
  }

  fs::path dir_;
};

std::string all_evidence(const TriageFinding& f) {
  std::string s;
  for (const auto& e : f.evidence) s += e + "\n";
  return s;
}

TEST_F(TriageTest, AStableCandidateIsNoRegression) {
  const TriageResult r = triage_of(testing::triage_case("stable candidate").regress);
  EXPECT_FALSE(r.regressed());
  EXPECT_TRUE(r.rollback_criteria.empty());
  EXPECT_NE(triage_text(r).find("triage: no regression"), std::string::npos);
}

// Every purpose-built regression is named first with its owner (what nmsa_bench_triage counts).
TEST_F(TriageTest, EveryCaseNamesItsMechanismAndOwnerFirst) {
  for (const testing::TriageCase& c : testing::triage_cases()) {
    const TriageResult r = triage_of(c.regress);
    ASSERT_EQ(r.regressed(), !c.mechanism.empty()) << c.name;
    if (!r.regressed()) continue;
    EXPECT_EQ(r.findings[0].mechanism, c.mechanism) << c.name;
    EXPECT_EQ(r.findings[0].owner, c.owner) << c.name;
  }
}

TEST_F(TriageTest, OperatorForcedToTheDensePath) {
  const TriageResult r =
      triage_of(testing::triage_case("operator forced to the dense path").regress);
  ASSERT_TRUE(r.regressed());
  EXPECT_EQ(r.findings[0].mechanism, "model and graph lowering");
  EXPECT_EQ(r.findings[0].owner, "compiler sparsity pass owner");
  EXPECT_NE(all_evidence(r.findings[0]).find("fc2: placement device sparse -> device dense"),
            std::string::npos);
  // The speedup fell as a consequence: reported after, not first.
  EXPECT_EQ(r.findings.back().mechanism, "execution");
}

TEST_F(TriageTest, LayerPrunedPastItsQualityGate) {
  const TriageResult r =
      triage_of(testing::triage_case("layer pruned past its quality gate").regress);
  ASSERT_TRUE(r.regressed());
  EXPECT_EQ(r.findings[0].mechanism, "result assembly and quality");
  EXPECT_EQ(r.findings[0].owner, "model optimization lead");
  EXPECT_NE(all_evidence(r.findings[0]).find("fc1: placed sparse, pruning it alone costs 2.40 pp"),
            std::string::npos)
      << all_evidence(r.findings[0]);
}

TEST_F(TriageTest, BrokenMetadataConversionCaughtByTheBitExactCheck) {
  const TriageResult r = triage_of(
      testing::triage_case("broken metadata conversion caught by the bit-exact check").regress);
  ASSERT_TRUE(r.regressed());
  EXPECT_EQ(r.findings[0].mechanism, "sparse-format conversion");
  EXPECT_EQ(r.findings[0].owner, "compiler sparsity pass owner");
  EXPECT_NE(all_evidence(r.findings[0])
                .find("against the golden model 0 of 100, against the functional model 100 of 100"),
            std::string::npos)
      << all_evidence(r.findings[0]);
}

TEST_F(TriageTest, HardwareThatDisagreesWithItsModelIsExecution) {
  const TriageResult r =
      triage_of(testing::triage_case("hardware that disagrees with its functional model").regress);
  ASSERT_TRUE(r.regressed());
  EXPECT_EQ(r.findings[0].mechanism, "execution");
  EXPECT_EQ(r.findings[0].owner, "accelerator architecture owner");
}

TEST_F(TriageTest, SmallerWeightBufferIsScheduling) {
  const TriageResult r = triage_of(testing::triage_case("smaller weight buffer").regress);
  ASSERT_TRUE(r.regressed());
  EXPECT_EQ(r.findings[0].mechanism, "scheduling and memory placement");
  EXPECT_EQ(r.findings[0].owner, "accelerator architecture owner");
  ASSERT_FALSE(r.tag_changes.empty());
  EXPECT_NE(r.reproduce_candidate.find("--config default_wgt64"), std::string::npos);
  EXPECT_NE(r.reproduce_baseline.find("git checkout a1b2c3d"), std::string::npos);
}

TEST_F(TriageTest, LowerHostBandwidthIsServing) {
  const TriageResult r = triage_of(testing::triage_case("lower host bandwidth").regress);
  ASSERT_TRUE(r.regressed());
  EXPECT_EQ(r.findings[0].mechanism, "scheduling and memory placement");
  EXPECT_EQ(r.findings[0].owner, "serving performance owner");
  EXPECT_NE(all_evidence(r.findings[0]).find("host memory bytes per cycle 16.0 -> 2.0"),
            std::string::npos);
}

TEST_F(TriageTest, LatencyTailAlone) {
  const TriageResult r = triage_of(testing::triage_case("latency tail alone").regress);
  ASSERT_TRUE(r.regressed());
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_EQ(r.findings[0].mechanism, "latency tail");
  EXPECT_EQ(r.findings[0].owner, "serving performance owner");
}

TEST_F(TriageTest, OutputsNameTheFirstMechanismAndTheRollback) {
  const TriageResult r = triage_of([](Json& j) { j["batches_bit_exact_model"] = 3; });
  const std::string text = triage_text(r);
  EXPECT_NE(text.find("first failing mechanism: 4. execution (owner: accelerator architecture "
                      "owner)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("rollback: Roll back to a1b2c3d"), std::string::npos);
  const auto j = nlohmann::json::parse(triage_json(r));
  EXPECT_TRUE(j["regressed"].get<bool>());
  EXPECT_EQ(j["first_failing_mechanism"], "execution");
  const std::string memo = triage_memo(r);
  EXPECT_EQ(memo.rfind("# Triage: execution", 0), 0u);
  EXPECT_NE(memo.find("## Rollback criteria"), std::string::npos);
}

TEST_F(TriageTest, IncomparableRunsAreRefusedNamingTheTag) {
  Json other = baseline_json();
  other["tags"]["batch"] = "50";
  try {
    triage_reports(write("a.json", baseline_json()), write("b.json", other));
    FAIL() << "runs with another batch size were compared";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("tag \"batch\""), std::string::npos) << e.what();
  }
  Json fewer = baseline_json();
  fewer["test_images"] = 300;
  EXPECT_THROW(triage_reports(write("a.json", baseline_json()), write("c.json", fewer)),
               std::runtime_error);
  Json broken = baseline_json();
  broken["layers"][0]["deployed_cycles"] = "many";
  try {
    triage_reports(write("a.json", baseline_json()), write("d.json", broken));
    FAIL() << "a malformed layer was read";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("layers[0]"), std::string::npos) << e.what();
  }
}

// A workloads.json as nmsa_bench_workloads writes it, two layer shapes.
Json workloads_json() {
  auto layer = [](const char* family, const char* name, int sparse, int dense) {
    return Json{{"family", family},        {"layer", name},
                {"rows", 128},             {"k", 768},
                {"n", 768},                {"count", 12},
                {"sparse_cycles", sparse}, {"dense_cycles", dense},
                {"speedup", 1.0 * dense / sparse}, {"sparse_utilization", 0.9},
                {"dense_utilization", 0.93}, {"sparse_dma_bytes", 500000},
                {"dense_dma_bytes", 700000}, {"sparse_weight_bytes", 200000},
                {"sparse_meta_bytes", 20000}, {"meta_share", 0.04},
                {"sparse_bound", "compute"}, {"dense_bound", "compute"}};
  };
  return Json{{"config", "default"},
              {"figures_from", "cycle model prediction"},
              {"layers",
               {layer("bert", "qkv", 10000, 19800), layer("bert", "ffn_up", 40000, 79000)}}};
}

TEST_F(TriageTest, BenchmarkFilesMoreBytesOnTheSameConfigurationIsTheTilingPlan) {
  Json cand = workloads_json();
  cand["layers"][1]["sparse_dma_bytes"] = 650000;
  cand["layers"][1]["sparse_cycles"] = 52000;
  const TriageResult r =
      triage_reports(write("a.json", workloads_json()), write("b.json", cand));
  ASSERT_TRUE(r.regressed());
  EXPECT_EQ(r.findings[0].mechanism, "scheduling and memory placement");
  EXPECT_EQ(r.findings[0].owner, "compiler sparsity pass owner");
  EXPECT_EQ(r.findings.back().mechanism, "execution");
  EXPECT_NE(all_evidence(r.findings.back()).find("bert/ffn_up: cycles 40,000 -> 52,000"),
            std::string::npos)
      << all_evidence(r.findings.back());
  EXPECT_NE(r.reproduce_candidate.find("build/nmsa_bench_workloads --config default"),
            std::string::npos);
  EXPECT_FALSE(triage_reports(write("c.json", workloads_json()), write("d.json", workloads_json()))
                   .regressed());
}

TEST_F(TriageTest, BenchmarkFilesMoreMetadataIsTheFormat) {
  Json cand = workloads_json();
  cand["layers"][0]["sparse_meta_bytes"] = 40000;
  const TriageResult r = triage_reports(write("a.json", workloads_json()), write("b.json", cand));
  ASSERT_TRUE(r.regressed());
  EXPECT_EQ(r.findings[0].mechanism, "sparse-format conversion");
  EXPECT_NE(all_evidence(r.findings[0]).find("bert/qkv: metadata share of the weight bytes 10.0% "
                                             "-> 20.0%"),
            std::string::npos)
      << all_evidence(r.findings[0]);
}

TEST_F(TriageTest, BenchmarkFilesRecordsFetchedTwiceAreNotTheFormat) {
  Json cand = workloads_json();
  cand["layers"][0]["sparse_weight_bytes"] = 400000;
  cand["layers"][0]["sparse_meta_bytes"] = 40000;
  cand["layers"][0]["sparse_dma_bytes"] = 700000;
  cand["config"] = "default_wgt32";
  const TriageResult r = triage_reports(write("a.json", workloads_json()), write("b.json", cand));
  ASSERT_TRUE(r.regressed());
  EXPECT_EQ(r.findings[0].mechanism, "scheduling and memory placement");
  EXPECT_EQ(r.findings[0].owner, "accelerator architecture owner");
}

TEST_F(TriageTest, BenchmarkFilesSlowerWithTheSameBytesIsExecution) {
  Json cand = workloads_json();
  cand["layers"][0]["sparse_cycles"] = 13000;
  cand["layers"][0]["sparse_utilization"] = 0.7;
  const TriageResult r = triage_reports(write("a.json", workloads_json()), write("b.json", cand));
  ASSERT_TRUE(r.regressed());
  EXPECT_EQ(r.findings[0].mechanism, "execution");
  EXPECT_EQ(r.findings[0].owner, "accelerator architecture owner");
}

TEST_F(TriageTest, BenchmarkFilesContentionTail) {
  auto lens = [](int p99) {
    return Json{{"config", "default"},
                {"knee_bytes_per_cycle_sparse", 8.0},
                {"contention",
                 {{"bytes_per_cycle", 8.0},
                  {"loads", {{{"load", 0.0}, {"sparse", {{"p50", 1000}, {"p99", 1010}}}},
                             {{"load", 0.75}, {"sparse", {{"p50", 2000}, {"p99", p99}}}}}}}}};
  };
  const TriageResult r = triage_reports(write("a.json", lens(2080)), write("b.json", lens(2600)));
  ASSERT_TRUE(r.regressed());
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_EQ(r.findings[0].mechanism, "latency tail");
  EXPECT_NE(r.reproduce_candidate.find("nmsa_bench_contention"), std::string::npos);
  // A report and a benchmark file measure different things.
  try {
    triage_reports(write("c.json", baseline_json()), write("d.json", lens(2080)));
    FAIL() << "a report was compared with a benchmark file";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("not comparable"), std::string::npos) << e.what();
  }
  EXPECT_THROW(triage_reports(write("e.json", Json{{"x", 1}}), write("f.json", lens(2080))),
               std::runtime_error);
}

}  // namespace
}  // namespace nmsa
