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
// --act-entries / --wgt-records predict the same layers with other buffer capacities (a what-if
// of the hardware, recorded in the file, that nmsa triage compares as another configuration).
#include <cstdio>
#include <string>
#include <vector>

#include "bench_common.hpp"
#include "nmsa/device.hpp"
#include "production_workloads.hpp"

int main(int argc, char** argv) {
  namespace bench = nmsa::bench;
  bench::WorkloadsDevice device{"large"};
  std::string out = "build/bench/workloads.json";
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
  if (const int rc = bench::parse_options(app, argc, argv); rc >= 0) return rc;
  try {
    const nmsa::DeviceCaps caps =
        bench::workloads_caps(nmsa::make_model_device(device.config)->caps(), device);
    const bench::Json j = bench::production_workloads(caps, device, perf);
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
    const std::vector<bench::Target> targets{
        {"sparse_weight_bytes_over_dense_max",
         j["sparse_weight_bytes_over_dense_max"].get<double>(), 0.75, false}};
    const int missed = bench::print_targets(targets);
    bench::Json file = j;
    file["targets"] = bench::targets_json(targets);
    bench::write_json(out, file);
    return bench::exit_code(true, missed);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "nmsa_bench_workloads: %s\n", e.what());
    return bench::kExitUsage;
  }
}
