// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// The bandwidth lens (`nmsa sweep`, docs/bandwidth.md): where 2:4 gains hold and where host memory
// takes them away. For each workload family (the demo's MLP, a Fashion-MNIST CNN lowered by
// im2col, BERT-base encoder GEMMs, ResNet-50 convolutions) the compiler's cycle prediction of
// every layer, sparse and dense, over a grid of host-memory bandwidths, AXI data widths and read
// latencies. Every figure is a cycle-model prediction (exact against the RTL in the regression),
// not an RTL run: the sweep prices thousands of programs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nmsa/device_caps.hpp"

namespace nmsa {

// One GEMM of a workload: rows x K x N, `count` times per inference of the network.
struct LensLayer {
  std::string family;  // "mlp", "cnn", "bert", "resnet50"
  std::string name;
  std::int64_t rows = 0, k = 0, n = 0;
  int count = 1;
  // INT8 out through the epilogue (requantization and ReLU), as a layer that feeds another runs;
  // a network's last layer returns INT32 accumulators.
  bool int8_out = true;
};

// The layers of every family (rows for the batch each family states in its name).
std::vector<LensLayer> lens_workloads();

struct LensSettings {
  std::vector<double> bytes_per_cycle{1, 2, 4, 8, 16, 32, 64};  // host memory, shared by R and W
  std::vector<int> read_latency{50, 100, 200, 500, 1000};      // cycles from AR to the first beat
  std::vector<int> axi_data_w{32, 64};                          // the widths the RTL builds
  int base_latency = 100;             // the latency of the bandwidth sweep
  double base_bytes_per_cycle = 8;    // the bandwidth of the latency sweep
  std::vector<std::string> families;  // empty: all
};

// A family at one memory setting: the sum over its layers (times their count).
struct LensPoint {
  std::string family;
  double bytes_per_cycle = 0;
  int read_latency = 0;
  int axi_data_w = 0;
  std::uint64_t sparse_cycles = 0, dense_cycles = 0;
  std::uint64_t sparse_bytes = 0, dense_bytes = 0;  // DMA bytes, reads and writes
  double sparse_utilization = 0, dense_utilization = 0;
  std::string sparse_bound, dense_bound;  // "compute", "memory" or "overhead"
  double speedup() const;                 // dense cycles / sparse cycles
};

// What the sweep says of a family, at the device's own AXI width.
struct LensFamily {
  std::string family;
  double bytes_ratio = 0;  // dense DMA bytes / sparse DMA bytes: the memory-bound speedup limit
  // The knee: the lowest swept bandwidth from which cycles stay within 5% of the cycles at the
  // highest one (the compute-bound regime begins), per mode.
  double knee_sparse = 0, knee_dense = 0;
  double speedup_at_knee = 0;         // at the sparse knee
  double speedup_compute_bound = 0;   // at the highest bandwidth
  double speedup_memory_bound = 0;    // at the lowest bandwidth
  // The highest swept bandwidth at which sparse gains less than 10% (0: none vanish).
  double vanishes_below = 0;
};

struct LensResult {
  std::string device;  // DeviceCaps::describe()
  LensSettings settings;
  std::vector<LensPoint> bandwidth;  // family x AXI width x bandwidth, at base_latency
  std::vector<LensPoint> latency;    // family x latency, at base_bytes_per_cycle, device AXI width
  std::vector<LensFamily> families;
};

// Throws std::invalid_argument for an unknown family or an empty or non-positive grid.
LensResult run_bandwidth_lens(const DeviceCaps& caps, const LensSettings& settings = {});

std::string lens_json(const LensResult& r);
// A stand-alone page: the summary table, speedup and utilization against bandwidth, speedup
// against latency (inline SVG, no script or resource from the network).
std::string lens_html(const LensResult& r);
// The speedup-against-bandwidth figure alone, for the deployment report.
std::string lens_speedup_svg(const LensResult& r);

}  // namespace nmsa
