// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// The harness's fault injection that the soak (tests/soak/soak.cpp) relies on: long stalls of
// one AXI channel, the count of bytes stored outside a watched window, the reset of the bus
// state for a hard reset mid-run, and NMSA_X_SEED re-seeding the power-up state.
#include <gtest/gtest.h>

#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "nmsa/tb/axi.hpp"
#include "nmsa/tb/sim_context.hpp"

namespace nmsa::tb {
namespace {

Axi4Bus cycle(AxiMemory& mem, const Axi4Bus& master) {
  Axi4Bus bus = master;
  mem.drive(bus);
  mem.commit(bus);
  return bus;
}

AxiAddrChannel request(std::uint64_t addr, unsigned beats) {
  AxiAddrChannel c;
  c.valid = true;
  c.addr = addr;
  c.len = static_cast<std::uint8_t>(beats - 1);
  c.size = 3;
  c.burst = kAxiBurstIncr;
  return c;
}

// Cycle of the AR handshake and of the first R beat with AR or R stalled from cycle 0.
std::pair<std::uint64_t, std::uint64_t> read_times(AxiChannel stalled, std::uint64_t cycles) {
  AxiMemory mem(AxiMemoryConfig{}, 1);
  mem.stall(stalled, cycles);
  Axi4Bus m{};
  m.ar = request(0x1000, 2);
  m.r.ready = true;
  std::uint64_t ar_at = 0, r_at = 0;
  for (std::uint64_t c = 0; c < 200 && r_at == 0; ++c) {
    const Axi4Bus bus = cycle(mem, m);
    if (bus.ar.valid && bus.ar.ready) {
      ar_at = c;
      m.ar = {};
    }
    if (bus.r.valid) r_at = c;
  }
  return {ar_at, r_at};
}

TEST(AxiMemoryFaults, StallHoldsOneChannelForItsCycles) {
  const auto [ar0, r0] = read_times(AxiChannel::kAw, 100);  // another channel: no effect
  EXPECT_EQ(ar0, 0u);
  EXPECT_EQ(r0, 1u);
  const auto [ar1, r1] = read_times(AxiChannel::kAr, 50);
  EXPECT_EQ(ar1, 50u);
  EXPECT_EQ(r1, 51u);
  const auto [ar2, r2] = read_times(AxiChannel::kR, 40);
  EXPECT_EQ(ar2, 0u);
  EXPECT_EQ(r2, 40u);
}

TEST(AxiMemoryFaults, ChannelBusyWhenAStallWouldHoldSomethingUp) {
  AxiMemory mem(AxiMemoryConfig{}, 1);
  EXPECT_FALSE(mem.channel_busy(AxiChannel::kAr));
  EXPECT_FALSE(mem.channel_busy(AxiChannel::kR));
  Axi4Bus m{};
  m.ar = request(0x1000, 2);
  cycle(mem, m);  // AR taken, its beats pending
  EXPECT_TRUE(mem.channel_busy(AxiChannel::kAr));
  EXPECT_TRUE(mem.channel_busy(AxiChannel::kR));
  EXPECT_FALSE(mem.channel_busy(AxiChannel::kW));
  EXPECT_FALSE(mem.channel_busy(AxiChannel::kB));
}

TEST(AxiMemoryFaults, WatchCountsBytesStoredOutsideTheWindow) {
  AxiMemory mem(AxiMemoryConfig{}, 1);
  mem.watch_writes(0x2004, 0x2010);
  Axi4Bus m{};
  m.aw = request(0x2000, 2);
  m.b.ready = true;
  int beats = 0;
  for (int c = 0; c < 20; ++c) {
    Axi4Bus in = m;
    if (beats < 2) {
      in.w.valid = true;
      in.w.data[0] = 0x0102030405060708ull;
      in.w.strb = 0xff;
      in.w.last = beats == 1;
    }
    const Axi4Bus bus = cycle(mem, in);
    if (bus.aw.valid && bus.aw.ready) m.aw = {};
    if (in.w.valid && bus.w.ready) ++beats;
  }
  EXPECT_EQ(beats, 2);
  EXPECT_EQ(mem.stats().bytes_written, 16u);
  EXPECT_EQ(mem.stats().stray_bytes_written, 4u);  // 0x2000..0x2003
}

TEST(AxiMemoryFaults, ResetBusDropsWhatIsInFlightAndKeepsTheContents) {
  AxiMemory mem(AxiMemoryConfig{}, 1);
  mem.write_bytes(0x1000, std::vector<std::uint8_t>{7, 7, 7, 7});
  Axi4Bus m{};
  m.ar = request(0x1000, 4);
  cycle(mem, m);
  EXPECT_FALSE(mem.idle());
  mem.stall(AxiChannel::kAr, 1000);
  mem.reset_bus();
  EXPECT_TRUE(mem.idle());
  m = {};
  m.r.ready = true;
  for (int c = 0; c < 10; ++c) EXPECT_FALSE(cycle(mem, m).r.valid);
  EXPECT_EQ(mem.read_bytes(0x1000, 4), (std::vector<std::uint8_t>{7, 7, 7, 7}));
  m.ar = request(0x1000, 1);  // the stall ended with the reset
  cycle(mem, m);
  m.ar = {};
  EXPECT_TRUE(cycle(mem, m).r.valid);
}

TEST(AxiMonitorReset, AValidDroppedAtResetIsNoViolation) {
  Axi4Monitor monitor;
  Axi4Bus bus{};
  bus.ar = request(0x1000, 1);  // presented, not taken
  monitor.commit(bus);
  monitor.reset();
  monitor.commit(Axi4Bus{});
  EXPECT_EQ(monitor.report(), "");
  EXPECT_EQ(monitor.reads_in_flight(), 0u);
}

TEST(SimContext, XSeedReseedsThePowerUpState) {
  const char* outer = std::getenv("NMSA_X_SEED");
  const std::string saved = outer != nullptr ? outer : "";
  ::unsetenv("NMSA_X_SEED");
  EXPECT_EQ(x_initial_seed(5), 5u);
  ::setenv("NMSA_X_SEED", "1", 1);
  const std::uint64_t one = x_initial_seed(5);
  ::setenv("NMSA_X_SEED", "2", 1);
  const std::uint64_t two = x_initial_seed(5);
  EXPECT_NE(one, 5u);
  EXPECT_NE(one, two);
  EXPECT_NE(x_initial_seed(6), two);
  ::setenv("NMSA_X_SEED", "x", 1);
  EXPECT_THROW(x_initial_seed(5), std::invalid_argument);
  if (outer != nullptr) {
    ::setenv("NMSA_X_SEED", saved.c_str(), 1);
  } else {
    ::unsetenv("NMSA_X_SEED");
  }
}

}  // namespace
}  // namespace nmsa::tb
