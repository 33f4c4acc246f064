// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// The Verilated accelerator behind nmsa::Device: registers through the AXI4-Lite master, host
// memory through the AXI memory model, runs until the done/error interrupt.
#pragma once

#include <memory>
#include <string>

#include "nmsa/device.hpp"
#include "nmsa/tb/axi.hpp"

namespace nmsa::tb {

std::unique_ptr<Device> make_rtl_device(const std::string& config,
                                        const AxiMemoryConfig& memory = AxiMemoryConfig{},
                                        std::uint64_t seed = 1);

}  // namespace nmsa::tb
