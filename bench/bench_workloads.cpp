// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// Production layer shapes: BERT-base encoder GEMMs at sequence length 128 and ResNet-50's
// convolutions (batch 1, 224 x 224, lowered by im2col as the runtime lowers a Conv:
// rows = output pixels, K = input channels x kernel window, N = output channels), sparse (2:4) and
// dense on one configuration (default `large`, 16 x 16). Every figure is the compiler's cycle
// prediction for the program it would emit for this host memory (estimate_gemm: the same plan,
// the same command stream); the RTL sample below holds it against the RTL. Per layer:
// cycles of both modes, effective speedup, utilization, bytes moved, metadata share and what
// bounds it (compute or DMA, whichever the prediction's busy time is; "overhead" when neither
// fills 80% of the cycles). Writes build/bench/workloads.json. Target: each sparse program's
// weight bytes are at most 3/4 of the dense one's (2:4 halves the values and adds 1/8 of the
// dense bytes as metadata, plus record padding). Speedups are reported, not targets: where the
// layer is bound by host memory, sparse gains shrink to the bytes ratio or vanish.
// --act-entries / --wgt-records predict the same layers with other buffer capacities (a what-if
// of the hardware, recorded in the file, that nmsa triage compares as another configuration).
// The RTL sample: the cheapest layer of each family also runs on the Verilated accelerator in
// both modes, on a host memory that matches the prediction's; the prediction must be within 1%
// of its cycles (prediction_vs_rtl_max_error) and the result bit-exact (--no-rtl-sample skips
// it, and a what-if of the buffers has no RTL to run on).
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "../tests/common/random_matrix.hpp"
#include "bench_common.hpp"
#include "nmsa/device.hpp"
#include "nmsa/golden.hpp"
#include "nmsa/sparse_format.hpp"
#include "nmsa/tb/rtl_device.hpp"
#include "production_workloads.hpp"

namespace {

namespace bench = nmsa::bench;

// The layer of each family with the fewest predicted cycles (sparse and dense together), run on
// the RTL of `config` in both modes; each run's cycles against the table's prediction.
// Returns false when a result is not bit-exact.
bool run_rtl_sample(const std::string& config, const nmsa::PerfModelParams& perf,
                    bench::Json& j) {
  std::map<std::string, const bench::Json*> cheapest;
  for (const bench::Json& l : j["layers"]) {
    const std::string family = l["family"];
    const auto cycles = [](const bench::Json& x) {
      return x["sparse_cycles"].get<double>() + x["dense_cycles"].get<double>();
    };
    if (cheapest.count(family) == 0 || cycles(l) < cycles(*cheapest[family])) {
      cheapest[family] = &l;
    }
  }
  nmsa::tb::AxiMemoryConfig memory;
  memory.bytes_per_cycle = j["bytes_per_cycle"].get<double>();
  memory.read_latency = static_cast<unsigned>(perf.dma_read_latency);
  memory.write_latency = static_cast<unsigned>(perf.dma_write_latency);
  memory.max_reads = 64;  // the model assumes the memory takes every burst the DMA issues
  memory.max_writes = 64;
  auto rtl = nmsa::tb::make_rtl_device(config, memory, 1);
  const nmsa::DeviceCaps caps = rtl->caps();
  std::mt19937_64 rng(11);
  bench::Json samples = bench::Json::array();
  double worst = 0;
  bool exact = true;
  std::printf("\nRTL sample on %s: predicted against simulated cycles\n", config.c_str());
  for (const auto& [family, l] : cheapest) {
    const int rows = (*l)["rows"], k = (*l)["k"], n = (*l)["n"];
    const nmsa::MatrixI8 x = nmsa::testing::random_i8(rows, k, rng);
    for (const nmsa::GemmMode mode : {nmsa::GemmMode::SPARSE, nmsa::GemmMode::DENSE}) {
      nmsa::MatrixI8 w = nmsa::testing::random_i8(n, k, rng);
      if (mode == nmsa::GemmMode::SPARSE) w = nmsa::prune_nm_any_k(w, caps.pattern);
      nmsa::GemmOptions options;
      options.mode = mode;
      options.memory = perf;  // the plan the table's prediction is of
      const nmsa::GemmProgram program(caps, x, w, options, rtl->memory());
      const nmsa::DeviceRun run = rtl->run(program.command_address(), program.command_count());
      const bool sparse = mode == nmsa::GemmMode::SPARSE;
      const double predicted = (*l)[sparse ? "sparse_cycles" : "dense_cycles"].get<double>();
      const double error = run.ok() ? std::fabs(predicted - static_cast<double>(run.cycles)) /
                                          static_cast<double>(run.cycles)
                                    : std::numeric_limits<double>::infinity();
      const bool bit_exact = run.ok() && program.read_output() == nmsa::golden::gemm_i8(x, w);
      exact = exact && bit_exact;
      worst = std::max(worst, error);
      std::printf("  %-9s %-20s %-6s %12llu RTL %12.0f predicted %+7.3f%% %s\n", family.c_str(),
                  (*l)["layer"].get<std::string>().c_str(), sparse ? "sparse" : "dense",
                  static_cast<unsigned long long>(run.cycles), predicted,
                  100 * (predicted - static_cast<double>(run.cycles)) /
                      static_cast<double>(std::max<std::uint64_t>(run.cycles, 1)),
                  bit_exact ? "bit-exact" : "WRONG RESULT");
      samples.push_back({{"family", family}, {"layer", (*l)["layer"]},
                         {"mode", sparse ? "sparse" : "dense"}, {"rtl_cycles", run.cycles},
                         {"predicted_cycles", predicted}, {"error", error},
                         {"bit_exact", bit_exact}});
    }
  }
  j["rtl_sample"] = std::move(samples);
  j["prediction_vs_rtl_max_error"] = worst;
  return exact;
}

// The demo's CNN as it ran (make demo's report.json, its second model): accuracies, speedup and
// fallback share under the cnn_ keys; null, with the reason, when there is no such report.
void add_demo_cnn(const std::string& report_path, bench::Json& j) {
  const char* const keys[][2] = {{"cnn_dense_fp32_accuracy", "dense_fp32_accuracy"},
                                 {"cnn_sparse_int8_accuracy", "sparse_int8_accuracy"},
                                 {"cnn_effective_speedup", "effective_speedup"},
                                 {"cnn_fallback_cycle_share", "fallback_cycle_share"}};
  const bench::Json report = bench::read_json_to_merge(report_path);
  const bool present = report.contains("second_model") && report["second_model"].is_object();
  for (const auto& [ours, theirs] : keys) {
    j[ours] = present ? report["second_model"][theirs] : bench::Json(nullptr);
  }
  j["cnn_figures_from"] = present ? report_path + " (make demo: the CNN trained, pruned and run "
                                                  "over the test set)"
                                  : "not measured: no " + report_path + " (run make demo first)";
}

}  // namespace

int main(int argc, char** argv) {
  bench::WorkloadsDevice device{"large"};
  bool rtl_sample = true;
  std::string out = "build/bench/workloads.json";
  std::string demo_report;
  nmsa::PerfModelParams perf;
  CLI::App app{"Production layer shapes: predicted sparse and dense cycles on one configuration"};
  app.add_option("--config", device.config, "configuration of rtl/configs.json (default large)");
  app.add_option("--act-entries", device.act_entries,
                 "activation buffer entries instead of the configuration's (a what-if)")
      ->check(CLI::Range(1, 1 << 20));
  app.add_option("--wgt-records", device.wgt_records,
                 "weight buffer records instead of the configuration's (a what-if)")
      ->check(CLI::Range(1, 1 << 20));
  app.add_option("--bytes-per-cycle", perf.dma_bytes_per_cycle,
                 "host memory bandwidth (default: one AXI beat per cycle)")
      ->check(CLI::Range(0.0, 1024.0));
  app.add_option("--out", out, "result file");
  app.add_option("--demo-report", demo_report,
                 "make demo's report.json: its CNN figures go into the file as cnn_* keys");
  app.add_flag("!--no-rtl-sample", rtl_sample,
               "predictions only: no layer of each family on the Verilated accelerator");
  if (const int rc = bench::parse_options(app, argc, argv); rc >= 0) return rc;
  try {
    const nmsa::DeviceCaps caps =
        bench::workloads_caps(nmsa::make_model_device(device.config)->caps(), device);
    bench::Json j = bench::production_workloads(caps, device, perf);
    if (!demo_report.empty()) add_demo_cnn(demo_report, j);
    std::printf("production shapes on %s, host memory %.1f B/cycle, read latency %d cycles "
                "(predicted by the cycle model)\n\n",
                caps.describe().c_str(), j["bytes_per_cycle"].get<double>(),
                perf.dma_read_latency);
    std::printf("%-9s %-20s %6s %6s %6s %12s %12s %8s %7s %12s %6s %-8s\n", "family", "layer",
                "rows", "K", "N", "sparse cyc", "dense cyc", "speedup", "util", "bytes (sp)",
                "meta", "bound");
    for (const bench::Json& l : j["layers"]) {
      std::printf("%-9s %-20s %6lld %6lld %6lld %12llu %12llu %7.2fx %6.1f%% %12llu %5.1f%% %-8s\n",
                  l["family"].get<std::string>().c_str(), l["layer"].get<std::string>().c_str(),
                  l["rows"].get<long long>(), l["k"].get<long long>(), l["n"].get<long long>(),
                  l["sparse_cycles"].get<unsigned long long>(),
                  l["dense_cycles"].get<unsigned long long>(), l["speedup"].get<double>(),
                  100 * l["sparse_utilization"].get<double>(),
                  l["sparse_dma_bytes"].get<unsigned long long>(),
                  100 * l["meta_share"].get<double>(), l["sparse_bound"].get<std::string>().c_str());
    }
    for (const char* family : {"bert_encoder", "resnet50"}) {
      const std::string key = std::string(family) + "_speedup_" + device.config;
      if (j.contains(key)) {
        std::printf("\n%s, the listed layers times their count: dense / sparse cycles = %.2fx",
                    family, j[key].get<double>());
      }
    }
    std::printf("\n");
    std::vector<bench::Target> targets{
        {"sparse_weight_bytes_over_dense_max",
         j["sparse_weight_bytes_over_dense_max"].get<double>(), 0.75, false}};
    bool exact = true;
    if (rtl_sample && device.act_entries == 0 && device.wgt_records == 0) {
      exact = run_rtl_sample(device.config, perf, j);
      targets.push_back({"prediction_vs_rtl_max_error",
                         j["prediction_vs_rtl_max_error"].get<double>(), 0.01, false});
    }
    const int missed = bench::print_targets(targets);
    j["targets"] = bench::targets_json(targets);
    bench::write_json(out, j);
    return bench::exit_code(exact, missed);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "nmsa_bench_workloads: %s\n", e.what());
    return bench::kExitUsage;
  }
}
