// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// The DMA engines (nmsa_dma_rd, nmsa_dma_wr) against AxiMemory, watched by Axi4Monitor, in
// several parameter sets (cmake/nmsa_dma.cmake). The harness components themselves are checked
// in test_axi_harness.cpp.
//
// Every random test takes its seed from NMSA_SEED (tb::test_seed) and names it on failure; every
// simulation loop has a cycle timeout.
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
namespace {

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

std::string describe(const DmaRequest& r) {
  std::ostringstream os;
  os << "{addr 0x" << std::hex << r.addr << std::dec << ", " << r.rows << " rows of "
     << r.row_bytes << " B, stride " << r.stride << "}";
  return os.str();
}

std::string hex(std::uint64_t v) {
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
std::vector<BurstRef> split_bursts(const DmaRequest& r, const DmaParams& p) {
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

std::uint64_t beats_of(const DmaRequest& r, const DmaParams& p) {
  return r.row_bytes < p.data_bytes ? r.rows
                                    : std::uint64_t{r.rows} * (r.row_bytes / p.data_bytes);
}

struct ErrorRange {
  std::uint64_t begin, end;
  AxiResp resp;
};

AxiResp expected_resp(const std::vector<ErrorRange>& errors, std::uint64_t begin,
                      std::uint64_t end) {
  AxiResp r = AxiResp::kOkay;
  for (const auto& e : errors) {
    if (begin < e.end && e.begin < end) r = axi_worst(r, e.resp);
  }
  return r;
}

// Test regions, placed per address width: low memory, just below 4 GiB (rows cross bit 32),
// and high in the address space.
std::vector<std::uint64_t> region_bases(const DmaParams& p) {
  return {0x100000ull, 0x100000000ull - 0x80000ull, (std::uint64_t{1} << (p.addr_w - 1)) + 0x200000ull};
}

std::uint64_t uniform(std::mt19937_64& rng, std::uint64_t lo, std::uint64_t hi) {
  return std::uniform_int_distribution<std::uint64_t>(lo, hi)(rng);
}

// A full-width request: beat-aligned, often close to a 4 KiB boundary, rows from one beat to
// a few pages, strides from overlapping to page-sized.
DmaRequest random_full_request(std::mt19937_64& rng, const DmaParams& p) {
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
DmaRequest random_narrow_request(std::mt19937_64& rng, const DmaParams& p) {
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

AxiMemoryConfig on_bus(AxiMemoryConfig mc, const DmaParams& p) {
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
std::vector<AxiData> random_beats(std::mt19937_64& rng, const DmaRequest& r, const DmaParams& p) {
  std::vector<AxiData> beats(beats_of(r, p));
  for (auto& b : beats) {
    for (unsigned w = 0; w < p.data_bytes / 8 + (p.data_bytes % 8 != 0); ++w) b[w] = rng();
    for (unsigned lane = p.data_bytes; lane < kAxiMaxDataBytes; ++lane) set_axi_lane(b, lane, 0);
  }
  return beats;
}

// What the memory must hold after a write request: each beat not answered with an error.
void apply_write(AxiMemory& ref, const DmaRequest& r, const std::vector<AxiData>& beats,
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
std::string compare_regions(const AxiMemory& mem, const AxiMemory& ref,
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
std::vector<std::pair<std::string, AxiMemoryConfig>> memory_phases(std::mt19937_64& rng) {
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

// ---------------------------------------------------------------------------------------------
// Read engine
// ---------------------------------------------------------------------------------------------

template <class V>
class DmaReadTest : public ::testing::Test {};
using ReadVariants = ::testing::Types<RdDefault, RdO1, RdW32, RdW512>;
TYPED_TEST_SUITE(DmaReadTest, ReadVariants);

TYPED_TEST(DmaReadTest, RandomRequestsBackToBack) {
  const std::uint64_t seed = test_seed(101);
  SCOPED_TRACE(seed_note(seed));
  const DmaParams p = TypeParam::params();
  std::mt19937_64 rng(seed);
  for (const auto& [phase, mc0] : memory_phases(rng)) {
    SCOPED_TRACE("memory: " + phase);
    AxiMemoryConfig mc = mc0;
    mc.random_fill = true;
    RdBench<typename TypeParam::Model> bench(p, mc, seed);
    bench.p_consumer_stall = phase == "ideal" ? 0.0 : 0.3;
    std::vector<DmaRequest> reqs;
    for (int i = 0; i < 40; ++i) {
      reqs.push_back(random_full_request(rng, p));
      bench.push(reqs.back());
    }
    bench.run(400000);
    EXPECT_EQ(check_read_beats(bench.beats(), reqs, p, bench.mem()), "");
    EXPECT_EQ(check_bursts(bench.ars(), reqs, p), "");
    EXPECT_TRUE(bench.mon().violations().empty()) << bench.mon().report();
    EXPECT_LE(bench.mon().max_reads_in_flight(), p.max_outstanding);
    EXPECT_EQ(bench.busy_mismatches(), 0u);
    EXPECT_TRUE(bench.mem().idle());
    std::printf("[ info ] %u-bit read, %s: %zu requests, %zu beats, %zu bursts in %llu cycles, "
                "max %zu in flight\n",
                8 * p.data_bytes, phase.c_str(), reqs.size(), bench.beats().size(),
                bench.ars().size(), static_cast<unsigned long long>(bench.cycles()),
                bench.mon().max_reads_in_flight());
  }
}

// With a long latency the engine keeps MaxOutstanding bursts in flight, and a new request is
// accepted while the previous one's data is still arriving.
TEST(DmaRead, LatencyHeavyKeepsSeveralBurstsInFlight) {
  const std::uint64_t seed = test_seed(102);
  SCOPED_TRACE(seed_note(seed));
  const DmaParams p = RdDefault::params();
  AxiMemoryConfig mc;
  mc.read_latency = 60;
  mc.p_ar_stall = 0.2;
  mc.random_fill = true;
  RdBench<Vnmsa_dma_rd> bench(p, mc, seed);
  bench.p_consumer_stall = 0.2;
  std::vector<DmaRequest> reqs = {{0x10000, 512, 2, 1024}, {0x20ff0 - 8, 64, 3, 4096},
                                  {0x30000, 8, 5, 8}};
  for (const auto& r : reqs) bench.push(r);
  bench.run(20000);
  EXPECT_EQ(check_read_beats(bench.beats(), reqs, p, bench.mem()), "");
  EXPECT_TRUE(bench.mon().violations().empty()) << bench.mon().report();
  std::printf("[ info ] read, latency 60: max bursts in flight %zu (MaxOutstanding %u)\n",
              bench.mon().max_reads_in_flight(), p.max_outstanding);
  EXPECT_GT(bench.mon().max_reads_in_flight(), 1u);
  EXPECT_EQ(bench.mon().max_reads_in_flight(), p.max_outstanding);
  // Pipelining: request 1 was accepted before request 0's last beat.
  ASSERT_EQ(bench.accepted().size(), 3u);
  const std::uint64_t req0_beats = beats_of(reqs[0], p);
  EXPECT_LT(bench.accepted()[1], bench.beats()[req0_beats - 1].cycle);
}

// Zero wait states: one beat per cycle on a long request.
TEST(DmaRead, ThroughputOneBeatPerCycle) {
  const DmaParams p = RdDefault::params();
  AxiMemoryConfig mc;  // read_latency 1: the earliest a slave without a combinational path can
  RdBench<Vnmsa_dma_rd> bench(p, mc, test_seed(103));
  const DmaRequest r{0x40000, 8192, 4, 8192 + 64};
  bench.push(r);
  bench.run(100000);
  const std::uint64_t beats = beats_of(r, p);
  ASSERT_EQ(bench.beats().size(), beats);
  const std::uint64_t cycles = bench.beats().back().cycle - bench.accepted().front() + 1;
  std::printf("[ info ] read, no wait states: %llu beats in %llu cycles (%.3f beats/cycle)\n",
              static_cast<unsigned long long>(beats), static_cast<unsigned long long>(cycles),
              static_cast<double>(beats) / static_cast<double>(cycles));
  EXPECT_LE(cycles, beats + 4);
  EXPECT_TRUE(bench.mon().violations().empty()) << bench.mon().report();
}

// 100-cycle latency: MaxOutstanding=4 bursts of 16 beats hide 64 beats per round trip, so the
// rate approaches min(1, 64 / (100 + 16)); a single-outstanding engine gets 16 / (100 + 16).
TEST(DmaRead, ThroughputUnderLatencyScalesWithOutstanding) {
  const DmaParams p4 = RdDefault::params();
  const DmaParams p1 = RdO1::params();
  AxiMemoryConfig mc;
  mc.read_latency = 100;
  const DmaRequest r{0x80000, 16384, 2, 16384};
  const std::uint64_t beats = beats_of(r, p4);

  RdBench<Vnmsa_dma_rd> b4(p4, mc, test_seed(104));
  b4.push(r);
  b4.run(200000);
  RdBench<Vnmsa_dma_rd_o1> b1(p1, mc, test_seed(104));
  b1.push(r);
  b1.run(400000);
  ASSERT_EQ(b4.beats().size(), beats);
  ASSERT_EQ(b1.beats().size(), beats);
  const double rate4 = static_cast<double>(beats) /
                       static_cast<double>(b4.beats().back().cycle - b4.accepted().front() + 1);
  const double rate1 = static_cast<double>(beats) /
                       static_cast<double>(b1.beats().back().cycle - b1.accepted().front() + 1);
  const double model4 = std::min(1.0, 64.0 / (100.0 + 16.0));
  const double model1 = 16.0 / (100.0 + 16.0);
  std::printf("[ info ] read, latency 100: MaxOutstanding=4 %.3f beats/cycle (model %.3f), "
              "MaxOutstanding=1 %.3f (model %.3f), ratio %.2fx\n",
              rate4, model4, rate1, model1, rate4 / rate1);
  EXPECT_GT(rate4, 1.5 * rate1);
  EXPECT_NEAR(rate4, model4, 0.1 * model4);
  EXPECT_NEAR(rate1, model1, 0.1 * model1);
  EXPECT_TRUE(b4.mon().violations().empty()) << b4.mon().report();
  EXPECT_TRUE(b1.mon().violations().empty()) << b1.mon().report();
  EXPECT_EQ(b4.mon().max_reads_in_flight(), 4u);
  EXPECT_EQ(b1.mon().max_reads_in_flight(), 1u);
}

// A fractional memory bandwidth (4.5 B/cycle on an 8-byte bus) caps the rate at 0.5625.
TEST(DmaRead, MemoryBandwidthLimit) {
  const DmaParams p = RdDefault::params();
  AxiMemoryConfig mc;
  mc.bytes_per_cycle = 4.5;
  RdBench<Vnmsa_dma_rd> bench(p, mc, test_seed(105));
  const DmaRequest r{0x100000, 16384, 1, 0};
  bench.push(r);
  bench.run(100000);
  const double rate =
      static_cast<double>(bench.beats().size()) /
      static_cast<double>(bench.beats().back().cycle - bench.accepted().front() + 1);
  std::printf("[ info ] read, memory at 4.5 B/cycle: %.4f beats/cycle (limit %.4f)\n", rate,
              4.5 / 8);
  EXPECT_NEAR(rate, 4.5 / 8, 0.01);
  EXPECT_LE(bench.mem().stats().bytes_read, 4.5 * static_cast<double>(bench.cycles()) + 32);
  EXPECT_TRUE(bench.mon().violations().empty()) << bench.mon().report();
}

// SLVERR and DECERR beats arrive with their data, the engine goes on and later beats are OKAY.
TEST(DmaRead, ErrorResponsesTravelWithTheirBeats) {
  const std::uint64_t seed = test_seed(106);
  SCOPED_TRACE(seed_note(seed));
  const DmaParams p = RdDefault::params();
  for (const double stall : {0.0, 0.4}) {
    AxiMemoryConfig mc;
    mc.random_fill = true;
    mc.read_latency = 7;
    mc.p_r_gap = stall;
    mc.p_ar_stall = stall;
    RdBench<Vnmsa_dma_rd> bench(p, mc, seed);
    bench.p_consumer_stall = stall;
    const std::vector<ErrorRange> errors = {{0x10040, 0x10048, AxiResp::kSlvErr},
                                            {0x10100, 0x10180, AxiResp::kDecErr},
                                            {0x11ffc, 0x12004, AxiResp::kSlvErr},
                                            {0x11ff8, 0x12000, AxiResp::kDecErr}};
    for (const auto& e : errors) bench.mem().inject_error(e.begin, e.end - e.begin, e.resp);
    const std::vector<DmaRequest> reqs = {{0x10000, 512, 2, 4096}, {0x11f00, 512, 1, 0},
                                          {0x20000, 256, 1, 0}};
    for (const auto& r : reqs) bench.push(r);
    bench.run(20000);
    EXPECT_EQ(check_read_beats(bench.beats(), reqs, p, bench.mem(), errors), "");
    EXPECT_TRUE(bench.mon().violations().empty()) << bench.mon().report();
    std::size_t slverr = 0, decerr = 0;
    for (const auto& b : bench.beats()) {
      slverr += b.resp == 2;
      decerr += b.resp == 3;
    }
    EXPECT_EQ(slverr, 1u + 1u);   // 0x10040; 0x12000 (0x11ff8 is DECERR, worst of both)
    EXPECT_EQ(decerr, 16u + 1u);  // 0x10100..0x10180; 0x11ff8
    EXPECT_EQ(bench.mem().stats().read_errors, slverr + decerr);
  }
}

// ---------------------------------------------------------------------------------------------
// Write engine
// ---------------------------------------------------------------------------------------------

template <class V>
class DmaWriteTest : public ::testing::Test {};
using WriteVariants = ::testing::Types<WrDefault, WrW32, WrW512>;
TYPED_TEST_SUITE(DmaWriteTest, WriteVariants);

TYPED_TEST(DmaWriteTest, RandomRequestsWithNarrowRows) {
  const std::uint64_t seed = test_seed(201);
  SCOPED_TRACE(seed_note(seed));
  const DmaParams p = TypeParam::params();
  std::mt19937_64 rng(seed);
  for (const auto& [phase, mc0] : memory_phases(rng)) {
    SCOPED_TRACE("memory: " + phase);
    AxiMemoryConfig mc = on_bus(mc0, p);
    mc.random_fill = true;
    WrBench<typename TypeParam::Model> bench(p, mc, seed);
    bench.p_producer_gap = phase == "ideal" ? 0.0 : 0.3;
    AxiMemory ref(mc, seed);  // same seed: same initial contents
    std::vector<DmaRequest> reqs;
    std::size_t narrow = 0, crossing = 0;
    for (int i = 0; i < 48; ++i) {
      const bool is_narrow = uniform(rng, 0, 2) == 0;
      reqs.push_back(is_narrow ? random_narrow_request(rng, p) : random_full_request(rng, p));
      const DmaRequest& r = reqs.back();
      const auto beats = random_beats(rng, r, p);
      apply_write(ref, r, beats, p, {});
      bench.push(r, beats);
      narrow += is_narrow;
      for (std::uint32_t row = 0; row < r.rows && !is_narrow; ++row) {
        const std::uint64_t a = r.addr + row * r.stride;
        if (a / 4096 != (a + r.row_bytes - 1) / 4096) {
          ++crossing;
          break;
        }
      }
    }
    bench.run(400000);
    EXPECT_GT(narrow, 0u);
    EXPECT_GT(crossing, 0u);
    EXPECT_EQ(compare_regions(bench.mem(), ref, reqs), "");
    EXPECT_EQ(check_bursts(bench.aws(), reqs, p), "");
    ASSERT_EQ(bench.completions().size(), reqs.size());
    std::uint64_t bursts = 0;
    for (std::size_t i = 0; i < reqs.size(); ++i) {
      bursts += split_bursts(reqs[i], p).size();
      EXPECT_EQ(bench.completions()[i].resp, AxiResp::kOkay) << "request " << i;
      // The pulse comes the cycle after the request's last B, before any later one.
      EXPECT_EQ(bench.completions()[i].b_before, bursts) << "request " << i;
    }
    EXPECT_TRUE(bench.mon().violations().empty()) << bench.mon().report();
    EXPECT_LE(bench.mon().max_writes_in_flight(), p.max_outstanding);
    EXPECT_EQ(bench.busy_mismatches(), 0u);
    EXPECT_TRUE(bench.mem().idle());
    std::printf("[ info ] %u-bit write, %s: %zu requests (%zu narrow, %zu crossing 4 KiB), "
                "%zu beats, %zu bursts in %llu cycles, max %zu in flight\n",
                8 * p.data_bytes, phase.c_str(), reqs.size(), narrow, crossing,
                bench.beats_taken(), bench.aws().size(),
                static_cast<unsigned long long>(bench.cycles()),
                bench.mon().max_writes_in_flight());
  }
}

// cpl_resp_o is the worst BRESP of the request's bursts and resets between requests; erroneous
// beats store nothing, the rest of the request is written.
TEST(DmaWrite, WorstResponsePerRequest) {
  const std::uint64_t seed = test_seed(202);
  SCOPED_TRACE(seed_note(seed));
  const DmaParams p = WrDefault::params();
  std::mt19937_64 rng(seed);
  for (const double stall : {0.0, 0.4}) {
    AxiMemoryConfig mc;
    mc.random_fill = true;
    mc.write_latency = 5;
    mc.p_aw_stall = mc.p_w_stall = mc.p_b_gap = stall;
    WrBench<Vnmsa_dma_wr> bench(p, mc, seed);
    bench.p_producer_gap = stall;
    AxiMemory ref(on_bus(mc, p), seed);
    const std::vector<ErrorRange> errors = {{0x20100, 0x20108, AxiResp::kSlvErr},
                                            {0x30200, 0x30240, AxiResp::kDecErr},
                                            {0x40000, 0x40001, AxiResp::kSlvErr},
                                            {0x40ff8, 0x41000, AxiResp::kDecErr}};
    for (const auto& e : errors) bench.mem().inject_error(e.begin, e.end - e.begin, e.resp);
    const std::vector<DmaRequest> reqs = {
        {0x10000, 256, 2, 512},    // clean
        {0x20000, 512, 1, 0},      // one SLVERR beat
        {0x30000, 1024, 1, 0},     // DECERR beats
        {0x40000, 4096, 1, 0},     // SLVERR in the first burst, DECERR in the last: DECERR
        {0x50000, 128, 3, 4096},   // clean again: the accumulator was reset
        {0x40002, 2, 3, 2},        // narrow rows next to the SLVERR byte: clean
        {0x40000, 1, 1, 0},        // narrow row on the SLVERR byte
    };
    const std::vector<AxiResp> want = {AxiResp::kOkay,   AxiResp::kSlvErr, AxiResp::kDecErr,
                                       AxiResp::kDecErr, AxiResp::kOkay,   AxiResp::kOkay,
                                       AxiResp::kSlvErr};
    for (const auto& r : reqs) {
      const auto beats = random_beats(rng, r, p);
      apply_write(ref, r, beats, p, errors);
      bench.push(r, beats);
    }
    bench.run(20000);
    ASSERT_EQ(bench.completions().size(), reqs.size());
    for (std::size_t i = 0; i < reqs.size(); ++i) {
      EXPECT_EQ(bench.completions()[i].resp, want[i])
          << "request " << i << " " << describe(reqs[i]) << ": got "
          << to_string(bench.completions()[i].resp) << ", expected " << to_string(want[i]);
    }
    EXPECT_EQ(compare_regions(bench.mem(), ref, reqs), "");
    EXPECT_TRUE(bench.mon().violations().empty()) << bench.mon().report();
  }
}

// Zero wait states: the write engine streams one beat per cycle.
TEST(DmaWrite, ThroughputOneBeatPerCycle) {
  const std::uint64_t seed = test_seed(203);
  const DmaParams p = WrDefault::params();
  AxiMemoryConfig mc;
  WrBench<Vnmsa_dma_wr> bench(p, mc, seed);
  std::mt19937_64 rng(seed);
  const DmaRequest r{0x40000, 8192, 4, 8192 + 64};
  bench.push(r, random_beats(rng, r, p));
  bench.run(100000);
  const std::uint64_t beats = beats_of(r, p);
  const std::uint64_t cycles = bench.completions().back().cycle;
  std::printf("[ info ] write, no wait states: %llu beats, completion after %llu cycles "
              "(%.3f beats/cycle)\n",
              static_cast<unsigned long long>(beats), static_cast<unsigned long long>(cycles),
              static_cast<double>(beats) / static_cast<double>(cycles));
  EXPECT_LE(cycles, beats + 8);
  EXPECT_TRUE(bench.mon().violations().empty()) << bench.mon().report();
}

// ---------------------------------------------------------------------------------------------
// Both engines on one memory: a 2-D copy through the shared bandwidth
// ---------------------------------------------------------------------------------------------

// rd_* feeds wr_* directly; R and W share the memory's 12 B/cycle, so the copy runs at 0.75
// beats per cycle (8 bytes read + 8 written per beat).
TEST(DmaCopy, SharedBandwidthAndBothEnginesOnOneBus) {
  const std::uint64_t seed = test_seed(301);
  SCOPED_TRACE(seed_note(seed));
  const DmaParams p = RdDefault::params();
  AxiMemoryConfig mc;
  mc.random_fill = true;
  mc.read_latency = 20;
  mc.bytes_per_cycle = 12.0;
  AxiMemory mem(mc, seed);
  AxiMemory ref(mc, seed);
  Axi4Monitor mon(Axi4MonitorConfig{p.data_bytes, true, true}, "copy");
  auto context = make_context(seed);
  context->fatalOnError(false);
  Vnmsa_dma_rd rd(context.get(), "rd");
  Vnmsa_dma_wr wr(context.get(), "wr");
  const DmaRequest src{0x1000f00, 2048, 8, 4096};
  const DmaRequest dst{0x2000800, 2048, 8, 2048 + 256};

  const auto clock = [&](int level) {
    rd.clk_i = wr.clk_i = level;
    rd.eval();
    wr.eval();
  };
  Axi4Bus bus{};
  drive_request(rd, p, nullptr);
  drive_request(wr, p, nullptr);
  rd.rd_ready_i = 0;
  wr.wr_valid_i = 0;
  axi4_read_to_model(bus, rd);
  axi4_write_to_model(bus, wr);
  rd.rst_ni = wr.rst_ni = 1;
  clock(0);
  rd.rst_ni = wr.rst_ni = 0;  // falling edge: asynchronous reset before the first clock edge
  for (int i = 0; i < 4; ++i) {
    clock(0);
    clock(1);
  }
  clock(0);
  rd.rst_ni = wr.rst_ni = 1;

  bool rd_req = true, wr_req = true, done = false;
  std::uint64_t cycles = 0, copied = 0, first = 0;
  for (; !done; ++cycles) {
    ASSERT_LT(cycles, 100000u) << "copy timed out after " << copied << " beats";
    mem.drive(bus);
    axi4_read_to_model(bus, rd);
    axi4_write_to_model(bus, wr);
    drive_request(rd, p, rd_req ? &src : nullptr);
    drive_request(wr, p, wr_req ? &dst : nullptr);
    // rd_valid_o and wr_ready_o depend only on the memory's signals and registers.
    rd.clk_i = wr.clk_i = 0;
    rd.eval();
    wr.wr_valid_i = rd.rd_valid_o;
    wr.wr_data_i = rd.rd_data_o;
    wr.eval();
    rd.rd_ready_i = wr.wr_ready_o;
    rd.eval();
    axi4_read_from_model(rd, bus);
    axi4_write_from_model(wr, bus);
    if (rd.req_valid_i && rd.req_ready_o) {
      rd_req = false;
      first = cycles;
    }
    if (wr.req_valid_i && wr.req_ready_o) wr_req = false;
    if (rd.rd_valid_o && rd.rd_ready_i) ++copied;
    done = wr.cpl_valid_o != 0;
    if (done) {
      EXPECT_EQ(wr.cpl_resp_o, 0u);
    }
    mem.commit(bus);
    mon.commit(bus);
    clock(1);
    ASSERT_FALSE(context->gotError()) << "RTL assertion failed in cycle " << cycles;
  }
  ASSERT_EQ(copied, beats_of(src, p));
  for (std::uint32_t i = 0; i < src.rows; ++i) {
    ref.write_bytes(dst.addr + i * dst.stride, mem.read_bytes(src.addr + i * src.stride, 2048));
  }
  EXPECT_EQ(compare_regions(mem, ref, {src, dst}), "");
  EXPECT_TRUE(mon.violations().empty()) << mon.report();
  const double rate = static_cast<double>(copied) / static_cast<double>(cycles - first);
  std::printf("[ info ] copy through 12 B/cycle shared memory: %.3f beats/cycle (limit 0.75), "
              "%llu bytes read, %llu written\n",
              rate, static_cast<unsigned long long>(mem.stats().bytes_read),
              static_cast<unsigned long long>(mem.stats().bytes_written));
  EXPECT_LE(rate, 0.75 * 1.02);
  EXPECT_GE(rate, 0.75 * 0.85);
  rd.final();
  wr.final();
  record_coverage(*context);
}

// ---------------------------------------------------------------------------------------------
// The engines' assertions fire on requests that break the rules
// ---------------------------------------------------------------------------------------------

TEST(DmaAssertions, ReadRequestWithZeroRowBytesIsFlagged) {
  const DmaParams p = RdDefault::params();
  RdBench<Vnmsa_dma_rd> bench(p, AxiMemoryConfig{}, test_seed(401));
  bench.throw_on_assertion = false;
  bench.push(DmaRequest{0x1000, 0, 1, 0});
  for (int i = 0; i < 4; ++i) bench.cycle();
  EXPECT_TRUE(bench.assertion_failed());
}

TEST(DmaAssertions, ReadRequestWithUnalignedStrideIsFlagged) {
  const DmaParams p = RdDefault::params();
  RdBench<Vnmsa_dma_rd> bench(p, AxiMemoryConfig{}, test_seed(402));
  bench.throw_on_assertion = false;
  bench.push(DmaRequest{0x1000, 64, 2, 68});
  for (int i = 0; i < 4; ++i) bench.cycle();
  EXPECT_TRUE(bench.assertion_failed());
}

TEST(DmaAssertions, NarrowWriteRowStraddlingABeatIsFlagged) {
  const DmaParams p = WrDefault::params();
  WrBench<Vnmsa_dma_wr> bench(p, AxiMemoryConfig{}, test_seed(403));
  bench.throw_on_assertion = false;
  bench.push(DmaRequest{0x1006, 4, 1, 0}, {AxiData{}});  // bytes 6..9 straddle two beats
  for (int i = 0; i < 4; ++i) bench.cycle();
  EXPECT_TRUE(bench.assertion_failed());
}

// A request withdrawn before the engine took it: legal only with req_cancel_i (an abort in
// nmsa_top), and then nothing of it reaches the bus.
void withdraw_second_request(bool cancel, std::uint64_t seed) {
  const DmaParams p = RdDefault::params();
  RdBench<Vnmsa_dma_rd> bench(p, AxiMemoryConfig{}, seed);
  bench.throw_on_assertion = false;
  bench.push(DmaRequest{0x1000, 64, 16, 64});  // 16 rows: the engine is busy for a while
  bench.push(DmaRequest{0x8000, 64, 1, 64});
  for (int i = 0; i < 4; ++i) bench.cycle();
  ASSERT_EQ(bench.accepted().size(), 1u) << "the second request must still be waiting";
  ASSERT_TRUE(bench.withdraw_last(cancel));
  bench.run(5000);
  EXPECT_EQ(bench.assertion_failed(), !cancel);
  EXPECT_EQ(bench.accepted().size(), 1u);
  for (const BurstRef& ar : bench.ars()) {
    EXPECT_LT(ar.addr, 0x8000u) << "a burst of the withdrawn request";
  }
}

TEST(DmaAssertions, RequestWithdrawnWithoutCancelIsFlagged) {
  withdraw_second_request(false, test_seed(405));
}

TEST(DmaAssertions, RequestWithdrawnWithCancelIsLegal) {
  withdraw_second_request(true, test_seed(406));
}

TEST(DmaAssertions, LegalRequestsRaiseNone) {
  const DmaParams p = WrDefault::params();
  WrBench<Vnmsa_dma_wr> bench(p, AxiMemoryConfig{}, test_seed(404));
  bench.throw_on_assertion = false;
  bench.push(DmaRequest{0x1004, 4, 3, 8}, std::vector<AxiData>(3));
  bench.run(1000);
  EXPECT_FALSE(bench.assertion_failed());
}

}  // namespace
}  // namespace nmsa::tb
