// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// nmsa triage on regressions built on purpose (docs/triage.md): each case of
// tests/report/triage_cases.hpp, one mechanism each, must be named first with its owner, and the
// stable candidate must pass. Merges triage_cases_correct and triage_cases_total into
// build/bench/lens.json. The cases edit the figures of a sample report as their regression moves
// them; the demo's regressed workload (docs/demo.md) is the measured one.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include "../tests/report/triage_cases.hpp"
#include "bench_common.hpp"
#include "nmsa/triage.hpp"

int main(int argc, char** argv) {
  namespace bench = nmsa::bench;
  namespace fs = std::filesystem;
  std::string out = "build/bench/lens.json";
  CLI::App app{"nmsa triage on purpose-built regressions: how many it names right"};
  app.add_option("--out", out, "the lens file to merge the figures into");
  if (const int rc = bench::parse_options(app, argc, argv); rc >= 0) return rc;
  try {
    const fs::path dir = fs::temp_directory_path() / ("nmsa_bench_triage_" +
                                                      std::to_string(::getpid()));
    fs::create_directories(dir);
    auto write = [&dir](const std::string& name, const nmsa::testing::TriageJson& j) {
      const std::string path = (dir / name).string();
      std::ofstream(path) << j.dump(2);
      return path;
    };
    const std::string baseline = write("baseline.json", nmsa::testing::triage_baseline_json());
    int correct = 0, total = 0;
    bench::Json cases = bench::Json::array();
    std::printf("%-58s %-34s %s\n", "case", "first failing mechanism", "");
    for (const nmsa::testing::TriageCase& c : nmsa::testing::triage_cases()) {
      nmsa::testing::TriageJson cand = nmsa::testing::triage_baseline_json();
      c.regress(cand);
      const nmsa::TriageResult r = nmsa::triage_reports(baseline, write("candidate.json", cand));
      const std::string mechanism = r.regressed() ? r.findings.front().mechanism : "";
      const std::string owner = r.regressed() ? r.findings.front().owner : "";
      const bool ok = mechanism == c.mechanism && owner == c.owner;
      correct += ok ? 1 : 0;
      ++total;
      std::printf("%-58s %-34s %s\n", c.name.c_str(),
                  mechanism.empty() ? "(no regression)" : mechanism.c_str(), ok ? "ok" : "WRONG");
      cases.push_back({{"case", c.name}, {"expected", c.mechanism}, {"named", mechanism},
                       {"owner", owner}, {"correct", ok}});
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
