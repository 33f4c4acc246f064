// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// nmsa triage on regressions built on purpose (docs/triage.md), one mechanism each: each must be
// named first with its owner, and a stable candidate must pass. Two kinds of case:
// - report cases (tests/report/triage_cases.hpp) edit the figures of a sample report as their
//   regression moves them;
// - workloads cases predict the production layers of workloads.json (production_workloads.hpp)
//   again on changed hardware or host memory, so their figures are the cycle model's, measured.
// The demo's regressed workload (docs/demo.md) is the one run on the RTL. Merges
// triage_cases_correct and triage_cases_total into build/bench/lens.json.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "../tests/report/triage_cases.hpp"
#include "bench_common.hpp"
#include "nmsa/device.hpp"
#include "nmsa/triage.hpp"
#include "production_workloads.hpp"

namespace {

namespace bench = nmsa::bench;

// A regression of the production layers' predictions: the baseline is `large` with one AXI beat
// of host memory per cycle.
struct WorkloadsCase {
  std::string name;
  bench::WorkloadsDevice device;
  double bytes_per_cycle;  // 0: one AXI beat per cycle
  std::string mechanism;   // the first failing one; "" for no regression
  std::string owner;
};

std::vector<WorkloadsCase> workloads_cases() {
  return {
      {"workloads: the same prediction again", {"large"}, 0, "", ""},
      {"workloads: host memory at 2 B/cycle", {"large"}, 2.0, "scheduling and memory placement",
       "serving performance owner"},
      {"workloads: weight buffer of 32 records", {"large", 0, 32}, 0,
       "scheduling and memory placement", "accelerator architecture owner"},
  };
}

bench::Json predict(const bench::WorkloadsDevice& device, double bytes_per_cycle) {
  nmsa::PerfModelParams perf;
  perf.dma_bytes_per_cycle = bytes_per_cycle;
  const nmsa::DeviceCaps caps =
      bench::workloads_caps(nmsa::make_model_device(device.config)->caps(), device);
  return bench::production_workloads(caps, device, perf);
}

}  // namespace

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  std::string out = "build/bench/lens.json";
  CLI::App app{"nmsa triage on purpose-built regressions: how many it names right"};
  app.add_option("--out", out, "the lens file to merge the figures into");
  if (const int rc = bench::parse_options(app, argc, argv); rc >= 0) return rc;
  try {
    const fs::path dir = fs::temp_directory_path() / ("nmsa_bench_triage_" +
                                                      std::to_string(::getpid()));
    fs::create_directories(dir);
    auto write = [&dir](const std::string& name, const auto& j) {
      const std::string path = (dir / name).string();
      std::ofstream(path) << j.dump(2);
      return path;
    };
    int correct = 0, total = 0;
    bench::Json cases = bench::Json::array();
    auto check = [&](const std::string& name, const std::string& baseline,
                     const std::string& candidate, const std::string& expected_mechanism,
                     const std::string& expected_owner) {
      const nmsa::TriageResult r = nmsa::triage_reports(baseline, candidate);
      const std::string mechanism = r.regressed() ? r.findings.front().mechanism : "";
      const std::string owner = r.regressed() ? r.findings.front().owner : "";
      const bool ok = mechanism == expected_mechanism && owner == expected_owner;
      correct += ok ? 1 : 0;
      ++total;
      std::printf("%-58s %-34s %s\n", name.c_str(),
                  mechanism.empty() ? "(no regression)" : mechanism.c_str(), ok ? "ok" : "WRONG");
      cases.push_back({{"case", name}, {"expected", expected_mechanism}, {"named", mechanism},
                       {"owner", owner}, {"correct", ok}});
    };
    std::printf("%-58s %-34s %s\n", "case", "first failing mechanism", "");
    const std::string report = write("report.json", nmsa::testing::triage_baseline_json());
    for (const nmsa::testing::TriageCase& c : nmsa::testing::triage_cases()) {
      nmsa::testing::TriageJson cand = nmsa::testing::triage_baseline_json();
      c.regress(cand);
      check(c.name, report, write("candidate.json", cand), c.mechanism, c.owner);
    }
    const std::string workloads = write("workloads.json", predict({"large"}, 0));
    for (const WorkloadsCase& c : workloads_cases()) {
      check(c.name, workloads, write("candidate.json", predict(c.device, c.bytes_per_cycle)),
            c.mechanism, c.owner);
    }
    fs::remove_all(dir);
    bench::Json j = bench::read_json_to_merge(out);
    j["triage_cases_correct"] = correct;
    j["triage_cases_total"] = total;
    j["triage_cases"] = std::move(cases);
    const std::vector<bench::Target> targets{
        {"triage_cases_correct_share", static_cast<double>(correct) / total, 1.0, true}};
    const int missed = bench::print_targets(targets);
    bench::write_json(out, j);
    return bench::exit_code(true, missed);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "nmsa_bench_triage: %s\n", e.what());
    return bench::kExitUsage;
  }
}
