// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
#include "nmsa/functional_model.hpp"

#include <algorithm>
#include <deque>
#include <limits>
#include <sstream>
#include <stdexcept>

#include <Eigen/Core>

#include "nmsa/epilogue.hpp"
#include "nmsa/stream_counters.hpp"

namespace nmsa {

namespace {

using regs::ErrCode;
__extension__ typedef unsigned __int128 uint128;

// The four token counters of docs/isa.md.
enum Counter : int {
  LOAD_TO_COMPUTE = 0,   // "data loaded"
  COMPUTE_TO_LOAD = 1,   // "buffer free"
  COMPUTE_TO_STORE = 2,  // "results ready"
  STORE_TO_COMPUTE = 3,  // "accumulators free"
};
constexpr int NUM_COUNTERS = 4;

const char* counter_name(int c) {
  switch (c) {
    case LOAD_TO_COMPUTE:
      return "load->compute";
    case COMPUTE_TO_LOAD:
      return "compute->load";
    case COMPUTE_TO_STORE:
      return "compute->store";
    case STORE_TO_COMPUTE:
      return "store->compute";
  }
  return "?";
}

// Counters a (flag-legal) command pops and pushes.
struct TokenUse {
  std::array<int, 2> pops{};
  int num_pops = 0;
  std::array<int, 2> pushes{};
  int num_pushes = 0;
};

TokenUse token_use(const Command& c) {
  TokenUse u;
  auto pop = [&u](int counter) { u.pops[static_cast<std::size_t>(u.num_pops++)] = counter; };
  auto push = [&u](int counter) { u.pushes[static_cast<std::size_t>(u.num_pushes++)] = counter; };
  switch (c.opcode) {
    case Opcode::LOAD:
      if (c.pop_next) pop(COMPUTE_TO_LOAD);
      if (c.push_next) push(LOAD_TO_COMPUTE);
      break;
    case Opcode::COMPUTE:
      if (c.pop_prev) pop(LOAD_TO_COMPUTE);
      if (c.pop_next) pop(STORE_TO_COMPUTE);
      if (c.push_prev) push(COMPUTE_TO_LOAD);
      if (c.push_next) push(COMPUTE_TO_STORE);
      break;
    case Opcode::STORE:
      if (c.pop_prev) pop(COMPUTE_TO_STORE);
      if (c.push_prev) push(STORE_TO_COMPUTE);
      break;
  }
  return u;
}

// Does [address, address + (rows-1)*stride + row_bytes) fit below 2^bits?
bool host_range_fits(std::uint64_t address, std::uint64_t rows, std::uint64_t stride,
                     std::uint64_t row_bytes, int bits) {
  const uint128 end =
      static_cast<uint128>(address) + static_cast<uint128>(rows - 1) * stride + row_bytes;
  return end <= (static_cast<uint128>(1) << bits);
}

std::string hex(std::uint64_t v) {
  std::ostringstream s;
  s << "0x" << std::hex << v;
  return s.str();
}

const char* target_buffer_name(LoadTarget t) {
  switch (t) {
    case LoadTarget::ACTIVATIONS:
      return "activation scratchpad";
    case LoadTarget::WEIGHTS:
      return "weight scratchpad";
    case LoadTarget::EPILOGUE:
      return "epilogue buffer";
  }
  return "?";
}

std::uint32_t le32(const std::uint8_t* p) {
  return std::uint32_t{p[0]} | std::uint32_t{p[1]} << 8 | std::uint32_t{p[2]} << 16 |
         std::uint32_t{p[3]} << 24;
}

}  // namespace

std::string RunResult::describe() const {
  if (ok()) return "NONE";
  return std::string(regs::to_string(error)) + " at command " + std::to_string(error_index) + ": " +
         error_message;
}

std::optional<CommandError> check_command(const DeviceCaps& caps, const Command& c) {
  std::optional<CommandError> range;
  std::optional<CommandError> align;
  std::optional<CommandError> deps;
  auto set = [](std::optional<CommandError>& slot, ErrCode code, const std::string& msg) {
    if (!slot) slot = CommandError{code, msg};
  };
  auto bad_range = [&](const std::string& m) { set(range, ErrCode::BAD_RANGE, m); };
  auto bad_align = [&](const std::string& m) { set(align, ErrCode::BAD_ALIGN, m); };
  auto bad_deps = [&](const std::string& m) { set(deps, ErrCode::BAD_DEPS, m); };
  const std::uint64_t a = static_cast<std::uint64_t>(caps.axi_bytes());
  const std::string name(to_string(c.opcode));

  switch (c.opcode) {
    case Opcode::LOAD: {
      std::uint64_t entry_bytes = 0;
      std::uint64_t entries = 0;
      switch (c.target) {
        case LoadTarget::ACTIVATIONS:
          entry_bytes = static_cast<std::uint64_t>(caps.act_entry_bytes());
          entries = caps.act_entries;
          break;
        case LoadTarget::WEIGHTS:
          entry_bytes = static_cast<std::uint64_t>(caps.weight_record_bytes());
          entries = caps.wgt_records;
          break;
        case LoadTarget::EPILOGUE:
          entry_bytes = static_cast<std::uint64_t>(caps.epi_entry_bytes());
          entries = caps.epi_entries;
          break;
      }
      if (c.rows == 0) bad_range("LOAD of 0 rows");
      if (c.bytes_per_row == 0) bad_range("LOAD of 0 bytes per row");
      const std::uint64_t start = std::uint64_t{c.first_entry} * entry_bytes;
      const std::uint64_t total = std::uint64_t{c.rows} * c.bytes_per_row;
      if (start + total > entries * entry_bytes) {
        bad_range("LOAD writes bytes [" + std::to_string(start) + ", " +
                  std::to_string(start + total) + ") of the " + target_buffer_name(c.target) +
                  ", which holds " + std::to_string(entries * entry_bytes) + " bytes (" +
                  std::to_string(entries) + " entries of " + std::to_string(entry_bytes) + ")");
      }
      if (c.rows != 0 && !host_range_fits(c.host_address, c.rows, c.host_stride, c.bytes_per_row,
                                          caps.host_addr_bits)) {
        bad_range("LOAD host range from " + hex(c.host_address) + " does not fit " +
                  std::to_string(caps.host_addr_bits) + "-bit addresses");
      }
      if (c.host_address % a != 0)
        bad_align("LOAD host address " + hex(c.host_address) + " is not a multiple of " +
                  std::to_string(a));
      if (c.host_stride % a != 0)
        bad_align("LOAD host stride " + std::to_string(c.host_stride) + " is not a multiple of " +
                  std::to_string(a));
      if (c.bytes_per_row % a != 0)
        bad_align("LOAD bytes per row " + std::to_string(c.bytes_per_row) +
                  " is not a multiple of " + std::to_string(a));
      if (c.pop_prev || c.push_prev)
        bad_deps("LOAD has no previous stage (POP_PREV/PUSH_PREV set)");
      break;
    }
    case Opcode::COMPUTE: {
      if (!c.dense && !caps.sparse_supported) {
        // Checked first: an opcode the device does not execute (CAP_ARRAY.SPARSE = 0).
        return CommandError{ErrCode::BAD_OPCODE,
                            "sparse COMPUTE on a device without N:M support (CAP_ARRAY.SPARSE = 0)"};
      }
      if (c.beats == 0) bad_range("COMPUTE of 0 beats");
      if (std::uint64_t{c.first_weight_record} + static_cast<std::uint64_t>(caps.rows) >
          caps.wgt_records) {
        bad_range("COMPUTE weight records [" + std::to_string(c.first_weight_record) + ", " +
                  std::to_string(c.first_weight_record + caps.rows) + ") exceed the " +
                  std::to_string(caps.wgt_records) + " records of the weight scratchpad");
      }
      if (c.beats != 0) {
        const std::uint64_t last =
            std::uint64_t{c.first_act_entry} + std::uint64_t{c.beats - 1u} * c.act_stride;
        if (last >= caps.act_entries) {
          bad_range("COMPUTE activation entry " + std::to_string(last) + " (first " +
                    std::to_string(c.first_act_entry) + " + " + std::to_string(c.beats - 1) +
                    " * stride " + std::to_string(c.act_stride) + ") is beyond the " +
                    std::to_string(caps.act_entries) + " entries");
        }
      }
      if (std::uint64_t{c.first_acc_row} + c.beats > caps.acc_entries) {
        bad_range("COMPUTE accumulator rows [" + std::to_string(c.first_acc_row) + ", " +
                  std::to_string(std::uint64_t{c.first_acc_row} + c.beats) + ") exceed the " +
                  std::to_string(caps.acc_entries) + " accumulator entries");
      }
      if (c.dense && (c.dense_part + 1) * caps.pattern.n > caps.lanes()) {
        bad_range("COMPUTE dense part " + std::to_string(c.dense_part) +
                  " does not exist: an entry holds " + std::to_string(caps.dense_parts()) +
                  " dense beats");
      }
      break;
    }
    case Opcode::STORE: {
      const std::uint64_t row_bytes =
          static_cast<std::uint64_t>(c.int32_output ? 4 * caps.cols : caps.cols);
      if (c.rows == 0) bad_range("STORE of 0 rows");
      if (std::uint64_t{c.first_acc_row} + c.rows > caps.acc_entries) {
        bad_range("STORE accumulator rows [" + std::to_string(c.first_acc_row) + ", " +
                  std::to_string(std::uint64_t{c.first_acc_row} + c.rows) + ") exceed the " +
                  std::to_string(caps.acc_entries) + " accumulator entries");
      }
      if (c.epilogue_entry >= caps.epi_entries) {
        bad_range("STORE epilogue entry " + std::to_string(c.epilogue_entry) + " is beyond the " +
                  std::to_string(caps.epi_entries) + " entries");
      }
      if (c.rows != 0 &&
          !host_range_fits(c.host_address, c.rows, c.host_stride, row_bytes, caps.host_addr_bits)) {
        bad_range("STORE host range from " + hex(c.host_address) + " does not fit " +
                  std::to_string(caps.host_addr_bits) + "-bit addresses");
      }
      if (row_bytes >= a) {
        if (c.host_address % a != 0)
          bad_align("STORE host address " + hex(c.host_address) + " is not a multiple of " +
                    std::to_string(a));
        if (c.host_stride % a != 0)
          bad_align("STORE host stride " + std::to_string(c.host_stride) +
                    " is not a multiple of " + std::to_string(a));
      } else {
        if (c.host_address % a + row_bytes > a) {
          bad_align("STORE row of " + std::to_string(row_bytes) + " bytes at " +
                    hex(c.host_address) + " crosses an AXI word");
        }
        if (c.host_stride % row_bytes != 0) {
          bad_align("STORE stride " + std::to_string(c.host_stride) + " is not a multiple of the " +
                    std::to_string(row_bytes) + "-byte row");
        }
        if (!(c.host_stride % a == 0 || (a % row_bytes == 0 && c.host_address % row_bytes == 0))) {
          bad_align("STORE rows of " + std::to_string(row_bytes) + " bytes from " +
                    hex(c.host_address) + " with stride " + std::to_string(c.host_stride) +
                    " would cross AXI words");
        }
      }
      if (c.pop_next || c.push_next) bad_deps("STORE has no next stage (POP_NEXT/PUSH_NEXT set)");
      break;
    }
  }
  if (deps) return deps;
  if (align) return align;
  return range;
}

FunctionalModel::FunctionalModel(const DeviceCaps& caps, ModelOptions options)
    : caps_(caps), options_(options) {
  caps_.validate();
  // A COMPUTE's sums are formed in single precision, exact while a column's products (Rows*N,
  // each at most 2^14) stay below 2^24.
  if (caps_.rows * caps_.pattern.n >= 1024) {
    throw std::invalid_argument("functional model: Rows x N = " +
                                std::to_string(caps_.rows * caps_.pattern.n) +
                                " is beyond the 1023 its exact arithmetic allows");
  }
  reset();
}

void FunctionalModel::reset() {
  act_.assign(static_cast<std::size_t>(caps_.act_buffer_bytes()), 0);
  wgt_.assign(static_cast<std::size_t>(caps_.wgt_buffer_bytes()), 0);
  epi_.assign(static_cast<std::size_t>(caps_.epi_buffer_bytes()), 0);
  acc_.assign(static_cast<std::size_t>(caps_.acc_entries) * static_cast<std::size_t>(caps_.cols),
              0);
}

// One run: the state that lives only while a stream executes.
struct FunctionalModel::Execution {
  using Clock = std::array<std::uint32_t, 3>;  // completed commands of each engine, as known

  struct Access {
    std::uint32_t seq = 0;  // 1-based position in its engine's queue; 0 = none
    std::uint32_t cmd = 0;
  };
  struct History {
    Access write;
    int write_engine = 0;
    std::array<Access, 3> reads{};
  };
  enum Resource { ACT = 0, WGT = 1, EPI = 2, ACC = 3 };

  FunctionalModel& m;
  HostMemory& mem;
  const std::vector<Command>& cmds;
  RunResult& res;
  const DeviceCaps& caps;

  std::array<std::int64_t, NUM_COUNTERS> tokens{};
  std::array<std::deque<Clock>, NUM_COUNTERS> token_clocks;
  std::array<Clock, 3> engine_clock{};
  std::array<std::uint32_t, 3> engine_seq{};
  std::array<std::vector<History>, 4> history;

  // The command being executed.
  Clock cur{};
  int cur_engine = 0;
  std::uint32_t cur_seq = 0;
  std::uint32_t cur_cmd = 0;
  bool cur_reported = false;
  // One COMPUTE's operands and products, kept across tiles to avoid reallocating them.
  Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> tile_acts, tile_sums;
  Eigen::MatrixXf tile_weights;

  Execution(FunctionalModel& model, HostMemory& memory, const std::vector<Command>& commands,
            RunResult& result)
      : m(model), mem(memory), cmds(commands), res(result), caps(model.caps_) {
    if (m.options_.check_hazards) {
      history[ACT].resize(caps.act_entries);
      history[WGT].resize(caps.wgt_records);
      history[EPI].resize(caps.epi_entries);
      history[ACC].resize(caps.acc_entries);
    }
  }

  static const char* resource_name(int r) {
    switch (r) {
      case ACT:
        return "activation entry";
      case WGT:
        return "weight record";
      case EPI:
        return "epilogue entry";
      case ACC:
        return "accumulator row";
    }
    return "?";
  }

  void report(const char* what, int resource, std::uint64_t index, std::uint32_t other_cmd,
              const char* other_did) {
    ++res.hazard_count;
    if (cur_reported || res.hazards.size() >= m.options_.max_hazard_reports) return;
    cur_reported = true;
    std::ostringstream s;
    s << "command " << cur_cmd << " (" << to_string(cmds[cur_cmd].opcode) << ") " << what << ' '
      << resource_name(resource) << ' ' << index << " that command " << other_cmd << " ("
      << to_string(cmds[other_cmd].opcode) << ") " << other_did
      << ", and no chain of dependency tokens orders the two";
    res.hazards.push_back(s.str());
  }

  void read(int resource, std::uint64_t index) {
    if (!m.options_.check_hazards) return;
    History& h = history[static_cast<std::size_t>(resource)][index];
    if (h.write.seq != 0 && h.write_engine != cur_engine &&
        cur[static_cast<std::size_t>(h.write_engine)] < h.write.seq) {
      report("reads", resource, index, h.write.cmd, "writes");
    }
    h.reads[static_cast<std::size_t>(cur_engine)] = Access{cur_seq, cur_cmd};
  }

  void write(int resource, std::uint64_t index) {
    if (!m.options_.check_hazards) return;
    History& h = history[static_cast<std::size_t>(resource)][index];
    if (h.write.seq != 0 && h.write_engine != cur_engine &&
        cur[static_cast<std::size_t>(h.write_engine)] < h.write.seq) {
      report("overwrites", resource, index, h.write.cmd, "writes");
    }
    for (int e = 0; e < 3; ++e) {
      const Access& r = h.reads[static_cast<std::size_t>(e)];
      if (e != cur_engine && r.seq != 0 && cur[static_cast<std::size_t>(e)] < r.seq) {
        report("overwrites", resource, index, r.cmd, "reads");
      }
    }
    h.reads = {};
    h.write = Access{cur_seq, cur_cmd};
    h.write_engine = cur_engine;
  }

  bool can_start(const Command& c) const {
    const TokenUse u = token_use(c);
    for (int i = 0; i < u.num_pops; ++i) {
      if (tokens[static_cast<std::size_t>(u.pops[static_cast<std::size_t>(i)])] <= 0) return false;
    }
    return true;
  }

  void fail(ErrCode code, std::uint32_t index, const std::string& message) {
    res.error = code;
    res.error_index = index;
    res.error_message = message;
  }

  // Executes command `index`; returns false when it stopped the stream.
  bool execute(std::uint32_t index) {
    const Command& c = cmds[index];
    const TokenUse u = token_use(c);
    cur_engine = static_cast<int>(engine_of(c.opcode));
    const auto e = static_cast<std::size_t>(cur_engine);
    cur = engine_clock[e];
    for (int i = 0; i < u.num_pops; ++i) {
      const auto k = static_cast<std::size_t>(u.pops[static_cast<std::size_t>(i)]);
      --tokens[k];
      const Clock& pushed = token_clocks[k].front();
      for (std::size_t j = 0; j < 3; ++j) cur[j] = std::max(cur[j], pushed[j]);
      token_clocks[k].pop_front();
    }
    cur_seq = engine_seq[e] + 1;
    cur_cmd = index;
    cur_reported = false;

    bool ok = true;
    switch (c.opcode) {
      case Opcode::LOAD:
        run_load(c);
        break;
      case Opcode::COMPUTE:
        ok = run_compute(c, index);
        break;
      case Opcode::STORE:
        run_store(c);
        break;
    }
    if (!ok) return false;

    engine_seq[e] = cur_seq;
    cur[e] = cur_seq;
    engine_clock[e] = cur;
    for (int i = 0; i < u.num_pushes; ++i) {
      const auto k = static_cast<std::size_t>(u.pushes[static_cast<std::size_t>(i)]);
      ++tokens[k];
      token_clocks[k].push_back(cur);
    }
    ++res.commands_executed;
    return true;
  }

  void run_load(const Command& c) {
    std::vector<std::uint8_t>* buf = nullptr;
    std::uint64_t entry_bytes = 0;
    int resource = ACT;
    switch (c.target) {
      case LoadTarget::ACTIVATIONS:
        buf = &m.act_;
        entry_bytes = static_cast<std::uint64_t>(caps.act_entry_bytes());
        resource = ACT;
        break;
      case LoadTarget::WEIGHTS:
        buf = &m.wgt_;
        entry_bytes = static_cast<std::uint64_t>(caps.weight_record_bytes());
        resource = WGT;
        break;
      case LoadTarget::EPILOGUE:
        buf = &m.epi_;
        entry_bytes = static_cast<std::uint64_t>(caps.epi_entry_bytes());
        resource = EPI;
        break;
    }
    const std::uint64_t start = std::uint64_t{c.first_entry} * entry_bytes;
    const std::uint64_t total = std::uint64_t{c.rows} * c.bytes_per_row;
    for (std::uint64_t i = 0; i < c.rows; ++i) {
      mem.read(c.host_address + i * c.host_stride, buf->data() + start + i * c.bytes_per_row,
               c.bytes_per_row);
    }
    res.dma_rd_bytes += total;
    for (std::uint64_t entry = start / entry_bytes; entry <= (start + total - 1) / entry_bytes;
         ++entry) {
      write(resource, entry);
    }
    res.meta_bytes += loaded_metadata_bytes(caps, c);
  }

  bool run_compute(const Command& c, std::uint32_t index) {
    const int rows = caps.rows;
    const int cols = caps.cols;
    const int n = caps.pattern.n;
    const int mm = caps.pattern.m;
    const int idx_w = caps.pattern.index_bits();
    const int meta_w = caps.pattern.meta_bits();
    const auto rb = static_cast<std::size_t>(caps.weight_record_bytes());
    const auto vb = static_cast<std::size_t>(caps.weight_value_bytes());
    const std::uint8_t* rec0 = m.wgt_.data() + std::size_t{c.first_weight_record} * rb;

    // The tile as a dense weight matrix over the activation entry's lanes: a sparse field
    // selects lane r*M + idx_j of column col; a dense part uses lane part*Rows*N + r*N + j.
    const auto eb = static_cast<Eigen::Index>(caps.act_entry_bytes());
    tile_weights.setZero(eb, cols);
    std::uint64_t illegal = 0;
    std::uint64_t illegal_rows = 0;
    std::string first_illegal;
    for (int r = 0; r < rows; ++r) {
      const std::uint8_t* rec = rec0 + static_cast<std::size_t>(r) * rb;
      const std::uint64_t illegal_before = illegal;
      for (int col = 0; col < cols; ++col) {
        if (c.dense) {
          for (int j = 0; j < n; ++j) {
            tile_weights(c.dense_part * rows * n + r * n + j, col) =
                static_cast<std::int8_t>(rec[col * n + j]);
          }
          continue;
        }
        const int bitpos = col * meta_w;
        const std::uint8_t* mp = rec + vb + static_cast<std::size_t>(bitpos / 8);
        unsigned raw = mp[0];
        if (bitpos % 8 + meta_w > 8) raw |= static_cast<unsigned>(mp[1]) << 8;
        const unsigned field = (raw >> (bitpos % 8)) & ((1u << meta_w) - 1u);
        int prev = -1;
        bool legal = true;
        for (int j = 0; j < n; ++j) {
          const int idx = static_cast<int>((field >> (j * idx_w)) & ((1u << idx_w) - 1u));
          if (idx <= prev) legal = false;
          prev = idx;
        }
        if (!legal) {
          if (illegal++ == 0) {
            first_illegal = "weight record " + std::to_string(c.first_weight_record + r) +
                            " (PE row " + std::to_string(r) + "), column " + std::to_string(col) +
                            ": field " + hex(field);
          }
          continue;
        }
        for (int j = 0; j < n; ++j) {
          const int idx = static_cast<int>((field >> (j * idx_w)) & ((1u << idx_w) - 1u));
          tile_weights(r * mm + idx, col) = static_cast<std::int8_t>(rec[col * n + j]);
        }
      }
      if (illegal != illegal_before) ++illegal_rows;
    }
    for (int r = 0; r < rows; ++r)
      read(WGT, std::uint64_t{c.first_weight_record} + static_cast<std::uint64_t>(r));
    if (illegal != 0) {
      res.illegal_meta_fields += illegal;
      res.illegal_meta_rows += illegal_rows;
      fail(ErrCode::ILLEGAL_META, index,
           "illegal " + caps.pattern.name() + " metadata in the tile (" + std::to_string(illegal) +
               " field(s)); first: " + first_illegal);
      return false;
    }

    // Every beat's products at once, in single precision: a product of two INT8 values is at
    // most 2^14 and a column has Rows*N nonzero weights (< 2^10, checked by the constructor),
    // so every partial sum is an integer below 2^24 and exact. The accumulation across tiles
    // wraps at 32 bits, as the accumulator SRAM does.
    tile_acts.resize(c.beats, eb);
    for (std::uint32_t i = 0; i < c.beats; ++i) {
      const std::size_t entry = std::size_t{c.first_act_entry} + std::size_t{i} * c.act_stride;
      const std::size_t row = std::size_t{c.first_acc_row} + i;
      read(ACT, entry);
      if (c.accumulate) read(ACC, row);
      write(ACC, row);
      const std::uint8_t* act = m.act_.data() + entry * static_cast<std::size_t>(eb);
      for (Eigen::Index lane = 0; lane < eb; ++lane) {
        tile_acts(i, lane) = static_cast<std::int8_t>(act[lane]);
      }
    }
    tile_sums.noalias() = tile_acts * tile_weights;
    for (std::uint32_t i = 0; i < c.beats; ++i) {
      std::int32_t* acc = m.acc_.data() + (std::size_t{c.first_acc_row} + i) *
                                              static_cast<std::size_t>(cols);
      for (int col = 0; col < cols; ++col) {
        const auto sum = static_cast<std::int32_t>(tile_sums(i, col));
        const std::uint32_t base = c.accumulate ? static_cast<std::uint32_t>(acc[col]) : 0u;
        acc[col] = static_cast<std::int32_t>(base + static_cast<std::uint32_t>(sum));
      }
    }
    const StreamCounters counted = command_counters(caps, c);
    res.macs += counted.macs;
    res.beats += counted.beats;
    res.tiles_dense += counted.tiles_dense;
    res.tiles_sparse += counted.tiles_sparse;
    return true;
  }

  void run_store(const Command& c) {
    const int cols = caps.cols;
    const std::uint8_t* e = m.epi_.data() + std::size_t{c.epilogue_entry} *
                                                static_cast<std::size_t>(caps.epi_entry_bytes());
    read(EPI, c.epilogue_entry);
    const std::size_t row_bytes = static_cast<std::size_t>(c.int32_output ? 4 * cols : cols);
    std::vector<std::uint8_t> out(row_bytes);
    for (std::uint32_t i = 0; i < c.rows; ++i) {
      const std::size_t row = std::size_t{c.first_acc_row} + i;
      read(ACC, row);
      const std::int32_t* acc = m.acc_.data() + row * static_cast<std::size_t>(cols);
      for (int col = 0; col < cols; ++col) {
        const std::uint8_t* p = e + 12 * col;
        const auto bias = static_cast<std::int32_t>(le32(p));
        if (c.int32_output) {
          const auto v = static_cast<std::uint32_t>(requantize_int32(acc[col], bias, c.relu));
          for (int b = 0; b < 4; ++b)
            out[static_cast<std::size_t>(4 * col + b)] = static_cast<std::uint8_t>(v >> (8 * b));
        } else {
          const auto mult = static_cast<std::int32_t>(le32(p + 4));
          const unsigned shift = le32(p + 8) & 63u;
          out[static_cast<std::size_t>(col)] =
              static_cast<std::uint8_t>(requantize(acc[col], bias, mult, shift, c.relu));
        }
      }
      mem.write(c.host_address + i * c.host_stride, out.data(), row_bytes);
    }
    res.dma_wr_bytes += std::uint64_t{c.rows} * row_bytes;
  }

  void run_all() {
    std::array<std::deque<std::uint32_t>, 3> queue;
    for (std::uint32_t i = 0; i < cmds.size(); ++i) {
      queue[static_cast<std::size_t>(engine_of(cmds[i].opcode))].push_back(i);
    }
    for (;;) {
      std::uint32_t best = std::numeric_limits<std::uint32_t>::max();
      std::uint32_t oldest = std::numeric_limits<std::uint32_t>::max();
      for (const auto& q : queue) {
        if (q.empty()) continue;
        oldest = std::min(oldest, q.front());
        if (q.front() < best && can_start(cmds[q.front()])) best = q.front();
      }
      if (oldest == std::numeric_limits<std::uint32_t>::max()) return;  // all done
      if (best == std::numeric_limits<std::uint32_t>::max()) {
        std::ostringstream s;
        s << "token deadlock: no engine can start;";
        for (const auto& q : queue) {
          if (q.empty()) continue;
          const Command& h = cmds[q.front()];
          s << " command " << q.front() << " (" << to_string(h.opcode) << ") waits for";
          const TokenUse u = token_use(h);
          for (int i = 0; i < u.num_pops; ++i) {
            const int k = u.pops[static_cast<std::size_t>(i)];
            if (tokens[static_cast<std::size_t>(k)] <= 0) s << ' ' << counter_name(k);
          }
          s << ';';
        }
        fail(ErrCode::BAD_DEPS, oldest, s.str());
        return;
      }
      if (!execute(best)) return;
      queue[static_cast<std::size_t>(engine_of(cmds[best].opcode))].pop_front();
    }
  }
};

RunResult FunctionalModel::run(HostMemory& mem, std::uint64_t cmd_base, std::uint32_t count) {
  RunResult res;
  if (count == 0) return res;
  const auto a = static_cast<std::uint64_t>(caps_.axi_bytes());
  if (cmd_base % a != 0) {
    res.error = ErrCode::BAD_ALIGN;
    res.error_index = NO_COMMAND;
    res.error_message = "CMD_BASE " + hex(cmd_base) + " is not a multiple of " + std::to_string(a);
    return res;
  }
  if (caps_.host_addr_bits < 64 && (cmd_base >> caps_.host_addr_bits) != 0) {
    res.error = ErrCode::BAD_RANGE;
    res.error_index = NO_COMMAND;
    res.error_message = "CMD_BASE " + hex(cmd_base) + " does not fit " +
                        std::to_string(caps_.host_addr_bits) + "-bit addresses";
    return res;
  }

  // Fetch and check the whole stream first (the fetcher runs ahead of the engines).
  std::vector<Command> cmds(count);
  std::array<std::int64_t, NUM_COUNTERS> balance{};
  auto fetch_error = [&res](ErrCode code, std::uint32_t index, const std::string& msg) {
    res.error = code;
    res.error_index = index;
    res.error_message = msg;
    return res;
  };
  std::array<std::uint8_t, isa::COMMAND_BYTES> raw{};
  for (std::uint32_t i = 0; i < count; ++i) {
    mem.read(cmd_base + std::uint64_t{i} * isa::COMMAND_BYTES, raw.data(), raw.size());
    res.dma_rd_bytes += isa::COMMAND_BYTES;
    try {
      cmds[i] = decode(raw.data());
    } catch (const std::invalid_argument& e) {
      return fetch_error(ErrCode::BAD_OPCODE, i, e.what());
    }
    if (auto err = check_command(caps_, cmds[i])) return fetch_error(err->code, i, err->message);
    const TokenUse u = token_use(cmds[i]);
    for (int k = 0; k < u.num_pops; ++k)
      --balance[static_cast<std::size_t>(u.pops[static_cast<std::size_t>(k)])];
    for (int k = 0; k < u.num_pushes; ++k) {
      const auto counter = static_cast<std::size_t>(u.pushes[static_cast<std::size_t>(k)]);
      if (++balance[counter] > 255) {
        return fetch_error(ErrCode::BAD_DEPS, NO_COMMAND,
                           std::string("token counter ") + counter_name(static_cast<int>(counter)) +
                               " would pass 255 (pushes minus pops of commands 0.." +
                               std::to_string(i) + ")");
      }
    }
  }
  for (int k = 0; k < NUM_COUNTERS; ++k) {
    if (balance[static_cast<std::size_t>(k)] < 0) {
      return fetch_error(ErrCode::BAD_DEPS, count - 1,
                         std::string("the stream pops token counter ") + counter_name(k) + " " +
                             std::to_string(-balance[static_cast<std::size_t>(k)]) +
                             " more time(s) than it pushes it");
    }
  }

  Execution ex(*this, mem, cmds, res);
  ex.run_all();
  return res;
}

}  // namespace nmsa
