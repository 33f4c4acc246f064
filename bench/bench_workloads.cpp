// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// Production layer shapes: BERT-base encoder GEMMs at sequence length 128 and ResNet-50's
// convolutions (batch 1, 224 x 224, lowered by im2col as the runtime lowers a Conv:
// rows = output pixels, K = input channels x kernel window, N = output channels), sparse (2:4) and
// dense on one configuration (default `large`, 16 x 16). Every figure is the compiler's cycle
// prediction for the program it would emit (estimate_gemm: the same plan, the same command
// stream), not an RTL run; the runtime benchmark holds the prediction against the RTL. Per layer:
// cycles of both modes, effective speedup, utilization, bytes moved, metadata share and what
// bounds it (compute or DMA, whichever the prediction's busy time is; "overhead" when neither
// fills 80% of the cycles). Writes build/bench/workloads.json. Target: each sparse program's
// weight bytes are at most 3/4 of the dense one's (2:4 halves the values and adds 1/8 of the
// dense bytes as metadata, plus record padding). Speedups are reported, not targets: where the
// layer is bound by host memory, sparse gains shrink to the bytes ratio or vanish.
#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "bench_common.hpp"
#include "nmsa/bandwidth_lens.hpp"
#include "nmsa/device.hpp"
#include "nmsa/gemm_program.hpp"

namespace {

// BERT-base and ResNet-50: the production families of the bandwidth lens's workloads.
std::vector<nmsa::LensLayer> layers() {
  std::vector<nmsa::LensLayer> l;
  for (const nmsa::LensLayer& layer : nmsa::lens_workloads()) {
    if (layer.family == "bert" || layer.family == "resnet50") l.push_back(layer);
  }
  return l;
}

const char* bound_of(const nmsa::CyclePrediction& p) {
  const double busy = static_cast<double>(std::max(p.compute_cycles, p.dma_cycles));
  if (busy < 0.8 * static_cast<double>(p.total)) return "overhead";
  return p.dma_cycles > p.compute_cycles ? "dma" : "compute";
}

}  // namespace

int main(int argc, char** argv) {
  namespace bench = nmsa::bench;
  std::string config = "large";
  std::string out = "build/bench/workloads.json";
  double bytes_per_cycle = 0;
  CLI::App app{"Production layer shapes: predicted sparse and dense cycles on one configuration"};
  app.add_option("--config", config, "configuration of rtl/configs.json (default large)");
  app.add_option("--bytes-per-cycle", bytes_per_cycle,
                 "host memory bandwidth (default: one AXI beat per cycle)")
      ->check(CLI::Range(0.0, 1024.0));
  app.add_option("--out", out, "result file");
  if (const int rc = bench::parse_options(app, argc, argv); rc >= 0) return rc;
  try {
    const nmsa::DeviceCaps caps = nmsa::make_model_device(config)->caps();
    nmsa::PerfModelParams perf;
    perf.dma_bytes_per_cycle = bytes_per_cycle;
    std::printf("production shapes on %s, host memory %s B/cycle, read latency %d cycles "
                "(predicted by the cycle model)\n\n",
                caps.describe().c_str(),
                bytes_per_cycle > 0 ? std::to_string(bytes_per_cycle).c_str() : "AXI beat",
                perf.dma_read_latency);
    std::printf("%-9s %-20s %6s %6s %6s %12s %12s %8s %7s %12s %6s %-8s\n", "family", "layer",
                "rows", "K", "N", "sparse cyc", "dense cyc", "speedup", "util", "bytes (sp)",
                "meta", "bound");
    bench::Json j;
    bench::Json rows = bench::Json::array();
    std::map<std::string, std::pair<double, double>> network;  // family -> (sparse, dense) cycles
    double worst_weight_ratio = 0;
    for (const nmsa::LensLayer& l : layers()) {
      nmsa::GemmOptions options;
      options.mode = nmsa::GemmMode::SPARSE;
      const nmsa::GemmEstimate s = nmsa::estimate_gemm(caps, l.rows, l.k, l.n, options, perf);
      options.mode = nmsa::GemmMode::DENSE;
      const nmsa::GemmEstimate d = nmsa::estimate_gemm(caps, l.rows, l.k, l.n, options, perf);
      const double speedup =
          static_cast<double>(d.cycles.total) / static_cast<double>(s.cycles.total);
      const double meta_share = static_cast<double>(s.stats.meta_bytes) /
                                static_cast<double>(std::max<std::uint64_t>(s.stats.dma_bytes(), 1));
      const double weight_ratio = static_cast<double>(s.stats.weight_bytes) /
                                  static_cast<double>(d.stats.weight_bytes);
      worst_weight_ratio = std::max(worst_weight_ratio, weight_ratio);
      if (l.name == "ffn_up") j["bert_ffn_speedup_" + config] = speedup;
      network[l.family].first += static_cast<double>(s.cycles.total) * l.count;
      network[l.family].second += static_cast<double>(d.cycles.total) * l.count;
      std::printf("%-9s %-20s %6lld %6lld %6lld %12llu %12llu %7.2fx %6.1f%% %12llu %5.1f%% %-8s\n",
                  l.family.c_str(), l.name.c_str(), static_cast<long long>(l.rows),
                  static_cast<long long>(l.k), static_cast<long long>(l.n),
                  static_cast<unsigned long long>(s.cycles.total),
                  static_cast<unsigned long long>(d.cycles.total), speedup,
                  100 * s.cycles.utilization(),
                  static_cast<unsigned long long>(s.stats.dma_bytes()), 100 * meta_share,
                  bound_of(s.cycles));
      rows.push_back({{"family", l.family}, {"layer", l.name}, {"rows", l.rows}, {"k", l.k},
                      {"n", l.n}, {"count", l.count}, {"sparse_cycles", s.cycles.total},
                      {"dense_cycles", d.cycles.total}, {"speedup", speedup},
                      {"sparse_utilization", s.cycles.utilization()},
                      {"dense_utilization", d.cycles.utilization()},
                      {"sparse_dma_bytes", s.stats.dma_bytes()},
                      {"dense_dma_bytes", d.stats.dma_bytes()},
                      {"meta_share", meta_share}, {"sparse_bound", bound_of(s.cycles)},
                      {"dense_bound", bound_of(d.cycles)}});
    }
    j["config"] = config;
    j["figures_from"] = "cycle model prediction";
    j["layers"] = rows;
    for (const auto& [family, c] : network) {
      const double ratio = c.second / c.first;
      std::printf("\n%s, the listed layers times their count: dense / sparse cycles = %.2fx",
                  family.c_str(), ratio);
      j[(family == "bert" ? std::string("bert_encoder") : family) + "_speedup_" + config] = ratio;
    }
    std::printf("\n");
    const std::vector<bench::Target> targets{
        {"sparse_weight_bytes_over_dense_max", worst_weight_ratio, 0.75, false}};
    const int missed = bench::print_targets(targets);
    j["targets"] = bench::targets_json(targets);
    bench::write_json(out, j);
    return bench::exit_code(true, missed);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "nmsa_bench_workloads: %s\n", e.what());
    return bench::kExitUsage;
  }
}
