// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// The DMA engines (nmsa_dma_rd, nmsa_dma_wr) against AxiMemory, watched by Axi4Monitor, in
// several parameter sets (cmake/nmsa_dma.cmake). The harness components themselves are checked
// in test_axi_harness.cpp.
//
// Every random test takes its seed from NMSA_SEED (tb::test_seed) and names it on failure; every
// simulation loop has a cycle timeout.#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "dma_bench.hpp"

namespace nmsa::tb {
namespace {

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
