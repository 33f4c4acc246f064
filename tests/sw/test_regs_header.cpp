// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// Invariants of the generated register header (sw/isa/include/nmsa/regs.hpp, written by
// scripts/gen_regs.py from rtl/regs/nmsa_regs.json). The generator validates the description too;
// these tests check what the C++ side actually received, so a hand edit of the header or a
// generator bug shows up here.
#include <cstdint>
#include <iterator>
#include <set>
#include <string>
#include <string_view>

#include <gtest/gtest.h>

#include "nmsa/regs.hpp"

namespace nmsa {
namespace {

namespace r = nmsa::regs;

// The table is usable at compile time, which is what lets drivers build switch tables from it.
static_assert(r::find_register("CTRL") != nullptr);
static_assert(r::find_register("CTRL")->offset == r::CTRL_OFFSET);
static_assert(r::find_register("NO_SUCH_REGISTER") == nullptr);
static_assert(r::to_string(r::ErrCode::BAD_ALIGN) == "BAD_ALIGN");

TEST(RegsHeader, OffsetsAreUniqueAlignedAndInsideTheSpace) {
  std::set<std::uint32_t> offsets;
  std::set<std::string_view> names;
  std::uint32_t previous = 0;
  for (std::size_t i = 0; i < r::REGISTERS.size(); ++i) {
    const r::RegisterInfo& reg = r::REGISTERS[i];
    EXPECT_EQ(reg.offset % r::REG_BYTES, 0u) << reg.name;
    EXPECT_LT(reg.offset, r::SPACE_BYTES) << reg.name;
    EXPECT_TRUE(offsets.insert(reg.offset).second) << reg.name << " shares offset 0x" << std::hex << reg.offset;
    EXPECT_TRUE(names.insert(reg.name).second) << reg.name << " appears twice";
    if (i > 0) {
      EXPECT_GT(reg.offset, previous) << reg.name << ": table not in offset order";
    }
    previous = reg.offset;
  }
  EXPECT_EQ(r::SPACE_BYTES, 4096u);
}

TEST(RegsHeader, FieldsFitTheirRegisterWithoutOverlap) {
  std::size_t next_field = 0;
  for (const r::RegisterInfo& reg : r::REGISTERS) {
    EXPECT_EQ(reg.first_field, next_field) << reg.name << ": fields not contiguous in FIELDS";
    ASSERT_LE(reg.first_field + reg.num_fields, r::FIELDS.size()) << reg.name;
    ASSERT_GT(reg.num_fields, 0u) << reg.name;
    next_field = reg.first_field + reg.num_fields;
    std::uint32_t used = 0;
    std::uint32_t reset = 0;
    bool has_param = false;
    for (std::size_t f = reg.first_field; f < reg.first_field + reg.num_fields; ++f) {
      const r::FieldInfo& fld = r::FIELDS[f];
      const std::string where = std::string(reg.name) + "." + std::string(fld.name);
      ASSERT_GE(fld.width, 1u) << where;
      ASSERT_LE(fld.lsb + fld.width, 32u) << where;
      const std::uint64_t ones = (std::uint64_t{1} << fld.width) - 1;
      EXPECT_EQ(fld.mask, static_cast<std::uint32_t>(ones << fld.lsb)) << where;
      EXPECT_EQ(used & fld.mask, 0u) << where << " overlaps another field";
      used |= fld.mask;
      EXPECT_LE(fld.reset, ones) << where << ": reset does not fit the field";
      EXPECT_EQ(fld.has_param_reset, !fld.reset_param.empty()) << where;
      if (fld.has_param_reset) {
        EXPECT_EQ(fld.reset, 0u) << where;
        EXPECT_EQ(fld.access, r::Access::RO) << where << ": a parameter value is read-only";
      }
      if (fld.access == r::Access::W1P || fld.access == r::Access::WO) {
        EXPECT_EQ(fld.reset, 0u) << where << " reads as 0";
      }
      if (reg.access != r::Access::RW) {
        EXPECT_EQ(fld.access, reg.access) << where << ": only rw registers mix access types";
      }
      reset |= fld.reset << fld.lsb;
      has_param = has_param || fld.has_param_reset;
    }
    EXPECT_EQ(reg.reset, reset) << reg.name << ": register reset is not the sum of its fields";
    EXPECT_EQ(reg.has_param_reset, has_param) << reg.name;
  }
  EXPECT_EQ(next_field, r::FIELDS.size()) << "FIELDS holds fields of no register";
}

TEST(RegsHeader, CountersArePairsOfAdjacentRegisters) {
  ASSERT_EQ(r::COUNTERS.size(), r::NUM_COUNTERS);
  EXPECT_EQ(r::COUNTERS_BASE, 0x100u);
  std::set<std::string_view> names;
  for (std::size_t i = 0; i < r::COUNTERS.size(); ++i) {
    const r::CounterInfo& c = r::COUNTERS[i];
    names.insert(c.name);
    EXPECT_EQ(c.lo_offset, r::COUNTERS_BASE + 8 * i) << c.name;
    EXPECT_EQ(c.hi_offset, c.lo_offset + 4) << c.name;
    EXPECT_FALSE(c.description.empty()) << c.name << " is undocumented";
    const r::RegisterInfo* lo = r::find_register(std::string(c.name) + "_LO");
    const r::RegisterInfo* hi = r::find_register(std::string(c.name) + "_HI");
    ASSERT_NE(lo, nullptr) << c.name;
    ASSERT_NE(hi, nullptr) << c.name;
    EXPECT_EQ(lo->offset, c.lo_offset) << c.name;
    EXPECT_EQ(hi->offset, c.hi_offset) << c.name;
    EXPECT_EQ(lo->access, r::Access::RO) << c.name;
    EXPECT_EQ(hi->access, r::Access::RO) << c.name;
    EXPECT_EQ(lo->reset, 0u) << c.name;
    EXPECT_EQ(hi->reset, 0u) << c.name;
  }
  for (const char* required :
       {"CYCLES_TOTAL", "CYCLES_BUSY", "CYCLES_COMPUTE", "CYCLES_DMA_STALL", "MACS", "TILES_SPARSE",
        "TILES_DENSE", "DMA_RD_BYTES", "DMA_WR_BYTES", "META_BYTES", "ILLEGAL_META", "AXI_ERRORS"}) {
    EXPECT_EQ(names.count(required), 1u) << "missing counter " << required;
  }
  EXPECT_EQ(r::CYCLES_TOTAL_LO_OFFSET, 0x100u);
  EXPECT_EQ(r::CYCLES_TOTAL_HI_OFFSET, r::CYCLES_TOTAL_LO_OFFSET + 4);
  EXPECT_EQ(r::AXI_ERRORS_HI_OFFSET, r::AXI_ERRORS_LO_OFFSET + 4);
}

TEST(RegsHeader, IdentityAndVersion) {
  EXPECT_EQ(r::ID_OFFSET, 0x000u);
  EXPECT_EQ(r::ID_RESET, 0x4E4D5341u);
  const std::string ascii{static_cast<char>(r::ID_RESET >> 24), static_cast<char>(r::ID_RESET >> 16),
                          static_cast<char>(r::ID_RESET >> 8), static_cast<char>(r::ID_RESET)};
  EXPECT_EQ(ascii, "NMSA");
  EXPECT_EQ(r::VERSION_OFFSET, 0x004u);
  EXPECT_EQ((r::VERSION_RESET & r::VERSION_MAJOR_MASK) >> r::VERSION_MAJOR_SHIFT, 0u);
  EXPECT_EQ((r::VERSION_RESET & r::VERSION_MINOR_MASK) >> r::VERSION_MINOR_SHIFT, 3u);
  EXPECT_EQ((r::VERSION_RESET & r::VERSION_PATCH_MASK) >> r::VERSION_PATCH_SHIFT, 0u);
}

// The bit positions the RTL, the drivers and docs/registers.md agree on.
TEST(RegsHeader, ControlStatusAndCapabilityLayout) {
  EXPECT_EQ(r::CTRL_START_MASK, 1u << 0);
  EXPECT_EQ(r::CTRL_SOFT_RESET_MASK, 1u << 1);
  EXPECT_EQ(r::CTRL_IRQ_EN_MASK, 1u << 2);
  EXPECT_EQ(r::STATUS_BUSY_MASK, 1u << 0);
  EXPECT_EQ(r::STATUS_DONE_MASK, 1u << 1);
  EXPECT_EQ(r::STATUS_ERROR_MASK, 1u << 2);
  EXPECT_EQ(r::STATUS_ERR_CODE_MASK, 0xF00u);
  EXPECT_EQ(r::IRQ_STATUS_DONE_MASK, 1u << 0);
  EXPECT_EQ(r::IRQ_STATUS_ERROR_MASK, 1u << 1);
  EXPECT_EQ(r::CAP_ARRAY_ROWS_MASK, 0x000000FFu);
  EXPECT_EQ(r::CAP_ARRAY_COLS_MASK, 0x0000FF00u);
  EXPECT_EQ(r::CAP_ARRAY_N_MASK, 0x000F0000u);
  EXPECT_EQ(r::CAP_ARRAY_M_MASK, 0x00F00000u);
  EXPECT_EQ(r::CAP_ARRAY_SPARSE_MASK, 0x01000000u);
  EXPECT_EQ(r::CAP_WIDTHS_AXI_DATA_W_MASK, 0x00FF0000u);

  const struct { std::string_view name; r::Access access; } expected[] = {
      {"CTRL", r::Access::RW},        {"STATUS", r::Access::RO},      {"ERR_INFO", r::Access::RO},
      {"IRQ_STATUS", r::Access::W1C}, {"CMD_BASE_LO", r::Access::RW}, {"CMD_BASE_HI", r::Access::RW},
      {"CMD_COUNT", r::Access::RW},
  };
  for (const auto& e : expected) {
    const r::RegisterInfo* reg = r::find_register(e.name);
    ASSERT_NE(reg, nullptr) << e.name;
    EXPECT_EQ(reg->access, e.access) << e.name << " is " << r::to_string(reg->access);
  }
  EXPECT_EQ(r::FIELDS[r::find_register("CTRL")->first_field].access, r::Access::W1P);

  // Capabilities depend on the build: their resets come from RTL parameters.
  for (std::string_view cap : {"CAP_ARRAY", "CAP_WIDTHS", "CAP_ACT_ENTRIES", "CAP_WGT_RECORDS",
                               "CAP_EPI_ENTRIES", "CAP_ACC_ENTRIES"}) {
    const r::RegisterInfo* reg = r::find_register(cap);
    ASSERT_NE(reg, nullptr) << cap;
    EXPECT_TRUE(reg->has_param_reset) << cap;
    EXPECT_EQ(reg->access, r::Access::RO) << cap;
  }
  EXPECT_FALSE(r::find_register("STATUS")->has_param_reset);
}

TEST(RegsHeader, ErrorCodeNamesAndValues) {
  const struct { r::ErrCode code; std::uint32_t value; std::string_view name; } expected[] = {
      {r::ErrCode::NONE, 0, "NONE"},
      {r::ErrCode::ILLEGAL_META, 1, "ILLEGAL_META"},
      {r::ErrCode::AXI_SLVERR, 2, "AXI_SLVERR"},
      {r::ErrCode::AXI_DECERR, 3, "AXI_DECERR"},
      {r::ErrCode::BAD_OPCODE, 4, "BAD_OPCODE"},
      {r::ErrCode::BAD_RANGE, 5, "BAD_RANGE"},
      {r::ErrCode::START_WHILE_BUSY, 6, "START_WHILE_BUSY"},
      {r::ErrCode::BAD_ALIGN, 7, "BAD_ALIGN"},
      {r::ErrCode::BAD_DEPS, 8, "BAD_DEPS"},
  };
  ASSERT_EQ(r::ERR_CODE_VALUES.size(), std::size(expected));
  for (const auto& e : expected) {
    EXPECT_EQ(static_cast<std::uint32_t>(e.code), e.value) << e.name;
    EXPECT_EQ(r::to_string(e.code), e.name);
    EXPECT_FALSE(r::describe(e.code).empty()) << e.name;
  }
  std::set<std::string_view> names;
  for (r::ErrCode c : r::ERR_CODE_VALUES) {
    EXPECT_LT(static_cast<std::uint32_t>(c), 1u << r::STATUS_ERR_CODE_WIDTH) << r::to_string(c);
    EXPECT_TRUE(names.insert(r::to_string(c)).second) << r::to_string(c);
  }
  EXPECT_EQ(r::ERR_CODE_WIDTH, r::STATUS_ERR_CODE_WIDTH);
  // A code the hardware might report but this header does not know (e.g. newer RTL).
  EXPECT_EQ(r::to_string(static_cast<r::ErrCode>(15)), "UNKNOWN");
}

}  // namespace
}  // namespace nmsa
