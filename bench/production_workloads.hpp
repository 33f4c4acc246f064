// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// The production layer shapes of the bandwidth lens's BERT-base and ResNet-50 families, predicted
// sparse (2:4) and dense by the cycle model on one device, as build/bench/workloads.json holds
// them. nmsa_bench_workloads writes it; nmsa_bench_triage builds measured regressions from it
// (another host memory, smaller buffers) for nmsa triage.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "bench_common.hpp"
#include "nmsa/bandwidth_lens.hpp"
#include "nmsa/gemm_program.hpp"

namespace nmsa::bench {

// What bounds a predicted program: compute or DMA, whichever busy time is longer; "overhead"
// when neither fills 80% of the cycles.
inline const char* bound_of(const CyclePrediction& p) {
  const double busy = static_cast<double>(std::max(p.compute_cycles, p.dma_cycles));
  if (busy < 0.8 * static_cast<double>(p.total)) return "overhead";
  return p.dma_cycles > p.compute_cycles ? "dma" : "compute";
}

// The device a workloads file was predicted on: a configuration of rtl/configs.json, with its
// activation and weight buffers replaced when a what-if asks for other capacities (0: the
// configuration's own).
struct WorkloadsDevice {
  std::string config;
  std::uint32_t act_entries = 0;
  std::uint32_t wgt_records = 0;
};

inline DeviceCaps workloads_caps(const DeviceCaps& configured, const WorkloadsDevice& d) {
  DeviceCaps caps = configured;
  if (d.act_entries > 0) caps.act_entries = d.act_entries;
  if (d.wgt_records > 0) caps.wgt_records = d.wgt_records;
  return caps;
}

// workloads.json for the caps and host memory given: the layers with both modes' cycles,
// speedup, utilization, bytes, metadata share and bound, and per family the speedup of the
// listed layers times their count. The figures are the compiler's predictions (estimate_gemm:
// the plan and command stream it would emit), not RTL runs.
inline Json production_workloads(const DeviceCaps& caps, const WorkloadsDevice& device,
                                 const PerfModelParams& perf) {
  Json j;
  j["config"] = device.config;
  j["act_entries"] = caps.act_entries;
  j["wgt_records"] = caps.wgt_records;
  j["bytes_per_cycle"] =
      perf.dma_bytes_per_cycle > 0 ? perf.dma_bytes_per_cycle : static_cast<double>(caps.axi_bytes());
  j["read_latency_cycles"] = perf.dma_read_latency;
  j["figures_from"] = "cycle model prediction";
  Json rows = Json::array();
  std::map<std::string, std::pair<double, double>> network;  // family -> (sparse, dense) cycles
  double worst_weight_ratio = 0;
  for (const LensLayer& l : lens_workloads()) {
    if (l.family != "bert" && l.family != "resnet50" && l.family != "cnn") continue;
    GemmOptions options;
    options.memory = perf;  // plans chosen for this memory, as a program compiled for it
    options.mode = GemmMode::SPARSE;
    const GemmEstimate s = estimate_gemm(caps, l.rows, l.k, l.n, options, perf);
    options.mode = GemmMode::DENSE;
    const GemmEstimate d = estimate_gemm(caps, l.rows, l.k, l.n, options, perf);
    const double speedup =
        static_cast<double>(d.cycles.total) / static_cast<double>(s.cycles.total);
    const double meta_share = static_cast<double>(s.stats.meta_bytes) /
                              static_cast<double>(std::max<std::uint64_t>(s.stats.dma_bytes(), 1));
    // A K shorter than one sparse tile (Rows x M) is padded to it, and its sparse records then
    // carry as many bytes as the dense ones: the weight-bytes target holds for the other layers.
    const bool fills_sparse_tile = l.k >= std::int64_t{caps.rows} * caps.pattern.m;
    if (fills_sparse_tile) {
      worst_weight_ratio =
          std::max(worst_weight_ratio, static_cast<double>(s.stats.weight_bytes) /
                                           static_cast<double>(d.stats.weight_bytes));
    }
    if (l.name == "ffn_up") j["bert_ffn_speedup_" + device.config] = speedup;
    network[l.family].first += static_cast<double>(s.cycles.total) * l.count;
    network[l.family].second += static_cast<double>(d.cycles.total) * l.count;
    rows.push_back({{"family", l.family}, {"layer", l.name}, {"rows", l.rows}, {"k", l.k},
                    {"n", l.n}, {"count", l.count}, {"sparse_cycles", s.cycles.total},
                    {"dense_cycles", d.cycles.total}, {"speedup", speedup},
                    {"sparse_utilization", s.cycles.utilization()},
                    {"dense_utilization", d.cycles.utilization()},
                    {"sparse_dma_bytes", s.stats.dma_bytes()},
                    {"dense_dma_bytes", d.stats.dma_bytes()},
                    {"sparse_weight_bytes", s.stats.weight_bytes},
                    {"sparse_meta_bytes", s.stats.meta_bytes},
                    {"dense_weight_bytes", d.stats.weight_bytes},
                    {"k_fills_sparse_tile", fills_sparse_tile},
                    {"meta_share", meta_share}, {"sparse_bound", bound_of(s.cycles)},
                    {"dense_bound", bound_of(d.cycles)}});
  }
  j["layers"] = std::move(rows);
  for (const auto& [family, c] : network) {
    j[(family == "bert" ? std::string("bert_encoder") : family) + "_speedup_" + device.config] =
        c.second / c.first;
  }
  j["sparse_weight_bytes_over_dense_max"] = worst_weight_ratio;
  return j;
}

}  // namespace nmsa::bench
