// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
#include "layer_chain.hpp"

#include <exception>
#include <optional>
#include <string>
#include <utility>

#include "nmsa/program_chain.hpp"
#include "nmsa/stream_counters.hpp"
#include "runtime_values.hpp"

namespace nmsa::graph_detail {

namespace {

bool chains_after(const DeviceGemm& before, const DeviceGemm& g) {
  return before.qdq->epilogue.has_value() && g.qdq->input == before.output;
}

// The chain's cycles per layer: the cycle model's split, scaled to the device's measured total
// when it has a clock (the shares then still add up to that total exactly).
std::vector<std::uint64_t> layer_cycles(const ProgramChain& chain, const CyclePrediction& p,
                                        std::uint64_t measured) {
  std::vector<std::uint64_t> shares = chain.layer_cycles(p);
  if (measured == 0 || p.total == 0) return shares;
  std::uint64_t ended = 0, placed = 0;
  for (std::uint64_t& s : shares) {
    ended += s;
    const auto end = static_cast<std::uint64_t>(static_cast<long double>(measured) * ended /
                                                    p.total + 0.5L);
    s = end - placed;
    placed = end;
  }
  return shares;
}

// The device's counters of the run against the sum of the layers' shares: they count the same
// commands, so a difference is a device or runtime fault, not a rounding.
void check_counters(const Node& first, const DeviceRun& r, const StreamCounters& sum) {
  const StreamCounters device = run_counters(r);
  if (device == sum) return;
  node_error(first, "the device counted " + device.describe() +
                        " for the chained layers; their commands count " + sum.describe());
}

}  // namespace

std::map<std::size_t, std::vector<std::size_t>> find_layer_chains(
    const std::vector<std::size_t>& order, const std::vector<NodeRole>& role,
    const std::map<std::size_t, DeviceGemm>& gemms) {
  std::map<std::size_t, std::vector<std::size_t>> chains;
  std::vector<std::size_t> run;
  auto close = [&] {
    if (run.size() >= 2) chains.emplace(run.front(), run);
    run.clear();
  };
  for (const std::size_t i : order) {
    if (role[i] == NodeRole::FUSED || role[i] == NodeRole::FOLDED) continue;
    const auto it = gemms.find(i);
    const bool qdq_gemm = role[i] == NodeRole::DEVICE_GEMM && it != gemms.end() &&
                          it->second.kind == GemmKind::QDQ_GEMM;
    if (!qdq_gemm) {
      close();
      continue;
    }
    if (!run.empty() && !chains_after(gemms.at(run.back()), it->second)) close();
    run.push_back(i);
  }
  close();
  return chains;
}

void run_layer_chain(const DeviceContext& dev, const Graph& graph,
                     const std::vector<std::size_t>& nodes,
                     const std::map<std::size_t, DeviceGemm>& gemms, Values& values,
                     std::vector<LayerReport>& reports) {
  const Node& first = graph.nodes[nodes.front()];
  const MatrixI8 x = qdq_gemm_rows(first, gemms.at(nodes.front()), values);
  if (x.rows() == 0) {  // nothing to send: each layer gives its empty output alone
    for (const std::size_t n : nodes) {
      const DeviceGemm& g = gemms.at(n);
      Tensor y = run_qdq_gemm(dev, graph.nodes[n], g, values, reports[n].device);
      values.set(g.output, apply_fused_steps(graph, g, std::move(y)));
    }
    return;
  }
  HostMemory& mem = dev.device.memory();
  std::vector<ChainLayer> layers;
  for (const std::size_t n : nodes) {
    const DeviceGemm& g = gemms.at(n);
    layers.push_back({g.weights[0],
                      device_gemm_options(dev, graph.nodes[n], 0, x.rows(), g.weights[0], g.mode,
                                          g.qdq->epilogue, qdq_relu_on_device(*g.qdq))});
  }
  std::optional<ProgramChain> chain;
  try {
    chain.emplace(dev.caps, x, std::move(layers), mem);
  } catch (const std::exception& e) {
    node_error(first, std::string("cannot compile the chained layers for the device: ") +
                          e.what());
  }
  const DeviceRun r = dev.device.run(chain->command_address(), chain->command_count());
  if (!r.ok()) {
    const std::size_t at = r.error_index < chain->command_count()
                               ? chain->layer_of_command(r.error_index)
                               : nodes.size() - 1;
    node_error(graph.nodes[nodes[at]], "device " + dev.device.name() + ": " + r.describe());
  }

  const CyclePrediction predicted = chain->predict_cycles(dev.memory.value_or(PerfModelParams{}));
  const std::vector<std::uint64_t> cycles = layer_cycles(*chain, predicted, r.cycles);
  std::vector<MatrixI32> outputs;
  for (std::size_t i = 0; i < nodes.size(); ++i) outputs.push_back(chain->program(i).read_output());
  mem.clear();  // the chain's pages; the allocator moves on, so addresses never repeat

  const std::vector<Command>& commands = chain->commands();
  StreamCounters counted_sum;  // the layers' shares and the barriers between them
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const Node& node = graph.nodes[nodes[i]];
    const DeviceGemm& g = gemms.at(nodes[i]);
    const MatrixI32& out = outputs[i];
    if (dev.check_golden) {
      const MatrixI8 input = i == 0 ? x : MatrixI8(outputs[i - 1].cast<std::int8_t>());
      check_against_golden(dev, node, input, g.weights[0], g.qdq->epilogue,
                           qdq_relu_on_device(*g.qdq), out);
    }
    // The barrier before a layer is the chain's: its cycles are in the layer's share, its dense
    // one-beat tile in no layer's counters.
    const std::size_t barrier = chain->first_command(i);
    if (i > 0) counted_sum += command_counters(dev.caps, commands[barrier]);
    const std::size_t from = barrier + (i > 0 ? 1 : 0);
    const std::size_t count = chain->first_command(i + 1) - from;
    const StreamCounters c = stream_counters(dev.caps, commands, from, count);
    counted_sum += c;
    DeviceStats& s = reports[nodes[i]].device;
    ++s.programs;
    s.commands += count;
    (r.cycles > 0 ? s.cycles : s.predicted_cycles) += cycles[i];
    add_counters(s, c);
    if (dev.check_golden) ++s.golden_checked;
    values.set(g.output, apply_fused_steps(graph, g, qdq_rows(*g.qdq, out)));
  }
  check_counters(first, r, counted_sum);
}

}  // namespace nmsa::graph_detail
