// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// The bandwidth lens: what its figures must obey whatever the cycle model's details (more
// bandwidth never costs cycles, more latency never saves any, a memory-bound layer's speedup is
// its bytes ratio, sparse needs more bandwidth than dense to stay compute-bound), its knees, and
// its files.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "nmsa/bandwidth_lens.hpp"
#include "nmsa/device.hpp"

namespace nmsa {
namespace {

// The demo's MLP over the whole default grid (the cheapest family to price).
const LensResult& mlp_sweep() {
  static const LensResult r = [] {
    LensSettings s;
    s.families = {"mlp"};
    return run_bandwidth_lens(make_model_device("default")->caps(), s);
  }();
  return r;
}

TEST(BandwidthLens, MoreBandwidthNeverCostsCycles) {
  const LensResult& r = mlp_sweep();
  ASSERT_EQ(r.bandwidth.size(), 2u * 7u);  // AXI widths x bandwidths
  for (std::size_t i = 1; i < r.bandwidth.size(); ++i) {
    const LensPoint& a = r.bandwidth[i - 1];
    const LensPoint& b = r.bandwidth[i];
    if (a.family != b.family || a.axi_data_w != b.axi_data_w) continue;
    ASSERT_LT(a.bytes_per_cycle, b.bytes_per_cycle);
    EXPECT_GE(a.sparse_cycles, b.sparse_cycles) << b.family << " at " << b.bytes_per_cycle;
    EXPECT_GE(a.dense_cycles, b.dense_cycles) << b.family << " at " << b.bytes_per_cycle;
  }
}

TEST(BandwidthLens, MoreLatencyNeverSavesCycles) {
  const LensResult& r = mlp_sweep();
  ASSERT_EQ(r.latency.size(), 5u);
  for (std::size_t i = 1; i < r.latency.size(); ++i) {
    const LensPoint& a = r.latency[i - 1];
    const LensPoint& b = r.latency[i];
    if (a.family != b.family) continue;
    EXPECT_LE(a.sparse_cycles, b.sparse_cycles) << b.family << " at " << b.read_latency;
    EXPECT_LE(a.dense_cycles, b.dense_cycles) << b.family << " at " << b.read_latency;
  }
}

TEST(BandwidthLens, MemoryBoundSpeedupIsTheBytesRatio) {
  for (const LensFamily& f : mlp_sweep().families) {
    EXPECT_NEAR(f.speedup_memory_bound, f.bytes_ratio, 0.05 * f.bytes_ratio) << f.family;
    EXPECT_GT(f.speedup_compute_bound, f.speedup_memory_bound) << f.family;
  }
  const LensFamily& mlp = mlp_sweep().families.at(0);
  EXPECT_GT(mlp.speedup_compute_bound, 1.8);  // 2:4 on the same multipliers
  EXPECT_EQ(mlp.vanishes_below, 0.0);
}

// The CNN's first convolution has K = 9 (one channel, 3 x 3) and 24 outputs per pixel: it moves
// far more bytes than it computes, so at low bandwidth nothing is left of 2:4.
TEST(BandwidthLens, GainsVanishWhereBytesDominate) {
  LensSettings s;
  s.families = {"cnn"};
  s.bytes_per_cycle = {1, 2, 64};
  s.read_latency = {100};
  s.axi_data_w = {64};
  const LensResult r = run_bandwidth_lens(make_model_device("default")->caps(), s);
  ASSERT_EQ(r.families.size(), 1u);
  const LensFamily& cnn = r.families[0];
  EXPECT_GE(cnn.vanishes_below, 1.0);
  EXPECT_LT(cnn.speedup_memory_bound, 1.1);
  EXPECT_GT(cnn.speedup_compute_bound, cnn.speedup_memory_bound);
}

TEST(BandwidthLens, SparseNeedsAtLeastTheBandwidthOfDense) {
  for (const LensFamily& f : mlp_sweep().families) {
    EXPECT_GE(f.knee_sparse, f.knee_dense) << f.family;
    // On a 64-bit AXI port a read beat a cycle is 8 B/cycle: no knee lies below it here.
    EXPECT_GE(f.knee_sparse, 8.0) << f.family;
  }
}

TEST(BandwidthLens, KneeIsWhereCyclesReachTheFloor) {
  for (const LensFamily& f : mlp_sweep().families) {
    std::uint64_t floor = 0, at_knee = 0, below = 0;
    for (const LensPoint& p : mlp_sweep().bandwidth) {
      if (p.family != f.family || p.axi_data_w != 64) continue;
      if (p.bytes_per_cycle == 64) floor = p.sparse_cycles;
      if (p.bytes_per_cycle == f.knee_sparse) at_knee = p.sparse_cycles;
      if (p.bytes_per_cycle == f.knee_sparse / 2) below = p.sparse_cycles;
    }
    EXPECT_LE(static_cast<double>(at_knee), 1.05 * static_cast<double>(floor)) << f.family;
    EXPECT_GT(static_cast<double>(below), 1.05 * static_cast<double>(floor)) << f.family;
  }
}

TEST(BandwidthLens, FilesHoldEveryPointAndNoExternalReference) {
  const LensResult& r = mlp_sweep();
  const auto j = nlohmann::json::parse(lens_json(r));
  EXPECT_EQ(j["bandwidth_sweep"].size(), r.bandwidth.size());
  EXPECT_EQ(j["latency_sweep"].size(), r.latency.size());
  ASSERT_EQ(j["families"].size(), 1u);
  EXPECT_EQ(j["families"][0]["family"], "mlp");
  EXPECT_DOUBLE_EQ(j["families"][0]["knee_bytes_per_cycle_sparse"].get<double>(),
                   r.families[0].knee_sparse);
  const std::string html = lens_html(r);
  for (const char* part : {"id=\"summary\"", "id=\"bandwidth\"", "id=\"latency\"", "<svg"}) {
    EXPECT_NE(html.find(part), std::string::npos) << part;
  }
  EXPECT_EQ(html.find("http"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
}

TEST(BandwidthLens, BadSettingsAreErrors) {
  const DeviceCaps caps = make_model_device("small")->caps();
  LensSettings unknown;
  unknown.families = {"gpt"};
  EXPECT_THROW(run_bandwidth_lens(caps, unknown), std::invalid_argument);
  LensSettings wide;
  wide.axi_data_w = {128};
  EXPECT_THROW(run_bandwidth_lens(caps, wide), std::invalid_argument);
  LensSettings empty;
  empty.bytes_per_cycle.clear();
  EXPECT_THROW(run_bandwidth_lens(caps, empty), std::invalid_argument);
  LensSettings zero;
  zero.read_latency = {0};
  EXPECT_THROW(run_bandwidth_lens(caps, zero), std::invalid_argument);
}

}  // namespace
}  // namespace nmsa
