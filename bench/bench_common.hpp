// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// What the benchmarks share: the targets their deterministic figures are held to, and their
// result files.
//
// A target is a figure that is the same on every machine for the same RTL and software (cycle
// ratios, utilization, the cycle model's error, the permutation search's gain). A benchmark that
// misses one exits with kExitTargetMissed, so `make bench` and the CTest label `bench` fail on
// it. Wall-clock figures (simulation speed, MB/s) depend on the machine: they are printed and
// written, never checked.
#pragma once

#include <cstddef>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

namespace nmsa::bench {

using Json = nlohmann::ordered_json;

// Exit codes shared by the benchmarks.
constexpr int kExitOk = 0;
constexpr int kExitWrongResult = 1;  // a result differs from the golden model
constexpr int kExitUsage = 2;        // bad options or an error before any result
constexpr int kExitTargetMissed = 3;

struct Target {
  std::string name;
  double value = 0;
  double bound = 0;
  bool at_least = true;  // value >= bound; otherwise value <= bound

  bool met() const { return at_least ? value >= bound : value <= bound; }
};

// Prints one line per target and returns how many were missed.
inline int print_targets(const std::vector<Target>& targets) {
  int missed = 0;
  std::printf("\ntargets:\n");
  for (const Target& t : targets) {
    std::printf("  %-40s %10.4f %s %-8.4g %s\n", t.name.c_str(), t.value, t.at_least ? ">=" : "<=",
                t.bound, t.met() ? "met" : "MISSED");
    missed += t.met() ? 0 : 1;
  }
  return missed;
}

// The targets as a JSON object: name -> {value, bound, at_least, met}.
inline Json targets_json(const std::vector<Target>& targets) {
  Json j = Json::object();
  for (const Target& t : targets) {
    j[t.name] = {{"value", t.value}, {"bound", t.bound}, {"at_least", t.at_least},
                 {"met", t.met()}};
  }
  return j;
}

// Writes j (indented) to path, creating its directory; throws when the file cannot be written.
inline void write_json(const std::string& path, const Json& j) {
  const std::filesystem::path out(path);
  if (out.has_parent_path()) std::filesystem::create_directories(out.parent_path());
  std::ofstream file(out);
  file << j.dump(2) << "\n";
  if (!file) throw std::runtime_error("cannot write " + path);
  std::printf("\nwrote %s\n", path.c_str());
}

// The JSON object in `path` to merge more figures into, or an empty object when there is no
// file yet; throws when the file is there but not a JSON object.
inline Json read_json_to_merge(const std::string& path) {
  if (!std::filesystem::exists(path)) return Json::object();
  std::ifstream in(path);
  Json j = Json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    throw std::runtime_error(path + ": not a JSON object; cannot merge into it");
  }
  return j;
}

// The exit code of a benchmark: a wrong result first, then missed targets.
inline int exit_code(bool results_exact, int targets_missed) {
  if (!results_exact) return kExitWrongResult;
  return targets_missed > 0 ? kExitTargetMissed : kExitOk;
}

// The options of a benchmark that runs one GEMM shape on one configuration.
struct GemmShapeArgs {
  std::string config = "default";
  std::ptrdiff_t rows = 0, k = 0, n_out = 0;  // Eigen::Index
  std::string out;
};

inline void add_gemm_shape_options(CLI::App& app, GemmShapeArgs& a) {
  app.add_option("--config", a.config, "configuration of rtl/configs.json");
  app.add_option("--rows", a.rows, "activation rows")->check(CLI::Range(1, 1 << 20));
  app.add_option("--k", a.k, "reduction length")->check(CLI::Range(4, 1 << 20));
  app.add_option("--n", a.n_out, "output channels")->check(CLI::Range(1, 1 << 16));
  app.add_option("--out", a.out, "result file");
}

// Parses the options; on --help or a bad option prints CLI11's message and returns the exit
// code to end with (kExitOk after --help), otherwise -1.
inline int parse_options(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? kExitOk : kExitUsage;
  }
  return -1;
}

}  // namespace nmsa::bench
