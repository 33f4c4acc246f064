// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
#include <algorithm>
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

bool same_addr(const AxiAddrChannel& a, const AxiAddrChannel& b) {
  return a.id == b.id && a.addr == b.addr && a.len == b.len && a.size == b.size &&
         a.burst == b.burst && a.cache == b.cache && a.prot == b.prot;
}

}  // namespace

Axi4Monitor::Axi4Monitor(Axi4MonitorConfig config, std::string name)
    : config_(config), name_(std::move(name)) {
  const unsigned db = config_.data_bytes;
  if (db < 1 || db > kAxiMaxDataBytes || (db & (db - 1)) != 0) {
    throw std::invalid_argument("Axi4Monitor: data_bytes " + std::to_string(db) +
                                " is not a power of two in [1, 64]");
  }
}

void Axi4Monitor::flag(std::string message) {
  violations_.push_back(AxiViolation{cycle_, name_ + ": " + std::move(message)});
}

bool Axi4Monitor::same_data(const AxiData& a, const AxiData& b) const {
  for (unsigned lane = 0; lane < config_.data_bytes; ++lane) {
    if (axi_lane(a, lane) != axi_lane(b, lane)) return false;
  }
  return true;
}

void Axi4Monitor::check_addr(const char* ch, const AxiAddrChannel& a) {
  const unsigned bus_size = static_cast<unsigned>(__builtin_ctz(config_.data_bytes));
  if (a.burst != kAxiBurstIncr) {
    flag(std::string(ch) + ": burst type " + std::to_string(a.burst) + " is not INCR (addr " +
         hex(a.addr) + ")");
  }
  if (config_.full_width_only ? a.size != bus_size : a.size > bus_size) {
    flag(std::string(ch) + ": size " + std::to_string(a.size) + " (" +
         std::to_string(1u << a.size) + " bytes) on a " + std::to_string(config_.data_bytes) +
         "-byte bus (addr " + hex(a.addr) + ")");
  }
  const std::uint64_t bytes = std::uint64_t{1} << a.size;
  const std::uint64_t first = a.addr;
  const std::uint64_t last = (a.addr & ~(bytes - 1)) + (a.len + 1u) * bytes - 1;
  if ((first >> 12) != (last >> 12)) {
    flag(std::string(ch) + ": burst " + hex(first) + ".." + hex(last) + " (" +
         std::to_string(a.len + 1u) + " beats) crosses a 4 KiB boundary");
  }
}

void Axi4Monitor::reset() {
  reads_.clear();
  writes_.clear();
  early_w_.clear();
  early_w_beats_ = 0;
  have_prev_ = false;
}

void Axi4Monitor::commit(const Axi4Bus& bus) {
  // --- VALID held until READY, payload stable --------------------------------------------------
  if (have_prev_) {
    const auto held = [&](const char* ch, bool pv, bool pr, bool v, bool stable) {
      if (!pv || pr) return;
      if (!v) {
        flag(std::string(ch) + ": VALID dropped before READY");
      } else if (!stable) {
        flag(std::string(ch) + ": payload changed while VALID && !READY");
      }
    };
    held("AR", prev_.ar.valid, prev_.ar.ready, bus.ar.valid, same_addr(prev_.ar, bus.ar));
    held("AW", prev_.aw.valid, prev_.aw.ready, bus.aw.valid, same_addr(prev_.aw, bus.aw));
    held("W", prev_.w.valid, prev_.w.ready, bus.w.valid,
         same_data(prev_.w.data, bus.w.data) && prev_.w.strb == bus.w.strb &&
             prev_.w.last == bus.w.last);
    held("R", prev_.r.valid, prev_.r.ready, bus.r.valid,
         same_data(prev_.r.data, bus.r.data) && prev_.r.id == bus.r.id &&
             prev_.r.resp == bus.r.resp && prev_.r.last == bus.r.last);
    held("B", prev_.b.valid, prev_.b.ready, bus.b.valid,
         prev_.b.id == bus.b.id && prev_.b.resp == bus.b.resp);
  }

  // --- Read channels ---------------------------------------------------------------------------
  if (bus.ar.valid && bus.ar.ready) {
    check_addr("AR", bus.ar);
    reads_.push_back(Read{bus.ar.id, bus.ar.len + 1u, 0});
    ++read_bursts_;
  }
  if (bus.r.valid && bus.r.ready) {
    const auto it = std::find_if(reads_.begin(), reads_.end(),
                                 [&](const Read& r) { return r.id == bus.r.id; });
    if (it == reads_.end()) {
      flag("R: beat (id " + std::to_string(bus.r.id) + ") without an outstanding read request");
    } else {
      ++it->seen;
      const bool last_beat = it->seen == it->beats;
      if (bus.r.last && !last_beat) {
        flag("R: RLAST on beat " + std::to_string(it->seen) + " of a " +
             std::to_string(it->beats) + "-beat burst");
      } else if (!bus.r.last && last_beat) {
        flag("R: RLAST missing on the last beat of a " + std::to_string(it->beats) +
             "-beat burst");
      }
      if (bus.r.last || last_beat) reads_.erase(it);
    }
  }

  // --- Write channels --------------------------------------------------------------------------
  if (bus.aw.valid && bus.aw.ready) {
    check_addr("AW", bus.aw);
    Write w{bus.aw.id, bus.aw.len + 1u, 0, false};
    if (!early_w_.empty()) {  // its whole W burst came first
      if (early_w_.front() != w.beats) {
        flag("W: WLAST on beat " + std::to_string(early_w_.front()) + " of a " +
             std::to_string(w.beats) + "-beat burst");
      }
      w.w_seen = w.beats;
      w.w_done = true;
      early_w_.pop_front();
    } else {  // part of its W burst may have come first
      w.w_seen = early_w_beats_;
      early_w_beats_ = 0;
    }
    writes_.push_back(w);
    ++write_bursts_;
  }
  if (bus.w.valid && bus.w.ready) {
    const auto it = std::find_if(writes_.begin(), writes_.end(),
                                 [](const Write& w) { return !w.w_done; });
    if (it == writes_.end()) {
      // W ahead of its AW: legal AXI, but not for a master that promises W after AW. The beats
      // are counted either way and matched with the AW when it comes.
      if (config_.w_after_aw) flag("W: beat without an issued AW");
      ++early_w_beats_;
      if (bus.w.last) {
        early_w_.push_back(early_w_beats_);
        early_w_beats_ = 0;
      }
    } else {
      ++it->w_seen;
      if (bus.w.last && it->w_seen != it->beats) {
        flag("W: WLAST on beat " + std::to_string(it->w_seen) + " of a " +
             std::to_string(it->beats) + "-beat burst");
      } else if (!bus.w.last && it->w_seen >= it->beats) {
        flag("W: WLAST missing on the last beat of a " + std::to_string(it->beats) +
             "-beat burst");
      }
      if (bus.w.last || it->w_seen >= it->beats) it->w_done = true;
    }
  }
  if (bus.b.valid && bus.b.ready) {
    const auto it = std::find_if(writes_.begin(), writes_.end(),
                                 [&](const Write& w) { return w.id == bus.b.id; });
    if (it == writes_.end()) {
      flag("B: response (id " + std::to_string(bus.b.id) + ") without an outstanding write");
    } else {
      if (!it->w_done) flag("B: response before the last W beat of its burst");
      writes_.erase(it);
    }
  }

  max_reads_ = std::max(max_reads_, reads_.size());
  max_writes_ = std::max(max_writes_, writes_.size());
  prev_ = bus;
  have_prev_ = true;
  ++cycle_;
}

}  // namespace nmsa::tb
