// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// Devices that wrap another for the runtime's tests: one that counts the STARTs it is given, and
// one that corrupts a single result byte after each run.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "nmsa/device.hpp"
#include "nmsa/isa.hpp"

namespace nmsa::testing {

// Forwards everything to the wrapped device.
class WrappedDevice : public Device {
 public:
  explicit WrappedDevice(std::unique_ptr<Device> inner) : inner_(std::move(inner)) {}
  std::string name() const override { return inner_->name(); }
  std::uint32_t read_reg(std::uint32_t offset) override { return inner_->read_reg(offset); }
  void write_reg(std::uint32_t offset, std::uint32_t value) override {
    inner_->write_reg(offset, value);
  }
  HostMemory& memory() override { return inner_->memory(); }
  DeviceRun run(std::uint64_t address, std::uint32_t count, const ProgressFn& progress) override {
    return inner_->run(address, count, progress);
  }

 protected:
  Device& inner() { return *inner_; }

 private:
  std::unique_ptr<Device> inner_;
};

class CountingDevice final : public WrappedDevice {
 public:
  using WrappedDevice::WrappedDevice;
  DeviceRun run(std::uint64_t address, std::uint32_t count, const ProgressFn& progress) override {
    ++starts;
    return WrappedDevice::run(address, count, progress);
  }
  int starts = 0;
};

// After each run, flips the lowest bit of the first byte that the stream's first (or last) STORE
// wrote: a single wrong result word, with every register and counter as the real run left them.
class OneWrongByteDevice final : public WrappedDevice {
 public:
  enum class Store { FIRST, LAST };
  explicit OneWrongByteDevice(std::unique_ptr<Device> inner, Store which = Store::FIRST)
      : WrappedDevice(std::move(inner)), which_(which) {}
  std::string name() const override { return "one-wrong-byte(" + WrappedDevice::name() + ")"; }
  DeviceRun run(std::uint64_t address, std::uint32_t count, const ProgressFn& progress) override {
    const DeviceRun r = WrappedDevice::run(address, count, progress);
    std::uint64_t target = 0;
    bool found = false;
    for (std::uint32_t i = 0; i < count && !(found && which_ == Store::FIRST); ++i) {
      const std::vector<std::uint8_t> bytes =
          memory().read_bytes(address + i * isa::COMMAND_BYTES, isa::COMMAND_BYTES);
      const Command c = decode(bytes.data());
      if (c.opcode != Opcode::STORE) continue;
      target = c.host_address;
      found = true;
    }
    if (found) {
      const auto byte = memory().read_le<std::uint8_t>(target);
      memory().write_le<std::uint8_t>(target, static_cast<std::uint8_t>(byte ^ 1u));
    }
    return r;
  }

 private:
  Store which_;
};

}  // namespace nmsa::testing
