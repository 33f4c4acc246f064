// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// Pieces of the tests that run one program on two device backends and compare them.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <random>

#include "nmsa/device.hpp"
#include "nmsa/epilogue.hpp"

namespace nmsa::testing {

// Epilogue parameters for `channels` output channels: biases in [-300, 300], scales of
// 0.001 to 0.02, which keep most INT8 results away from saturation.
inline EpilogueParams random_epilogue(int channels, std::mt19937_64& rng) {
  auto pick = [&rng](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  EpilogueParams e;
  for (int c = 0; c < channels; ++c) {
    e.bias.push_back(pick(-300, 300));
    const auto q = quantize_multiplier(0.001 * pick(1, 20));
    e.multiplier.push_back(q.multiplier);
    e.shift.push_back(static_cast<std::uint8_t>(q.shift));
  }
  return e;
}

// The counters of work and traffic agree between two runs of one program; the cycle counters
// are left out, as they depend on each backend's memory timing (the functional model has none).
inline void expect_same_work_counters(const DeviceRun& a, const DeviceRun& b) {
  namespace r = regs;
  for (std::uint32_t counter : {r::CYCLES_COMPUTE_LO_OFFSET, r::MACS_LO_OFFSET,
                                r::TILES_SPARSE_LO_OFFSET, r::TILES_DENSE_LO_OFFSET,
                                r::DMA_RD_BYTES_LO_OFFSET, r::DMA_WR_BYTES_LO_OFFSET,
                                r::META_BYTES_LO_OFFSET, r::ILLEGAL_META_LO_OFFSET,
                                r::AXI_ERRORS_LO_OFFSET}) {
    EXPECT_EQ(a.counter(counter), b.counter(counter)) << "counter at " << counter;
  }
}

}  // namespace nmsa::testing
