// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// The host memory the demo's figures stand on (docs/demo.md, "Latency and the host memory"):
// 16 bytes per cycle shared by reads and writes, 100 cycles of read latency, 16 of write
// response, and in 2% of the cycles a due read beat does not come, which stands for other
// masters on the memory, so that batch latencies vary as they do on a real system. The demo runs
// every device on it and tells the cycle model about it; `nmsa run --host-memory demo` does the
// same, so that it reproduces the report's cycles.
#pragma once

#include "nmsa/cycle_model.hpp"
#include "nmsa/device_caps.hpp"
#include "nmsa/tb/axi.hpp"

namespace nmsa::tb {

// The AXI memory model of a simulated device (its random read gaps drawn from the device's seed).
AxiMemoryConfig demo_host_memory(const DeviceCaps& caps);

// The same memory as the cycle model sees it: bandwidth and latencies, without the random gaps.
PerfModelParams demo_host_memory_perf();

}  // namespace nmsa::tb
