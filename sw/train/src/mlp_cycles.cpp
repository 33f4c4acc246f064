// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
#include "nmsa/mlp_cycles.hpp"

#include <stdexcept>

namespace nmsa {

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
