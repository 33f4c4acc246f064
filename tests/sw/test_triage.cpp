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

#include "../report/sample_report.hpp"
#include "nmsa/report.hpp"
#include "nmsa/triage.hpp"

namespace nmsa {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

// The sample report with the tags a demo run writes.
Json baseline_json() {
  Json j = Json::parse(report_json(testing::make_sample_report()));
  j["tags"] = {{"git revision", "a1b2c3d"},
               {"rtl configuration", "default: 8x8 2:4, AXI 64"},
               {"seed", "7"},
               {"data", "55000 train / 5000 validation / 10000 test"},
               {"batch", "100"}};
  return j;
}

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
  const TriageResult r = triage_of([](Json&) {});
  EXPECT_FALSE(r.regressed());
  EXPECT_TRUE(r.rollback_criteria.empty());
  EXPECT_NE(triage_text(r).find("triage: no regression"), std::string::npos);
}

TEST_F(TriageTest, OperatorForcedToTheDensePath) {
  const TriageResult r = triage_of([](Json& j) {
    j["layers"][1]["placement"] = "device dense";
    j["layers"][1]["reason"] = "forced dense: runtime option";
    j["layers"][1]["deployed_cycles"] = j["layers"][1]["dense_cycles"];
    j["effective_speedup"] = j["effective_speedup"].get<double>() * 0.8;
  });
  ASSERT_TRUE(r.regressed());
  EXPECT_EQ(r.findings[0].mechanism, "model and graph lowering");
  EXPECT_EQ(r.findings[0].owner, "compiler sparsity pass owner");
  EXPECT_NE(all_evidence(r.findings[0]).find("fc2: placement device sparse -> device dense"),
            std::string::npos);
  // The speedup fell as a consequence: reported after, not first.
  EXPECT_EQ(r.findings.back().mechanism, "execution");
}

TEST_F(TriageTest, LayerPrunedPastItsQualityGate) {
  const TriageResult r = triage_of([](Json& j) {
    j["layers"][0]["sensitivity_pp"] = 2.4;
    j["sparse_int8_accuracy"] = j["sparse_int8_accuracy"].get<double>() - 0.011;
  });
  ASSERT_TRUE(r.regressed());
  EXPECT_EQ(r.findings[0].mechanism, "result assembly and quality");
  EXPECT_EQ(r.findings[0].owner, "model optimization lead");
  EXPECT_NE(all_evidence(r.findings[0]).find("fc1: placed sparse, pruning it alone costs 2.40 pp"),
            std::string::npos)
      << all_evidence(r.findings[0]);
}

TEST_F(TriageTest, BrokenMetadataConversionCaughtByTheBitExactCheck) {
  const TriageResult r = triage_of([](Json& j) {
    j["batches_bit_exact_golden"] = 0;  // the device still matches the functional model
    j["sparse_int8_accuracy"] = 0.41;
  });
  ASSERT_TRUE(r.regressed());
  EXPECT_EQ(r.findings[0].mechanism, "sparse-format conversion");
  EXPECT_EQ(r.findings[0].owner, "compiler sparsity pass owner");
  EXPECT_NE(all_evidence(r.findings[0]).find("against the golden model 0 of 100, against the functional model 100 of 100"), std::string::npos)
      << all_evidence(r.findings[0]);
}

TEST_F(TriageTest, HardwareThatDisagreesWithItsModelIsExecution) {
  const TriageResult r = triage_of([](Json& j) { j["batches_bit_exact_model"] = 3; });
  ASSERT_TRUE(r.regressed());
  EXPECT_EQ(r.findings[0].mechanism, "execution");
  EXPECT_EQ(r.findings[0].owner, "accelerator architecture owner");
}

TEST_F(TriageTest, SmallerWeightBufferIsScheduling) {
  const TriageResult r = triage_of([](Json& j) {
    j["tags"]["rtl configuration"] = "default_wgt64: 8x8 2:4, AXI 64";
    j["dma_read_bytes"] = j["dma_read_bytes"].get<std::uint64_t>() * 13 / 10;
    j["effective_speedup"] = j["effective_speedup"].get<double>() * 0.9;
  });
  ASSERT_TRUE(r.regressed());
  EXPECT_EQ(r.findings[0].mechanism, "scheduling and memory placement");
  EXPECT_EQ(r.findings[0].owner, "accelerator architecture owner");
  ASSERT_FALSE(r.tag_changes.empty());
  EXPECT_NE(r.reproduce_candidate.find("--config default_wgt64"), std::string::npos);
  EXPECT_NE(r.reproduce_baseline.find("git checkout a1b2c3d"), std::string::npos);
}

TEST_F(TriageTest, LowerHostBandwidthIsServing) {
  const TriageResult r = triage_of([](Json& j) {
    j["memory_bytes_per_cycle"] = 2.0;
    j["effective_speedup"] = 1.46;
  });
  ASSERT_TRUE(r.regressed());
  EXPECT_EQ(r.findings[0].mechanism, "scheduling and memory placement");
  EXPECT_EQ(r.findings[0].owner, "serving performance owner");
  EXPECT_NE(all_evidence(r.findings[0]).find("host memory bytes per cycle 16.0 -> 2.0"),
            std::string::npos);
}

TEST_F(TriageTest, LatencyTailAlone) {
  const TriageResult r = triage_of([](Json& j) {
    j["latency_cycles_p99"] = j["latency_cycles_p50"].get<std::uint64_t>() * 3 / 2;
  });
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

}  // namespace
}  // namespace nmsa
