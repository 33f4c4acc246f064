// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
#include "hardware.hpp"

#include <cstdio>
#include <optional>
#include <string>

#include "nmsa/fpga_results.hpp"
#include "nmsa/mlp_cycles.hpp"

namespace nmsa::demo {

void set_clock_and_hardware_cost(DeploymentReport& rep, const std::string& config,
                                 double clock_mhz, const DeviceCaps& caps,
                                 const std::vector<int>& sizes, Eigen::Index batch,
                                 const PerfModelParams& perf) {
  const std::optional<FpgaResult> fpga =
      find_fpga_result(NMSA_SOURCE_DIR, NMSA_BUILD_DIR, "ecp5", config);
  const std::string current_rtl = rtl_hash(NMSA_SOURCE_DIR, config);
  auto provenance = [&current_rtl](const FpgaResult& r) {
    return r.describe() + (r.rtl_hash == current_rtl ? "; measured on this RTL"
                                                     : "; the RTL has changed since");
  };
  if (clock_mhz > 0) {
    rep.clock_mhz = clock_mhz;
    rep.clock_measured = false;
    char mhz[32];
    std::snprintf(mhz, sizeof mhz, "%.1f MHz", clock_mhz);
    rep.clock_source = std::string(mhz) + ", stated with --clock-mhz, not measured";
  } else if (fpga) {
    rep.clock_mhz = fpga->fmax_mhz_median;
    rep.clock_measured = true;
    rep.clock_source = provenance(*fpga);
  } else {
    rep.clock_source = "no place-and-route result of " + config +
                       " (make pnr CONFIG=" + config + "): cycles only";
  }
  if (config != "default" || !fpga) return;
  const std::optional<FpgaResult> dense =
      find_fpga_result(NMSA_SOURCE_DIR, NMSA_BUILD_DIR, "ecp5", "dense_only");
  if (!dense) return;
  HardwareCost h;
  h.device = fpga->device;
  h.sparse_source = provenance(*fpga);
  h.dense_source = provenance(*dense);
  h.sparse_luts = fpga->luts();
  h.dense_luts = dense->luts();
  h.sparse_dsps = fpga->dsps();
  h.dense_dsps = dense->dsps();
  h.sparse_brams = fpga->brams();
  h.dense_brams = dense->brams();
  h.sparse_fmax_mhz = fpga->fmax_mhz_median;
  h.dense_fmax_mhz = dense->fmax_mhz_median;
  const double dense_only = static_cast<double>(predict_mlp_batch_cycles(
      DeviceCaps::named("dense_only"), sizes, batch, GemmMode::DENSE, perf));
  const double dense_here =
      static_cast<double>(predict_mlp_batch_cycles(caps, sizes, batch, GemmMode::DENSE, perf));
  h.cycles_ratio = rep.effective_speedup * dense_only / dense_here;
  rep.hardware = h;
}

}  // namespace nmsa::demo
