// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// AXI verification components: cycle-level signal structs for AXI4 and AXI4-Lite, the host memory
// as an AXI4 slave (AxiMemory), protocol monitors (Axi4Monitor, AxiLiteMonitor), an AXI4-Lite
// master for the CSRs (AxiLiteMaster), and adapters between Axi4Bus and a Verilated model whose
// ports are named as in the DMA engines (ar_valid_o, r_data_i, ...).
//
// The cycle protocol shared by every component, per clock cycle:
//   1. each driver sets the signals it drives with drive(bus), from its state only (never from
//      the other side's signals of this cycle, so no component needs a combinational path);
//   2. the DUT evaluates with those inputs and its outputs are copied into the bus;
//   3. at the clock edge, every component's commit(bus) observes the handshakes
//      (valid && ready) of this cycle and advances its state.
// The bus struct is therefore a complete record of one cycle, which is what the monitors check.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "nmsa/tb/port_bits.hpp"

namespace nmsa::tb {

// ---------------------------------------------------------------------------------------------
// Signals
// ---------------------------------------------------------------------------------------------

// Data of one beat, up to 512 bits: byte lane i is bits [8i, 8i+8), word w holds lanes 8w..8w+7.
// The bus width in use is a runtime parameter of each component (data_bytes); lanes above it
// are zero.
constexpr unsigned kAxiMaxDataBytes = 64;
using AxiData = std::array<std::uint64_t, kAxiMaxDataBytes / 8>;

inline std::uint8_t axi_lane(const AxiData& d, unsigned lane) {
  return static_cast<std::uint8_t>(d[lane / 8] >> (8 * (lane % 8)));
}
inline void set_axi_lane(AxiData& d, unsigned lane, std::uint8_t v) {
  const unsigned shift = 8 * (lane % 8);
  d[lane / 8] = (d[lane / 8] & ~(0xffull << shift)) | (std::uint64_t{v} << shift);
}

// xRESP values. Ranking for "worst response": DECERR > SLVERR > OKAY (EXOKAY counts as OKAY).
enum class AxiResp : std::uint8_t { kOkay = 0, kExOkay = 1, kSlvErr = 2, kDecErr = 3 };
const char* to_string(AxiResp resp);
AxiResp axi_worst(AxiResp a, AxiResp b);

constexpr std::uint8_t kAxiBurstFixed = 0;
constexpr std::uint8_t kAxiBurstIncr = 1;
constexpr std::uint8_t kAxiBurstWrap = 2;

struct AxiAddrChannel {  // AR or AW
  bool valid = false;
  bool ready = false;
  std::uint32_t id = 0;
  std::uint64_t addr = 0;
  std::uint8_t len = 0;    // beats - 1
  std::uint8_t size = 0;   // log2(bytes per beat)
  std::uint8_t burst = kAxiBurstIncr;
  std::uint8_t cache = 0;
  std::uint8_t prot = 0;
};

struct AxiWChannel {
  bool valid = false;
  bool ready = false;
  AxiData data{};
  std::uint64_t strb = 0;  // bit i enables byte lane i
  bool last = false;
};

struct AxiRChannel {
  bool valid = false;
  bool ready = false;
  std::uint32_t id = 0;
  AxiData data{};
  std::uint8_t resp = 0;  // raw RRESP, as on the wire
  bool last = false;
};

struct AxiBChannel {
  bool valid = false;
  bool ready = false;
  std::uint32_t id = 0;
  std::uint8_t resp = 0;  // raw BRESP
};

// All five channels of an AXI4 interface for one cycle.
struct Axi4Bus {
  AxiAddrChannel ar;
  AxiRChannel r;
  AxiAddrChannel aw;
  AxiWChannel w;
  AxiBChannel b;
};

struct AxiLiteAddrChannel {
  bool valid = false;
  bool ready = false;
  std::uint32_t addr = 0;
  std::uint8_t prot = 0;
};

struct AxiLiteWChannel {
  bool valid = false;
  bool ready = false;
  std::uint32_t data = 0;
  std::uint8_t strb = 0xf;
};

struct AxiLiteBChannel {
  bool valid = false;
  bool ready = false;
  std::uint8_t resp = 0;
};

struct AxiLiteRChannel {
  bool valid = false;
  bool ready = false;
  std::uint32_t data = 0;
  std::uint8_t resp = 0;
};

// An AXI4-Lite interface (32-bit data, for the CSRs) for one cycle.
struct AxiLiteBus {
  AxiLiteAddrChannel aw;
  AxiLiteWChannel w;
  AxiLiteBChannel b;
  AxiLiteAddrChannel ar;
  AxiLiteRChannel r;
};

// A protocol rule broken in a given cycle (cycles count commit() calls from 0).
struct AxiViolation {
  std::uint64_t cycle = 0;
  std::string message;
};

// "cycle 12: AR: VALID dropped before READY" lines, at most `max` of them.
std::string format_violations(const std::vector<AxiViolation>& violations, std::size_t max = 20);

// ---------------------------------------------------------------------------------------------
// AxiMemory: host memory as an AXI4 slave
// ---------------------------------------------------------------------------------------------

struct AxiMemoryConfig {
  unsigned data_bytes = 8;      // bus width in bytes: a power of two in [4, 64]
  // Cycles from the cycle of the AR handshake to the first cycle its first R beat is valid;
  // at least 1 (0 counts as 1), as the slave never answers combinationally.
  unsigned read_latency = 1;
  // Cycles from the cycle of the last W handshake of a burst to the first cycle of its B; >= 1.
  unsigned write_latency = 1;
  // Shared R + W bandwidth in bytes per cycle (fractional allowed); <= 0 means unlimited.
  double bytes_per_cycle = 0.0;
  // Random back-pressure, each an independent per-cycle probability.
  double p_ar_stall = 0.0;  // ar_ready low
  double p_aw_stall = 0.0;  // aw_ready low
  double p_w_stall = 0.0;   // w_ready low
  double p_r_gap = 0.0;     // no R beat although one is due
  double p_b_gap = 0.0;     // no B response although one is due
  // Bursts accepted and not yet finished (R: last beat sent; W: last beat received).
  unsigned max_reads = 8;
  unsigned max_writes = 8;
  // Bytes never written read as a hash of (seed, address) instead of 0.
  bool random_fill = false;
  // A second master competing for the shared bandwidth (needs bytes_per_cycle > 0): bursts of
  // background_burst_bytes arrive at random cycles (seeded) at a mean rate of
  // background_load x bytes_per_cycle, and the memory serves their bytes before the
  // accelerator's. So the accelerator finds the memory taken for a burst's time at random,
  // and more often the higher the load: the contention behind tail latency.
  double background_load = 0.0;  // in [0, 1)
  unsigned background_burst_bytes = 256;
};

enum class AxiAccess : std::uint8_t { kRead = 1, kWrite = 2, kReadWrite = 3 };

enum class AxiChannel : std::uint8_t { kAr = 0, kR = 1, kAw = 2, kW = 3, kB = 4 };
const char* to_string(AxiChannel channel);

struct AxiMemoryStats {
  std::uint64_t cycles = 0;
  std::uint64_t read_bursts = 0;    // AR handshakes
  std::uint64_t write_bursts = 0;   // AW handshakes
  std::uint64_t read_beats = 0;
  std::uint64_t write_beats = 0;
  std::uint64_t bytes_read = 0;     // bytes of R beats handed over (size bytes per beat)
  std::uint64_t bytes_written = 0;  // strobed bytes stored (error beats store nothing)
  std::uint64_t read_errors = 0;    // R beats with SLVERR/DECERR
  std::uint64_t write_errors = 0;   // B responses with SLVERR/DECERR
  std::uint64_t stray_bytes_written = 0;  // stored outside the window of watch_writes()
  double background_bytes = 0;  // bytes served to the background master
};

// Byte-addressed sparse memory (4 KiB pages) behind an AXI4 slave port: in-order responses,
// several bursts queued, INCR bursts (any size up to the bus width). A beat that touches an
// error range answers with that range's response (per R beat; for writes the worst over the
// burst's beats goes into BRESP) and an erroneous write beat stores nothing. All randomness
// comes from the seed.
class AxiMemory {
 public:
  AxiMemory(AxiMemoryConfig config, std::uint64_t seed);

  const AxiMemoryConfig& config() const { return config_; }
  // Changes back-pressure or latency between cycles (bursts already accepted keep their times).
  void set_config(const AxiMemoryConfig& config);

  // Host side, outside the bus timing.
  void write_bytes(std::uint64_t addr, const std::uint8_t* data, std::size_t n);
  void write_bytes(std::uint64_t addr, const std::vector<std::uint8_t>& data) {
    write_bytes(addr, data.data(), data.size());
  }
  void read_bytes(std::uint64_t addr, std::uint8_t* out, std::size_t n) const;
  std::vector<std::uint8_t> read_bytes(std::uint64_t addr, std::size_t n) const;

  // Every beat touching [addr, addr + bytes) answers `resp` (the worst one where ranges overlap).
  void inject_error(std::uint64_t addr, std::uint64_t bytes, AxiResp resp,
                    AxiAccess on = AxiAccess::kReadWrite);
  void clear_errors() { errors_.clear(); }

  // A long stall of one channel for the next `cycles` cycles: AR, AW or W READY low, or no new
  // R beat or B response presented (one already presented stays until its handshake, as VALID
  // must). Fault injection for the soak (docs/verification.md, "Soak").
  void stall(AxiChannel channel, std::uint64_t cycles);
  // Whether a stall of `channel` would hold something up now: the master presented AR or AW in
  // the last cycle, W beats are due, R beats or B responses are pending.
  bool channel_busy(AxiChannel channel) const;
  // Counts every byte a W beat stores outside [begin, end) in stats().stray_bytes_written.
  void watch_writes(std::uint64_t begin, std::uint64_t end);
  // The interface's reset (ARESETn is common to both ends of an AXI interface, so resetting the
  // accelerator resets the slave port too): bursts accepted and responses pending are dropped,
  // stalls end; the contents of memory, error ranges and statistics are kept.
  void reset_bus();

  // Slave-driven signals (AR/AW/W ready, R, B) of this cycle, from state only.
  void drive(Axi4Bus& bus) const;
  // At the clock edge: observes this cycle's handshakes and decides the next cycle's signals.
  void commit(const Axi4Bus& bus);

  // No burst accepted and unfinished, no response pending.
  bool idle() const;
  const AxiMemoryStats& stats() const { return stats_; }

 private:
  struct Burst {
    std::uint32_t id = 0;
    std::uint64_t addr = 0;
    unsigned beats = 0;
    unsigned size_bytes = 0;
    std::uint64_t due = 0;  // first cycle a beat (R) may be presented
    unsigned beat = 0;      // next beat
    AxiResp resp = AxiResp::kOkay;
  };
  struct Response {
    std::uint32_t id = 0;
    AxiResp resp = AxiResp::kOkay;
    std::uint64_t due = 0;
  };
  struct ErrorRange {
    std::uint64_t begin, end;
    AxiResp resp;
    AxiAccess on;
  };
  using Page = std::array<std::uint8_t, 4096>;

  std::uint8_t fill_byte(std::uint64_t addr) const;
  Page& page(std::uint64_t page_index);
  AxiResp error_for(std::uint64_t begin, std::uint64_t end, AxiAccess access) const;
  // Address of beat `beat` of a burst, aligned down to its size.
  static std::uint64_t beat_addr(const Burst& b, unsigned beat);
  bool roll(double p);
  void serve_background();
  void prepare_r_beat();

  AxiMemoryConfig config_;
  std::uint64_t seed_;
  std::mt19937_64 rng_;
  std::unordered_map<std::uint64_t, std::unique_ptr<Page>> pages_;
  std::vector<ErrorRange> errors_;
  std::array<std::uint64_t, 5> stall_until_{};  // by AxiChannel: no activity before this cycle
  bool ar_requested_ = false;  // AR VALID in the last committed cycle
  bool aw_requested_ = false;
  bool watching_writes_ = false;
  std::uint64_t watch_begin_ = 0, watch_end_ = 0;

  std::uint64_t cycle_ = 0;
  std::deque<Burst> reads_;       // accepted ARs, oldest first
  std::deque<Burst> writes_;      // accepted AWs whose W beats are not all in
  std::deque<Response> bresps_;   // B responses not yet handed over
  double tokens_ = 0.0;           // bandwidth budget (bytes)
  double background_waiting_ = 0.0;  // bytes of background bursts not yet served

  // Signals of the current cycle.
  bool ar_ready_ = false;
  bool aw_ready_ = false;
  bool w_ready_ = false;
  bool r_present_ = false;
  AxiRChannel r_beat_{};  // snapshot of the presented beat, held until accepted
  bool b_present_ = false;

  AxiMemoryStats stats_{};
};

// ---------------------------------------------------------------------------------------------
// Axi4Monitor: protocol checks on an Axi4Bus, at commit time every cycle
// ---------------------------------------------------------------------------------------------

struct Axi4MonitorConfig {
  unsigned data_bytes = 8;       // bus width in bytes (payload compares look at these lanes)
  bool full_width_only = true;   // AxSIZE must be the bus width (nmsa's masters never go narrow)
  bool w_after_aw = true;        // a W beat needs its AW first (the DMA engines' contract)
};

// Checks, per channel: VALID held until READY, payload stable while VALID && !READY; AR/AW burst
// type INCR, size, no burst across a 4 KiB boundary; WLAST exactly on the last beat of its
// burst; RLAST likewise; R beats and B responses only for outstanding requests (in order per
// ID), B only after the burst's last W beat. W strobes are not checked (narrow rows strobe a
// subset of lanes).
class Axi4Monitor {
 public:
  explicit Axi4Monitor(Axi4MonitorConfig config = {}, std::string name = "axi");

  void commit(const Axi4Bus& bus);
  // The interface was reset: nothing is in flight and the previous cycle is forgotten (a VALID
  // may drop at reset). Violations seen so far are kept.
  void reset();

  const std::vector<AxiViolation>& violations() const { return violations_; }
  std::string report(std::size_t max = 20) const { return format_violations(violations_, max); }
  std::uint64_t cycle() const { return cycle_; }

  // Bursts in flight: AR handshaken, RLAST not yet; AW handshaken, B not yet.
  std::size_t reads_in_flight() const { return reads_.size(); }
  std::size_t writes_in_flight() const { return writes_.size(); }
  std::size_t max_reads_in_flight() const { return max_reads_; }
  std::size_t max_writes_in_flight() const { return max_writes_; }
  std::uint64_t read_bursts() const { return read_bursts_; }
  std::uint64_t write_bursts() const { return write_bursts_; }

 private:
  struct Read {
    std::uint32_t id;
    unsigned beats;
    unsigned seen;
  };
  struct Write {
    std::uint32_t id;
    unsigned beats;
    unsigned w_seen;
    bool w_done;
  };
  void flag(std::string message);
  void check_addr(const char* ch, const AxiAddrChannel& a);
  bool same_data(const AxiData& a, const AxiData& b) const;

  Axi4MonitorConfig config_;
  std::string name_;
  std::uint64_t cycle_ = 0;
  bool have_prev_ = false;
  Axi4Bus prev_{};
  std::deque<Read> reads_;
  std::deque<Write> writes_;
  std::deque<unsigned> early_w_;   // W bursts completed before their AW
  unsigned early_w_beats_ = 0;
  std::size_t max_reads_ = 0;
  std::size_t max_writes_ = 0;
  std::uint64_t read_bursts_ = 0;
  std::uint64_t write_bursts_ = 0;
  std::vector<AxiViolation> violations_;
};

// ---------------------------------------------------------------------------------------------
// AXI4-Lite master and monitor (CSR access)
// ---------------------------------------------------------------------------------------------

// One access at a time. A write raises AW and W together and holds each until its handshake,
// then waits for B; a read raises AR, then waits for R. Cycle-level use: start_write/start_read,
// then every cycle drive() before the DUT evaluates and commit() at the edge, until !busy().
class AxiLiteMaster {
 public:
  explicit AxiLiteMaster(std::string name = "axil");

  void start_write(std::uint32_t addr, std::uint32_t data, std::uint8_t strb = 0xf);
  void start_read(std::uint32_t addr);
  bool busy() const { return state_ != State::kIdle; }
  // Abandons any access (the interface was reset).
  void reset();

  void drive(AxiLiteBus& bus) const;
  void commit(const AxiLiteBus& bus);

  // Result of the last completed access.
  AxiResp resp() const { return resp_; }
  std::uint32_t read_data() const { return rdata_; }

  // Blocking forms: `tick` runs one whole cycle of the testbench, including this master's
  // drive() and commit(). Throws std::runtime_error naming the address when the access has not
  // completed within timeout_cycles (the access is then abandoned: VALID drops).
  AxiResp write(std::uint32_t addr, std::uint32_t data, const std::function<void()>& tick,
                std::uint64_t timeout_cycles = 1000, std::uint8_t strb = 0xf);
  std::uint32_t read(std::uint32_t addr, const std::function<void()>& tick,
                     std::uint64_t timeout_cycles = 1000, AxiResp* resp = nullptr);

 private:
  enum class State { kIdle, kWrite, kRead };
  void wait(const char* what, const std::function<void()>& tick, std::uint64_t timeout_cycles);

  std::string name_;
  State state_ = State::kIdle;
  std::uint32_t addr_ = 0;
  std::uint32_t wdata_ = 0;
  std::uint8_t strb_ = 0xf;
  bool aw_pending_ = false;
  bool w_pending_ = false;
  bool ar_pending_ = false;
  AxiResp resp_ = AxiResp::kOkay;
  std::uint32_t rdata_ = 0;
};

// VALID held until READY and payload stable on all five channels; B only after both AW and W of
// a write, R only after an AR.
class AxiLiteMonitor {
 public:
  explicit AxiLiteMonitor(std::string name = "axil");

  void commit(const AxiLiteBus& bus);
  // The interface was reset: counts and the previous cycle are forgotten, violations kept.
  void reset();

  const std::vector<AxiViolation>& violations() const { return violations_; }
  std::string report(std::size_t max = 20) const { return format_violations(violations_, max); }
  std::uint64_t cycle() const { return cycle_; }

 private:
  void flag(std::string message);

  std::string name_;
  std::uint64_t cycle_ = 0;
  bool have_prev_ = false;
  AxiLiteBus prev_{};
  std::uint64_t aw_count_ = 0, w_count_ = 0, b_count_ = 0, ar_count_ = 0, r_count_ = 0;
  std::vector<AxiViolation> violations_;
};

// ---------------------------------------------------------------------------------------------
// Verilator adapters for models with the DMA engines' port names
// ---------------------------------------------------------------------------------------------

namespace detail {

// Data ports of up to 64 bits (CData .. QData).
template <typename Port, typename = std::enable_if_t<std::is_integral_v<Port>>>
void data_from_port(const Port& port, AxiData& data) {
  data.fill(0);
  data[0] = static_cast<std::uint64_t>(port);
}

template <typename Port, typename = std::enable_if_t<std::is_integral_v<Port>>>
void data_to_port(const AxiData& data, Port& port) {
  port = static_cast<Port>(data[0]);
}

// Wide data ports (VlWide of 32-bit words), word by word.
template <std::size_t Words>
void data_from_port(const VlWide<Words>& port, AxiData& data) {
  static_assert(Words <= 2 * std::tuple_size<AxiData>::value, "AXI data port wider than 512 bits");
  data.fill(0);
  for (std::size_t i = 0; i < Words; ++i) {
    data[i / 2] |= static_cast<std::uint64_t>(port[i]) << (32 * (i % 2));
  }
}

template <std::size_t Words>
void data_to_port(const AxiData& data, VlWide<Words>& port) {
  static_assert(Words <= 2 * std::tuple_size<AxiData>::value, "AXI data port wider than 512 bits");
  for (std::size_t i = 0; i < Words; ++i) {
    port[i] = static_cast<EData>(data[i / 2] >> (32 * (i % 2)));
  }
}

}  // namespace detail

// Master-driven signals of the model's read channels (AR, r_ready) into the bus.
template <class Model>
void axi4_read_from_model(const Model& m, Axi4Bus& bus) {
  bus.ar.valid = m.ar_valid_o != 0;
  bus.ar.id = static_cast<std::uint32_t>(get_bits(m.ar_id_o, 0, 32));
  bus.ar.addr = get_bits(m.ar_addr_o, 0, 64);
  bus.ar.len = static_cast<std::uint8_t>(m.ar_len_o);
  bus.ar.size = static_cast<std::uint8_t>(m.ar_size_o);
  bus.ar.burst = static_cast<std::uint8_t>(m.ar_burst_o);
  bus.ar.cache = static_cast<std::uint8_t>(m.ar_cache_o);
  bus.ar.prot = static_cast<std::uint8_t>(m.ar_prot_o);
  bus.r.ready = m.r_ready_o != 0;
}

// Slave-driven signals of the read channels (ar_ready, R) from the bus into the model. IDs are
// copied as they are: the slave echoes the ID the master sent.
template <class Model>
void axi4_read_to_model(const Axi4Bus& bus, Model& m) {
  m.ar_ready_i = bus.ar.ready;
  m.r_valid_i = bus.r.valid;
  put_bits(m.r_id_i, 0, 32, bus.r.id);
  detail::data_to_port(bus.r.data, m.r_data_i);
  m.r_resp_i = bus.r.resp & 3u;
  m.r_last_i = bus.r.last;
}

// Master-driven signals of the write channels (AW, W, b_ready) into the bus.
template <class Model>
void axi4_write_from_model(const Model& m, Axi4Bus& bus) {
  bus.aw.valid = m.aw_valid_o != 0;
  bus.aw.id = static_cast<std::uint32_t>(get_bits(m.aw_id_o, 0, 32));
  bus.aw.addr = get_bits(m.aw_addr_o, 0, 64);
  bus.aw.len = static_cast<std::uint8_t>(m.aw_len_o);
  bus.aw.size = static_cast<std::uint8_t>(m.aw_size_o);
  bus.aw.burst = static_cast<std::uint8_t>(m.aw_burst_o);
  bus.aw.cache = static_cast<std::uint8_t>(m.aw_cache_o);
  bus.aw.prot = static_cast<std::uint8_t>(m.aw_prot_o);
  bus.w.valid = m.w_valid_o != 0;
  detail::data_from_port(m.w_data_o, bus.w.data);
  bus.w.strb = get_bits(m.w_strb_o, 0, 64);
  bus.w.last = m.w_last_o != 0;
  bus.b.ready = m.b_ready_o != 0;
}

// Slave-driven signals of the write channels (aw_ready, w_ready, B) from the bus into the model.
template <class Model>
void axi4_write_to_model(const Axi4Bus& bus, Model& m) {
  m.aw_ready_i = bus.aw.ready;
  m.w_ready_i = bus.w.ready;
  m.b_valid_i = bus.b.valid;
  put_bits(m.b_id_i, 0, 32, bus.b.id);
  m.b_resp_i = bus.b.resp & 3u;
}

// Both directions, for a model with a full AXI4 master port.
template <class Model>
void axi4_from_model(const Model& m, Axi4Bus& bus) {
  axi4_read_from_model(m, bus);
  axi4_write_from_model(m, bus);
}

template <class Model>
void axi4_to_model(const Axi4Bus& bus, Model& m) {
  axi4_read_to_model(bus, m);
  axi4_write_to_model(bus, m);
}

}  // namespace nmsa::tb
