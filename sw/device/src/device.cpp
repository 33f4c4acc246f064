// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
#include "nmsa/device.hpp"

#include <stdexcept>

#include "nmsa/functional_model.hpp"

namespace nmsa {

std::string DeviceRun::describe() const {
  if (error != regs::ErrCode::NONE) {
    return std::string(regs::to_string(error)) + " at command " + std::to_string(error_index);
  }
  if (!done) return "not finished";
  return cycles == 0 ? "done" : "done in " + std::to_string(cycles) + " cycles";
}

namespace {

// The functional model behind the register interface: capability registers from the named
// configuration, CMD_BASE/CMD_COUNT/START as on the hardware, counters from the model's run.
class ModelDevice final : public Device {
 public:
  explicit ModelDevice(const std::string& config)
      : config_(config), caps_(DeviceCaps::named(config)), model_(caps_) {}

  std::string name() const override { return "model:" + config_; }

  std::uint32_t read_reg(std::uint32_t offset) override {
    namespace r = regs;
    if (const auto cap = capability_register(caps_, offset)) return *cap;
    switch (offset) {
      case r::CMD_BASE_LO_OFFSET: return static_cast<std::uint32_t>(cmd_base_);
      case r::CMD_BASE_HI_OFFSET: return static_cast<std::uint32_t>(cmd_base_ >> 32);
      case r::CMD_COUNT_OFFSET: return cmd_count_;
      case r::STATUS_OFFSET: return status_;
      case r::ERR_INFO_OFFSET: return err_info_;
      default: break;
    }
    if (offset >= r::COUNTERS_BASE && offset < r::COUNTERS_BASE + 8 * r::NUM_COUNTERS) {
      // The hardware's counters wrap modulo 2^COUNTER_W.
      const std::uint64_t mask =
          caps_.counter_w >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << caps_.counter_w) - 1;
      const std::uint64_t value = last_.counters[(offset - r::COUNTERS_BASE) / 8] & mask;
      return (offset & 4u) ? static_cast<std::uint32_t>(value >> 32)
                           : static_cast<std::uint32_t>(value);
    }
    throw std::invalid_argument("model device: no register at offset " + std::to_string(offset));
  }

  void write_reg(std::uint32_t offset, std::uint32_t value) override {
    namespace r = regs;
    if (offset == r::CMD_BASE_LO_OFFSET) {
      cmd_base_ = (cmd_base_ & ~0xffffffffull) | value;
    } else if (offset == r::CMD_BASE_HI_OFFSET) {
      cmd_base_ = (cmd_base_ & 0xffffffffull) | (std::uint64_t{value} << 32);
    } else if (offset == r::CMD_COUNT_OFFSET) {
      cmd_count_ = value;
    } else if (offset == r::CTRL_OFFSET && (value & r::CTRL_SOFT_RESET_MASK)) {
      status_ = 0;
      err_info_ = 0;
      last_ = DeviceRun{};
    } else if (offset == r::CTRL_OFFSET && (value & r::CTRL_START_MASK)) {
      run(cmd_base_, cmd_count_, ProgressFn{});
    }
  }

  HostMemory& memory() override { return memory_; }

  DeviceRun run(std::uint64_t address, std::uint32_t count, const ProgressFn&) override {
    namespace r = regs;
    cmd_base_ = address;
    cmd_count_ = count;
    const RunResult result = model_.run(memory_, address, count);
    DeviceRun out;
    out.error = result.error;
    out.error_index = result.error_index;
    out.done = result.ok();
    auto set = [&out](std::uint32_t lo_offset, std::uint64_t v) {
      out.counters[(lo_offset - r::COUNTERS_BASE) / 8] = v;
    };
    set(r::CYCLES_COMPUTE_LO_OFFSET, result.beats);
    set(r::MACS_LO_OFFSET, result.macs);
    set(r::TILES_SPARSE_LO_OFFSET, result.tiles_sparse);
    set(r::TILES_DENSE_LO_OFFSET, result.tiles_dense);
    set(r::DMA_RD_BYTES_LO_OFFSET, result.dma_rd_bytes);
    set(r::DMA_WR_BYTES_LO_OFFSET, result.dma_wr_bytes);
    set(r::META_BYTES_LO_OFFSET, result.meta_bytes);
    set(r::ILLEGAL_META_LO_OFFSET, result.illegal_meta_fields);
    status_ = out.done ? r::STATUS_DONE_MASK
                       : (r::STATUS_ERROR_MASK |
                          (static_cast<std::uint32_t>(out.error) << r::STATUS_ERR_CODE_SHIFT));
    err_info_ = out.done ? 0 : out.error_index;
    last_ = out;
    return out;
  }

 private:
  std::string config_;
  DeviceCaps caps_;
  FunctionalModel model_;
  HostMemory memory_;
  std::uint64_t cmd_base_ = 0;
  std::uint32_t cmd_count_ = 0;
  std::uint32_t status_ = 0;
  std::uint32_t err_info_ = 0;
  DeviceRun last_;
};

}  // namespace

std::unique_ptr<Device> make_model_device(const std::string& config) {
  return std::make_unique<ModelDevice>(config);
}

}  // namespace nmsa
