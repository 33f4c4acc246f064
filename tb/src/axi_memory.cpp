// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <sstream>
#include <stdexcept>

#include "nmsa/tb/axi.hpp"

namespace nmsa::tb {

const char* to_string(AxiResp resp) {
  switch (resp) {
    case AxiResp::kOkay: return "OKAY";
    case AxiResp::kExOkay: return "EXOKAY";
    case AxiResp::kSlvErr: return "SLVERR";
    case AxiResp::kDecErr: return "DECERR";
  }
  return "?";
}

namespace {
int rank(AxiResp r) {
  switch (r) {
    case AxiResp::kDecErr: return 2;
    case AxiResp::kSlvErr: return 1;
    default: return 0;
  }
}

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

constexpr std::uint64_t kPageBytes = 4096;
}  // namespace

const char* to_string(AxiChannel channel) {
  switch (channel) {
    case AxiChannel::kAr: return "AR";
    case AxiChannel::kR: return "R";
    case AxiChannel::kAw: return "AW";
    case AxiChannel::kW: return "W";
    case AxiChannel::kB: return "B";
  }
  return "?";
}

AxiResp axi_worst(AxiResp a, AxiResp b) {
  const AxiResp ra = a == AxiResp::kExOkay ? AxiResp::kOkay : a;
  const AxiResp rb = b == AxiResp::kExOkay ? AxiResp::kOkay : b;
  return rank(ra) >= rank(rb) ? ra : rb;
}

std::string format_violations(const std::vector<AxiViolation>& violations, std::size_t max) {
  std::ostringstream os;
  std::size_t n = 0;
  for (const auto& v : violations) {
    if (n++ == max) {
      os << "... and " << (violations.size() - max) << " more\n";
      break;
    }
    os << "cycle " << v.cycle << ": " << v.message << "\n";
  }
  return os.str();
}

AxiMemory::AxiMemory(AxiMemoryConfig config, std::uint64_t seed)
    : config_(config), seed_(seed), rng_(seed ^ 0xa5a5a5a5a5a5a5a5ull) {
  set_config(config);
  // The first cycle: ready for requests unless back-pressure says otherwise.
  ar_ready_ = !roll(config_.p_ar_stall);
  aw_ready_ = !roll(config_.p_aw_stall);
}

void AxiMemory::set_config(const AxiMemoryConfig& config) {
  const unsigned db = config.data_bytes;
  if (db < 4 || db > kAxiMaxDataBytes || (db & (db - 1)) != 0) {
    throw std::invalid_argument("AxiMemory: data_bytes " + std::to_string(db) +
                                " is not a power of two in [4, 64]");
  }
  if (config.max_reads == 0 || config.max_writes == 0) {
    throw std::invalid_argument("AxiMemory: max_reads and max_writes must be at least 1");
  }
  for (double p : {config.p_ar_stall, config.p_aw_stall, config.p_w_stall, config.p_r_gap,
                   config.p_b_gap}) {
    if (!(p >= 0.0 && p < 1.0)) {
      throw std::invalid_argument("AxiMemory: a back-pressure probability is outside [0, 1)");
    }
  }
  if (!(config.background_load >= 0.0 && config.background_load < 1.0)) {
    throw std::invalid_argument("AxiMemory: background_load is outside [0, 1)");
  }
  if (config.background_load > 0.0 &&
      (config.bytes_per_cycle <= 0.0 || config.background_burst_bytes == 0 ||
       config.background_load * config.bytes_per_cycle >= config.background_burst_bytes)) {
    throw std::invalid_argument(
        "AxiMemory: a background load needs a bandwidth limit and bursts larger than the bytes "
        "it takes per cycle");
  }
  config_ = config;
  config_.read_latency = std::max(1u, config_.read_latency);
  config_.write_latency = std::max(1u, config_.write_latency);
  if (config_.bytes_per_cycle > 0.0) {
    tokens_ = std::min(tokens_, config_.bytes_per_cycle + 2.0 * db);
  }
}

// ---------------------------------------------------------------------------------------------
// Storage
// ---------------------------------------------------------------------------------------------

std::uint8_t AxiMemory::fill_byte(std::uint64_t addr) const {
  if (!config_.random_fill) return 0;
  return static_cast<std::uint8_t>(splitmix64(seed_ ^ splitmix64(addr >> 3)) >> (8 * (addr & 7)));
}

AxiMemory::Page& AxiMemory::page(std::uint64_t page_index) {
  auto& p = pages_[page_index];
  if (!p) {
    p = std::make_unique<Page>();
    for (std::uint64_t i = 0; i < kPageBytes; ++i) (*p)[i] = fill_byte(page_index * kPageBytes + i);
  }
  return *p;
}

void AxiMemory::write_bytes(std::uint64_t addr, const std::uint8_t* data, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t a = addr + i;
    page(a / kPageBytes)[a % kPageBytes] = data[i];
  }
}

void AxiMemory::read_bytes(std::uint64_t addr, std::uint8_t* out, std::size_t n) const {
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t a = addr + i;
    const auto it = pages_.find(a / kPageBytes);
    out[i] = it == pages_.end() ? fill_byte(a) : (*it->second)[a % kPageBytes];
  }
}

std::vector<std::uint8_t> AxiMemory::read_bytes(std::uint64_t addr, std::size_t n) const {
  std::vector<std::uint8_t> v(n);
  read_bytes(addr, v.data(), n);
  return v;
}

void AxiMemory::inject_error(std::uint64_t addr, std::uint64_t bytes, AxiResp resp, AxiAccess on) {
  if (resp != AxiResp::kSlvErr && resp != AxiResp::kDecErr) {
    throw std::invalid_argument("AxiMemory::inject_error: response must be SLVERR or DECERR");
  }
  errors_.push_back(ErrorRange{addr, addr + bytes, resp, on});
}

void AxiMemory::stall(AxiChannel channel, std::uint64_t cycles) {
  stall_until_[static_cast<std::size_t>(channel)] = cycle_ + cycles;
  // READY may fall at any time; a presented R beat or B response must stay.
  if (channel == AxiChannel::kAr) ar_ready_ = false;
  if (channel == AxiChannel::kAw) aw_ready_ = false;
  if (channel == AxiChannel::kW) w_ready_ = false;
}

bool AxiMemory::channel_busy(AxiChannel channel) const {
  switch (channel) {
    case AxiChannel::kAr: return ar_requested_;
    case AxiChannel::kR: return !reads_.empty();
    case AxiChannel::kAw: return aw_requested_;
    case AxiChannel::kW: return !writes_.empty();
    case AxiChannel::kB: return !writes_.empty() || !bresps_.empty();
  }
  return false;
}

void AxiMemory::watch_writes(std::uint64_t begin, std::uint64_t end) {
  watching_writes_ = true;
  watch_begin_ = begin;
  watch_end_ = end;
}

void AxiMemory::reset_bus() {
  reads_.clear();
  writes_.clear();
  bresps_.clear();
  r_present_ = false;
  r_beat_ = AxiRChannel{};
  b_present_ = false;
  w_ready_ = false;
  ar_requested_ = aw_requested_ = false;
  stall_until_.fill(0);
}

AxiResp AxiMemory::error_for(std::uint64_t begin, std::uint64_t end, AxiAccess access) const {
  AxiResp r = AxiResp::kOkay;
  for (const auto& e : errors_) {
    if ((static_cast<unsigned>(e.on) & static_cast<unsigned>(access)) == 0) continue;
    if (begin < e.end && e.begin < end) r = axi_worst(r, e.resp);
  }
  return r;
}

// ---------------------------------------------------------------------------------------------
// Bus
// ---------------------------------------------------------------------------------------------

std::uint64_t AxiMemory::beat_addr(const Burst& b, unsigned beat) {
  const std::uint64_t aligned = b.addr & ~static_cast<std::uint64_t>(b.size_bytes - 1);
  return aligned + static_cast<std::uint64_t>(beat) * b.size_bytes;
}

bool AxiMemory::roll(double p) {
  if (p <= 0.0) return false;
  return std::uniform_real_distribution<double>(0.0, 1.0)(rng_) < p;
}

void AxiMemory::drive(Axi4Bus& bus) const {
  bus.ar.ready = ar_ready_;
  bus.aw.ready = aw_ready_;
  bus.w.ready = w_ready_;
  if (r_present_) {
    const bool ready = bus.r.ready;
    bus.r = r_beat_;
    bus.r.ready = ready;
  } else {
    bus.r.valid = false;
    bus.r.id = 0;
    bus.r.data.fill(0);
    bus.r.resp = 0;
    bus.r.last = false;
  }
  bus.b.valid = b_present_;
  if (b_present_) {
    bus.b.id = bresps_.front().id;
    bus.b.resp = static_cast<std::uint8_t>(bresps_.front().resp);
  } else {
    bus.b.id = 0;
    bus.b.resp = 0;
  }
}

// Snapshot of the next R beat, so that its payload stays put while it waits for RREADY even if
// a write changes the memory underneath.
void AxiMemory::prepare_r_beat() {
  const Burst& b = reads_.front();
  const std::uint64_t base = beat_addr(b, b.beat);
  AxiRChannel r{};
  r.valid = true;
  r.id = b.id;
  r.last = b.beat + 1 == b.beats;
  const AxiResp resp = error_for(base, base + b.size_bytes, AxiAccess::kRead);
  r.resp = static_cast<std::uint8_t>(resp);
  if (resp == AxiResp::kOkay) {
    for (unsigned k = 0; k < b.size_bytes; ++k) {
      const std::uint64_t a = base + k;
      std::uint8_t v;
      read_bytes(a, &v, 1);
      set_axi_lane(r.data, static_cast<unsigned>(a % config_.data_bytes), v);
    }
  }
  r_beat_ = r;
}

void AxiMemory::commit(const Axi4Bus& bus) {
  const unsigned db = config_.data_bytes;
  const bool limited = config_.bytes_per_cycle > 0.0;

  // --- This cycle's handshakes -----------------------------------------------------------------
  ar_requested_ = bus.ar.valid;
  aw_requested_ = bus.aw.valid;
  if (bus.ar.valid && ar_ready_) {
    Burst b;
    b.id = bus.ar.id;
    b.addr = bus.ar.addr;
    b.beats = bus.ar.len + 1u;
    b.size_bytes = std::min(1u << bus.ar.size, db);
    b.due = cycle_ + config_.read_latency;
    reads_.push_back(b);
    ++stats_.read_bursts;
  }
  if (r_present_ && bus.r.ready) {
    Burst& b = reads_.front();
    ++stats_.read_beats;
    stats_.bytes_read += b.size_bytes;
    if (r_beat_.resp >= 2) ++stats_.read_errors;
    if (limited) tokens_ -= b.size_bytes;
    if (++b.beat == b.beats) reads_.pop_front();
    r_present_ = false;
  }
  if (bus.aw.valid && aw_ready_) {
    Burst b;
    b.id = bus.aw.id;
    b.addr = bus.aw.addr;
    b.beats = bus.aw.len + 1u;
    b.size_bytes = std::min(1u << bus.aw.size, db);
    writes_.push_back(b);
    ++stats_.write_bursts;
  }
  if (bus.w.valid && w_ready_) {
    // w_ready_ is only raised with a burst waiting for its beats.
    Burst& b = writes_.front();
    const std::uint64_t base = beat_addr(b, b.beat);
    const unsigned lane0 = static_cast<unsigned>(base % db);
    std::uint64_t lo = ~0ull, hi = 0;
    for (unsigned k = 0; k < b.size_bytes; ++k) {
      if ((bus.w.strb >> (lane0 + k)) & 1u) {
        lo = std::min(lo, base + k);
        hi = std::max(hi, base + k + 1);
      }
    }
    const AxiResp resp = lo < hi ? error_for(lo, hi, AxiAccess::kWrite) : AxiResp::kOkay;
    b.resp = axi_worst(b.resp, resp);
    if (resp == AxiResp::kOkay) {
      for (unsigned k = 0; k < b.size_bytes; ++k) {
        if ((bus.w.strb >> (lane0 + k)) & 1u) {
          const std::uint8_t v = axi_lane(bus.w.data, lane0 + k);
          write_bytes(base + k, &v, 1);
          ++stats_.bytes_written;
          if (watching_writes_ && (base + k < watch_begin_ || base + k >= watch_end_)) {
            ++stats_.stray_bytes_written;
          }
        }
      }
    }
    ++stats_.write_beats;
    if (limited) tokens_ -= b.size_bytes;
    if (++b.beat == b.beats) {
      bresps_.push_back(Response{b.id, b.resp, cycle_ + config_.write_latency});
      if (b.resp != AxiResp::kOkay) ++stats_.write_errors;
      writes_.pop_front();
    }
  }
  if (b_present_ && bus.b.ready) {
    bresps_.pop_front();
    b_present_ = false;
  }

  // --- The next cycle's signals --------------------------------------------------------------
  ++cycle_;
  ++stats_.cycles;
  if (limited) {
    tokens_ = std::min(tokens_ + config_.bytes_per_cycle, config_.bytes_per_cycle + 2.0 * db);
    serve_background();
  }
  double budget = limited ? tokens_ : 1e300;

  const auto stalled = [this](AxiChannel c) {
    return cycle_ < stall_until_[static_cast<std::size_t>(c)];
  };
  ar_ready_ = reads_.size() < config_.max_reads && !roll(config_.p_ar_stall) &&
              !stalled(AxiChannel::kAr);
  aw_ready_ = writes_.size() < config_.max_writes && !roll(config_.p_aw_stall) &&
              !stalled(AxiChannel::kAw);

  if (r_present_) {
    budget -= r_beat_.valid ? reads_.front().size_bytes : 0;  // already promised
  } else if (!reads_.empty() && reads_.front().due <= cycle_ && !roll(config_.p_r_gap) &&
             budget >= reads_.front().size_bytes && !stalled(AxiChannel::kR)) {
    prepare_r_beat();
    r_present_ = true;
    budget -= reads_.front().size_bytes;
  }

  w_ready_ = !writes_.empty() && !roll(config_.p_w_stall) &&
             budget >= writes_.front().size_bytes && !stalled(AxiChannel::kW);

  if (!b_present_ && !bresps_.empty() && bresps_.front().due <= cycle_ && !roll(config_.p_b_gap) &&
      !stalled(AxiChannel::kB)) {
    b_present_ = true;
  }
}

// One cycle of the second master: maybe a new burst, then as much of the waiting bytes as the
// budget holds, ahead of the accelerator.
void AxiMemory::serve_background() {
  if (config_.background_load <= 0.0) return;
  const double burst = static_cast<double>(config_.background_burst_bytes);
  if (roll(config_.background_load * config_.bytes_per_cycle / burst)) background_waiting_ += burst;
  const double served = std::min(background_waiting_, std::max(tokens_, 0.0));
  background_waiting_ -= served;
  tokens_ -= served;
  stats_.background_bytes += served;
}

bool AxiMemory::idle() const { return reads_.empty() && writes_.empty() && bresps_.empty(); }

}  // namespace nmsa::tb
