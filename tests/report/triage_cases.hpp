// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// Regressions built on purpose, one mechanism each, for nmsa triage: the sample deployment report
// (sample_report.hpp) with the tags a demo run writes, and for each case the figures its
// mechanism moves, changed as that regression changes them, with the mechanism and the owner
// triage must name first. TriageTest.* checks them one by one with their evidence;
// nmsa_bench_triage counts how many triage gets right (triage_cases_correct in lens.json).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "nmsa/report.hpp"
#include "sample_report.hpp"

namespace nmsa::testing {

using TriageJson = nlohmann::ordered_json;

// The sample report with the tags a demo run writes.
inline TriageJson triage_baseline_json() {
  TriageJson j = TriageJson::parse(report_json(make_sample_report()));
  j["tags"] = {{"git revision", "a1b2c3d"},
               {"rtl configuration", "default: 8x8 2:4, AXI 64"},
               {"seed", "7"},
               {"data", "55000 train / 5000 validation / 10000 test"},
               {"batch", "100"}};
  return j;
}

struct TriageCase {
  std::string name;
  std::function<void(TriageJson&)> regress;  // the candidate made from the baseline
  std::string mechanism;                     // the first failing one; "" for no regression
  std::string owner;
};

inline std::vector<TriageCase> triage_cases() {
  return {
      {"stable candidate", [](TriageJson&) {}, "", ""},
      {"operator forced to the dense path",
       [](TriageJson& j) {
         j["layers"][1]["placement"] = "device dense";
         j["layers"][1]["reason"] = "forced dense: runtime option";
         j["layers"][1]["deployed_cycles"] = j["layers"][1]["dense_cycles"];
         j["effective_speedup"] = j["effective_speedup"].get<double>() * 0.8;
       },
       "model and graph lowering", "compiler sparsity pass owner"},
      {"operator forced to host fallback",
       [](TriageJson& j) {
         j["layers"][0]["placement"] = "host";
         j["layers"][0]["reason"] = "forced to the host: runtime option";
         j["layers"][0]["deployed_cycles"] = 0;
         j["layers"][0]["meta_bytes"] = 0;
         j["effective_speedup"] = j["effective_speedup"].get<double>() * 0.6;
       },
       "model and graph lowering", "compiler sparsity pass owner"},
      {"layer pruned past its quality gate",
       [](TriageJson& j) {
         j["layers"][0]["sensitivity_pp"] = 2.4;
         j["sparse_int8_accuracy"] = j["sparse_int8_accuracy"].get<double>() - 0.011;
       },
       "result assembly and quality", "model optimization lead"},
      {"broken metadata conversion caught by the bit-exact check",
       [](TriageJson& j) {
         j["batches_bit_exact_golden"] = 0;  // the device still matches the functional model
         j["sparse_int8_accuracy"] = 0.41;
       },
       "sparse-format conversion", "compiler sparsity pass owner"},
      {"hardware that disagrees with its functional model",
       [](TriageJson& j) { j["batches_bit_exact_model"] = 3; }, "execution",
       "accelerator architecture owner"},
      {"smaller weight buffer",
       [](TriageJson& j) {
         j["tags"]["rtl configuration"] = "default_wgt64: 8x8 2:4, AXI 64";
         j["dma_read_bytes"] = j["dma_read_bytes"].get<std::uint64_t>() * 13 / 10;
         j["effective_speedup"] = j["effective_speedup"].get<double>() * 0.9;
       },
       "scheduling and memory placement", "accelerator architecture owner"},
      {"lower host bandwidth",
       [](TriageJson& j) {
         j["memory_bytes_per_cycle"] = 2.0;
         j["effective_speedup"] = 1.46;
       },
       "scheduling and memory placement", "serving performance owner"},
      {"latency tail alone",
       [](TriageJson& j) {
         j["latency_cycles_p99"] = j["latency_cycles_p50"].get<std::uint64_t>() * 3 / 2;
       },
       "latency tail", "serving performance owner"},
  };
}

inline const TriageCase& triage_case(const std::string& name) {
  static const std::vector<TriageCase> cases = triage_cases();
  for (const TriageCase& c : cases) {
    if (c.name == name) return c;
  }
  throw std::invalid_argument("no triage case named " + name);
}

}  // namespace nmsa::testing
