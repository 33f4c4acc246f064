// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// Array benchmark: the `default` configuration on a GEMM of 1024 activation rows,
// K = 1024, 64 output channels, in sparse and dense mode on the same RTL. Prints cycles, the
// effective speedup (dense cycles / sparse cycles), steady-state sparse utilization, Verilator
// simulation speed, and the build time of each configuration (measured by the Makefile and passed
// in as a file), and writes build/bench/array.json. Targets (bench_common.hpp): effective speedup
// >= 1.95x, sparse steady-state utilization >= 97%.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <random>
#include <string>

#include "../tests/common/random_matrix.hpp"
#include "bench_common.hpp"
#include "nmsa/golden.hpp"
#include "nmsa/sparse_format.hpp"
#include "nmsa/tb/array_gemm.hpp"

namespace {

struct Args : nmsa::bench::GemmShapeArgs {
  Args() : GemmShapeArgs{"default", 1024, 1024, 64, "build/bench/array.json"} {}
  std::string build_times;  // lines "name seconds"
};

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
  namespace bench = nmsa::bench;
  Args args;
  CLI::App app{"Array benchmark: sparse and dense mode of one configuration on the same RTL"};
  bench::add_gemm_shape_options(app, args);
  app.add_option("--build-times", args.build_times, "lines 'name seconds' of model build times");
  if (const int rc = bench::parse_options(app, argc, argv); rc >= 0) return rc;
  try {
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
    const auto dense = nmsa::tb::run_array_gemm(*sim, x, w, nmsa::tb::ArrayMode::kDense);
    const auto t2 = std::chrono::steady_clock::now();

    const nmsa::MatrixI32 want = nmsa::golden::gemm_i8(x, w);
    const bool exact = sparse.y == want && dense.y == want;
    const double sim_seconds = std::chrono::duration<double>(t2 - t0).count();
    const double sim_rate = static_cast<double>(sparse.cycles + dense.cycles) / sim_seconds;
    const double speedup = static_cast<double>(dense.cycles) / static_cast<double>(sparse.cycles);
    const double util = sparse.utilization(g);
    const double ideal_speedup = static_cast<double>(g.pattern.m) / g.pattern.n;

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
    std::printf("\n%-40s %8.3fx (limit %.1fx)\n",
                "effective speedup (dense/sparse cycles)", speedup, ideal_speedup);
    std::printf("%-40s %8.2f%%\n", "sparse steady-state utilization",
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

    const std::vector<bench::Target> targets = {
        {"effective_speedup", speedup, 1.95, true},
        {"sparse_utilization", util, 0.97, true},
    };
    const int missed = bench::print_targets(targets);

    bench::Json json = {
        {"config", args.config}, {"rows", args.rows}, {"k", args.k}, {"n", args.n_out},
        {"sparse_cycles", sparse.cycles}, {"dense_cycles", dense.cycles},
        {"effective_speedup", speedup}, {"ideal_speedup", ideal_speedup},
        {"sparse_utilization", util}, {"dense_utilization", dense.utilization(g)},
        {"bit_exact", exact}, {"sim_cycles_per_s", sim_rate},
        {"build_seconds", build_times}, {"targets", bench::targets_json(targets)},
    };
    bench::write_json(args.out, json);
    return bench::exit_code(exact, missed);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_array: %s\n", e.what());
    return bench::kExitUsage;
  }
}
