// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// The plan a Runtime makes once, when it is built (runtime_placement.cpp), and follows in every
// run (runtime.cpp): the role of each node, and each device GEMM in device form.
#pragma once

#include <cstddef>
#include <map>
#include <vector>

#include "gemm_lowering.hpp"
#include "nmsa/runtime.hpp"

namespace nmsa {

namespace graph_detail {

// FOLDED: a constant computed when the model is loaded (its value is an initializer), not run.
enum class NodeRole { DEVICE_GEMM, FUSED, SHAPE, HOST, FOLDED };

}  // namespace graph_detail

struct Runtime::Plan {
  std::vector<graph_detail::NodeRole> role;
  std::map<std::size_t, graph_detail::DeviceGemm> gemms;
  graph_detail::PlanCache plans;
  // Runs of device layers that share one command stream (layer_chain.hpp), by first node; the
  // other members are in `chained`.
  std::map<std::size_t, std::vector<std::size_t>> chains;
  std::vector<bool> chained;
};

}  // namespace nmsa
