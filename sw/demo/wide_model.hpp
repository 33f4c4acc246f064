// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// The demo's equal-latency-budget model: the wider N:M network the cycle model fits into the
// dense network's batch latency (docs/demo.md, step 7).
#pragma once

#include <cstdint>
#include <vector>

#include "nmsa/cycle_model.hpp"
#include "nmsa/device_caps.hpp"
#include "nmsa/types.hpp"

namespace nmsa::demo {

// The wider model of the equal-budget comparison, sized by the cycle model.
struct WideShape {
  std::vector<int> sizes;
  std::uint64_t predicted_cycles = 0;  // its all-sparse batch
  int searched = 0;                    // shapes priced
};

// Of the 784-h1-h2-10 networks (h1 from 512 to 2048, h2 from 256 to h1, multiples of 64), the one
// whose all-sparse batch the cycle model predicts closest to the budget without exceeding it, so
// that it uses the budget fully; more weights win a tie. The base shape when none fits. A layer
// with more outputs or inputs never takes fewer cycles, so each h2 sweep stops at the first shape
// over the budget, and the h1 sweep at the first h1 whose narrowest shape is over.
WideShape size_wide_model(const DeviceCaps& caps, const std::vector<int>& base_sizes,
                          Eigen::Index batch, std::uint64_t budget, const PerfModelParams& perf);

}  // namespace nmsa::demo
