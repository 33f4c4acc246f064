// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// The hardware the demo's figures stand on, beside the host memory (nmsa/tb/host_memory.hpp):
// the clock and area that turn cycles into time and into the equal-area comparison, from the
// place-and-route results (docs/fpga.md).
#pragma once

#include <string>
#include <vector>

#include "nmsa/cycle_model.hpp"
#include "nmsa/device.hpp"
#include "nmsa/report.hpp"

namespace nmsa::demo {

// The report's clock: the measured Fmax of `config` (docs/fpga.md), unless clock_mhz > 0 states
// one; and, for `default` with a dense-only counterpart measured, what the N:M support costs at
// equal area (rep.effective_speedup must be set). The dense-only design's cycles for the deployed
// model are the measured same-array speedup scaled by the cycle model's dense-only over
// dense-on-this-array cycles.
void set_clock_and_hardware_cost(DeploymentReport& rep, const std::string& config,
                                 double clock_mhz, const DeviceCaps& caps,
                                 const std::vector<int>& sizes, Eigen::Index batch,
                                 const PerfModelParams& perf);

}  // namespace nmsa::demo
