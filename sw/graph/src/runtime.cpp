// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// A run of a Runtime: the inputs checked against the graph, then every node in topological order
// as its plan says: device GEMMs (gemm_lowering.hpp) with their fused steps, host kernels
// (host_kernels.hpp) for the rest.
#include "nmsa/runtime.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>

#include "gemm_lowering.hpp"
#include "host_kernels.hpp"
#include "layer_chain.hpp"
#include "runtime_plan.hpp"
#include "runtime_values.hpp"

namespace nmsa {

using namespace graph_detail;

namespace {

void check_inputs(const Graph& g, const std::map<std::string, Tensor>& inputs) {
  const std::string model = g.source.empty() ? "model" : g.source;
  for (const auto& [name, t] : inputs) {
    const bool known = std::any_of(g.inputs.begin(), g.inputs.end(),
                                   [&](const ValueInfo& v) { return v.name == name; });
    if (!known) throw std::runtime_error(model + ": '" + name + "' is not an input of the graph");
    t.validate(model + ": input '" + name + "'");
  }
  for (const ValueInfo& v : g.inputs) {
    const auto it = inputs.find(v.name);
    if (it == inputs.end()) throw std::runtime_error(model + ": input '" + v.name + "' is missing");
    const Tensor& t = it->second;
    if (v.type && *v.type != t.type) {
      throw std::runtime_error(model + ": input '" + v.name + "' is " + t.describe() +
                               ", the model declares " + std::string(to_string(*v.type)));
    }
    if (v.shape) {
      bool ok = v.shape->size() == t.shape.size();
      for (std::size_t d = 0; ok && d < t.shape.size(); ++d) {
        ok = (*v.shape)[d] < 0 || (*v.shape)[d] == t.shape[d];
      }
      if (!ok) {
        throw std::runtime_error(model + ": input '" + v.name + "' is " + t.describe() +
                                 ", the model declares shape " + shape_str(*v.shape));
      }
    }
  }
}

}  // namespace

DeviceStats& DeviceStats::operator+=(const DeviceStats& o) {
  programs += o.programs;
  commands += o.commands;
  cycles += o.cycles;
  predicted_cycles += o.predicted_cycles;
  compute_cycles += o.compute_cycles;
  tiles_sparse += o.tiles_sparse;
  tiles_dense += o.tiles_dense;
  macs += o.macs;
  dma_rd_bytes += o.dma_rd_bytes;
  dma_wr_bytes += o.dma_wr_bytes;
  meta_bytes += o.meta_bytes;
  golden_checked += o.golden_checked;
  return *this;
}

DeviceStats DeviceStats::operator-(const DeviceStats& earlier) const {
  DeviceStats d = *this;
  d.programs -= earlier.programs;
  d.commands -= earlier.commands;
  d.cycles -= earlier.cycles;
  d.predicted_cycles -= earlier.predicted_cycles;
  d.compute_cycles -= earlier.compute_cycles;
  d.tiles_sparse -= earlier.tiles_sparse;
  d.tiles_dense -= earlier.tiles_dense;
  d.macs -= earlier.macs;
  d.dma_rd_bytes -= earlier.dma_rd_bytes;
  d.dma_wr_bytes -= earlier.dma_wr_bytes;
  d.meta_bytes -= earlier.meta_bytes;
  d.golden_checked -= earlier.golden_checked;
  return d;
}

std::map<std::string, Tensor> Runtime::run(const std::map<std::string, Tensor>& inputs) {
  check_inputs(graph_, inputs);
  Values values(graph_, inputs);
  const DeviceContext dev{*device_, caps_, options_.memory, plan_->plans, options_.check_golden};
  for (const std::size_t i : order_) {
    const Node& n = graph_.nodes[i];
    switch (plan_->role[i]) {
      case NodeRole::FUSED:
        break;  // computed by its GEMM layer
      case NodeRole::FOLDED:
        break;  // an initializer since the model was loaded
      case NodeRole::DEVICE_GEMM: {
        if (plan_->chained[i]) break;  // ran with the first layer of its chain
        const auto chain = plan_->chains.find(i);
        if (chain != plan_->chains.end()) {
          run_layer_chain(dev, graph_, chain->second, plan_->gemms, values, layers_);
          break;
        }
        const DeviceGemm& g = plan_->gemms.at(i);
        LayerReport& rep = layers_[i];
        Tensor y;
        if (g.kind == GemmKind::QDQ_GEMM) {
          y = run_qdq_gemm(dev, n, g, values, rep.device);
        } else if (g.kind == GemmKind::QDQ_CONV) {
          y = run_qdq_conv(dev, n, g, values, rep.device);
        } else if (g.kind == GemmKind::CONV) {
          y = run_conv(dev, n, g, values, rep.device);
        } else if (g.kind == GemmKind::FLOAT_GEMM || g.kind == GemmKind::FLOAT_MATMUL) {
          y = run_float_gemm(dev, n, g, values, rep.device);
        } else {
          y = run_integer_gemm(dev, n, g, values, rep.device);
        }
        values.set(g.output, apply_fused_steps(graph_, g, std::move(y)));
        break;
      }
      case NodeRole::SHAPE:
      case NodeRole::HOST:
        if (!n.outputs.empty()) {
          const auto start = std::chrono::steady_clock::now();
          std::vector<Tensor> outs = run_host_outputs(n, values, graph_.opset);
          HostStats& host = layers_[i].host;
          ++host.runs;
          host.seconds +=
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
          for (std::size_t o = 0; o < outs.size() && o < n.outputs.size(); ++o) {
            values.set(n.outputs[o], std::move(outs[o]));
          }
        }
        break;
    }
  }
  std::map<std::string, Tensor> out;
  for (const ValueInfo& o : graph_.outputs) {
    const Tensor* t = values.find(o.name);
    if (t == nullptr) {
      throw std::runtime_error((graph_.source.empty() ? "model" : graph_.source) + ": output '" +
                               o.name + "' was not computed");
    }
    out.emplace(o.name, *t);
  }
  return out;
}

}  // namespace nmsa
