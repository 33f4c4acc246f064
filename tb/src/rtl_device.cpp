// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
#include "nmsa/tb/rtl_device.hpp"

#include "nmsa/tb/top_runner.hpp"
#include "nmsa/tb/top_sim.hpp"

namespace nmsa::tb {

namespace {

class RtlDevice final : public Device {
 public:
  RtlDevice(const std::string& config, const AxiMemoryConfig& memory, std::uint64_t seed)
      : config_(config), sim_(make_top_sim(config, memory, seed)) {}

  std::string name() const override { return "rtl:" + config_; }
  std::uint32_t read_reg(std::uint32_t offset) override { return sim_->read_reg(offset); }
  void write_reg(std::uint32_t offset, std::uint32_t value) override {
    sim_->write_reg(offset, value);
  }
  HostMemory& memory() override { return memory_; }

  DeviceRun run(std::uint64_t address, std::uint32_t count, const ProgressFn& progress) override {
    // Each run starts from a soft reset, so status and counters describe this run alone.
    sim_->write_reg(regs::CTRL_OFFSET, regs::CTRL_SOFT_RESET_MASK);
    sim_->wait_idle(kTimeoutCycles, 4);
    const TopRunResult r = run_on_top(*sim_, memory_, address, count, kTimeoutCycles, progress);
    DeviceRun out;
    out.done = r.done();
    out.error = static_cast<regs::ErrCode>(r.err_code());
    out.error_index = r.err_info;
    out.cycles = r.cycles;
    out.counters = r.counters;
    return out;
  }

 private:
  static constexpr std::uint64_t kTimeoutCycles = 2'000'000'000;
  std::string config_;
  std::unique_ptr<TopSim> sim_;
  HostMemory memory_;
};

}  // namespace

std::unique_ptr<Device> make_rtl_device(const std::string& config, const AxiMemoryConfig& memory,
                                        std::uint64_t seed) {
  return std::make_unique<RtlDevice>(config, memory, seed);
}

}  // namespace nmsa::tb
