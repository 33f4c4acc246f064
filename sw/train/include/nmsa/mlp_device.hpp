// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// Runs an Int8Mlp (int8_mlp.hpp) on an nmsa::Device, one batch at a time: one GemmProgram per
// layer, each layer's INT8 output the next layer's input, the last layer's INT32 accumulators
// returned. A batch's latency is the sum of its layers' device cycles (START to done of each
// program); the host's time between programs (compiling, reading back) is not device time and is
// not counted. Works on every backend: the Verilated RTL (cycles measured) and the functional
// model (no clock: cycles 0), with identical results.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "nmsa/device.hpp"
#include "nmsa/gemm_program.hpp"
#include "nmsa/int8_mlp.hpp"

namespace nmsa {

// One layer of one batch, from the device's performance counters.
struct LayerRunStats {
  std::uint64_t cycles = 0;          // START to done
  std::uint64_t compute_cycles = 0;  // cycles the array issued beats
  std::uint64_t dma_stall_cycles = 0;
  std::uint64_t macs = 0;            // dense-equivalent MACs
  std::uint64_t tiles_sparse = 0;
  std::uint64_t tiles_dense = 0;
  std::uint64_t dma_rd_bytes = 0;
  std::uint64_t dma_wr_bytes = 0;
  std::uint64_t meta_bytes = 0;
  void add(const LayerRunStats& o);
};

struct BatchResult {
  MatrixI32 accumulators;  // the last layer's [rows x classes]
  std::vector<LayerRunStats> layers;
  std::uint64_t cycles() const;  // all layers
};

class MlpDeviceRunner {
 public:
  // `memory` describes the host memory for the compiler's plan choice (GemmOptions::memory).
  // The device and the model must outlive the runner.
  MlpDeviceRunner(Device& device, const Int8Mlp& model, const PerfModelParams& memory = {});

  // Runs one batch (rows of INT8 input). Throws std::runtime_error naming the device, the layer
  // and the error when the device reports one, or when a layer cannot be compiled.
  BatchResult run(const MatrixI8& x);

 private:
  GemmOptions layer_options(std::size_t layer) const;
  const TilingPlan& plan_for(std::size_t layer, Eigen::Index rows);

  Device* device_;
  const Int8Mlp* model_;
  DeviceCaps caps_;
  PerfModelParams memory_;
  // The plan of each (layer, batch rows): chosen once, as plan choice runs the cycle model.
  std::map<std::pair<std::size_t, Eigen::Index>, TilingPlan> plans_;
};

// The predicted cycles of one batch of `rows` rows of a network of the given layer sizes with
// every layer in `mode`, on a device with `caps` and host memory `memory`; for sizing a model to
// a latency budget before training it.
std::uint64_t predict_mlp_batch_cycles(const DeviceCaps& caps, const std::vector<int>& sizes,
                                       Eigen::Index rows, GemmMode mode,
                                       const PerfModelParams& memory = {});

}  // namespace nmsa
