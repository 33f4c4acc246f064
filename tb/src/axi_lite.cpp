// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
#include <sstream>
#include <stdexcept>

#include "nmsa/tb/axi.hpp"

namespace nmsa::tb {

namespace {

std::string hex(std::uint64_t v) {
  std::ostringstream os;
  os << "0x" << std::hex << v;
  return os.str();
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// AxiLiteMonitor
// ---------------------------------------------------------------------------------------------

AxiLiteMonitor::AxiLiteMonitor(std::string name) : name_(std::move(name)) {}

void AxiLiteMonitor::flag(std::string message) {
  violations_.push_back(AxiViolation{cycle_, name_ + ": " + std::move(message)});
}

void AxiLiteMonitor::reset() {
  aw_count_ = w_count_ = b_count_ = ar_count_ = r_count_ = 0;
  have_prev_ = false;
}

void AxiLiteMonitor::commit(const AxiLiteBus& bus) {
  if (have_prev_) {
    const auto held = [&](const char* ch, bool pv, bool pr, bool v, bool stable) {
      if (!pv || pr) return;
      if (!v) {
        flag(std::string(ch) + ": VALID dropped before READY");
      } else if (!stable) {
        flag(std::string(ch) + ": payload changed while VALID && !READY");
      }
    };
    held("AW", prev_.aw.valid, prev_.aw.ready, bus.aw.valid,
         prev_.aw.addr == bus.aw.addr && prev_.aw.prot == bus.aw.prot);
    held("W", prev_.w.valid, prev_.w.ready, bus.w.valid,
         prev_.w.data == bus.w.data && prev_.w.strb == bus.w.strb);
    held("B", prev_.b.valid, prev_.b.ready, bus.b.valid, prev_.b.resp == bus.b.resp);
    held("AR", prev_.ar.valid, prev_.ar.ready, bus.ar.valid,
         prev_.ar.addr == bus.ar.addr && prev_.ar.prot == bus.ar.prot);
    held("R", prev_.r.valid, prev_.r.ready, bus.r.valid,
         prev_.r.data == bus.r.data && prev_.r.resp == bus.r.resp);
  }
  // A response needs its request handshaken in an earlier cycle.
  if (bus.b.valid && bus.b.ready && (b_count_ >= aw_count_ || b_count_ >= w_count_)) {
    flag("B: response without a completed write address and data");
  }
  if (bus.r.valid && bus.r.ready && r_count_ >= ar_count_) {
    flag("R: response without an outstanding read");
  }
  if (bus.aw.valid && bus.aw.ready) ++aw_count_;
  if (bus.w.valid && bus.w.ready) ++w_count_;
  if (bus.b.valid && bus.b.ready) ++b_count_;
  if (bus.ar.valid && bus.ar.ready) ++ar_count_;
  if (bus.r.valid && bus.r.ready) ++r_count_;
  prev_ = bus;
  have_prev_ = true;
  ++cycle_;
}

// ---------------------------------------------------------------------------------------------
// AxiLiteMaster
// ---------------------------------------------------------------------------------------------

AxiLiteMaster::AxiLiteMaster(std::string name) : name_(std::move(name)) {}

void AxiLiteMaster::start_write(std::uint32_t addr, std::uint32_t data, std::uint8_t strb) {
  if (busy()) {
    throw std::logic_error(name_ + ": write to " + hex(addr) + " started while busy");
  }
  state_ = State::kWrite;
  addr_ = addr;
  wdata_ = data;
  strb_ = strb;
  aw_pending_ = true;
  w_pending_ = true;
}

void AxiLiteMaster::reset() {
  state_ = State::kIdle;
  aw_pending_ = w_pending_ = ar_pending_ = false;
}

void AxiLiteMaster::start_read(std::uint32_t addr) {
  if (busy()) {
    throw std::logic_error(name_ + ": read of " + hex(addr) + " started while busy");
  }
  state_ = State::kRead;
  addr_ = addr;
  ar_pending_ = true;
}

void AxiLiteMaster::drive(AxiLiteBus& bus) const {
  const bool writing = state_ == State::kWrite;
  const bool reading = state_ == State::kRead;
  bus.aw.valid = writing && aw_pending_;
  bus.aw.addr = writing ? addr_ : 0;
  bus.aw.prot = 0;
  bus.w.valid = writing && w_pending_;
  bus.w.data = writing ? wdata_ : 0;
  bus.w.strb = writing ? strb_ : 0;
  bus.b.ready = writing && !aw_pending_ && !w_pending_;
  bus.ar.valid = reading && ar_pending_;
  bus.ar.addr = reading ? addr_ : 0;
  bus.ar.prot = 0;
  bus.r.ready = reading && !ar_pending_;
}

void AxiLiteMaster::commit(const AxiLiteBus& bus) {
  if (state_ == State::kWrite) {
    // B handshakes only after both AW and W did, in an earlier cycle (b.ready says so).
    if (bus.b.valid && bus.b.ready) {
      resp_ = static_cast<AxiResp>(bus.b.resp & 3u);
      state_ = State::kIdle;
    }
    if (bus.aw.valid && bus.aw.ready) aw_pending_ = false;
    if (bus.w.valid && bus.w.ready) w_pending_ = false;
  } else if (state_ == State::kRead) {
    if (bus.r.valid && bus.r.ready) {
      resp_ = static_cast<AxiResp>(bus.r.resp & 3u);
      rdata_ = bus.r.data;
      state_ = State::kIdle;
    }
    if (bus.ar.valid && bus.ar.ready) ar_pending_ = false;
  }
}

void AxiLiteMaster::wait(const char* what, const std::function<void()>& tick,
                         std::uint64_t timeout_cycles) {
  for (std::uint64_t n = 0; busy(); ++n) {
    if (n == timeout_cycles) {
      state_ = State::kIdle;  // abandon the access, so the master can be used again
      aw_pending_ = w_pending_ = ar_pending_ = false;
      throw std::runtime_error(name_ + ": AXI-Lite " + what + " " + hex(addr_) +
                               " did not complete within " + std::to_string(timeout_cycles) +
                               " cycles");
    }
    tick();
  }
}

AxiResp AxiLiteMaster::write(std::uint32_t addr, std::uint32_t data,
                             const std::function<void()>& tick, std::uint64_t timeout_cycles,
                             std::uint8_t strb) {
  start_write(addr, data, strb);
  wait("write to", tick, timeout_cycles);
  return resp_;
}

std::uint32_t AxiLiteMaster::read(std::uint32_t addr, const std::function<void()>& tick,
                                  std::uint64_t timeout_cycles, AxiResp* resp) {
  start_read(addr);
  wait("read of", tick, timeout_cycles);
  if (resp != nullptr) *resp = resp_;
  return rdata_;
}

}  // namespace nmsa::tb
