// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// Array benchmark (issue targets): the `default` configuration on a GEMM of 1024 activation rows,
// K = 1024, 64 output channels, in sparse and dense mode on the same RTL. Prints cycles, the
// effective speedup (dense cycles / sparse cycles), steady-state sparse utilization, Verilator
// simulation speed, and the build time of each configuration (measured by the Makefile and passed
// in as a file), and writes build/bench/array.json.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <sstream>
#include <string>

#include "../tests/common/random_matrix.hpp"
#include "nmsa/golden.hpp"
#include "nmsa/sparse_format.hpp"
#include "nmsa/tb/array_gemm.hpp"

namespace {

struct Args {
  std::string config = "default";
  Eigen::Index rows = 1024, k = 1024, n_out = 64;
  std::string out = "build/bench/array.json";
  std::string build_times;  // lines "name seconds"
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--config") a.config = value();
    else if (arg == "--rows") a.rows = std::stol(value());
    else if (arg == "--k") a.k = std::stol(value());
    else if (arg == "--n") a.n_out = std::stol(value());
    else if (arg == "--out") a.out = value();
    else if (arg == "--build-times") a.build_times = value();
    else throw std::invalid_argument("unknown argument " + arg +
                                     " (known: --config --rows --k --n --out --build-times)");
  }
  return a;
}

std::map<std::string, double> read_build_times(const std::string& path) {
  std::map<std::string, double> times;
  if (path.empty()) return times;
  std::ifstream in(path);
  std::string name;
  double seconds = 0;
  while (in >> name >> seconds) times[name] = seconds;
  return times;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Args args = parse(argc, argv);
    std::mt19937_64 rng(2024);
    const nmsa::MatrixI8 x = nmsa::testing::random_i8(args.rows, args.k, rng);
    auto sim = nmsa::tb::make_array_sim(args.config, 1);
    const auto& g = sim->geometry();
    const nmsa::MatrixI8 w = nmsa::prune_nm(nmsa::testing::random_i8(args.n_out, args.k, rng),
                                            g.pattern);

    std::printf("array benchmark: config %s (%ux%u, %s), GEMM %ld x %ld x %ld\n",
                args.config.c_str(), g.rows, g.cols, g.pattern.name().c_str(),
                static_cast<long>(args.rows), static_cast<long>(args.k),
                static_cast<long>(args.n_out));

    const auto t0 = std::chrono::steady_clock::now();
    const auto sparse = nmsa::tb::run_array_gemm(*sim, x, w, nmsa::tb::ArrayMode::kSparse);
    const auto t1 = std::chrono::steady_clock::now();
    const auto dense = nmsa::tb::run_array_gemm(*sim, x, w, nmsa::tb::ArrayMode::kDense);
    const auto t2 = std::chrono::steady_clock::now();

    const nmsa::MatrixI32 want = nmsa::golden::gemm_i8(x, w);
    const bool exact = sparse.y == want && dense.y == want;
    const double sim_seconds = std::chrono::duration<double>(t2 - t0).count();
    const double sim_rate = static_cast<double>(sparse.cycles + dense.cycles) / sim_seconds;
    const double speedup = static_cast<double>(dense.cycles) / static_cast<double>(sparse.cycles);
    const double util = sparse.utilization(g);
    const double ideal_speedup = static_cast<double>(g.pattern.m) / g.pattern.n;
    (void)t1;

    std::printf("\n%-28s %14s %14s\n", "", "sparse", "dense");
    std::printf("%-28s %14llu %14llu\n", "cycles",
                static_cast<unsigned long long>(sparse.cycles),
                static_cast<unsigned long long>(dense.cycles));
    std::printf("%-28s %14llu %14llu\n", "tiles", static_cast<unsigned long long>(sparse.tiles),
                static_cast<unsigned long long>(dense.tiles));
    std::printf("%-28s %14llu %14llu\n", "feeder stall cycles",
                static_cast<unsigned long long>(sparse.stall_cycles),
                static_cast<unsigned long long>(dense.stall_cycles));
    std::printf("%-28s %13.2f%% %13.2f%%\n", "utilization (of sparse peak)", 100.0 * util,
                100.0 * dense.utilization(g));
    std::printf("\n%-40s %8.3fx (limit %.1fx, target >= 1.95x)\n",
                "effective speedup (dense/sparse cycles)", speedup, ideal_speedup);
    std::printf("%-40s %8.2f%% (target >= 97%%)\n", "sparse steady-state utilization",
                100.0 * util);
    std::printf("%-40s %8s\n", "bit-exact vs Eigen golden", exact ? "yes" : "NO");
    std::printf("%-40s %8.0f cycles/s\n", "Verilator simulation speed", sim_rate);

    const auto build_times = read_build_times(args.build_times);
    if (!build_times.empty()) {
      std::printf("\nVerilator model build time per configuration (ratio to %s):\n",
                  args.config.c_str());
      const auto base = build_times.find(args.config);
      for (const auto& [name, seconds] : build_times) {
        std::printf("  %-14s %7.1f s", name.c_str(), seconds);
        if (base != build_times.end() && base->second > 0) {
          std::printf("  (%.2fx)", seconds / base->second);
        }
        std::printf("\n");
      }
    }

    std::ostringstream json;
    json << "{\n"
         << "  \"config\": \"" << args.config << "\",\n"
         << "  \"rows\": " << args.rows << ", \"k\": " << args.k << ", \"n\": " << args.n_out
         << ",\n"
         << "  \"sparse_cycles\": " << sparse.cycles << ",\n"
         << "  \"dense_cycles\": " << dense.cycles << ",\n"
         << "  \"effective_speedup\": " << speedup << ",\n"
         << "  \"ideal_speedup\": " << ideal_speedup << ",\n"
         << "  \"sparse_utilization\": " << util << ",\n"
         << "  \"dense_utilization\": " << dense.utilization(g) << ",\n"
         << "  \"bit_exact\": " << (exact ? "true" : "false") << ",\n"
         << "  \"sim_cycles_per_s\": " << sim_rate << ",\n"
         << "  \"build_seconds\": {";
    bool first = true;
    for (const auto& [name, seconds] : build_times) {
      json << (first ? "" : ", ") << "\"" << name << "\": " << seconds;
      first = false;
    }
    json << "}\n}\n";
    std::ofstream(args.out) << json.str();
    std::printf("\nwrote %s\n", args.out.c_str());
    return exact ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_array: %s\n", e.what());
    return 2;
  }
}
