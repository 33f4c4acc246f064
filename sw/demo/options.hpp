// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// nmsa_demo's command line (`nmsa_demo --help`; docs/demo.md).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

namespace nmsa::demo {

struct DemoOptions {
  std::string config = "default";
  std::string out = "build/report";
  std::string cache = "build/demo-cache";
  int epochs = 10;
  int finetune_epochs = -1;
  int gate_epochs = 1;
  double gate_threshold_pp = 0.5;
  int train_images = 0;
  int val_images = 5000;
  int test_images = 0;
  int batch = 100;
  int calibration_images = 2000;
  double clock_mhz = 0.0;  // 0: the measured Fmax
  std::uint64_t seed = 1;
  int threads = 0;
  int wide_rtl_batches = 20;
  // Tail latency under contention: batches per load and mode, and the background loads.
  int contention_batches = 10;
  std::vector<double> contention_loads{0.25, 0.5, 0.75};
  // The regressed workload beside its comparator: batches, and its host memory's bandwidth.
  int workload_batches = 5;
  double regressed_bytes_per_cycle = 2.0;
  // The second model (a CNN): dense epochs, fine-tuning epochs of its pruned model and of its
  // control, and batches also run on the RTL.
  int cnn_epochs = 8;
  int cnn_finetune_epochs = 4;
  int cnn_rtl_batches = 10;
  bool quick = false;
};

// Bad input found after the options were parsed (an unknown configuration, missing data).
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The options, or the exit code to end with (--help, or a bad option with CLI11's message).
std::variant<DemoOptions, int> parse_options(int argc, char** argv);

}  // namespace nmsa::demo
