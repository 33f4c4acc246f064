// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
#include "wide_model.hpp"

#include "nmsa/gemm_program.hpp"
#include "nmsa/mlp_cycles.hpp"

namespace nmsa::demo {

WideShape size_wide_model(const DeviceCaps& caps, const std::vector<int>& base_sizes,
                          Eigen::Index batch, std::uint64_t budget, const PerfModelParams& perf) {
  const auto layer = [&](int in, int out, bool last) {
    return predict_mlp_layer_cycles(caps, in, out, last, batch, GemmMode::SPARSE, perf);
  };
  const auto weights = [](const std::vector<int>& s) {
    long w = 0;
    for (std::size_t i = 0; i + 1 < s.size(); ++i) w += static_cast<long>(s[i]) * s[i + 1];
    return w;
  };
  WideShape best{base_sizes,
                 predict_mlp_batch_cycles(caps, base_sizes, batch, GemmMode::SPARSE, perf), 0};
  bool found = false;
  for (int h1 = 512; h1 <= 2048; h1 += 64) {
    const std::uint64_t first = layer(784, h1, false);
    bool any_fits = false;
    for (int h2 = 256; h2 <= h1; h2 += 64) {
      const std::vector<int> s = {784, h1, h2, 10};
      const std::uint64_t c = first + layer(h1, h2, false) + layer(h2, 10, true);
      ++best.searched;
      if (c > budget) break;
      any_fits = true;
      if (!found || c > best.predicted_cycles ||
          (c == best.predicted_cycles && weights(s) > weights(best.sizes))) {
        best.sizes = s;
        best.predicted_cycles = c;
        found = true;
      }
    }
    if (!any_fits) break;
  }
  return best;
}

}  // namespace nmsa::demo
