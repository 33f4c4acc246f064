// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// Runtime benchmark: the compiler's cycle prediction against RTL cycles on random GEMM shapes
// (mean absolute percentage error; target <= 3%), and the functional model's speed against the
// Verilated RTL on the same programs (a ratio of wall-clock times in the same run). Writes
// build/bench/runtime.json; `prune_mb_per_s` is filled in from build/bench/prune.json when the
// prune benchmark ran first.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "../tests/common/random_matrix.hpp"
#include "nmsa/device.hpp"
#include "nmsa/gemm_program.hpp"
#include "nmsa/progress.hpp"
#include "nmsa/sparse_format.hpp"
#include "nmsa/tb/rtl_device.hpp"

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The value of "key": <number> in a small JSON file, or NaN.
double json_number(const std::string& path, const std::string& key) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  const std::string s = text.str();
  const auto at = s.find("\"" + key + "\"");
  if (at == std::string::npos) return std::nan("");
  const auto colon = s.find(':', at);
  return colon == std::string::npos ? std::nan("") : std::atof(s.c_str() + colon + 1);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string out = argc > 1 ? argv[1] : "build/bench/runtime.json";
  const std::string prune_json = argc > 2 ? argv[2] : "build/bench/prune.json";
  const int shapes = 50;
  const std::string config = "default";
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
      return 1;
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
  const double mape = abs_err_sum / shapes;
  const double speed_ratio = rtl_seconds / model_seconds;
  const double prune_mb_per_s = json_number(prune_json, "prune_mb_per_s");
  std::printf("\ncycle model vs RTL over %d shapes: mean absolute error %.2f%% (target <= 3%%), "
              "worst %.1f%%\n", shapes, 100 * mape, 100 * worst);
  std::printf("functional model vs Verilated RTL on the same programs: %.1fx faster "
              "(RTL simulated %.0f cycles/s)\n", speed_ratio, rtl_cycles / rtl_seconds);
  if (!std::isnan(prune_mb_per_s)) {
    std::printf("prune + compress throughput (from %s): %.0f MB/s\n", prune_json.c_str(),
                prune_mb_per_s);
  }
  std::ofstream json(out);
  json << "{\n  \"config\": \"" << config << "\",\n  \"shapes\": " << shapes << ",\n"
       << "  \"cycle_model_mape\": " << mape << ",\n"
       << "  \"cycle_model_worst_error\": " << worst << ",\n"
       << "  \"model_vs_rtl_speed_ratio\": " << speed_ratio << ",\n"
       << "  \"prune_mb_per_s\": " << (std::isnan(prune_mb_per_s) ? std::string("null")
                                                                 : std::to_string(prune_mb_per_s))
       << "\n}\n";
  std::printf("wrote %s\n", out.c_str());
  return 0;
}
