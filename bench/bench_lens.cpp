// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// The bandwidth lens as a benchmark (docs/bandwidth.md): every workload family sparse and dense
// over host-memory bandwidth, AXI width and read latency, predicted by the cycle model. Writes
// build/bench/lens.json: each family's knee (the bandwidth from which it is compute-bound) per
// mode, its speedup there, memory-bound and compute-bound, and the headline keys of the demo's
// MLP. Targets, which hold for any correct memory model: a memory-bound speedup is the ratio of
// bytes moved (within 5%), sparse never needs less bandwidth than dense to be compute-bound, and
// the MLP keeps 2:4's gain (>= 1.8x) once compute-bound.
#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_common.hpp"
#include "nmsa/bandwidth_lens.hpp"
#include "nmsa/device.hpp"

int main(int argc, char** argv) {
  namespace bench = nmsa::bench;
  std::string config = "default";
  std::string out = "build/bench/lens.json";
  nmsa::LensSettings settings;
  CLI::App app{"The bandwidth lens: sparse gains against host memory (cycle model)"};
  app.add_option("--config", config, "configuration of rtl/configs.json (default default)");
  app.add_option("--family", settings.families,
                 "workload families (default all: mlp cnn bert resnet50; mlp must be one)");
  app.add_option("--out", out, "result file");
  if (const int rc = bench::parse_options(app, argc, argv); rc >= 0) return rc;
  try {
    const nmsa::DeviceCaps caps = nmsa::make_model_device(config)->caps();
    const nmsa::LensResult r = nmsa::run_bandwidth_lens(caps, settings);
    std::printf("bandwidth lens on %s (cycle-model predictions)\n\n", r.device.c_str());
    std::printf("%-9s %12s %12s %9s %9s %9s %8s\n", "family", "knee sparse", "knee dense",
                "at knee", "compute", "memory", "bytes");
    double worst_memory_bound = 0;  // memory-bound speedup over the bytes ratio, furthest from 1
    double least_knee_ratio = 1e9;  // sparse knee over dense knee
    for (const nmsa::LensFamily& f : r.families) {
      std::printf("%-9s %8.0f B/c %8.0f B/c %8.2fx %8.2fx %8.2fx %7.2fx\n", f.family.c_str(),
                  f.knee_sparse, f.knee_dense, f.speedup_at_knee, f.speedup_compute_bound,
                  f.speedup_memory_bound, f.bytes_ratio);
      const double off = f.speedup_memory_bound / f.bytes_ratio;
      worst_memory_bound = std::max({worst_memory_bound, off, 1.0 / off});
      least_knee_ratio = std::min(least_knee_ratio, f.knee_sparse / f.knee_dense);
    }
    if (r.families.empty() || r.families.front().family != "mlp") {
      throw std::invalid_argument("--family: the headline figures are the MLP's; include mlp");
    }
    const nmsa::LensFamily& mlp = r.families.front();  // lens_workloads() lists the MLP first
    bench::Json j = bench::Json::parse(nmsa::lens_json(r));
    j["config"] = config;
    j["knee_bytes_per_cycle_sparse"] = mlp.knee_sparse;
    j["knee_bytes_per_cycle_dense"] = mlp.knee_dense;
    j["speedup_at_knee"] = mlp.speedup_at_knee;
    j["speedup_memory_bound"] = mlp.speedup_memory_bound;
    const std::vector<bench::Target> targets{
        {"memory_bound_speedup_over_bytes_ratio", worst_memory_bound, 1.05, false},
        {"sparse_knee_over_dense_knee_min", least_knee_ratio, 1.0, true},
        {"mlp_compute_bound_speedup", mlp.speedup_compute_bound, 1.8, true}};
    const int missed = bench::print_targets(targets);
    j["targets"] = bench::targets_json(targets);
    bench::write_json(out, j);
    return bench::exit_code(true, missed);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "nmsa_bench_lens: %s\n", e.what());
    return bench::kExitUsage;
  }
}
