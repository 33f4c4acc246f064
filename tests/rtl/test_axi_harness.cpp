// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// The AXI harness components the DMA and top tests rely on (tb/axi.hpp), checked on hand-made
// traces, good and bad: Axi4Monitor, AxiMemory on its own, and the AXI4-Lite master and monitor.
//
// Every random test takes its seed from NMSA_SEED (tb::test_seed) and names it on failure.
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "nmsa/tb/axi.hpp"
#include "nmsa/tb/sim_context.hpp"

namespace nmsa::tb {
namespace {

// ---------------------------------------------------------------------------------------------
// Axi4Monitor on hand-made traces
// ---------------------------------------------------------------------------------------------

AxiAddrChannel addr(std::uint64_t a, unsigned beats, bool ready, std::uint8_t size = 3) {
  AxiAddrChannel c;
  c.valid = true;
  c.ready = ready;
  c.addr = a;
  c.len = static_cast<std::uint8_t>(beats - 1);
  c.size = size;
  c.burst = kAxiBurstIncr;
  return c;
}

AxiRChannel rbeat(std::uint64_t data, bool last, bool ready = true, std::uint8_t resp = 0) {
  AxiRChannel c;
  c.valid = true;
  c.ready = ready;
  c.data[0] = data;
  c.last = last;
  c.resp = resp;
  return c;
}

AxiWChannel wbeat(std::uint64_t data, bool last, bool ready = true, std::uint64_t strb = 0xff) {
  AxiWChannel c;
  c.valid = true;
  c.ready = ready;
  c.data[0] = data;
  c.strb = strb;
  c.last = last;
  return c;
}

AxiBChannel bresp(bool ready = true, std::uint8_t resp = 0) {
  AxiBChannel c;
  c.valid = true;
  c.ready = ready;
  c.resp = resp;
  return c;
}

std::vector<AxiViolation> run_trace(const std::vector<Axi4Bus>& trace,
                                    Axi4MonitorConfig config = {}) {
  Axi4Monitor mon(config, "t");
  for (const auto& bus : trace) mon.commit(bus);
  return mon.violations();
}

// The trace must produce exactly one violation, in `cycle`, whose message holds `text`.
void expect_one(const std::vector<AxiViolation>& v, std::uint64_t cycle, const std::string& text) {
  ASSERT_EQ(v.size(), 1u) << format_violations(v);
  EXPECT_EQ(v[0].cycle, cycle) << v[0].message;
  EXPECT_NE(v[0].message.find(text), std::string::npos)
      << "message '" << v[0].message << "' lacks '" << text << "'";
}

// Reads and writes with stalls, gaps, two outstanding reads and W data after its AW.
std::vector<Axi4Bus> good_trace() {
  std::vector<Axi4Bus> t(12);
  t[0].ar = addr(0x1000, 2, false);
  t[1].ar = addr(0x1000, 2, true);
  t[2].ar = addr(0x1ff0, 2, true);  // ends at 0x1fff: no crossing
  t[3].r = rbeat(1, false, false);
  t[4].r = rbeat(1, false);
  t[5].r = rbeat(2, true);
  t[7].r = rbeat(3, false);
  t[8].r = rbeat(4, true, false);
  t[9].r = rbeat(4, true);
  t[0].aw = addr(0x2000, 3, true);
  t[1].w = wbeat(10, false, false);
  t[2].w = wbeat(10, false);
  t[3].w = wbeat(11, false, true, 0x0f);
  t[5].w = wbeat(12, true);
  t[6].b = bresp(false, 2);
  t[7].b = bresp(true, 2);
  return t;
}

TEST(Axi4Monitor, GoodTraceIsClean) {
  Axi4Monitor mon(Axi4MonitorConfig{}, "t");
  for (const auto& bus : good_trace()) mon.commit(bus);
  EXPECT_TRUE(mon.violations().empty()) << mon.report();
  EXPECT_EQ(mon.max_reads_in_flight(), 2u);
  EXPECT_EQ(mon.max_writes_in_flight(), 1u);
  EXPECT_EQ(mon.reads_in_flight(), 0u);
  EXPECT_EQ(mon.writes_in_flight(), 0u);
  EXPECT_EQ(mon.read_bursts(), 2u);
  EXPECT_EQ(mon.write_bursts(), 1u);
}

TEST(Axi4Monitor, ValidDroppedBeforeReady) {
  for (const char* ch : {"AR", "AW", "W", "R", "B"}) {
    SCOPED_TRACE(ch);
    auto t = good_trace();
    const std::string c = ch;
    std::uint64_t cycle = 0;
    if (c == "AR") { t[1].ar.valid = false; cycle = 1; }
    if (c == "AW") { t[0].aw.ready = false; t[1].aw = {}; cycle = 1; }
    if (c == "W") { t[2].w.valid = false; cycle = 2; }
    if (c == "R") { t[4].r.valid = false; cycle = 4; }
    if (c == "B") { t[7].b.valid = false; cycle = 7; }
    auto v = run_trace(t);
    ASSERT_FALSE(v.empty());
    EXPECT_EQ(v[0].cycle, cycle);
    EXPECT_NE(v[0].message.find(c + ": VALID dropped before READY"), std::string::npos)
        << v[0].message;
  }
}

TEST(Axi4Monitor, PayloadChangedWhileWaiting) {
  for (const char* ch : {"AR", "AW", "W", "R", "B"}) {
    SCOPED_TRACE(ch);
    auto t = good_trace();
    const std::string c = ch;
    std::uint64_t cycle = 0;
    if (c == "AR") { t[1].ar.addr = 0x1008; cycle = 1; }
    if (c == "AW") { t[0].aw.ready = false; t[1].aw = addr(0x2000, 3, true); t[1].aw.len = 1; cycle = 1; }
    if (c == "W") { t[2].w.data[0] = 99; cycle = 2; }
    if (c == "R") { t[4].r.resp = 2; cycle = 4; }
    if (c == "B") { t[7].b.resp = 3; cycle = 7; }
    auto v = run_trace(t);
    ASSERT_FALSE(v.empty());
    EXPECT_EQ(v[0].cycle, cycle);
    EXPECT_NE(v[0].message.find(c + ": payload changed while VALID && !READY"),
              std::string::npos)
        << v[0].message;
  }
}

TEST(Axi4Monitor, WDataBeyondTheBusWidthIsIgnored) {
  auto t = good_trace();
  t[2].w.data[3] = 0xdead;  // lanes 24..31 on an 8-byte bus
  EXPECT_TRUE(run_trace(t).empty());
}

TEST(Axi4Monitor, BurstRules) {
  std::vector<Axi4Bus> t(1);
  t[0].ar = addr(0x1000, 1, true);
  t[0].ar.burst = kAxiBurstFixed;
  expect_one(run_trace(t), 0, "AR: burst type 0 is not INCR");

  t[0].ar = addr(0x1000, 1, true, 2);
  expect_one(run_trace(t), 0, "AR: size 2 (4 bytes) on a 8-byte bus");
  Axi4MonitorConfig lenient;
  lenient.full_width_only = false;
  EXPECT_TRUE(run_trace(t, lenient).empty());

  t[0].ar = {};
  t[0].aw = addr(0x1ff8, 2, true);
  expect_one(run_trace(t), 0, "AW: burst 0x1ff8..0x2007 (2 beats) crosses a 4 KiB boundary");
  t[0].aw = addr(0xff00, 32, true);  // 0xff00..0xffff
  EXPECT_TRUE(run_trace(t).empty());
}

TEST(Axi4Monitor, WlastRules) {
  std::vector<Axi4Bus> t(4);
  t[0].aw = addr(0x2000, 3, true);
  t[1].w = wbeat(1, true);  // early
  expect_one(run_trace(t), 1, "W: WLAST on beat 1 of a 3-beat burst");

  t[1].w = wbeat(1, false);
  t[2].w = wbeat(2, false);
  t[3].w = wbeat(3, false);  // missing
  expect_one(run_trace(t), 3, "W: WLAST missing on the last beat of a 3-beat burst");
}

TEST(Axi4Monitor, WBeforeAw) {
  std::vector<Axi4Bus> t(3);
  t[0].w = wbeat(1, true);
  t[1].aw = addr(0x2000, 1, true);
  t[2].b = bresp();
  expect_one(run_trace(t), 0, "W: beat without an issued AW");
  Axi4MonitorConfig generic;
  generic.w_after_aw = false;  // legal AXI in general
  EXPECT_TRUE(run_trace(t, generic).empty());
  t[0].w = wbeat(1, false);
  t[1].w = wbeat(1, true);
  expect_one(run_trace(t, generic), 1, "W: WLAST on beat 2 of a 1-beat burst");
}

TEST(Axi4Monitor, ResponsesWithoutRequests) {
  std::vector<Axi4Bus> t(2);
  t[1].r = rbeat(1, true);
  expect_one(run_trace(t), 1, "R: beat (id 0) without an outstanding read request");

  t[1].r = {};
  t[1].b = bresp();
  expect_one(run_trace(t), 1, "B: response (id 0) without an outstanding write");

  t[0].aw = addr(0x3000, 2, true);
  t[1].w = wbeat(1, false);
  expect_one(run_trace(t), 1, "B: response before the last W beat of its burst");

  std::vector<Axi4Bus> u(3);
  u[0].ar = addr(0x1000, 1, true);
  u[0].ar.id = 1;
  u[1].r = rbeat(1, true);  // id 0: nothing outstanding for it
  expect_one(run_trace(u), 1, "R: beat (id 0) without an outstanding read request");
}

TEST(Axi4Monitor, RlastRules) {
  std::vector<Axi4Bus> t(4);
  t[0].ar = addr(0x1000, 3, true);
  t[1].r = rbeat(1, false);
  t[2].r = rbeat(2, true);
  expect_one(run_trace(t), 2, "R: RLAST on beat 2 of a 3-beat burst");

  t[2].r = rbeat(2, false);
  t[3].r = rbeat(3, false);
  expect_one(run_trace(t), 3, "R: RLAST missing on the last beat of a 3-beat burst");
}

// ---------------------------------------------------------------------------------------------
// AxiMemory on its own
// ---------------------------------------------------------------------------------------------

// Runs one memory cycle: the slave drives, the test's master signals are merged, commit.
Axi4Bus mem_cycle(AxiMemory& mem, Axi4Bus master) {
  Axi4Bus bus = master;
  mem.drive(bus);
  mem.commit(bus);
  return bus;
}

TEST(AxiMemory, ReadLatencyBeatsAndData) {
  AxiMemoryConfig mc;
  mc.read_latency = 5;
  AxiMemory mem(mc, test_seed(501));
  std::vector<std::uint8_t> bytes(32);
  std::iota(bytes.begin(), bytes.end(), 1);
  mem.write_bytes(0x1000, bytes);
  Axi4Bus m{};
  m.ar = addr(0x1008, 3, false);
  m.r.ready = true;
  std::vector<std::uint64_t> valid_cycles;
  std::vector<std::uint64_t> data;
  std::vector<bool> last;
  for (std::uint64_t c = 0; c < 20; ++c) {
    const Axi4Bus bus = mem_cycle(mem, m);
    if (bus.ar.valid && bus.ar.ready) {
      EXPECT_EQ(c, 0u);
      m.ar = {};
    }
    if (bus.r.valid) {
      valid_cycles.push_back(c);
      data.push_back(bus.r.data[0]);
      last.push_back(bus.r.last);
    }
  }
  ASSERT_EQ(valid_cycles, (std::vector<std::uint64_t>{5, 6, 7}));
  EXPECT_EQ(data[0], 0x100f0e0d0c0b0a09ull);
  EXPECT_EQ(last, (std::vector<bool>{false, false, true}));
  EXPECT_EQ(mem.stats().bytes_read, 24u);
  EXPECT_EQ(mem.stats().read_bursts, 1u);
  EXPECT_TRUE(mem.idle());
}

TEST(AxiMemory, WriteStrobesErrorsAndResponses) {
  AxiMemoryConfig mc;
  mc.write_latency = 3;
  AxiMemory mem(mc, test_seed(502));
  mem.inject_error(0x2008, 4, AxiResp::kSlvErr, AxiAccess::kWrite);
  Axi4Bus m{};
  m.aw = addr(0x2000, 3, false);
  m.b.ready = true;
  std::vector<AxiWChannel> beats = {wbeat(0x1111111111111111ull, false, false, 0x0f),
                                    wbeat(0x2222222222222222ull, false, false, 0xff),
                                    wbeat(0x3333333333333333ull, true, false, 0xf0)};
  std::size_t next = 0;
  std::uint64_t b_cycle = 0, last_w_cycle = 0;
  std::uint8_t resp = 0;
  for (std::uint64_t c = 0; c < 20; ++c) {
    Axi4Bus in = m;
    if (next < beats.size()) in.w = beats[next];
    const Axi4Bus bus = mem_cycle(mem, in);
    if (bus.aw.valid && bus.aw.ready) m.aw = {};
    if (next < beats.size() && bus.w.ready) last_w_cycle = c, ++next;
    if (bus.b.valid) b_cycle = c, resp = bus.b.resp;
  }
  EXPECT_EQ(next, 3u);
  EXPECT_EQ(b_cycle, last_w_cycle + 3);
  EXPECT_EQ(resp, 2u);
  // Beat 0 stores its low half, beat 1 hits the error range and stores nothing, beat 2 its high.
  const auto got = mem.read_bytes(0x2000, 24);
  const std::vector<std::uint8_t> want = {0x11, 0x11, 0x11, 0x11, 0, 0, 0, 0, 0, 0, 0, 0,
                                          0,    0,    0,    0,    0, 0, 0, 0, 0x33, 0x33, 0x33, 0x33};
  EXPECT_EQ(got, want);
  EXPECT_EQ(mem.stats().bytes_written, 8u);
  EXPECT_EQ(mem.stats().write_errors, 1u);
}

TEST(AxiMemory, RandomFillIsDeterministicAndSparse) {
  AxiMemoryConfig mc;
  mc.random_fill = true;
  AxiMemory a(mc, 7), b(mc, 7), c(mc, 8);
  EXPECT_EQ(a.read_bytes(0x123456789a, 64), b.read_bytes(0x123456789a, 64));
  EXPECT_NE(a.read_bytes(0x123456789a, 64), c.read_bytes(0x123456789a, 64));
  a.write_bytes(0x1000, std::vector<std::uint8_t>{1, 2, 3});
  EXPECT_EQ(a.read_bytes(0xff0, 16), b.read_bytes(0xff0, 16));  // the page below is untouched
  EXPECT_EQ(a.read_bytes(0x1003, 100), b.read_bytes(0x1003, 100));
}

TEST(AxiMemory, RejectsBadConfiguration) {
  AxiMemoryConfig mc;
  mc.data_bytes = 12;
  EXPECT_THROW(AxiMemory(mc, 1), std::invalid_argument);
  mc.data_bytes = 8;
  mc.p_w_stall = 1.0;  // would never accept a beat
  EXPECT_THROW(AxiMemory(mc, 1), std::invalid_argument);
  mc.p_w_stall = 0.0;
  mc.background_load = 0.5;  // a second master needs a bandwidth to compete for
  EXPECT_THROW(AxiMemory(mc, 1), std::invalid_argument);
  mc.bytes_per_cycle = 8;
  mc.background_load = 1.0;
  EXPECT_THROW(AxiMemory(mc, 1), std::invalid_argument);
}

// A master that always wants data, reading long bursts back to back, against a second master at
// each load: the background takes its share of the bandwidth and the reader gets the rest, with
// the gaps coming in bursts.
TEST(AxiMemory, BackgroundMasterTakesItsShare) {
  for (double load : {0.0, 0.25, 0.5, 0.75}) {
    AxiMemoryConfig mc;
    mc.bytes_per_cycle = 8;
    mc.read_latency = 4;
    mc.background_load = load;
    AxiMemory mem(mc, test_seed(777));
    Axi4Bus m{};
    m.r.ready = true;
    const std::uint64_t cycles = 40000;
    std::uint64_t beats = 0, longest_gap = 0, gap = 0;
    for (std::uint64_t c = 0; c < cycles; ++c) {
      m.ar = addr(0x10000 + (c % 64) * 128, 16, false);
      const Axi4Bus bus = mem_cycle(mem, m);
      if (bus.r.valid) {
        ++beats;
        gap = 0;
      } else if (c > 100) {
        longest_gap = std::max(longest_gap, ++gap);
      }
    }
    const double reader_share = static_cast<double>(beats) * 8.0 / (8.0 * cycles);
    const double background_share = mem.stats().background_bytes / (8.0 * cycles);
    EXPECT_NEAR(background_share, load, 0.03) << "load " << load;
    EXPECT_NEAR(reader_share, 1.0 - load, 0.03) << "load " << load;
    if (load >= 0.5) {
      EXPECT_GE(longest_gap, 32u) << "load " << load;  // whole bursts lost
    }
  }
}

// ---------------------------------------------------------------------------------------------
// AXI4-Lite master and monitor
// ---------------------------------------------------------------------------------------------

// A register file behind an AXI4-Lite slave port with random READY stalls and response delays,
// registers at 0x00..0x3c; other addresses answer SLVERR. never_ready models a dead slave.
class TestLiteSlave {
 public:
  TestLiteSlave(std::uint64_t seed, double p_stall, bool never_ready = false)
      : rng_(seed), p_(p_stall), dead_(never_ready) {
    decide();
  }

  void drive(AxiLiteBus& bus) const {
    bus.aw.ready = aw_ready_;
    bus.w.ready = w_ready_;
    bus.ar.ready = ar_ready_;
    bus.b.valid = b_valid_;
    bus.b.resp = b_resp_;
    bus.r.valid = r_valid_;
    bus.r.data = r_data_;
    bus.r.resp = r_resp_;
  }

  void commit(const AxiLiteBus& bus) {
    if (bus.aw.valid && bus.aw.ready) aw_ = bus.aw.addr, have_aw_ = true;
    if (bus.w.valid && bus.w.ready) w_ = bus.w.data, strb_ = bus.w.strb, have_w_ = true;
    if (bus.ar.valid && bus.ar.ready) ar_ = bus.ar.addr, have_ar_ = true;
    if (b_valid_ && bus.b.ready) b_valid_ = false;
    if (r_valid_ && bus.r.ready) r_valid_ = false;
    if (have_aw_ && have_w_ && !b_valid_ && !roll()) {
      const bool ok = aw_ < 0x40;
      if (ok) {
        std::uint32_t& reg = regs_[aw_ / 4];
        for (unsigned i = 0; i < 4; ++i) {
          if ((strb_ >> i) & 1u) reg = (reg & ~(0xffu << (8 * i))) | (w_ & (0xffu << (8 * i)));
        }
      }
      b_resp_ = ok ? 0 : 2;
      b_valid_ = true;
      have_aw_ = have_w_ = false;
    }
    if (have_ar_ && !r_valid_ && !roll()) {
      const bool ok = ar_ < 0x40;
      r_data_ = ok ? regs_[ar_ / 4] : 0;
      r_resp_ = ok ? 0 : 2;
      r_valid_ = true;
      have_ar_ = false;
    }
    decide();
  }

 private:
  bool roll() { return std::uniform_real_distribution<double>(0, 1)(rng_) < p_; }
  void decide() {
    aw_ready_ = !dead_ && !have_aw_ && !roll();
    w_ready_ = !dead_ && !have_w_ && !roll();
    ar_ready_ = !dead_ && !have_ar_ && !roll();
  }

  std::mt19937_64 rng_;
  double p_;
  bool dead_;
  std::uint32_t regs_[16] = {};
  bool aw_ready_ = false, w_ready_ = false, ar_ready_ = false;
  bool have_aw_ = false, have_w_ = false, have_ar_ = false;
  std::uint32_t aw_ = 0, w_ = 0, ar_ = 0;
  std::uint8_t strb_ = 0;
  bool b_valid_ = false, r_valid_ = false;
  std::uint8_t b_resp_ = 0, r_resp_ = 0;
  std::uint32_t r_data_ = 0;
};

TEST(AxiLite, MasterWritesAndReadsBackThroughStalls) {
  const std::uint64_t seed = test_seed(601);
  SCOPED_TRACE(seed_note(seed));
  TestLiteSlave slave(seed, 0.4);
  AxiLiteMaster master("csr");
  AxiLiteMonitor mon("csr");
  AxiLiteBus bus{};
  const auto tick = [&] {
    master.drive(bus);
    slave.drive(bus);
    mon.commit(bus);
    master.commit(bus);
    slave.commit(bus);
  };
  std::mt19937_64 rng(seed);
  std::uint32_t model[16] = {};
  for (int i = 0; i < 200; ++i) {
    const auto a = static_cast<std::uint32_t>(
        4 * std::uniform_int_distribution<std::uint64_t>(0, 15)(rng));
    if (std::uniform_int_distribution<std::uint64_t>(0, 1)(rng) == 0) {
      const auto v = static_cast<std::uint32_t>(rng());
      ASSERT_EQ(master.write(a, v, tick, 100), AxiResp::kOkay);
      model[a / 4] = v;
    } else {
      AxiResp resp = AxiResp::kDecErr;
      ASSERT_EQ(master.read(a, tick, 100, &resp), model[a / 4]) << "address " << a;
      ASSERT_EQ(resp, AxiResp::kOkay);
    }
  }
  // Byte strobes, and an address the slave does not decode.
  EXPECT_EQ(master.write(0x8, 0xaabbccdd, tick, 100, 0x5), AxiResp::kOkay);
  EXPECT_EQ(master.read(0x8, tick) & 0x00ff00ffu, 0x00bb00ddu);
  EXPECT_EQ(master.write(0x100, 1, tick), AxiResp::kSlvErr);
  AxiResp resp = AxiResp::kOkay;
  master.read(0x104, tick, 100, &resp);
  EXPECT_EQ(resp, AxiResp::kSlvErr);
  EXPECT_TRUE(mon.violations().empty()) << mon.report();
}

TEST(AxiLite, CycleLevelAccessAndBusyRule) {
  AxiLiteMaster master;
  master.start_read(0x10);
  EXPECT_TRUE(master.busy());
  EXPECT_THROW(master.start_write(0x14, 1), std::logic_error);
  AxiLiteBus bus{};
  master.drive(bus);
  EXPECT_TRUE(bus.ar.valid);
  EXPECT_EQ(bus.ar.addr, 0x10u);
  EXPECT_FALSE(bus.r.ready);  // no R before the AR handshake
  bus.ar.ready = true;
  master.commit(bus);
  master.drive(bus);
  EXPECT_FALSE(bus.ar.valid);
  EXPECT_TRUE(bus.r.ready);
  bus.r.valid = true;
  bus.r.data = 0x1234;
  master.commit(bus);
  EXPECT_FALSE(master.busy());
  EXPECT_EQ(master.read_data(), 0x1234u);
}

TEST(AxiLite, TimeoutNamesTheAddress) {
  TestLiteSlave slave(1, 0.0, /*never_ready=*/true);
  AxiLiteMaster master("csr");
  AxiLiteBus bus{};
  const auto tick = [&] {
    master.drive(bus);
    slave.drive(bus);
    master.commit(bus);
    slave.commit(bus);
  };
  try {
    master.write(0x40, 5, tick, 50);
    FAIL() << "no timeout";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("write to 0x40"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("50 cycles"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(master.busy());
  EXPECT_THROW(master.read(0x44, tick, 10), std::runtime_error);
}

std::vector<AxiViolation> run_lite(const std::vector<AxiLiteBus>& trace) {
  AxiLiteMonitor mon("l");
  for (const auto& bus : trace) mon.commit(bus);
  return mon.violations();
}

TEST(AxiLiteMonitor, Rules) {
  std::vector<AxiLiteBus> t(4);
  t[0].aw = {true, false, 0x10, 0};
  t[0].w = {true, true, 5, 0xf};
  t[1].aw = {true, true, 0x10, 0};
  t[2].b = {true, true, 0};
  t[1].ar = {true, true, 0x20, 0};
  t[2].r = {true, false, 7, 0};
  t[3].r = {true, true, 7, 0};
  EXPECT_TRUE(run_lite(t).empty()) << format_violations(run_lite(t));

  auto u = t;
  u[1].aw.valid = false;
  u[2].b = {};
  expect_one(run_lite(u), 1, "AW: VALID dropped before READY");

  u = t;
  u[1].aw.addr = 0x14;
  expect_one(run_lite(u), 1, "AW: payload changed while VALID && !READY");

  u = t;
  u[3].r.data = 8;
  expect_one(run_lite(u), 3, "R: payload changed while VALID && !READY");

  u = t;
  u[1].b = {true, true, 0};  // AW not yet handshaken
  u[2].b = {};
  expect_one(run_lite(u), 1, "B: response without a completed write address and data");

  u = t;
  u[1].r = {true, true, 0, 0};  // same cycle as the AR: too early
  u[2].r = {};
  u[3].r = {};
  expect_one(run_lite(u), 1, "R: response without an outstanding read");
}

}  // namespace
}  // namespace nmsa::tb
