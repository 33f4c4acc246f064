// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
#include "nmsa/isa.hpp"

#include <sstream>
#include <stdexcept>

namespace nmsa {

namespace {

std::uint64_t read_word(const std::uint8_t* bytes, int word) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | bytes[word * 8 + i];
  return v;
}

void write_word(EncodedCommand& out, int word, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) {
    out[static_cast<std::size_t>(word * 8 + i)] = static_cast<std::uint8_t>(v >> (8 * i));
  }
}

std::uint64_t bit(bool b, unsigned pos) {
  return static_cast<std::uint64_t>(b) << pos;
}
std::uint64_t field(std::uint64_t v, unsigned lsb) {
  return v << lsb;
}
std::uint16_t get16(std::uint64_t w, unsigned lsb) {
  return static_cast<std::uint16_t>(w >> lsb);
}
bool get_bit(std::uint64_t w, unsigned pos) {
  return ((w >> pos) & 1u) != 0;
}

std::string hex(std::uint64_t v) {
  std::ostringstream s;
  s << "0x" << std::hex << v;
  return s.str();
}

}  // namespace

std::string_view to_string(Opcode op) {
  switch (op) {
    case Opcode::LOAD:
      return "LOAD";
    case Opcode::COMPUTE:
      return "COMPUTE";
    case Opcode::STORE:
      return "STORE";
  }
  return "?";
}

std::string_view to_string(LoadTarget t) {
  switch (t) {
    case LoadTarget::ACTIVATIONS:
      return "act";
    case LoadTarget::WEIGHTS:
      return "wgt";
    case LoadTarget::EPILOGUE:
      return "epi";
  }
  return "?";
}

Engine engine_of(Opcode op) {
  switch (op) {
    case Opcode::LOAD:
      return Engine::LOAD;
    case Opcode::COMPUTE:
      return Engine::COMPUTE;
    case Opcode::STORE:
      return Engine::STORE;
  }
  throw std::invalid_argument("engine_of: opcode " + std::to_string(static_cast<int>(op)) +
                              " is not defined");
}

std::string_view to_string(Engine e) {
  switch (e) {
    case Engine::LOAD:
      return "load";
    case Engine::COMPUTE:
      return "compute";
    case Engine::STORE:
      return "store";
  }
  return "?";
}

Command Command::load(LoadTarget target, std::uint16_t first_entry, std::uint16_t rows,
                      std::uint16_t bytes_per_row, std::uint64_t host_address,
                      std::uint64_t host_stride) {
  Command c;
  c.opcode = Opcode::LOAD;
  c.target = target;
  c.first_entry = first_entry;
  c.rows = rows;
  c.bytes_per_row = bytes_per_row;
  c.host_address = host_address;
  c.host_stride = host_stride;
  return c;
}

Command Command::compute(std::uint16_t first_weight_record, std::uint16_t beats,
                         std::uint16_t first_act_entry, std::uint16_t act_stride,
                         std::uint16_t first_acc_row, bool dense, bool accumulate,
                         std::uint8_t dense_part) {
  Command c;
  c.opcode = Opcode::COMPUTE;
  c.first_weight_record = first_weight_record;
  c.beats = beats;
  c.first_act_entry = first_act_entry;
  c.act_stride = act_stride;
  c.first_acc_row = first_acc_row;
  c.dense = dense;
  c.accumulate = accumulate;
  c.dense_part = dense_part;
  return c;
}

Command Command::store(std::uint16_t first_acc_row, std::uint16_t rows,
                       std::uint16_t epilogue_entry, std::uint64_t host_address,
                       std::uint64_t host_stride, bool int32_output, bool relu) {
  Command c;
  c.opcode = Opcode::STORE;
  c.first_acc_row = first_acc_row;
  c.rows = rows;
  c.epilogue_entry = epilogue_entry;
  c.host_address = host_address;
  c.host_stride = host_stride;
  c.int32_output = int32_output;
  c.relu = relu;
  return c;
}

bool Command::operator==(const Command& o) const {
  if (opcode != o.opcode || pop_prev != o.pop_prev || pop_next != o.pop_next ||
      push_prev != o.push_prev || push_next != o.push_next) {
    return false;
  }
  switch (opcode) {
    case Opcode::LOAD:
      return target == o.target && first_entry == o.first_entry && rows == o.rows &&
             bytes_per_row == o.bytes_per_row && host_address == o.host_address &&
             host_stride == o.host_stride;
    case Opcode::COMPUTE:
      return dense == o.dense && accumulate == o.accumulate && dense_part == o.dense_part &&
             first_weight_record == o.first_weight_record && beats == o.beats &&
             first_act_entry == o.first_act_entry && act_stride == o.act_stride &&
             first_acc_row == o.first_acc_row;
    case Opcode::STORE:
      return relu == o.relu && int32_output == o.int32_output && first_acc_row == o.first_acc_row &&
             rows == o.rows && epilogue_entry == o.epilogue_entry &&
             host_address == o.host_address && host_stride == o.host_stride;
  }
  return false;
}

EncodedCommand encode(const Command& c) {
  using namespace isa;
  const auto op = static_cast<unsigned>(c.opcode);
  if (op < 1 || op > 3) {
    throw std::invalid_argument("encode: opcode " + std::to_string(op) +
                                " is not defined (1 LOAD, 2 COMPUTE, 3 STORE)");
  }
  std::uint64_t w0 = field(op, OPCODE_LSB) | bit(c.pop_prev, POP_PREV_BIT) |
                     bit(c.pop_next, POP_NEXT_BIT) | bit(c.push_prev, PUSH_PREV_BIT) |
                     bit(c.push_next, PUSH_NEXT_BIT);
  std::uint64_t w1 = 0;
  std::uint64_t w2 = 0;
  switch (c.opcode) {
    case Opcode::LOAD: {
      const auto t = static_cast<unsigned>(c.target);
      if (t > 2) {
        throw std::invalid_argument("encode: LOAD target " + std::to_string(t) +
                                    " is not defined (0 activations, 1 weights, 2 epilogue)");
      }
      w0 |= field(t, TARGET_LSB) | field(c.first_entry, FIELD_A_LSB) | field(c.rows, FIELD_B_LSB) |
            field(c.bytes_per_row, FIELD_C_LSB);
      w1 = c.host_address;
      w2 = c.host_stride;
      break;
    }
    case Opcode::COMPUTE:
      if (c.dense_part > 3) {
        throw std::invalid_argument("encode: COMPUTE dense part " + std::to_string(c.dense_part) +
                                    " does not fit 2 bits");
      }
      w0 |= bit(c.dense, DENSE_RELU_BIT) | bit(c.accumulate, ACCUMULATE_INT32_BIT) |
            field(c.dense_part, DENSE_PART_LSB) | field(c.first_weight_record, FIELD_A_LSB) |
            field(c.beats, FIELD_B_LSB);
      w1 = field(c.first_act_entry, 0) | field(c.act_stride, 16) | field(c.first_acc_row, 32);
      break;
    case Opcode::STORE:
      w0 |= bit(c.relu, DENSE_RELU_BIT) | bit(c.int32_output, ACCUMULATE_INT32_BIT) |
            field(c.first_acc_row, FIELD_A_LSB) | field(c.rows, FIELD_B_LSB) |
            field(c.epilogue_entry, FIELD_C_LSB);
      w1 = c.host_address;
      w2 = c.host_stride;
      break;
  }
  EncodedCommand out{};
  write_word(out, 0, w0);
  write_word(out, 1, w1);
  write_word(out, 2, w2);
  write_word(out, 3, 0);
  return out;
}

Command decode(const std::uint8_t* bytes) {
  using namespace isa;
  const std::uint64_t w0 = read_word(bytes, 0);
  const std::uint64_t w1 = read_word(bytes, 1);
  const std::uint64_t w2 = read_word(bytes, 2);
  const unsigned op = static_cast<unsigned>(w0 & 0xF);
  Command c;
  switch (op) {
    case 1:
      c.opcode = Opcode::LOAD;
      break;
    case 2:
      c.opcode = Opcode::COMPUTE;
      break;
    case 3:
      c.opcode = Opcode::STORE;
      break;
    default:
      throw std::invalid_argument("decode: undefined opcode " + std::to_string(op) +
                                  " in word 0 bits [3:0] (1 LOAD, 2 COMPUTE, 3 STORE)");
  }
  c.pop_prev = get_bit(w0, POP_PREV_BIT);
  c.pop_next = get_bit(w0, POP_NEXT_BIT);
  c.push_prev = get_bit(w0, PUSH_PREV_BIT);
  c.push_next = get_bit(w0, PUSH_NEXT_BIT);
  switch (c.opcode) {
    case Opcode::LOAD: {
      const unsigned t = static_cast<unsigned>((w0 >> TARGET_LSB) & 0xF);
      if (t > 2) {
        throw std::invalid_argument(
            "decode: LOAD has undefined target buffer " + std::to_string(t) +
            " in word 0 bits [11:8] (0 activations, 1 weights, 2 epilogue)");
      }
      c.target = static_cast<LoadTarget>(t);
      c.first_entry = get16(w0, FIELD_A_LSB);
      c.rows = get16(w0, FIELD_B_LSB);
      c.bytes_per_row = get16(w0, FIELD_C_LSB);
      c.host_address = w1;
      c.host_stride = w2;
      break;
    }
    case Opcode::COMPUTE:
      c.dense = get_bit(w0, DENSE_RELU_BIT);
      c.accumulate = get_bit(w0, ACCUMULATE_INT32_BIT);
      c.dense_part = static_cast<std::uint8_t>((w0 >> DENSE_PART_LSB) & 0x3);
      c.first_weight_record = get16(w0, FIELD_A_LSB);
      c.beats = get16(w0, FIELD_B_LSB);
      c.first_act_entry = get16(w1, 0);
      c.act_stride = get16(w1, 16);
      c.first_acc_row = get16(w1, 32);
      break;
    case Opcode::STORE:
      c.relu = get_bit(w0, DENSE_RELU_BIT);
      c.int32_output = get_bit(w0, ACCUMULATE_INT32_BIT);
      c.first_acc_row = get16(w0, FIELD_A_LSB);
      c.rows = get16(w0, FIELD_B_LSB);
      c.epilogue_entry = get16(w0, FIELD_C_LSB);
      c.host_address = w1;
      c.host_stride = w2;
      break;
  }
  return c;
}

std::string to_string(const Command& c) {
  std::ostringstream s;
  s << to_string(c.opcode);
  switch (c.opcode) {
    case Opcode::LOAD:
      s << ' ' << to_string(c.target) << " entry=" << c.first_entry << " rows=" << c.rows
        << " bytes/row=" << c.bytes_per_row << " host=" << hex(c.host_address)
        << " stride=" << c.host_stride;
      break;
    case Opcode::COMPUTE:
      s << (c.dense ? " dense part=" + std::to_string(c.dense_part) : std::string(" sparse"))
        << " wrec=" << c.first_weight_record << " beats=" << c.beats << " act=" << c.first_act_entry
        << '+' << c.act_stride << "*i acc=" << c.first_acc_row
        << (c.accumulate ? " accumulate" : "");
      break;
    case Opcode::STORE:
      s << (c.int32_output ? " int32" : " int8") << (c.relu ? " relu" : "")
        << " acc=" << c.first_acc_row << " rows=" << c.rows << " epi=" << c.epilogue_entry
        << " host=" << hex(c.host_address) << " stride=" << c.host_stride;
      break;
  }
  if (c.pop_prev || c.pop_next || c.push_prev || c.push_next) {
    s << " [";
    const char* sep = "";
    if (c.pop_prev) {
      s << sep << "pop_prev";
      sep = " ";
    }
    if (c.pop_next) {
      s << sep << "pop_next";
      sep = " ";
    }
    if (c.push_prev) {
      s << sep << "push_prev";
      sep = " ";
    }
    if (c.push_next) {
      s << sep << "push_next";
    }
    s << ']';
  }
  return s.str();
}

}  // namespace nmsa
