// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// The DMA engines' test benches (test_dma.cpp): the requests and the reference burst split,
// a bench per engine around its Verilated model, AxiMemory and Axi4Monitor, the checks of what an
// engine delivered or wrote against the reference, and the host memories the tests run under.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <numeric>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "Vnmsa_dma_rd.h"
#include "Vnmsa_dma_rd_o1.h"
#include "Vnmsa_dma_rd_w32.h"
#include "Vnmsa_dma_rd_w512.h"
#include "Vnmsa_dma_wr.h"
#include "Vnmsa_dma_wr_w32.h"
#include "Vnmsa_dma_wr_w512.h"
#include "nmsa/tb/axi.hpp"
#include "nmsa/tb/port_bits.hpp"
#include "nmsa/tb/sim_context.hpp"

namespace nmsa::tb {

// ---------------------------------------------------------------------------------------------
// Requests and the reference burst split
// ---------------------------------------------------------------------------------------------

// Parameters of one verilated engine; must match its line in cmake/nmsa_dma.cmake (a mismatch
// shows up at once as a size or burst-length violation).
struct DmaParams {
  unsigned addr_w;
  unsigned data_bytes;
  unsigned len_w;
  unsigned max_burst;
  unsigned max_outstanding;
};

struct DmaRequest {
  std::uint64_t addr = 0;
  std::uint32_t row_bytes = 0;
  std::uint32_t rows = 0;
  std::uint64_t stride = 0;
};

inline std::string describe(const DmaRequest& r) {
  std::ostringstream os;
  os << "{addr 0x" << std::hex << r.addr << std::dec << ", " << r.rows << " rows of "
     << r.row_bytes << " B, stride " << r.stride << "}";
  return os.str();
}

inline std::string hex(std::uint64_t v) {
  std::ostringstream os;
  os << "0x" << std::hex << v;
  return os.str();
}

struct BurstRef {
  std::uint64_t addr;
  unsigned beats;
  bool operator==(const BurstRef& o) const { return addr == o.addr && beats == o.beats; }
};

// The contract, written independently of the RTL: full rows in INCR bursts of at most
// max_burst beats that stop at every 4 KiB boundary; a narrow row is one beat at its beat.
inline std::vector<BurstRef> split_bursts(const DmaRequest& r, const DmaParams& p) {
  const std::uint64_t db = p.data_bytes;
  std::vector<BurstRef> out;
  for (std::uint32_t i = 0; i < r.rows; ++i) {
    std::uint64_t a = r.addr + i * r.stride;
    if (r.row_bytes < db) {
      out.push_back(BurstRef{a & ~(db - 1), 1});
      continue;
    }
    std::uint64_t left = r.row_bytes / db;
    while (left > 0) {
      const std::uint64_t to_4k = (4096 - (a % 4096)) / db;
      const std::uint64_t n = std::min<std::uint64_t>({p.max_burst, left, to_4k});
      out.push_back(BurstRef{a, static_cast<unsigned>(n)});
      a += n * db;
      left -= n;
    }
  }
  return out;
}

inline std::uint64_t beats_of(const DmaRequest& r, const DmaParams& p) {
  return r.row_bytes < p.data_bytes ? r.rows
                                    : std::uint64_t{r.rows} * (r.row_bytes / p.data_bytes);
}

struct ErrorRange {
  std::uint64_t begin, end;
  AxiResp resp;
};

inline AxiResp expected_resp(const std::vector<ErrorRange>& errors, std::uint64_t begin,
                      std::uint64_t end) {
  AxiResp r = AxiResp::kOkay;
  for (const auto& e : errors) {
    if (begin < e.end && e.begin < end) r = axi_worst(r, e.resp);
  }
  return r;
}

// Test regions, placed per address width: low memory, just below 4 GiB (rows cross bit 32),
// and high in the address space.
inline std::vector<std::uint64_t> region_bases(const DmaParams& p) {
  return {0x100000ull, 0x100000000ull - 0x80000ull, (std::uint64_t{1} << (p.addr_w - 1)) + 0x200000ull};
}

inline std::uint64_t uniform(std::mt19937_64& rng, std::uint64_t lo, std::uint64_t hi) {
  return std::uniform_int_distribution<std::uint64_t>(lo, hi)(rng);
}

// A full-width request: beat-aligned, often close to a 4 KiB boundary, rows from one beat to
// a few pages, strides from overlapping to page-sized.
inline DmaRequest random_full_request(std::mt19937_64& rng, const DmaParams& p) {
  const std::uint64_t db = p.data_bytes;
  const auto bases = region_bases(p);
  DmaRequest r;
  r.rows = static_cast<std::uint32_t>(uniform(rng, 1, 5));
  std::uint64_t beats = uniform(rng, 0, 4) == 0 ? uniform(rng, 1, 2 * 4096 / db + 3)
                                                 : uniform(rng, 1, 3 * p.max_burst + 3);
  const std::uint64_t max_beats = ((std::uint64_t{1} << p.len_w) - 1) / db;
  beats = std::min(beats, max_beats);
  r.row_bytes = static_cast<std::uint32_t>(beats * db);
  std::uint64_t offset;
  if (uniform(rng, 0, 1) == 0) {
    offset = (4096 - db * uniform(rng, 0, p.max_burst + 2)) % 4096;  // near a boundary
  } else {
    offset = db * uniform(rng, 0, 4096 / db - 1);
  }
  r.addr = bases[uniform(rng, 0, bases.size() - 1)] + 4096 * uniform(rng, 0, 63) + offset;
  switch (uniform(rng, 0, 4)) {
    case 0: r.stride = r.row_bytes; break;                                // contiguous
    case 1: r.stride = 4096 * uniform(rng, 1, 3); break;                  // page-aligned rows
    case 2: r.stride = db * uniform(rng, 0, beats); break;                // overlapping rows
    default: r.stride = r.row_bytes + db * uniform(rng, 1, 9); break;     // gaps between rows
  }
  return r;
}

// A narrow write request: each row inside one beat, at any lane.
inline DmaRequest random_narrow_request(std::mt19937_64& rng, const DmaParams& p) {
  const std::uint64_t db = p.data_bytes;
  const auto bases = region_bases(p);
  DmaRequest r;
  r.rows = static_cast<std::uint32_t>(uniform(rng, 1, 12));
  std::uint64_t lane;
  if (uniform(rng, 0, 1) == 0) {
    // Power-of-two rows at a lane aligned to their size; any multiple of it as stride.
    const unsigned log_db = static_cast<unsigned>(__builtin_ctzll(db));
    const std::uint64_t rb = std::uint64_t{1} << uniform(rng, 0, log_db - 1);
    r.row_bytes = static_cast<std::uint32_t>(rb);
    lane = rb * uniform(rng, 0, db / rb - 1);
    r.stride = rb * uniform(rng, 0, 64);
  } else {
    // Any size at any lane where it fits; the stride keeps every row at the same lane.
    const std::uint64_t rb = uniform(rng, 1, db - 1);
    r.row_bytes = static_cast<std::uint32_t>(rb);
    lane = uniform(rng, 0, db - rb);
    r.stride = std::lcm(rb, db) * uniform(rng, 1, 4);
  }
  r.addr = bases[uniform(rng, 0, bases.size() - 1)] + 4096 * uniform(rng, 0, 63) +
           db * uniform(rng, 0, 4096 / db - 1) + lane;
  return r;
}

// ---------------------------------------------------------------------------------------------
// Benches
// ---------------------------------------------------------------------------------------------

template <class Model>
void drive_request(Model& m, const DmaParams& p, const DmaRequest* r) {
  static const DmaRequest kIdle{};
  if (r == nullptr) r = &kIdle;
  m.req_valid_i = r != &kIdle;
  m.req_cancel_i = 0;
  put_bits(m.req_addr_i, 0, p.addr_w, r->addr);
  put_bits(m.req_row_bytes_i, 0, p.len_w, r->row_bytes);
  put_bits(m.req_rows_i, 0, p.len_w, r->rows);
  put_bits(m.req_stride_i, 0, p.addr_w, r->stride);
}

inline AxiMemoryConfig on_bus(AxiMemoryConfig mc, const DmaParams& p) {
  mc.data_bytes = p.data_bytes;
  return mc;
}

// Clock, reset, context and the pieces both benches share.
template <class Model>
class BenchBase {
 public:
  BenchBase(const DmaParams& p, const AxiMemoryConfig& mc, std::uint64_t seed, const char* name)
      : p_(p), seed_(seed), rng_(seed * 0x9e3779b97f4a7c15ull + 11), context_(make_context(seed)),
        dut_(std::make_unique<Model>(context_.get(), name)), mem_(on_bus(mc, p), seed),
        mon_(Axi4MonitorConfig{p.data_bytes, true, true}, name) {
    // An RTL assertion marks the context instead of aborting the test binary.
    context_->fatalOnError(false);
  }
  // Verilator 5.006 sends assertion failures to, and unregisters a model's scopes from, the
  // thread's current context (the last one constructed), not the model's own: with several
  // benches alive, ours is made current before every evaluation and before destruction.
  virtual ~BenchBase() {
    Verilated::threadContextp(context_.get());
    dut_->final();
    record_coverage(*context_);
    dut_.reset();
  }

  AxiMemory& mem() { return mem_; }
  Axi4Monitor& mon() { return mon_; }
  Model& dut() { return *dut_; }
  std::uint64_t cycles() const { return cycles_; }
  std::uint64_t seed() const { return seed_; }
  bool assertion_failed() const { return context_->gotError(); }
  bool throw_on_assertion = true;

 protected:
  void eval() {
    Verilated::threadContextp(context_.get());
    dut_->eval();
  }
  // A falling edge on rst_ni first, so that the asynchronous reset acts before the first clock
  // edge: registers start from random values, and a clock edge with rst_ni low from time 0 (no
  // negedge) would otherwise see them, assertion enable included.
  void reset() {
    dut_->clk_i = 0;
    dut_->rst_ni = 1;
    eval();
    dut_->rst_ni = 0;
    eval();
    for (int i = 0; i < 3; ++i) {
      dut_->clk_i = 1;
      eval();
      dut_->clk_i = 0;
      eval();
    }
    dut_->rst_ni = 1;
    eval();
  }
  void edge() {
    dut_->clk_i = 1;
    eval();
    ++cycles_;
    if (throw_on_assertion && context_->gotError()) {
      throw std::runtime_error("RTL assertion failed in cycle " + std::to_string(cycles_ - 1) +
                               " (see the %Error line above); " + seed_note(seed_));
    }
  }
  bool roll(double p) { return p > 0.0 && std::uniform_real_distribution<double>(0, 1)(rng_) < p; }
  [[noreturn]] void timeout(const std::string& what) const {
    throw std::runtime_error("timeout after " + std::to_string(cycles_) + " cycles: " + what +
                             "; " + seed_note(seed_));
  }

  DmaParams p_;
  std::uint64_t seed_;
  std::mt19937_64 rng_;
  std::unique_ptr<VerilatedContext> context_;
  std::unique_ptr<Model> dut_;
  AxiMemory mem_;
  Axi4Monitor mon_;
  Axi4Bus bus_{};
  std::uint64_t cycles_ = 0;
};

template <class Model>
class RdBench : public BenchBase<Model> {
  using Base = BenchBase<Model>;

 public:
  struct Beat {
    AxiData data;
    std::uint8_t resp;
    bool last;
    std::uint64_t cycle;
  };

  RdBench(const DmaParams& p, const AxiMemoryConfig& mc, std::uint64_t seed)
      : Base(p, mc, seed, "dma_rd") {
    Model& m = *this->dut_;
    drive_request(m, p, nullptr);
    m.rd_ready_i = 0;
    axi4_read_to_model(Axi4Bus{}, m);
    this->reset();
  }

  double p_consumer_stall = 0.0;  // rd_ready_i low

  void push(const DmaRequest& r) {
    pending_.push_back(r);
    expected_beats_ += beats_of(r, this->p_);
  }

  void cycle() {
    Model& m = *this->dut_;
    this->mem_.drive(this->bus_);
    axi4_read_to_model(this->bus_, m);
    drive_request(m, this->p_, pending_.empty() ? nullptr : &pending_.front());
    m.req_cancel_i = cancel_;
    cancel_ = false;
    m.rd_ready_i = consumer_ready_;
    m.clk_i = 0;
    this->eval();
    axi4_read_from_model(m, this->bus_);
    // busy_o: a request was accepted (in an earlier cycle) and not all its beats delivered.
    if ((m.busy_o != 0) != (accepted_beats_ > beats_.size())) ++busy_mismatches_;
    if (m.req_valid_i && m.req_ready_o) {
      accepted_.push_back(this->cycles_);
      accepted_beats_ += beats_of(pending_.front(), this->p_);
      pending_.pop_front();
    }
    if (m.rd_valid_o && m.rd_ready_i) {
      Beat b{};
      detail::data_from_port(m.rd_data_o, b.data);
      b.resp = m.rd_resp_o;
      b.last = m.rd_last_o != 0;
      b.cycle = this->cycles_;
      beats_.push_back(b);
    }
    if (this->bus_.ar.valid && this->bus_.ar.ready) {
      ars_.push_back(BurstRef{this->bus_.ar.addr, this->bus_.ar.len + 1u});
    }
    this->mem_.commit(this->bus_);
    this->mon_.commit(this->bus_);
    consumer_ready_ = !this->roll(p_consumer_stall);
    this->edge();
  }

  // Runs until every pushed request is delivered and the engine is idle.
  void run(std::uint64_t timeout_cycles) {
    const std::uint64_t start = this->cycles_;
    while (!pending_.empty() || beats_.size() < expected_beats_ || this->dut_->busy_o) {
      if (this->cycles_ - start >= timeout_cycles) {
        this->timeout("read: " + std::to_string(beats_.size()) + " of " +
                      std::to_string(expected_beats_) + " beats delivered, " +
                      std::to_string(pending_.size()) + " requests not accepted");
      }
      cycle();
    }
  }

  // Withdraws the newest request if the engine has not accepted it, as nmsa_top does on an
  // abort: with `cancel` the engine is told in that cycle (req_cancel_i), without it its request
  // check must fire. Returns whether there was one to withdraw.
  bool withdraw_last(bool cancel) {
    if (pending_.empty()) return false;
    expected_beats_ -= beats_of(pending_.back(), this->p_);
    pending_.pop_back();
    cancel_ = cancel;
    return true;
  }

  const std::vector<Beat>& beats() const { return beats_; }
  const std::vector<BurstRef>& ars() const { return ars_; }
  const std::vector<std::uint64_t>& accepted() const { return accepted_; }
  std::uint64_t busy_mismatches() const { return busy_mismatches_; }

 private:
  std::deque<DmaRequest> pending_;
  std::uint64_t expected_beats_ = 0;
  std::uint64_t accepted_beats_ = 0;
  std::uint64_t busy_mismatches_ = 0;
  bool consumer_ready_ = true;
  bool cancel_ = false;
  std::vector<Beat> beats_;
  std::vector<BurstRef> ars_;
  std::vector<std::uint64_t> accepted_;
};

template <class Model>
class WrBench : public BenchBase<Model> {
  using Base = BenchBase<Model>;

 public:
  struct Completion {
    std::uint64_t cycle;
    AxiResp resp;
    std::uint64_t b_before;  // B handshakes in earlier cycles
  };

  WrBench(const DmaParams& p, const AxiMemoryConfig& mc, std::uint64_t seed)
      : Base(p, mc, seed, "dma_wr") {
    Model& m = *this->dut_;
    drive_request(m, p, nullptr);
    m.wr_valid_i = 0;
    detail::data_to_port(AxiData{}, m.wr_data_i);
    axi4_write_to_model(Axi4Bus{}, m);
    this->reset();
  }

  double p_producer_gap = 0.0;  // no new wr beat although one is ready

  void push(const DmaRequest& r, const std::vector<AxiData>& beats) {
    pending_.push_back(r);
    stream_.insert(stream_.end(), beats.begin(), beats.end());
    ++requests_;
  }

  void cycle() {
    Model& m = *this->dut_;
    this->mem_.drive(this->bus_);
    axi4_write_to_model(this->bus_, m);
    drive_request(m, this->p_, pending_.empty() ? nullptr : &pending_.front());
    m.wr_valid_i = producer_valid_;
    detail::data_to_port(producer_valid_ ? stream_[next_beat_] : AxiData{}, m.wr_data_i);
    m.clk_i = 0;
    this->eval();
    axi4_write_from_model(m, this->bus_);
    // busy_o: a request was accepted (in an earlier cycle) and its completion pulse is not over.
    if ((m.busy_o != 0) != (accepted_ > cpls_.size())) ++busy_mismatches_;
    if (m.req_valid_i && m.req_ready_o) {
      pending_.pop_front();
      ++accepted_;
    }
    if (m.wr_valid_i && m.wr_ready_o) {
      ++next_beat_;
      producer_valid_ = false;
    }
    if (m.cpl_valid_o) {
      cpls_.push_back(Completion{this->cycles_, static_cast<AxiResp>(m.cpl_resp_o), b_count_});
    }
    if (this->bus_.aw.valid && this->bus_.aw.ready) {
      aws_.push_back(BurstRef{this->bus_.aw.addr, this->bus_.aw.len + 1u});
    }
    if (this->bus_.b.valid && this->bus_.b.ready) ++b_count_;
    this->mem_.commit(this->bus_);
    this->mon_.commit(this->bus_);
    if (!producer_valid_) {
      producer_valid_ = next_beat_ < stream_.size() && !this->roll(p_producer_gap);
    }
    this->edge();
  }

  void run(std::uint64_t timeout_cycles) {
    const std::uint64_t start = this->cycles_;
    while (!pending_.empty() || next_beat_ < stream_.size() || cpls_.size() < requests_ ||
           this->dut_->busy_o) {
      if (this->cycles_ - start >= timeout_cycles) {
        this->timeout("write: " + std::to_string(next_beat_) + " of " +
                      std::to_string(stream_.size()) + " beats taken, " +
                      std::to_string(cpls_.size()) + " of " + std::to_string(requests_) +
                      " completions");
      }
      cycle();
    }
  }

  const std::vector<Completion>& completions() const { return cpls_; }
  const std::vector<BurstRef>& aws() const { return aws_; }
  std::size_t beats_taken() const { return next_beat_; }
  std::uint64_t busy_mismatches() const { return busy_mismatches_; }

 private:
  std::size_t accepted_ = 0;
  std::uint64_t busy_mismatches_ = 0;
  std::deque<DmaRequest> pending_;
  std::vector<AxiData> stream_;
  std::size_t next_beat_ = 0;
  bool producer_valid_ = false;
  std::size_t requests_ = 0;
  std::uint64_t b_count_ = 0;
  std::vector<Completion> cpls_;
  std::vector<BurstRef> aws_;
};

template <class M, unsigned AddrW, unsigned DataW, unsigned LenW, unsigned Burst, unsigned Out>
struct Variant {
  using Model = M;
  static DmaParams params() { return DmaParams{AddrW, DataW / 8, LenW, Burst, Out}; }
};

using RdDefault = Variant<Vnmsa_dma_rd, 64, 64, 16, 16, 4>;
using RdO1 = Variant<Vnmsa_dma_rd_o1, 64, 64, 16, 16, 1>;
using RdW32 = Variant<Vnmsa_dma_rd_w32, 64, 32, 20, 256, 2>;
using RdW512 = Variant<Vnmsa_dma_rd_w512, 48, 512, 16, 8, 3>;
using WrDefault = Variant<Vnmsa_dma_wr, 64, 64, 16, 16, 4>;
using WrW32 = Variant<Vnmsa_dma_wr_w32, 64, 32, 20, 256, 2>;
using WrW512 = Variant<Vnmsa_dma_wr_w512, 48, 512, 16, 8, 3>;

// ---------------------------------------------------------------------------------------------
// Checks
// ---------------------------------------------------------------------------------------------

// The delivered beats against memory, request by request; rd_last_o exactly on the last beat
// of each request; rd_resp_o as the error ranges say. Returns "" or the first few mismatches.
template <class Beat>
std::string check_read_beats(const std::vector<Beat>& beats, const std::vector<DmaRequest>& reqs,
                             const DmaParams& p, const AxiMemory& mem,
                             const std::vector<ErrorRange>& errors = {}) {
  std::ostringstream os;
  int shown = 0;
  const auto report = [&](const std::string& s) {
    if (shown++ < 8) os << s << "\n";
  };
  const unsigned db = p.data_bytes;
  std::size_t k = 0;
  for (std::size_t q = 0; q < reqs.size(); ++q) {
    const DmaRequest& r = reqs[q];
    const std::uint64_t row_beats = r.row_bytes / db;
    for (std::uint32_t i = 0; i < r.rows; ++i) {
      for (std::uint64_t j = 0; j < row_beats; ++j, ++k) {
        const std::uint64_t a = r.addr + i * r.stride + j * db;
        const std::string where = "request " + std::to_string(q) + " " + describe(r) + " row " +
                                  std::to_string(i) + " beat " + std::to_string(j) + " (" +
                                  hex(a) + ")";
        if (k >= beats.size()) {
          report("missing beat: " + where);
          return os.str();
        }
        const auto& b = beats[k];
        const bool last = i + 1 == r.rows && j + 1 == row_beats;
        if (b.last != last) report("rd_last_o " + std::to_string(b.last) + " at " + where);
        const AxiResp want = expected_resp(errors, a, a + db);
        if (b.resp != static_cast<std::uint8_t>(want)) {
          report(std::string("rd_resp_o ") + to_string(static_cast<AxiResp>(b.resp)) +
                 ", expected " + to_string(want) + " at " + where);
        }
        if (want == AxiResp::kOkay) {
          const auto bytes = mem.read_bytes(a, db);
          for (unsigned lane = 0; lane < db; ++lane) {
            if (axi_lane(b.data, lane) != bytes[lane]) {
              report("data lane " + std::to_string(lane) + " is " +
                     std::to_string(axi_lane(b.data, lane)) + ", memory holds " +
                     std::to_string(bytes[lane]) + " at " + where);
              break;
            }
          }
        }
      }
    }
  }
  if (k != beats.size()) report(std::to_string(beats.size() - k) + " extra beats delivered");
  return os.str();
}

template <class Bursts>
std::string check_bursts(const Bursts& got, const std::vector<DmaRequest>& reqs,
                         const DmaParams& p) {
  std::vector<BurstRef> want;
  for (const auto& r : reqs) {
    const auto b = split_bursts(r, p);
    want.insert(want.end(), b.begin(), b.end());
  }
  if (got.size() != want.size()) {
    return "issued " + std::to_string(got.size()) + " bursts, expected " +
           std::to_string(want.size());
  }
  for (std::size_t i = 0; i < want.size(); ++i) {
    if (!(got[i] == want[i])) {
      return "burst " + std::to_string(i) + " is " + hex(got[i].addr) + " x" +
             std::to_string(got[i].beats) + ", expected " + hex(want[i].addr) + " x" +
             std::to_string(want[i].beats);
    }
  }
  return "";
}

// The beats of a write request: random data; a narrow row's beat has garbage above its bytes.
inline std::vector<AxiData> random_beats(std::mt19937_64& rng, const DmaRequest& r,
                                         const DmaParams& p) {
  std::vector<AxiData> beats(beats_of(r, p));
  for (auto& b : beats) {
    for (unsigned w = 0; w < p.data_bytes / 8 + (p.data_bytes % 8 != 0); ++w) b[w] = rng();
    for (unsigned lane = p.data_bytes; lane < kAxiMaxDataBytes; ++lane) set_axi_lane(b, lane, 0);
  }
  return beats;
}

// What the memory must hold after a write request: each beat not answered with an error.
inline void apply_write(AxiMemory& ref, const DmaRequest& r, const std::vector<AxiData>& beats,
                 const DmaParams& p, const std::vector<ErrorRange>& errors) {
  const unsigned db = p.data_bytes;
  std::size_t k = 0;
  for (std::uint32_t i = 0; i < r.rows; ++i) {
    const std::uint64_t a = r.addr + i * r.stride;
    if (r.row_bytes < db) {
      const AxiData& b = beats[k++];
      if (expected_resp(errors, a, a + r.row_bytes) != AxiResp::kOkay) continue;
      for (unsigned j = 0; j < r.row_bytes; ++j) {
        const std::uint8_t v = axi_lane(b, j);
        ref.write_bytes(a + j, &v, 1);
      }
      continue;
    }
    for (std::uint64_t j = 0; j < r.row_bytes / db; ++j) {
      const AxiData& b = beats[k++];
      const std::uint64_t ba = a + j * db;
      if (expected_resp(errors, ba, ba + db) != AxiResp::kOkay) continue;
      for (unsigned lane = 0; lane < db; ++lane) {
        const std::uint8_t v = axi_lane(b, lane);
        ref.write_bytes(ba + lane, &v, 1);
      }
    }
  }
}

// Memory equals the reference over every request's span plus a margin on both sides (bytes
// between rows and around the span must be untouched).
inline std::string compare_regions(const AxiMemory& mem, const AxiMemory& ref,
                            const std::vector<DmaRequest>& reqs) {
  for (const auto& r : reqs) {
    const std::uint64_t end = r.addr + (r.rows - 1) * r.stride + r.row_bytes;
    const std::uint64_t lo = std::min(r.addr, end) - 160;
    const std::uint64_t hi = std::max(r.addr + r.row_bytes, end) + 160;
    const auto got = mem.read_bytes(lo, hi - lo);
    const auto want = ref.read_bytes(lo, hi - lo);
    for (std::size_t i = 0; i < got.size(); ++i) {
      if (got[i] != want[i]) {
        return "byte " + hex(lo + i) + " is " + std::to_string(got[i]) + ", expected " +
               std::to_string(want[i]) + " (request " + describe(r) + ")";
      }
    }
  }
  return "";
}

// Memory settings the random tests cycle through: ideal, random back-pressure, long latency
// with a bandwidth limit.
inline std::vector<std::pair<std::string, AxiMemoryConfig>> memory_phases(
    std::mt19937_64& rng) {
  std::vector<std::pair<std::string, AxiMemoryConfig>> phases;
  AxiMemoryConfig ideal;
  phases.emplace_back("ideal", ideal);
  AxiMemoryConfig noisy;
  noisy.read_latency = static_cast<unsigned>(uniform(rng, 1, 30));
  noisy.write_latency = static_cast<unsigned>(uniform(rng, 1, 10));
  noisy.p_ar_stall = noisy.p_aw_stall = 0.3;
  noisy.p_w_stall = noisy.p_r_gap = 0.3;
  noisy.p_b_gap = 0.2;
  noisy.max_reads = noisy.max_writes = static_cast<unsigned>(uniform(rng, 1, 6));
  phases.emplace_back("back-pressure", noisy);
  AxiMemoryConfig slow;
  slow.read_latency = 80;
  slow.write_latency = 40;
  slow.bytes_per_cycle = 4.5;
  phases.emplace_back("latency+bandwidth", slow);
  return phases;
}


}  // namespace nmsa::tb
