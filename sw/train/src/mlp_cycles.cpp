// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
#include "nmsa/mlp_cycles.hpp"

#include <stdexcept>

namespace nmsa {

std::uint64_t predict_mlp_layer_cycles(const DeviceCaps& caps, int in, int out, bool last,
                                       Eigen::Index rows, GemmMode mode,
                                       const PerfModelParams& memory) {
  GemmOptions o;
  o.mode = mode;
  o.memory = memory;
  if (!last) {
    o.epilogue = EpilogueParams::identity(static_cast<std::size_t>(out));
    o.relu = true;
  }
  return estimate_gemm(caps, rows, in, out, o, memory).cycles.total;
}

std::uint64_t predict_mlp_batch_cycles(const DeviceCaps& caps, const std::vector<int>& sizes,
                                       Eigen::Index rows, GemmMode mode,
                                       const PerfModelParams& memory) {
  if (sizes.size() < 2) throw std::invalid_argument("predict_mlp_batch_cycles: fewer than 2 sizes");
  std::uint64_t total = 0;
  for (std::size_t i = 0; i + 1 < sizes.size(); ++i) {
    total += predict_mlp_layer_cycles(caps, sizes[i], sizes[i + 1], i + 2 == sizes.size(), rows,
                                      mode, memory);
  }
  return total;
}

}  // namespace nmsa
