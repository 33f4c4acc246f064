// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
#include "nmsa/mlp_device.hpp"

#include <optional>
#include <stdexcept>

#include "nmsa/regs.hpp"

namespace nmsa {

void LayerRunStats::add(const LayerRunStats& o) {
  cycles += o.cycles;
  compute_cycles += o.compute_cycles;
  dma_stall_cycles += o.dma_stall_cycles;
  macs += o.macs;
  tiles_sparse += o.tiles_sparse;
  tiles_dense += o.tiles_dense;
  dma_rd_bytes += o.dma_rd_bytes;
  dma_wr_bytes += o.dma_wr_bytes;
  meta_bytes += o.meta_bytes;
}

std::uint64_t BatchResult::cycles() const {
  std::uint64_t total = 0;
  for (const auto& l : layers) total += l.cycles;
  return total;
}

MlpDeviceRunner::MlpDeviceRunner(Device& device, const Int8Mlp& model,
                                 const PerfModelParams& memory)
    : device_(&device), model_(&model), caps_(device.caps()), memory_(memory) {
  if (model.layers.empty()) throw std::invalid_argument("MlpDeviceRunner: the model has no layers");
  for (const auto& l : model.layers) {
    if (l.mode == GemmMode::SPARSE && !caps_.sparse_supported) {
      throw std::invalid_argument("MlpDeviceRunner: layer " + l.name + " is sparse but device " +
                                  device.name() + " has no sparse mode");
    }
  }
}

GemmOptions MlpDeviceRunner::layer_options(std::size_t layer) const {
  const Int8MlpLayer& l = model_->layers[layer];
  GemmOptions o;
  o.mode = l.mode;
  if (!l.last) {
    o.epilogue = l.epilogue;
    o.relu = true;
  }
  o.memory = memory_;
  return o;
}

const TilingPlan& MlpDeviceRunner::plan_for(std::size_t layer, Eigen::Index rows) {
  const auto key = std::make_pair(layer, rows);
  auto it = plans_.find(key);
  if (it == plans_.end()) {
    const Int8MlpLayer& l = model_->layers[layer];
    const GemmEstimate e = estimate_gemm(caps_, rows, l.weights.cols(), l.weights.rows(),
                                         layer_options(layer), memory_);
    it = plans_.emplace(key, e.plan).first;
  }
  return it->second;
}

BatchResult MlpDeviceRunner::run(const MatrixI8& x) {
  BatchResult result;
  MatrixI8 a = x;
  HostMemory& mem = device_->memory();
  for (std::size_t i = 0; i < model_->layers.size(); ++i) {
    const Int8MlpLayer& l = model_->layers[i];
    GemmOptions o = layer_options(i);
    o.plan = plan_for(i, a.rows());
    std::optional<GemmProgram> program;
    try {
      program.emplace(caps_, a, l.weights, o, mem);
    } catch (const std::exception& e) {
      throw std::runtime_error("layer " + l.name + ": cannot compile for " + device_->name() +
                               ": " + e.what());
    }
    const DeviceRun r = device_->run(program->command_address(), program->command_count());
    if (!r.ok()) {
      throw std::runtime_error("layer " + l.name + ": device " + device_->name() + ": " +
                               r.describe());
    }
    namespace rg = regs;
    LayerRunStats s;
    s.cycles = r.cycles;
    s.compute_cycles = r.counter(rg::CYCLES_COMPUTE_LO_OFFSET);
    s.dma_stall_cycles = r.counter(rg::CYCLES_DMA_STALL_LO_OFFSET);
    s.macs = r.counter(rg::MACS_LO_OFFSET);
    s.tiles_sparse = r.counter(rg::TILES_SPARSE_LO_OFFSET);
    s.tiles_dense = r.counter(rg::TILES_DENSE_LO_OFFSET);
    s.dma_rd_bytes = r.counter(rg::DMA_RD_BYTES_LO_OFFSET);
    s.dma_wr_bytes = r.counter(rg::DMA_WR_BYTES_LO_OFFSET);
    s.meta_bytes = r.counter(rg::META_BYTES_LO_OFFSET);
    result.layers.push_back(s);
    MatrixI32 out = program->read_output();
    mem.clear();  // the program's pages; the allocator moves on, so addresses never repeat
    if (l.last) {
      result.accumulators = std::move(out);
    } else {
      a = to_int8(out);
    }
  }
  return result;
}

std::uint64_t predict_mlp_batch_cycles(const DeviceCaps& caps, const std::vector<int>& sizes,
                                       Eigen::Index rows, GemmMode mode,
                                       const PerfModelParams& memory) {
  if (sizes.size() < 2) throw std::invalid_argument("predict_mlp_batch_cycles: fewer than 2 sizes");
  std::uint64_t total = 0;
  for (std::size_t i = 0; i + 1 < sizes.size(); ++i) {
    GemmOptions o;
    o.mode = mode;
    o.memory = memory;
    const bool last = i + 2 == sizes.size();
    if (!last) {
      o.epilogue = EpilogueParams::identity(static_cast<std::size_t>(sizes[i + 1]));
      o.relu = true;
    }
    total += estimate_gemm(caps, rows, sizes[i], sizes[i + 1], o, memory).cycles.total;
  }
  return total;
}

}  // namespace nmsa
