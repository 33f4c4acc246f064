// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// Runtime benchmark: the compiler's cycle prediction against RTL cycles on random GEMM shapes
// (targets: mean absolute percentage error <= 3%, and the worst shape exact), and the functional
// model's speed against the Verilated RTL on the same programs (a ratio of wall-clock times in the
// same run, reported only), on the random shapes and on named ones (--speed-shapes; make bench:
// the top benchmark's 256 x 1024 x 256 and BERT-base's FFN up-projection, 128 x 768 x 3072, both
// modes; the goal is 100x). A network as one command stream (program_chain.hpp): the demo's MLP
// shape, 784-512-256-10 sparse, as a chain against the same layers as separate programs, both on
// the RTL (device cycles only: the host time between separate programs is not in them); the
// chain's prediction must be exact. Writes build/bench/runtime.json; `prune_mb_per_s` is filled
// in from the prune benchmark's result file (--prune-json) when it ran first.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "../tests/common/random_matrix.hpp"
#include "bench_common.hpp"
#include "nmsa/device.hpp"
#include "nmsa/gemm_program.hpp"
#include "nmsa/program_chain.hpp"
#include "nmsa/progress.hpp"
#include "nmsa/sparse_format.hpp"
#include "nmsa/tb/rtl_device.hpp"

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// prune_mb_per_s of the prune benchmark's result file, or null when it has not run.
nmsa::bench::Json prune_throughput(const std::string& path) {
  std::ifstream in(path);
  if (!in) return nullptr;
  const auto j = nmsa::bench::Json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.contains("prune_mb_per_s")) return nullptr;
  return j["prune_mb_per_s"];
}

struct Shape {
  int rows = 0, k = 0, n = 0;
  std::string name() const {
    return std::to_string(rows) + "x" + std::to_string(k) + "x" + std::to_string(n);
  }
};

Shape parse_shape(const std::string& text) {
  Shape s;
  char x1 = 0, x2 = 0;
  std::istringstream in(text);
  if (!(in >> s.rows >> x1 >> s.k >> x2 >> s.n) || x1 != 'x' || x2 != 'x' || !in.eof() ||
      s.rows < 1 || s.k < 1 || s.n < 1) {
    throw std::invalid_argument("--speed-shapes: '" + text + "' is not ROWSxKxN");
  }
  return s;
}

// The chain's and the separate programs' RTL cycles for `rows` rows through `widths` (sparse,
// INT8 with ReLU between layers), checking both results against each other.
struct ChainRun {
  std::uint64_t chained = 0, separate = 0, predicted = 0;
};

ChainRun run_chain(nmsa::Device& rtl, const std::vector<int>& widths, int rows,
                   const nmsa::PerfModelParams& perf, std::mt19937_64& rng) {
  const nmsa::DeviceCaps caps = rtl.caps();
  std::vector<nmsa::ChainLayer> layers;
  for (std::size_t i = 0; i + 1 < widths.size(); ++i) {
    nmsa::ChainLayer l;
    l.weights = nmsa::prune_nm_any_k(nmsa::testing::random_i8(widths[i + 1], widths[i], rng),
                                     caps.pattern);
    l.options.memory = perf;
    if (i + 2 < widths.size()) {
      nmsa::EpilogueParams e;
      for (int c = 0; c < widths[i + 1]; ++c) {
        const auto q = nmsa::quantize_multiplier(0.002);
        e.bias.push_back(0);
        e.multiplier.push_back(q.multiplier);
        e.shift.push_back(q.shift);
      }
      l.options.epilogue = e;
      l.options.relu = true;
    }
    layers.push_back(std::move(l));
  }
  const nmsa::MatrixI8 x = nmsa::testing::random_i8(rows, widths.front(), rng);
  const nmsa::ProgramChain chain(caps, x, layers, rtl.memory());
  const nmsa::DeviceRun run = rtl.run(chain.command_address(), chain.command_count());
  if (!run.ok()) throw std::runtime_error("the chained network failed: " + run.describe());
  ChainRun r;
  r.chained = run.cycles;
  r.predicted = chain.predict_cycles(perf).total;
  const nmsa::MatrixI32 chained_output = chain.read_output();
  // The same programs again, one START each (their commands as compiled, without the chain's
  // tokens), in order: each reads what the one before just wrote.
  for (std::size_t i = 0; i < chain.size(); ++i) {
    const nmsa::GemmProgram& p = chain.program(i);
    const nmsa::DeviceRun one = rtl.run(p.command_address(), p.command_count());
    if (!one.ok()) throw std::runtime_error("a separate layer failed: " + one.describe());
    r.separate += one.cycles;
  }
  if (chain.read_output() != chained_output) {
    throw std::runtime_error("the chained and the separate runs differ");
  }
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  namespace bench = nmsa::bench;
  std::string out = "build/bench/runtime.json";
  std::string prune_json = "build/bench/prune.json";
  std::string config = "default";
  int shapes = 50;
  std::vector<std::string> speed_shapes{"256x1024x256", "128x768x3072"};
  CLI::App app{"Runtime benchmark: the cycle model against the RTL on random GEMM shapes"};
  app.add_option("--config", config, "configuration of rtl/configs.json");
  app.add_option("--shapes", shapes, "random GEMM shapes")->check(CLI::Range(1, 10000));
  app.add_option("--out", out, "result file");
  app.add_option("--prune-json", prune_json, "the prune benchmark's result file (optional)");
  app.add_option("--speed-shapes", speed_shapes,
                 "ROWSxKxN shapes the model's speed is also measured on, sparse and dense "
                 "(default 256x1024x256 128x768x3072)");
  if (const int rc = bench::parse_options(app, argc, argv); rc >= 0) return rc;
  try {
    nmsa::tb::AxiMemoryConfig memory;
    memory.read_latency = 100;
    memory.bytes_per_cycle = 16.0;
    memory.max_reads = 32;
    memory.max_writes = 32;
    nmsa::PerfModelParams perf;
    perf.dma_bytes_per_cycle = memory.bytes_per_cycle;
    perf.dma_read_latency = static_cast<int>(memory.read_latency);
    perf.dma_write_latency = static_cast<int>(memory.write_latency);

    auto rtl = nmsa::tb::make_rtl_device(config, memory, 1);
    auto model = nmsa::make_model_device(config);
    const nmsa::DeviceCaps caps = rtl->caps();
    std::mt19937_64 rng(7);
    auto pick = [&rng](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };

    double abs_err_sum = 0, worst = 0, rtl_seconds = 0, model_seconds = 0;
    std::uint64_t rtl_cycles = 0;
    nmsa::ProgressBar bar("cycle model vs RTL", shapes);
    std::printf("%-20s %-6s %10s %10s %8s\n", "shape", "mode", "rtl", "predicted", "error");
    for (int i = 0; i < shapes; ++i) {
      const int rows = pick(8, 256), k = pick(16, 1024), n = pick(4, 128);
      const nmsa::MatrixI8 x = nmsa::testing::random_i8(rows, k, rng);
      nmsa::MatrixI8 w = nmsa::testing::random_i8(n, k, rng);
      nmsa::GemmOptions options;
      options.mode = i % 2 == 0 ? nmsa::GemmMode::SPARSE : nmsa::GemmMode::DENSE;
      if (options.mode == nmsa::GemmMode::SPARSE) {
        w = nmsa::prune_nm_any_k(w, caps.pattern);
      }
      options.memory = perf;  // plans chosen for the host memory of the run
      const nmsa::GemmProgram on_rtl(caps, x, w, options, rtl->memory());
      const nmsa::GemmProgram on_model(caps, x, w, options, model->memory());
      auto t0 = std::chrono::steady_clock::now();
      const nmsa::DeviceRun a = rtl->run(on_rtl.command_address(), on_rtl.command_count());
      rtl_seconds += seconds_since(t0);
      t0 = std::chrono::steady_clock::now();
      const nmsa::DeviceRun b = model->run(on_model.command_address(), on_model.command_count());
      model_seconds += seconds_since(t0);
      if (!a.ok() || !b.ok() || on_rtl.read_output() != on_model.read_output()) {
        std::fprintf(stderr, "bench_runtime: shape %d: %s / %s or results differ\n", i,
                     a.describe().c_str(), b.describe().c_str());
        return bench::kExitWrongResult;
      }
      const double predicted = static_cast<double>(on_rtl.predict_cycles(perf).total);
      const double err = (predicted - static_cast<double>(a.cycles)) / static_cast<double>(a.cycles);
      abs_err_sum += std::fabs(err);
      worst = std::max(worst, std::fabs(err));
      rtl_cycles += a.cycles;
      const std::string shape = std::to_string(rows) + "x" + std::to_string(k) + "x" + std::to_string(n);
      std::printf("%-20s %-6s %10llu %10.0f %+7.1f%%\n", shape.c_str(),
                  options.mode == nmsa::GemmMode::SPARSE ? "sparse" : "dense",
                  static_cast<unsigned long long>(a.cycles), predicted, 100 * err);
      bar.update(static_cast<std::uint64_t>(i + 1));
    }
    bar.finish();
    // The same comparison on the named shapes, each in both modes on one program pair.
    bench::Json named = bench::Json::object();
    for (const std::string& text : speed_shapes) {
      const Shape shape = parse_shape(text);
      double rtl_s = 0, model_s = 0;
      for (const nmsa::GemmMode mode : {nmsa::GemmMode::SPARSE, nmsa::GemmMode::DENSE}) {
        const nmsa::MatrixI8 x = nmsa::testing::random_i8(shape.rows, shape.k, rng);
        nmsa::MatrixI8 w = nmsa::testing::random_i8(shape.n, shape.k, rng);
        if (mode == nmsa::GemmMode::SPARSE) w = nmsa::prune_nm_any_k(w, caps.pattern);
        nmsa::GemmOptions options;
        options.mode = mode;
        options.memory = perf;
        const nmsa::GemmProgram on_rtl(caps, x, w, options, rtl->memory());
        const nmsa::GemmProgram on_model(caps, x, w, options, model->memory());
        auto t0 = std::chrono::steady_clock::now();
        const nmsa::DeviceRun a = rtl->run(on_rtl.command_address(), on_rtl.command_count());
        rtl_s += seconds_since(t0);
        t0 = std::chrono::steady_clock::now();
        const nmsa::DeviceRun b = model->run(on_model.command_address(), on_model.command_count());
        model_s += seconds_since(t0);
        if (!a.ok() || !b.ok() || on_rtl.read_output() != on_model.read_output() ||
            a.cycles != on_rtl.predict_cycles(perf).total) {
          std::fprintf(stderr, "bench_runtime: %s: %s / %s, results or cycles differ\n",
                       shape.name().c_str(), a.describe().c_str(), b.describe().c_str());
          return bench::kExitWrongResult;
        }
      }
      named[shape.name()] = rtl_s / model_s;
    }
    const ChainRun chain = run_chain(*rtl, {784, 512, 256, 10}, 100, perf, rng);
    const double chain_ratio =
        static_cast<double>(chain.separate) / static_cast<double>(chain.chained);
    const double chain_error =
        std::fabs(static_cast<double>(chain.predicted) - static_cast<double>(chain.chained)) /
        static_cast<double>(chain.chained);
    const double mape = abs_err_sum / shapes;
    const double speed_ratio = rtl_seconds / model_seconds;
    const bench::Json prune_mb_per_s = prune_throughput(prune_json);
    std::printf("\ncycle model vs RTL over %d shapes: mean absolute error %.2f%%, worst %.1f%%\n",
                shapes, 100 * mape, 100 * worst);
    std::printf("functional model vs Verilated RTL on the same programs: %.1fx faster "
                "(RTL simulated %.0f cycles/s)\n", speed_ratio, rtl_cycles / rtl_seconds);
    for (const auto& [name, ratio] : named.items()) {
      std::printf("  on %s, sparse and dense: %.1fx faster (goal 100x)\n", name.c_str(),
                  ratio.get<double>());
    }
    std::printf("784-512-256-10 x 100 rows as one command stream: %llu RTL cycles, separate "
                "programs %llu (%.3fx, device cycles only), prediction %llu\n",
                static_cast<unsigned long long>(chain.chained),
                static_cast<unsigned long long>(chain.separate), chain_ratio,
                static_cast<unsigned long long>(chain.predicted));
    if (prune_mb_per_s.is_number()) {
      std::printf("prune + compress throughput (from %s): %.0f MB/s\n", prune_json.c_str(),
                  prune_mb_per_s.get<double>());
    }
    const std::vector<bench::Target> targets = {
        {"cycle_model_mape", mape, 0.03, false},
        // The cycle model is exact against the RTL on this memory (docs/runtime.md).
        {"cycle_model_worst_error", worst, 0.0, false},
        {"chain_prediction_error", chain_error, 0.0, false},
    };
    const int missed = bench::print_targets(targets);
    bench::write_json(out, {{"config", config}, {"shapes", shapes},
                            {"cycle_model_mape", mape}, {"cycle_model_worst_error", worst},
                            {"model_vs_rtl_speed_ratio", speed_ratio},
                            {"model_vs_rtl_speed_ratio_by_shape", named},
                            {"chain_cycles", chain.chained},
                            {"chain_separate_cycles", chain.separate},
                            {"chain_vs_separate_cycle_ratio", chain_ratio},
                            {"chain_prediction_error", chain_error},
                            {"prune_mb_per_s", prune_mb_per_s},
                            {"targets", bench::targets_json(targets)}});
    return bench::exit_code(true, missed);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_runtime: %s\n", e.what());
    return bench::kExitUsage;
  }
}
