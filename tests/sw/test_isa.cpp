// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// The command encoding of docs/isa.md (bit by bit), and the device capabilities read from the
// capability registers.
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <regex>
#include <sstream>
#include <random>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "../common/seed.hpp"

#include "nmsa/device_caps.hpp"
#include "nmsa/isa.hpp"

namespace nmsa {
namespace {

using testing::seed_note;
using testing::test_seed;

std::uint64_t word(const EncodedCommand& b, int w) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | b[static_cast<std::size_t>(w * 8 + i)];
  return v;
}

TEST(Isa, LoadEncodingMatchesTheTable) {
  Command c =
      Command::load(LoadTarget::WEIGHTS, 0x1234, 0x5678, 0x9ABC, 0x1122334455667788ull, 0x40);
  c.push_next = true;
  const EncodedCommand b = encode(c);
  // opcode 1, PUSH_NEXT (bit 7), target 1 at [11:8], first entry [31:16], rows [47:32],
  // bytes per row [63:48]; word 1 host address, word 2 stride, word 3 zero.
  EXPECT_EQ(word(b, 0), 0x9ABC'5678'1234'0181ull);
  EXPECT_EQ(word(b, 1), 0x1122334455667788ull);
  EXPECT_EQ(word(b, 2), 0x40u);
  EXPECT_EQ(word(b, 3), 0u);
  EXPECT_EQ(b[0], 0x81);  // little-endian words
  EXPECT_EQ(b[1], 0x01);
}

TEST(Isa, ComputeEncodingMatchesTheTable) {
  Command c = Command::compute(/*wrec*/ 0x0102, /*beats*/ 0x0304, /*act*/ 0x0506, /*stride*/ 0x0708,
                               /*acc*/ 0x090A, /*dense*/ true, /*accumulate*/ true, /*part*/ 2);
  c.pop_prev = true;
  c.pop_next = true;
  c.push_prev = true;
  const EncodedCommand b = encode(c);
  // opcode 2 | POP_PREV 0x10 | POP_NEXT 0x20 | PUSH_PREV 0x40 | DENSE 0x1000 | ACCUMULATE 0x2000 |
  // part 2 << 14.
  EXPECT_EQ(word(b, 0), 0x0000'0304'0102'B072ull);
  EXPECT_EQ(word(b, 1), 0x0000'090A'0708'0506ull);
  EXPECT_EQ(word(b, 2), 0u);
  EXPECT_EQ(word(b, 3), 0u);
}

TEST(Isa, StoreEncodingMatchesTheTable) {
  Command c =
      Command::store(/*acc*/ 0x0A0B, /*rows*/ 0x0C0D, /*epi*/ 0x0E0F, 0xDEADBEEF00ull, 0x100,
                     /*int32*/ true, /*relu*/ true);
  c.push_prev = true;
  const EncodedCommand b = encode(c);
  EXPECT_EQ(word(b, 0), 0x0E0F'0C0D'0A0B'3043ull);
  EXPECT_EQ(word(b, 1), 0xDEADBEEF00ull);
  EXPECT_EQ(word(b, 2), 0x100u);
}

Command random_command(std::mt19937_64& rng) {
  auto u16 = [&rng] { return static_cast<std::uint16_t>(rng()); };
  auto flag = [&rng] { return (rng() & 1) != 0; };
  Command c;
  switch (rng() % 3) {
    case 0:
      c = Command::load(static_cast<LoadTarget>(rng() % 3), u16(), u16(), u16(), rng(), rng());
      break;
    case 1:
      c = Command::compute(u16(), u16(), u16(), u16(), u16(), flag(), flag(),
                           static_cast<std::uint8_t>(rng() % 4));
      break;
    default:
      c = Command::store(u16(), u16(), u16(), rng(), rng(), flag(), flag());
      break;
  }
  c.pop_prev = flag();
  c.pop_next = flag();
  c.push_prev = flag();
  c.push_next = flag();
  return c;
}

TEST(Isa, RandomCommandsRoundTrip) {
  const std::uint64_t seed = test_seed(101);
  SCOPED_TRACE(seed_note(seed));
  std::mt19937_64 rng(seed);
  for (int i = 0; i < 20000; ++i) {
    const Command c = random_command(rng);
    const EncodedCommand bytes = encode(c);
    const Command d = decode(bytes.data());
    ASSERT_EQ(d, c) << "command " << i << ": " << to_string(c) << " decoded as " << to_string(d);
    ASSERT_EQ(encode(d), bytes) << to_string(c);
  }
}

TEST(Isa, ReservedBitsAreIgnoredWhenDecoding) {
  const std::uint64_t seed = test_seed(7);
  SCOPED_TRACE(seed_note(seed));
  std::mt19937_64 rng(seed);
  for (int i = 0; i < 2000; ++i) {
    const Command c = random_command(rng);
    EncodedCommand b = encode(c);
    for (std::size_t j = 24; j < 32; ++j) b[j] = static_cast<std::uint8_t>(rng());  // word 3
    switch (c.opcode) {
      case Opcode::LOAD:
        b[1] |= static_cast<std::uint8_t>(rng() & 0xF0);
        break;  // [15:12]
      case Opcode::COMPUTE:
        b[1] |= static_cast<std::uint8_t>(rng() & 0x0F);  // [11:8]
        b[6] = static_cast<std::uint8_t>(rng());          // [63:48]
        b[7] = static_cast<std::uint8_t>(rng());
        b[14] = static_cast<std::uint8_t>(rng());  // word 1 [63:48]
        for (std::size_t j = 16; j < 24; ++j) b[j] = static_cast<std::uint8_t>(rng());  // word 2
        break;
      case Opcode::STORE:
        b[1] |= static_cast<std::uint8_t>(rng() & 0xCF);
        break;  // [11:8], [15:14]
    }
    ASSERT_EQ(decode(b.data()), c) << to_string(c);
  }
}

TEST(Isa, DecodeRejectsUndefinedOpcodes) {
  EncodedCommand b = encode(Command::load(LoadTarget::ACTIVATIONS, 0, 1, 8, 0, 0));
  for (unsigned op : {0u, 4u, 5u, 8u, 15u}) {
    b[0] = static_cast<std::uint8_t>((b[0] & 0xF0) | op);
    try {
      decode(b.data());
      FAIL() << "opcode " << op << " decoded";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("opcode " + std::to_string(op)), std::string::npos)
          << e.what();
    }
  }
}

TEST(Isa, DecodeRejectsUndefinedLoadTargets) {
  EncodedCommand b = encode(Command::load(LoadTarget::EPILOGUE, 0, 1, 8, 0, 0));
  for (unsigned t = 3; t < 16; ++t) {
    b[1] = static_cast<std::uint8_t>((b[1] & 0xF0) | t);
    try {
      decode(b.data());
      FAIL() << "target " << t << " decoded";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("target buffer " + std::to_string(t)), std::string::npos)
          << e.what();
    }
  }
}

TEST(Isa, EncodeRejectsFieldsThatDoNotFit) {
  Command c = Command::compute(0, 1, 0, 0, 0, true, false, 4);
  EXPECT_THROW(encode(c), std::invalid_argument);
  c = Command::load(static_cast<LoadTarget>(3), 0, 1, 8, 0, 0);
  EXPECT_THROW(encode(c), std::invalid_argument);
}

TEST(Isa, ToStringNamesTheFields) {
  Command c = Command::compute(8, 64, 3, 2, 128, false, true);
  c.pop_prev = true;
  const std::string s = to_string(c);
  EXPECT_NE(s.find("COMPUTE"), std::string::npos) << s;
  EXPECT_NE(s.find("beats=64"), std::string::npos) << s;
  EXPECT_NE(s.find("accumulate"), std::string::npos) << s;
  EXPECT_NE(s.find("pop_prev"), std::string::npos) << s;
  EXPECT_NE(to_string(Command::store(0, 4, 1, 0x1000, 8)).find("int8"), std::string::npos);
}

// --- device capabilities ---------------------------------------------------------------------

TEST(DeviceCaps, DerivedSizesOfTheNamedConfigurations) {
  const DeviceCaps d = DeviceCaps::named("default");
  EXPECT_EQ(d.act_entry_bytes(), 32);
  EXPECT_EQ(d.weight_value_bytes(), 16);
  EXPECT_EQ(d.weight_meta_bytes(), 4);
  EXPECT_EQ(d.weight_record_bytes(), 24);
  EXPECT_EQ(d.epi_entry_bytes(), 96);
  EXPECT_EQ(d.latency(), 19);  // ROWS + COLS + PeLatency - 2
  EXPECT_EQ(d.epi_groups(), 2);
  EXPECT_EQ(d.store_rows, 8);
  const DeviceCaps s = DeviceCaps::named("small");
  EXPECT_EQ(s.act_entry_bytes(), 16);
  EXPECT_EQ(s.weight_record_bytes(), 16);  // 8 values + 2 metadata bytes, padded to 8
  const DeviceCaps s14 = DeviceCaps::named("small_1of4");
  EXPECT_EQ(s14.weight_record_bytes(), 8);  // 4 values + 1 metadata byte
  const DeviceCaps s28 = DeviceCaps::named("small_2of8");
  EXPECT_EQ(s28.act_entry_bytes(), 32);
  EXPECT_EQ(s28.weight_meta_bytes(), 3);  // 4 columns x 6 bits
  EXPECT_EQ(s28.weight_record_bytes(), 16);
  const DeviceCaps l = DeviceCaps::named("large");
  EXPECT_EQ(l.weight_record_bytes(), 40);
  EXPECT_EQ(l.epi_entry_bytes(), 192);
  const DeviceCaps x = DeviceCaps::named("xlarge");
  EXPECT_EQ(x.act_entry_bytes(), 128);     // 32 rows x M = 4 bytes: 16 beats of 64 bits
  EXPECT_EQ(x.weight_record_bytes(), 80);  // 64 values + 16 metadata bytes
  const DeviceCaps t = DeviceCaps::named("tiny");
  EXPECT_EQ(t.act_entry_bytes(), 8);       // two beats of the 32-bit bus: 2 rows x M = 4 bytes
  EXPECT_EQ(t.weight_record_bytes(), 8);   // 4 values + 1 metadata byte, padded to 8
  EXPECT_EQ(t.epi_entry_bytes(), 24);
  EXPECT_EQ(t.epi_groups(), 2);
  EXPECT_EQ(t.store_rows, 8);              // (7 + 2 + 4) / 2 + 2 = 8
  EXPECT_THROW(DeviceCaps::named("huge"), std::invalid_argument);
}

// The capacities DeviceCaps::named() assumes are the ones the RTL top is built with.
TEST(DeviceCaps, NamedConfigurationsMatchRtlConfigsJson) {
  std::string path = __FILE__;
  path = path.substr(0, path.rfind("tests/sw/")) + "rtl/configs.json";
  std::ifstream in(path);
  if (!in) GTEST_SKIP() << "cannot open " << path;
  std::stringstream text;
  text << in.rdbuf();
  const std::string json = text.str();
  int compared = 0;
  for (const char* name :
       {"small", "default", "large", "small_1of4", "small_2of8", "dense_only", "xlarge", "tiny"}) {
    const std::regex entry(std::string("\"") + name + "\"\\s*:\\s*\\{([^}]*)\\}");
    std::smatch m;
    if (!std::regex_search(json, m, entry)) {
      ADD_FAILURE() << name << " missing from " << path;
      continue;
    }
    std::map<std::string, long> v;
    const std::string body = m[1];
    const std::regex kv("\"(\\w+)\"\\s*:\\s*(\\d+)");
    for (auto it = std::sregex_iterator(body.begin(), body.end(), kv); it != std::sregex_iterator();
         ++it) {
      v[(*it)[1]] = std::stol((*it)[2]);
    }
    const DeviceCaps c = DeviceCaps::named(name);
    SCOPED_TRACE(name);
    EXPECT_EQ(v["rows"], c.rows);
    EXPECT_EQ(v["cols"], c.cols);
    EXPECT_EQ(v["n"], c.pattern.n);
    EXPECT_EQ(v["m"], c.pattern.m);
    EXPECT_EQ(v["data_w"], c.data_w);
    EXPECT_EQ(v["acc_w"], c.acc_w);
    if (v.count("act_entries") == 0) continue;  // capacities not in the file yet
    EXPECT_EQ(v["axi_data_w"], c.axi_data_w);
    EXPECT_EQ(v["act_entries"], static_cast<long>(c.act_entries));
    EXPECT_EQ(v["wgt_records"], static_cast<long>(c.wgt_records));
    EXPECT_EQ(v["epi_entries"], static_cast<long>(c.epi_entries));
    EXPECT_EQ(v["acc_entries"], static_cast<long>(c.acc_entries));
    EXPECT_EQ(v["sparse"], c.sparse_supported ? 1 : 0);
    EXPECT_EQ(v["epi_lanes"], c.epi_lanes);
    EXPECT_EQ(v["queue_depth"], c.queue_depth);
    EXPECT_EQ(v["fetch_chunk_cmds"], c.fetch_chunk);
    EXPECT_EQ(v["fetch_chunks"], c.fetch_chunks);
    EXPECT_EQ(v["pending_loads"], c.pending_loads);
    EXPECT_EQ(v["read_requests"], c.read_requests);
    EXPECT_EQ(v["counter_w"], c.counter_w);
    ++compared;
  }
  std::cout << "[ configs  ] " << compared << " configurations with capacities compared with "
            << path << "\n";
}

struct FakeRegisters {
  std::map<std::uint32_t, std::uint32_t> values;
  std::uint32_t operator()(std::uint32_t offset) const {
    const auto it = values.find(offset);
    return it == values.end() ? 0 : it->second;
  }
};

FakeRegisters registers_of(int rows, int cols, int n, int m, int axi, std::uint32_t act,
                           std::uint32_t wgt, std::uint32_t epi, std::uint32_t acc) {
  FakeRegisters r;
  r.values[regs::ID_OFFSET] = regs::ID_RESET;
  r.values[regs::CAP_ARRAY_OFFSET] =
      static_cast<std::uint32_t>(rows | cols << 8 | n << 16 | m << 20 | 1 << 24);
  r.values[regs::CAP_WIDTHS_OFFSET] =
      static_cast<std::uint32_t>(8 | 32 << 8 | axi << 16) | 40u << 24;  // 40-bit counters
  r.values[regs::CAP_ACT_ENTRIES_OFFSET] = act;
  r.values[regs::CAP_WGT_RECORDS_OFFSET] = wgt;
  r.values[regs::CAP_EPI_ENTRIES_OFFSET] = epi;
  r.values[regs::CAP_ACC_ENTRIES_OFFSET] = acc;
  // Structure: queues 8, chunks of 8, 2 chunks, 4 pending loads; bursts of 16, 16 in flight,
  // 8 read requests; array latency ROWS + COLS + 3, 4 epilogue lanes, latency 7, 8 store rows.
  r.values[regs::CAP_QUEUES_OFFSET] = 8u | 8u << 8 | 2u << 16 | 4u << 24;
  r.values[regs::CAP_DMA_OFFSET] = 16u | 16u << 16 | 8u << 24;
  r.values[regs::CAP_PIPELINE_OFFSET] =
      static_cast<std::uint32_t>(rows + cols + 3) | 4u << 8 | 7u << 16 | 8u << 24;
  return r;
}

TEST(DeviceCaps, FromRegistersReadsEveryField) {
  const DeviceCaps c = from_registers(registers_of(16, 8, 2, 8, 128, 1000, 300, 40, 4096));
  EXPECT_EQ(c.rows, 16);
  EXPECT_EQ(c.cols, 8);
  EXPECT_EQ(c.pattern, (NmPattern{2, 8}));
  EXPECT_EQ(c.data_w, 8);
  EXPECT_EQ(c.acc_w, 32);
  EXPECT_EQ(c.axi_data_w, 128);
  EXPECT_EQ(c.counter_w, 40);
  EXPECT_EQ(c.act_entries, 1000u);
  EXPECT_EQ(c.wgt_records, 300u);
  EXPECT_EQ(c.epi_entries, 40u);
  EXPECT_EQ(c.acc_entries, 4096u);
  EXPECT_TRUE(c.sparse_supported);
  EXPECT_EQ(c.weight_record_bytes(), 32);  // 16 values + 6 metadata bytes, padded to 16
  EXPECT_EQ(c.queue_depth, 8);
  EXPECT_EQ(c.fetch_chunk, 8);
  EXPECT_EQ(c.fetch_chunks, 2);
  EXPECT_EQ(c.pending_loads, 4);
  EXPECT_EQ(c.max_burst_beats, 16);
  EXPECT_EQ(c.max_outstanding, 16);
  EXPECT_EQ(c.read_requests, 8);
  EXPECT_EQ(c.latency(), 27);
  EXPECT_EQ(c.epi_lanes, 4);
  EXPECT_EQ(c.epi_groups(), 2);
  EXPECT_EQ(c.epi_latency, 7);
  EXPECT_EQ(c.store_rows, 8);
  // The inverse, for models of the device: every register reads back what it was built from.
  for (const auto& [offset, value] : registers_of(16, 8, 2, 8, 128, 1000, 300, 40, 4096).values) {
    EXPECT_EQ(capability_register(c, offset), value) << "offset " << offset;
  }
}

TEST(DeviceCaps, DenseOnlyDeviceHasNoMetadataAndHalfEntries) {
  FakeRegisters r = registers_of(8, 8, 2, 4, 64, 2048, 256, 64, 2048);
  r.values[regs::CAP_ARRAY_OFFSET] &= ~regs::CAP_ARRAY_SPARSE_MASK;
  const DeviceCaps c = from_registers(r);
  EXPECT_FALSE(c.sparse_supported);
  EXPECT_EQ(c.act_entry_bytes(), 16);  // ROWS * N
  EXPECT_EQ(c.weight_meta_bytes(), 0);
  EXPECT_EQ(c.weight_record_bytes(), 16);
  EXPECT_EQ(c.dense_parts(), 1);
  EXPECT_EQ(c.describe().find("2:4"), std::string::npos) << c.describe();
  EXPECT_EQ(DeviceCaps::named("dense_only").describe(), c.describe());
}

TEST(DeviceCaps, FromRegistersRejectsNonsense) {
  auto expect_error = [](FakeRegisters r, const std::string& needle) {
    try {
      from_registers(r);
      ADD_FAILURE() << "accepted; expected an error mentioning '" << needle << "'";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  FakeRegisters wrong_id = registers_of(8, 8, 2, 4, 64, 2048, 256, 64, 2048);
  wrong_id.values[regs::ID_OFFSET] = 0xFFFFFFFF;
  expect_error(wrong_id, "not an nmsa device");
  expect_error(registers_of(0, 8, 2, 4, 64, 2048, 256, 64, 2048), "ROWS");
  expect_error(registers_of(8, 8, 2, 3, 64, 2048, 256, 64, 2048), "power of two");
  expect_error(registers_of(8, 8, 3, 4, 64, 2048, 256, 64, 2048), "divide");
  expect_error(registers_of(8, 8, 2, 4, 48, 2048, 256, 64, 2048), "AXI_DATA_W");
  expect_error(registers_of(8, 8, 2, 4, 64, 0, 256, 64, 2048), "ACT_ENTRIES is 0");
  expect_error(registers_of(8, 8, 2, 4, 64, 2048, 7, 64, 2048), "WGT_RECORDS");
  expect_error(registers_of(8, 8, 2, 4, 64, 2048, 256, 64, 0xFFFFFFFF), "ACC_ENTRIES");
  FakeRegisters narrow_acc = registers_of(8, 8, 2, 4, 64, 2048, 256, 64, 2048);
  narrow_acc.values[regs::CAP_WIDTHS_OFFSET] = 8 | 24 << 8 | 64 << 16;
  expect_error(narrow_acc, "ACC_W");
  FakeRegisters narrow_counters = registers_of(8, 8, 2, 4, 64, 2048, 256, 64, 2048);
  narrow_counters.values[regs::CAP_WIDTHS_OFFSET] = 8 | 32 << 8 | 64 << 16 | 32u << 24;
  expect_error(narrow_counters, "COUNTER_W = 32");
}

// Register map 0.2 had no COUNTER_W field: a device that reads 0 there has 64-bit counters.
TEST(DeviceCaps, CounterWidthOfAnOlderDeviceIs64) {
  FakeRegisters r = registers_of(8, 8, 2, 4, 64, 2048, 256, 64, 2048);
  r.values[regs::CAP_WIDTHS_OFFSET] &= ~regs::CAP_WIDTHS_COUNTER_W_MASK;
  EXPECT_EQ(from_registers(r).counter_w, 64);
}

}  // namespace
}  // namespace nmsa
