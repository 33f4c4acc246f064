// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// The demo's second model (docs/demo.md, "The second model: a CNN"): a small convolutional
// network on the same Fashion-MNIST split, trained dense, pruned 2:4 by the gradual schedule on
// every layer whose K fills N:M groups (its first convolution, K = 9, stays dense by rule) and
// that passes the quality gate the MLP's layers pass, beside
// a dense control trained as long. Both run through the runtime as a user runs the exported model
// (`nmsa run cnn.onnx`), statically calibrated in ONNX's QDQ form as the MLP is: every Conv and
// Gemm one device GEMM from INT8 to INT8, pooling on the INT8 maps on the host. The whole test
// set runs on the functional model, cycles from its cycle model; an evenly spaced subset of the
// batches runs on the RTL too, which must agree with it bit for bit and cycle for cycle.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nmsa/cnn.hpp"
#include "nmsa/cycle_model.hpp"
#include "nmsa/report.hpp"
#include "nmsa/tb/axi.hpp"
#include "recipes.hpp"

namespace nmsa::demo {

struct CnnDemoOptions {
  std::string config = "default";
  std::string cache;       // the trained-model cache directory
  int epochs = 8;          // dense training
  int finetune_epochs = 4;  // pruning (gradual) and, equally, the control's fine-tuning
  int batch = 100;
  // The static INT8 calibration, as the MLP's: each layer's input scale from the first
  // calibration_rows validation images at the percentile of |x| (calibrate_cnn_input_scales).
  int calibration_rows = 2000;
  double calibration_percentile = 99.99;
  int rtl_batches = 10;    // batches also run on the RTL, evenly spaced over the test set
  // The quality gate, as the MLP's: each prunable layer pruned alone and fine-tuned for
  // gate_epochs; one that loses more than gate_threshold_pp of validation accuracy against an
  // unpruned control fine-tuned alike stays dense.
  int gate_epochs = 1;
  double gate_threshold_pp = 0.5;
  int threads = 2;
  std::uint64_t seed = 1;
};

// The network: two 3x3 convolution blocks (24 and 48 channels) with 2x2 max pooling, then a
// hidden Linear layer of 128.
CnnShape demo_cnn_shape();

struct CnnDemoResult {
  SecondModelReport report;
  Cnn deployed;  // the pruned model, for its ONNX export
  std::vector<float> input_scales;  // its calibration (serialize_int8_cnn_onnx)
  std::string shape_name;
  int models_trained = 0;
  int models_from_cache = 0;
};

// Trains (or takes from the cache), prunes and runs the CNN; `memory` is the host memory of the
// RTL runs (without random read gaps, so that the cycle model's prediction is exact against it)
// and `perf` the same memory for the cycle model.
CnnDemoResult run_cnn_demo(const Data& data, const CnnDemoOptions& options,
                           const tb::AxiMemoryConfig& memory, const PerfModelParams& perf);

}  // namespace nmsa::demo
