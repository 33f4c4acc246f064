// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// Consecutive device layers as one command stream (nmsa/program_chain.hpp): a QDQ Gemm whose
// int8 input is the previous QDQ Gemm's int8 output (requantized by that layer's epilogue) runs in
// the same stream, reading that output where the previous layer's STOREs left it, so the host
// starts the device once for the whole run of layers. Every layer's output is still read back
// (other nodes, and the golden check, may use it); what goes away is the host round trip and the
// START between the layers.
//
// The device counts per run (START to done), so a chained layer's counters are its share of the
// stream: its tiles, MACs, beats and bytes follow from its own program's commands
// (stream_counters.hpp; the barriers between layers are the chain's), and the runtime checks that
// the shares and the barriers add up to what the device counted; its cycles are the cycle model's
// split of the stream at the layers' last STOREs (ProgramChain::layer_cycles), scaled to the
// device's measured total on a device with a clock.
#pragma once

#include <cstddef>
#include <map>
#include <vector>

#include "gemm_lowering.hpp"
#include "nmsa/runtime.hpp"
#include "runtime_plan.hpp"

namespace nmsa::graph_detail {

// The runs of two or more chainable QDQ Gemm layers in `order` (node indices, topological), keyed
// by their first node. A layer chains to the one before it when both are device QDQ Gemms, the
// one before has an epilogue (int8 output) and the layer reads that output, with only fused or
// folded nodes between them in `order`.
std::map<std::size_t, std::vector<std::size_t>> find_layer_chains(
    const std::vector<std::size_t>& order, const std::vector<NodeRole>& role,
    const std::map<std::size_t, DeviceGemm>& gemms);

// Runs the chain `nodes` on the device as one stream: sets each layer's output value (after its
// fused steps) and adds each layer's share of the device's counters to reports[node].device.
void run_layer_chain(const DeviceContext& dev, const Graph& graph,
                     const std::vector<std::size_t>& nodes,
                     const std::map<std::size_t, DeviceGemm>& gemms, Values& values,
                     std::vector<LayerReport>& reports);

}  // namespace nmsa::graph_detail
