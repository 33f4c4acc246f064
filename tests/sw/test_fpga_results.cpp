// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// The FPGA result files a report cites (sw/report/include/nmsa/fpga_results.hpp): reading them,
// finding the fresh or the published one, the RTL hash agreeing with syn/fpga.py's, and every
// published result in syn/results reading back.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "../common/expect_throw.hpp"
#include "nmsa/fpga_results.hpp"

namespace nmsa {
namespace {

namespace fs = std::filesystem;
using testing::expect_throw_containing;

// A result as syn/fpga.py writes it.
const char* kResult = R"({
  "target": "ecp5", "config": "default", "top": "nmsa_top",
  "rtl_hash": "0123456789abcdef", "git_revision": "abc123", "date": "2026-12-03T10:00:00Z",
  "yosys": "Yosys 0.70", "device": "LFE5U-85F-8BG381",
  "nextpnr": "nextpnr-0.11.1", "clock_constraint_mhz": 125.0,
  "seeds": [{"seed": 1, "fmax_mhz": 130.5}, {"seed": 2, "fmax_mhz": 128.0},
            {"seed": 3, "fmax_mhz": 133.0}],
  "fmax_mhz_best": 133.0, "fmax_mhz_median": 130.5,
  "utilization": {"TRELLIS_COMB": {"used": 20000, "available": 83640},
                  "MULT18X18D": {"used": 146, "available": 156},
                  "DP16KD": {"used": 109, "available": 208}}
})";

class FpgaResultsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("nmsa_fpga_results_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
            "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "build" / "fpga");
    fs::create_directories(dir_ / "src" / "syn" / "results");
  }
  void TearDown() override { fs::remove_all(dir_); }
  void write(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }

  fs::path dir_;
};

TEST_F(FpgaResultsTest, ReadsAPlaceAndRouteResult) {
  write(dir_ / "r.json", kResult);
  const FpgaResult r = read_fpga_result((dir_ / "r.json").string());
  EXPECT_EQ(r.config, "default");
  EXPECT_DOUBLE_EQ(r.fmax_mhz_median, 130.5);
  EXPECT_EQ(r.seeds, 3);
  EXPECT_EQ(r.luts(), 20000u);
  EXPECT_EQ(r.dsps(), 146u);
  EXPECT_EQ(r.brams(), 109u);
  const std::string d = r.describe();
  for (const char* needle : {"130.5 MHz", "3 seed", "LFE5U-85F-8BG381", "out of context",
                             "Yosys 0.70", "abc123", "r.json"}) {
    EXPECT_NE(d.find(needle), std::string::npos) << needle << " not in: " << d;
  }
  EXPECT_EQ(r.seeds_unrouted, 0);
  EXPECT_EQ(d.find("unrouted"), std::string::npos) << d;
}

// A seed stopped by the flow's time limit is listed apart: the median is of the others, and the
// description says so.
TEST_F(FpgaResultsTest, NamesSeedsThatDidNotRoute) {
  std::string text = kResult;
  text.replace(text.find("\"fmax_mhz_best\""), 0,
               R"("seeds_unrouted": [{"seed": 4, "stopped_after_s": 4500.0}], )");
  write(dir_ / "r.json", text);
  const FpgaResult r = read_fpga_result((dir_ / "r.json").string());
  EXPECT_EQ(r.seeds, 3);
  EXPECT_EQ(r.seeds_unrouted, 1);
  EXPECT_NE(r.describe().find("3 seed(s) (1 more stopped unrouted)"), std::string::npos)
      << r.describe();
  const std::string unrouted = R"([{"seed": 4, "stopped_after_s": 4500.0}])";
  text.replace(text.find(unrouted), unrouted.size(), "4");
  write(dir_ / "bad.json", text);
  expect_throw_containing([&] { read_fpga_result((dir_ / "bad.json").string()); },
                          std::vector<std::string>{"bad.json", "wrong type"});
}

TEST_F(FpgaResultsTest, RejectsFilesThatAreNotResults) {
  const std::string synth_only = std::string(kResult).replace(
      std::string(kResult).find("\"fmax_mhz_median\": 130.5"), 24, "\"fmax_mhz_median\": null");
  write(dir_ / "synth.json", synth_only);
  expect_throw_containing([&] { read_fpga_result((dir_ / "synth.json").string()); },
                          std::vector<std::string>{"synth.json", "fmax_mhz_median"});
  write(dir_ / "garbage.json", "{ not json");
  expect_throw_containing([&] { read_fpga_result((dir_ / "garbage.json").string()); },
                          std::vector<std::string>{"garbage.json", "not JSON"});
  expect_throw_containing([&] { read_fpga_result((dir_ / "absent.json").string()); },
                          "absent.json");
  // A device is refused before it is read (it would be read until memory ran out).
  expect_throw_containing([&] { read_fpga_result("/dev/zero"); },
                          std::vector<std::string>{"/dev/zero", "not a regular file"});
}

TEST_F(FpgaResultsTest, PrefersAFreshResultToThePublishedOne) {
  const std::string src = (dir_ / "src").string(), build = (dir_ / "build").string();
  EXPECT_FALSE(find_fpga_result(src, build, "ecp5", "default").has_value());
  write(dir_ / "src" / "syn" / "results" / "ecp5-default.json", kResult);
  auto published = find_fpga_result(src, build, "ecp5", "default");
  ASSERT_TRUE(published.has_value());
  EXPECT_NE(published->path.find("syn/results"), std::string::npos);
  std::string fresh = kResult;
  fresh.replace(fresh.find("\"fmax_mhz_median\": 130.5"), 24, "\"fmax_mhz_median\": 140.0");
  write(dir_ / "build" / "fpga" / "ecp5-default.json", fresh);
  EXPECT_DOUBLE_EQ(find_fpga_result(src, build, "ecp5", "default")->fmax_mhz_median, 140.0);
  // A synthesis result of the same name (make synth) does not hide the published measurement.
  write(dir_ / "build" / "fpga" / "ecp5-default.json",
        R"({"target": "ecp5", "config": "default", "top": "nmsa_top", "cells": {"LUT4": 10}})");
  EXPECT_DOUBLE_EQ(find_fpga_result(src, build, "ecp5", "default")->fmax_mhz_median, 130.5);
  // A malformed one is an error naming it, not a silent fallback.
  write(dir_ / "build" / "fpga" / "ecp5-default.json", "{ not json");
  expect_throw_containing([&] { find_fpga_result(src, build, "ecp5", "default"); },
                          "ecp5-default.json");
  // A module's result has its name in the file name.
  EXPECT_FALSE(find_fpga_result(src, build, "ecp5", "default", "nmsa_pe").has_value());
}

// syn/fpga.py and the library hash the RTL alike, so a report can tell a stale measurement; the
// hash of one configuration does not depend on the others.
TEST(FpgaResults, RtlHashAgreesWithTheFlow) {
  for (const char* config : {"default", "small"}) {
    const std::string cmd = "cd '" NMSA_SOURCE_DIR
                            "' && python3 -c 'import sys; sys.path.insert(0, \"syn\"); "
                            "import fpga; print(fpga.rtl_hash(\"" + std::string(config) + "\"))'";
    std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(cmd.c_str(), "r"), pclose);
    ASSERT_TRUE(pipe);
    char buf[64] = {};
    ASSERT_NE(std::fgets(buf, sizeof buf, pipe.get()), nullptr);
    std::string python(buf);
    while (!python.empty() && (python.back() == '\n' || python.back() == '\r')) python.pop_back();
    EXPECT_EQ(rtl_hash(NMSA_SOURCE_DIR, config), python) << config;
    EXPECT_EQ(python.size(), 16u);
  }
  EXPECT_NE(rtl_hash(NMSA_SOURCE_DIR, "default"), rtl_hash(NMSA_SOURCE_DIR, "small"));
  EXPECT_THROW(rtl_hash(NMSA_SOURCE_DIR, "no_such_config"), std::runtime_error);
}

// The results published in syn/results (the deployment report's clock when build/fpga has none)
// read back as whole place-and-route results of the file they are named after.
TEST(FpgaResults, PublishedResultsReadBack) {
  const std::filesystem::path dir = std::filesystem::path(NMSA_SOURCE_DIR) / "syn" / "results";
  ASSERT_TRUE(std::filesystem::is_directory(dir)) << dir;
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() != ".json") continue;
    ++files;
    const FpgaResult r = read_fpga_result(e.path().string());
    EXPECT_EQ(r.target + "-" + r.config, e.path().stem().string()) << e.path();
    EXPECT_GT(r.fmax_mhz_median, 0.0) << e.path();
  }
  EXPECT_GT(files, 0) << "no result in " << dir;
}

}  // namespace
}  // namespace nmsa
