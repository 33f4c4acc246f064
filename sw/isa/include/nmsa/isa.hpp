// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// The command stream of docs/isa.md: 32-byte commands (four little-endian 64-bit words) that the
// command processor fetches from host memory and dispatches to the load, compute and store
// engines. This is the one software implementation of the encoding; the RTL decoder
// (nmsa_cmd) implements the same table.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace nmsa {

enum class Opcode : std::uint8_t { LOAD = 1, COMPUTE = 2, STORE = 3 };

// LOAD word 0 bits [11:8].
enum class LoadTarget : std::uint8_t { ACTIVATIONS = 0, WEIGHTS = 1, EPILOGUE = 2 };

std::string_view to_string(Opcode op);
std::string_view to_string(LoadTarget t);

// The three engines, and the stage order that names a command's "previous" and "next" stage.
enum class Engine : std::uint8_t { LOAD = 0, COMPUTE = 1, STORE = 2 };
Engine engine_of(Opcode op);
std::string_view to_string(Engine e);

// Bit positions of the fields in word 0 (docs/isa.md, "Encoding"). Exposed for tests that
// corrupt a field in memory and for anyone writing commands by hand.
namespace isa {
constexpr std::size_t COMMAND_BYTES = 32;
constexpr unsigned OPCODE_LSB = 0;  // [3:0]
constexpr unsigned POP_PREV_BIT = 4;
constexpr unsigned POP_NEXT_BIT = 5;
constexpr unsigned PUSH_PREV_BIT = 6;
constexpr unsigned PUSH_NEXT_BIT = 7;
constexpr unsigned TARGET_LSB = 8;             // [11:8], LOAD
constexpr unsigned DENSE_RELU_BIT = 12;        // COMPUTE: DENSE, STORE: RELU
constexpr unsigned ACCUMULATE_INT32_BIT = 13;  // COMPUTE: ACCUMULATE, STORE: INT32
constexpr unsigned DENSE_PART_LSB = 14;        // [15:14], COMPUTE
constexpr unsigned FIELD_A_LSB = 16;           // [31:16]: first entry / weight record / acc row
constexpr unsigned FIELD_B_LSB = 32;           // [47:32]: rows / beats
constexpr unsigned FIELD_C_LSB = 48;           // [63:48]: bytes per row / epilogue entry
}  // namespace isa

// One command. Only the fields of its opcode are encoded; encode() ignores the others and
// decode() leaves them at their defaults, so a decoded command compares equal to one built with
// the factories below. Reserved bits (word 0 bits [11:8] of COMPUTE and STORE, [15:12] of LOAD,
// [15:14] of STORE, [63:48] of COMPUTE, word 1 [63:48] of COMPUTE, word 2 of COMPUTE, word 3)
// are written as 0 and ignored when decoded.
struct Command {
  Opcode opcode = Opcode::LOAD;

  // Dependency flags (word 0 bits 7:4). LOAD may use only pop_next/push_next, STORE only
  // pop_prev/push_prev (checked by the device at fetch, not here).
  bool pop_prev = false;
  bool pop_next = false;
  bool push_prev = false;
  bool push_next = false;

  // LOAD
  LoadTarget target = LoadTarget::ACTIVATIONS;
  std::uint16_t first_entry = 0;  // first scratchpad entry / weight record / epilogue entry
  std::uint16_t bytes_per_row = 0;

  // LOAD and STORE
  std::uint16_t rows = 0;
  std::uint64_t host_address = 0;
  std::uint64_t host_stride = 0;  // bytes between row starts

  // COMPUTE
  bool dense = false;
  bool accumulate = false;
  std::uint8_t dense_part = 0;  // 0..3: which Rows*N-byte part of the entry (dense mode)
  std::uint16_t first_weight_record = 0;
  std::uint16_t beats = 0;  // activation vectors
  std::uint16_t first_act_entry = 0;
  std::uint16_t act_stride = 0;  // entries between consecutive vectors

  // COMPUTE and STORE
  std::uint16_t first_acc_row = 0;

  // STORE
  bool relu = false;
  bool int32_output = false;  // raw accumulators + bias instead of requantized INT8
  std::uint16_t epilogue_entry = 0;

  static Command load(LoadTarget target, std::uint16_t first_entry, std::uint16_t rows,
                      std::uint16_t bytes_per_row, std::uint64_t host_address,
                      std::uint64_t host_stride);
  static Command compute(std::uint16_t first_weight_record, std::uint16_t beats,
                         std::uint16_t first_act_entry, std::uint16_t act_stride,
                         std::uint16_t first_acc_row, bool dense = false, bool accumulate = false,
                         std::uint8_t dense_part = 0);
  static Command store(std::uint16_t first_acc_row, std::uint16_t rows,
                       std::uint16_t epilogue_entry, std::uint64_t host_address,
                       std::uint64_t host_stride, bool int32_output = false, bool relu = false);

  bool operator==(const Command& o) const;
  bool operator!=(const Command& o) const { return !(*this == o); }
};

using EncodedCommand = std::array<std::uint8_t, isa::COMMAND_BYTES>;

// The 32 bytes of docs/isa.md. Throws std::invalid_argument if a field does not fit (dense_part
// above 3, an opcode or target outside the enumeration).
EncodedCommand encode(const Command& c);

// Decodes 32 bytes. Throws std::invalid_argument naming the problem for an undefined opcode or
// LOAD target (the cases the device reports as BAD_OPCODE).
Command decode(const std::uint8_t* bytes);

// One line for logs: "COMPUTE sparse wrec=8 beats=64 act=0+1*i acc=128 acc+ [pop_prev]".
std::string to_string(const Command& c);

}  // namespace nmsa
