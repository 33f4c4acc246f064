// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
#include "nmsa/gemm_program.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <numeric>
#include <sstream>
#include <stdexcept>

#include "nmsa/functional_model.hpp"
#include "nmsa/sparse_format.hpp"

namespace nmsa {

namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}
std::uint64_t round_up(std::uint64_t a, std::uint64_t b) {
  return (a + b - 1) / b * b;
}

// Largest piece of one activation LOAD, so that weight LOADs queued behind it are not held up
// for long (the load engine is in order).
constexpr std::int64_t ACT_PIECE_BYTES = 2048;
// How many candidate plans are compiled (dry run) after the analytic pre-selection.
constexpr std::size_t PLANS_BUILT = 6;

// Shapes derived from the GEMM and the device.
struct Geometry {
  std::int64_t rows = 0, k = 0, n_out = 0;
  int blocks = 0;    // output blocks of Cols channels
  int k_chunks = 0;  // activation entries per row (K_pad / (Rows*M))
  int k_tiles = 0;   // weight tiles along K: k_chunks (sparse) or ceil(K / (Rows*N)) (dense)
  int parts = 1;     // dense beats per activation entry used (1 in sparse mode)
  bool dense = false;
  bool int32_out = false;
  bool relu = false;
  std::uint64_t k_pad = 0;
  std::uint64_t out_row_bytes = 0;  // one STORE row (Cols * element size)
  std::uint64_t out_pitch = 0;      // distance of output blocks within a host row
  std::uint64_t out_stride = 0;     // host output row stride
  int epi_needed = 0;               // epilogue entries the GEMM uses
};

Geometry make_geometry(const DeviceCaps& caps, std::int64_t rows, std::int64_t k,
                       std::int64_t n_out, const GemmOptions& o) {
  if (rows < 1 || k < 1 || n_out < 1) {
    throw std::invalid_argument("GEMM shape " + std::to_string(rows) + " x " + std::to_string(k) +
                                " x " + std::to_string(n_out) +
                                ": every dimension must be at least 1");
  }
  Geometry g;
  g.rows = rows;
  g.k = k;
  g.n_out = n_out;
  g.dense = o.mode == GemmMode::DENSE;
  g.int32_out = !o.epilogue.has_value();
  g.relu = o.relu;
  g.blocks = static_cast<int>(ceil_div(n_out, caps.cols));
  g.k_chunks = static_cast<int>(ceil_div(k, caps.sparse_chunk_k()));
  g.k_pad =
      static_cast<std::uint64_t>(g.k_chunks) * static_cast<std::uint64_t>(caps.sparse_chunk_k());
  g.k_tiles = g.dense ? static_cast<int>(ceil_div(k, caps.dense_chunk_k())) : g.k_chunks;
  g.parts = g.dense ? caps.dense_parts() : 1;
  const std::uint64_t a = static_cast<std::uint64_t>(caps.axi_bytes());
  g.out_row_bytes = static_cast<std::uint64_t>(caps.cols) * (g.int32_out ? 4u : 1u);
  if (g.out_row_bytes >= a) {
    g.out_pitch = round_up(g.out_row_bytes, a);
  } else {
    g.out_pitch = 1;  // a power of two >= the row, so that no row crosses an AXI word
    while (g.out_pitch < g.out_row_bytes) g.out_pitch *= 2;
  }
  // Rows shorter than a word need a stride that is a multiple of the row size too (docs/isa.md).
  const std::uint64_t stride_unit = g.out_row_bytes >= a ? a : std::lcm(a, g.out_row_bytes);
  g.out_stride = round_up(static_cast<std::uint64_t>(g.blocks) * g.out_pitch, stride_unit);
  g.epi_needed = g.int32_out ? 1 : g.blocks;
  if (g.k_chunks > 65535 * 4) {
    throw std::invalid_argument("GEMM K = " + std::to_string(k) +
                                " is too long for 16-bit command fields");
  }
  return g;
}

// Buffer capacities as the compiler uses them (16-bit command fields address at most 65536).
struct Capacity {
  std::int64_t act_entries, wgt_tiles, epi_entries, acc_entries;
  std::int64_t halves, half_tiles;  // weight scratchpad split for double buffering
};

Capacity capacity(const DeviceCaps& caps) {
  Capacity c{};
  c.act_entries = std::min<std::int64_t>(caps.act_entries, 65536);
  c.wgt_tiles = std::min<std::int64_t>(caps.wgt_records, 65536) / caps.rows;
  c.epi_entries = std::min<std::int64_t>(caps.epi_entries, 65536);
  c.acc_entries = std::min<std::int64_t>(caps.acc_entries, 65536);
  c.halves = c.wgt_tiles >= 2 ? 2 : 1;
  c.half_tiles = c.wgt_tiles / c.halves;
  return c;
}

bool epilogue_cached(const Geometry& g, const Capacity& cap) {
  return g.epi_needed <= cap.epi_entries;
}

// Empty when the plan fits the device, else what does not fit.
std::string plan_problem(const DeviceCaps& caps, const Geometry& g, const TilingPlan& p) {
  const Capacity cap = capacity(caps);
  const std::int64_t r = p.beats_per_tile;
  if (r < 1 || r > 65535) return "beats per tile must be in [1, 65535]";
  if (r > cap.acc_entries)
    return "R = " + std::to_string(r) + " accumulator rows exceed ACC_ENTRIES";
  if (p.chunks_per_act_block < 1 || p.chunks_per_act_block > g.k_chunks) {
    return "chunks per activation block must be in [1, " + std::to_string(g.k_chunks) + "]";
  }
  if (static_cast<std::int64_t>(p.chunks_per_act_block) * caps.act_entry_bytes() > 65535) {
    return "an activation block row of " + std::to_string(p.chunks_per_act_block) +
           " entries exceeds 65535 bytes";
  }
  if (r * p.chunks_per_act_block > cap.act_entries) {
    return "an activation slot of R*c = " + std::to_string(r * p.chunks_per_act_block) +
           " entries exceeds ACT_ENTRIES";
  }
  if (p.blocks_per_group < 1 || p.blocks_per_group > g.blocks) {
    return "blocks per group must be in [1, " + std::to_string(g.blocks) + "]";
  }
  if (p.blocks_per_group > cap.acc_entries / r) {
    return "B * R = " + std::to_string(p.blocks_per_group * r) +
           " accumulator rows exceed ACC_ENTRIES";
  }
  if (!epilogue_cached(g, cap)) {
    if (cap.epi_entries < 2) {
      return "the GEMM has " + std::to_string(g.blocks) +
             " output blocks but the epilogue buffer holds 1 entry (at least 2 are needed to "
             "reload it)";
    }
    if (p.blocks_per_group > cap.epi_entries / 2) {
      return "B = " + std::to_string(p.blocks_per_group) + " blocks need more than half of the " +
             std::to_string(cap.epi_entries) + " epilogue entries";
    }
  }
  if (p.weight_batch_tiles < 1 || p.weight_batch_tiles > cap.half_tiles) {
    return "weight batch must be in [1, " + std::to_string(cap.half_tiles) + "] tiles";
  }
  return "";
}

// The counters of docs/isa.md, by producer and consumer engine.
enum Counter : int { LC = 0, CL = 1, CS = 2, SC = 3 };
struct CounterInfo {
  Engine producer;
  Engine consumer;
};
constexpr std::array<CounterInfo, 4> COUNTERS{{
    {Engine::LOAD, Engine::COMPUTE},
    {Engine::COMPUTE, Engine::LOAD},
    {Engine::COMPUTE, Engine::STORE},
    {Engine::STORE, Engine::COMPUTE},
}};

// Host addresses of the operands (dummy ones in a dry run).
struct Addresses {
  std::uint64_t x = 0, w = 0, e = 0, o = 0;
};

struct Emitted {
  std::vector<Command> cmds;
  std::vector<int> window;  // per command: weight batch during which it is issued; -1 = startup
  std::vector<GemmProgram::TileRef> tiles;
  ProgramStats stats;
};

// One tile of the schedule.
struct Op {
  int rt = 0, b = 0, kt = 0, kb = 0, chunk = 0, cb = 0, part = 0;
  bool accumulate = false;
  bool last = false;
  int batch = 0;
  int batch_pos = 0;
  std::int64_t act_key = 0;
};

class Emitter {
 public:
  Emitter(const DeviceCaps& caps, const Geometry& g, const TilingPlan& p, const Addresses& addr)
      : caps_(caps), g_(g), p_(p), addr_(addr), cap_(capacity(caps)) {
    n_rt_ = static_cast<int>(ceil_div(g.rows, p.beats_per_tile));
    n_kb_ = static_cast<int>(ceil_div(g.k_chunks, p.chunks_per_act_block));
    slot_entries_ = static_cast<std::int64_t>(p.beats_per_tile) * p.chunks_per_act_block;
    n_act_slots_ = static_cast<int>(cap_.act_entries / slot_entries_);
    n_acc_slots_ = static_cast<int>(cap_.acc_entries / p.beats_per_tile);
    epi_cached_ = epilogue_cached(g, cap_);
    n_epi_ = static_cast<int>(epi_cached_ ? g.epi_needed : cap_.epi_entries);
    // Resource ids of the hazard tracker: act slots, weight halves, acc slots, epilogue entries.
    res_wgt_ = n_act_slots_;
    res_acc_ = res_wgt_ + static_cast<int>(cap_.halves);
    res_epi_ = res_acc_ + n_acc_slots_;
    history_.resize(static_cast<std::size_t>(res_epi_ + n_epi_));
  }

  Emitted run() {
    schedule();
    emit_all();
    finalize();
    return std::move(out_);
  }

 private:
  struct History {
    int writer = -1;
    std::array<int, 3> readers{{-1, -1, -1}};
  };
  struct ActSlot {
    std::int64_t key = -1;
    int rows_loaded = 0;
    int rows_total = 0;
  };

  int rows_of(int rt) const {
    return static_cast<int>(std::min<std::int64_t>(
        p_.beats_per_tile, g_.rows - static_cast<std::int64_t>(rt) * p_.beats_per_tile));
  }
  int chunks_of(int kb) const {
    return std::min(p_.chunks_per_act_block, g_.k_chunks - kb * p_.chunks_per_act_block);
  }

  // --- schedule --------------------------------------------------------------------------------
  void schedule() {
    const int n_groups = static_cast<int>(ceil_div(g_.blocks, p_.blocks_per_group));
    for (int rt = 0; rt < n_rt_; ++rt) {
      int b0 = 0;
      for (int gi = 0; gi < n_groups; ++gi) {
        const int size = g_.blocks / n_groups + (gi < g_.blocks % n_groups ? 1 : 0);
        const bool reverse = gi % 2 == 1;
        const std::size_t first = ops_.size();
        for (int kbi = 0; kbi < n_kb_; ++kbi) {
          const int kb = reverse ? n_kb_ - 1 - kbi : kbi;
          const int cb = chunks_of(kb);
          for (int ci = 0; ci < cb; ++ci) {
            const int chunk = reverse ? cb - 1 - ci : ci;
            const int kc = kb * p_.chunks_per_act_block + chunk;
            for (int part = 0; part < g_.parts; ++part) {
              const int kt = g_.dense ? kc * g_.parts + part : kc;
              if (kt >= g_.k_tiles) break;
              for (int b = b0; b < b0 + size; ++b) {
                Op op;
                op.rt = rt;
                op.b = b;
                op.kt = kt;
                op.kb = kb;
                op.chunk = chunk;
                op.cb = cb;
                op.part = part;
                op.act_key = static_cast<std::int64_t>(rt) * n_kb_ + kb;
                ops_.push_back(op);
              }
            }
          }
        }
        const int first_kt = ops_[first].kt;
        const int last_kt = ops_.back().kt;
        for (std::size_t i = first; i < ops_.size(); ++i) {
          ops_[i].accumulate = ops_[i].kt != first_kt;
          ops_[i].last = ops_[i].kt == last_kt;
        }
        b0 += size;
      }
    }
    // Weight batches: runs of ops whose tiles are consecutive in host memory. The first batches
    // are short (2, 4, 8, ... tiles) so that the first tile does not wait for a whole batch.
    int batch = -1;
    int pos = 0;
    int limit = 0;
    for (std::size_t i = 0; i < ops_.size(); ++i) {
      const bool contiguous = i > 0 && tile_index(ops_[i]) == tile_index(ops_[i - 1]) + 1;
      if (!contiguous || pos == limit) {
        ++batch;
        pos = 0;
        limit = batch < 16 ? std::min(p_.weight_batch_tiles, 2 << batch) : p_.weight_batch_tiles;
        batch_first_.push_back(static_cast<int>(i));
      }
      ops_[i].batch = batch;
      ops_[i].batch_pos = pos++;
    }
    batch_first_.push_back(static_cast<int>(ops_.size()));
    // Uses of each activation block, for Belady's replacement.
    act_uses_.assign(static_cast<std::size_t>(n_rt_) * static_cast<std::size_t>(n_kb_), {});
    for (std::size_t i = 0; i < ops_.size(); ++i) {
      act_uses_[static_cast<std::size_t>(ops_[i].act_key)].push_back(static_cast<int>(i));
    }
    next_key_change_.assign(ops_.size(), static_cast<int>(ops_.size()));
    for (std::size_t i = ops_.size(); i-- > 0;) {
      if (i + 1 < ops_.size()) {
        next_key_change_[i] = ops_[i + 1].act_key != ops_[i].act_key ? static_cast<int>(i + 1)
                                                                     : next_key_change_[i + 1];
      }
    }
    act_slot_of_.assign(act_uses_.size(), -1);
  }

  std::int64_t tile_index(const Op& op) const {
    return static_cast<std::int64_t>(op.kt) * g_.blocks + op.b;
  }

  int next_use(std::int64_t key, int from) const {
    const auto& uses = act_uses_[static_cast<std::size_t>(key)];
    const auto it = std::lower_bound(uses.begin(), uses.end(), from);
    return it == uses.end() ? std::numeric_limits<int>::max() : *it;
  }

  // --- hazard tracking and tokens -------------------------------------------------------------
  int add(const Command& c, std::initializer_list<int> reads, std::initializer_list<int> writes) {
    const int idx = static_cast<int>(out_.cmds.size());
    out_.cmds.push_back(c);
    out_.window.push_back(window_);
    for (auto& n : need_) n.push_back(-1);
    const auto e = static_cast<std::size_t>(engine_of(c.opcode));
    for (const int r : reads) {
      History& h = history_[static_cast<std::size_t>(r)];
      if (h.writer >= 0) edge(h.writer, idx);
      h.readers[e] = idx;
    }
    for (const int r : writes) {
      History& h = history_[static_cast<std::size_t>(r)];
      if (h.writer >= 0) edge(h.writer, idx);
      for (const int reader : h.readers) {
        if (reader >= 0) edge(reader, idx);
      }
      h.readers = {{-1, -1, -1}};
      h.writer = idx;
    }
    if (c.opcode == Opcode::COMPUTE) last_compute_ = idx;
    return idx;
  }

  Engine engine(int idx) const {
    return engine_of(out_.cmds[static_cast<std::size_t>(idx)].opcode);
  }

  void need(int counter, int consumer, int producer) {
    int& n = need_[static_cast<std::size_t>(counter)][static_cast<std::size_t>(consumer)];
    n = std::max(n, producer);
  }

  // `consumer` must not start before `producer` has finished.
  void edge(int producer, int consumer) {
    const Engine p = engine(producer);
    const Engine c = engine(consumer);
    if (p == c) return;  // engines are in order
    if (p == Engine::LOAD && c == Engine::COMPUTE) return need(LC, consumer, producer);
    if (p == Engine::COMPUTE && c == Engine::LOAD) return need(CL, consumer, producer);
    if (p == Engine::COMPUTE && c == Engine::STORE) return need(CS, consumer, producer);
    if (p == Engine::STORE && c == Engine::COMPUTE) return need(SC, consumer, producer);
    // LOAD <-> STORE have no counter: route through the last COMPUTE before the consumer.
    const int via = last_compute_;
    if (via < 0 || via < producer || via > consumer) {
      throw std::logic_error("GEMM compiler: no COMPUTE between command " +
                             std::to_string(producer) + " and command " + std::to_string(consumer) +
                             " to carry their dependency");
    }
    edge(producer, via);
    edge(via, consumer);
  }

  void finalize() {
    auto& cmds = out_.cmds;
    for (int k = 0; k < 4; ++k) {
      const CounterInfo info = COUNTERS[static_cast<std::size_t>(k)];
      int newest = -1;
      for (std::size_t i = 0; i < cmds.size(); ++i) {
        if (engine_of(cmds[i].opcode) != info.consumer) continue;
        const int n = need_[static_cast<std::size_t>(k)][i];
        if (n <= newest) continue;
        newest = n;
        Command& consumer = cmds[i];
        Command& producer = cmds[static_cast<std::size_t>(n)];
        // The consumer pops from its previous stage when the producer is that stage.
        const bool from_prev = static_cast<int>(info.producer) < static_cast<int>(info.consumer);
        (from_prev ? consumer.pop_prev : consumer.pop_next) = true;
        bool& push = from_prev ? producer.push_next : producer.push_prev;
        if (push) throw std::logic_error("GEMM compiler: a command pushes one counter twice");
        push = true;
      }
    }
    // Running balances stay within the 8-bit counters (docs/isa.md); with bounded buffers this
    // always holds, so a failure is a compiler bug.
    std::array<int, 4> balance{};
    for (std::size_t i = 0; i < cmds.size(); ++i) {
      const Command& c = cmds[i];
      const Engine e = engine_of(c.opcode);
      for (int k = 0; k < 4; ++k) {
        const CounterInfo info = COUNTERS[static_cast<std::size_t>(k)];
        const bool from_prev = static_cast<int>(info.producer) < static_cast<int>(info.consumer);
        if (e == info.consumer && (from_prev ? c.pop_prev : c.pop_next))
          --balance[static_cast<std::size_t>(k)];
        if (e == info.producer && (from_prev ? c.push_next : c.push_prev))
          ++balance[static_cast<std::size_t>(k)];
        if (balance[static_cast<std::size_t>(k)] > 255 ||
            balance[static_cast<std::size_t>(k)] < 0) {
          throw std::logic_error("GEMM compiler: token counter balance out of range at command " +
                                 std::to_string(i));
        }
      }
      if (auto err = check_command(caps_, c)) {
        throw std::logic_error("GEMM compiler emitted an invalid command " + std::to_string(i) +
                               " (" + to_string(c) + "): " + err->message);
      }
    }
    out_.stats.commands = cmds.size();
    out_.stats.command_bytes = cmds.size() * isa::COMMAND_BYTES;
  }

  // --- emission --------------------------------------------------------------------------------
  int act_res(int slot) const { return slot; }
  int wgt_res(int half) const { return res_wgt_ + half; }
  int acc_res(int slot) const { return res_acc_ + slot; }
  int epi_res(int entry) const { return res_epi_ + entry; }

  void emit_weight_batch(int batch) {
    const int first = batch_first_[static_cast<std::size_t>(batch)];
    const int count = batch_first_[static_cast<std::size_t>(batch) + 1] - first;
    const int half = batch % static_cast<int>(cap_.halves);
    const std::uint64_t rb = static_cast<std::uint64_t>(caps_.weight_record_bytes());
    const std::uint64_t records =
        static_cast<std::uint64_t>(count) * static_cast<std::uint64_t>(caps_.rows);
    const std::uint64_t host =
        addr_.w + static_cast<std::uint64_t>(tile_index(ops_[static_cast<std::size_t>(first)])) *
                      static_cast<std::uint64_t>(caps_.rows) * rb;
    const auto first_record = static_cast<std::uint16_t>(half * cap_.half_tiles * caps_.rows);
    Command c;
    if (records * rb <= 65535 - 65535 % static_cast<std::uint64_t>(caps_.axi_bytes())) {
      c = Command::load(LoadTarget::WEIGHTS, first_record, 1,
                        static_cast<std::uint16_t>(records * rb), host, 0);
    } else {
      c = Command::load(LoadTarget::WEIGHTS, first_record, static_cast<std::uint16_t>(records),
                        static_cast<std::uint16_t>(rb), host, rb);
    }
    add(c, {}, {wgt_res(half)});
    out_.stats.weight_bytes += records * rb;
    out_.stats.meta_bytes += records * static_cast<std::uint64_t>(caps_.weight_meta_bytes());
  }

  // Chooses the slot for activation block `key`, first needed by op `need_at`, while op `now` is
  // the next to compute; -1 if every slot holds a block needed before `need_at`.
  int allocate_act(std::int64_t key, int now, int need_at) {
    int best = -1;
    int best_next = -1;
    for (int s = 0; s < n_act_slots_; ++s) {
      const ActSlot& slot = act_slots_[static_cast<std::size_t>(s)];
      const int next = slot.key < 0 ? std::numeric_limits<int>::max() : next_use(slot.key, now);
      if (next <= need_at) continue;
      if (next > best_next) {
        best = s;
        best_next = next;
      }
    }
    if (best < 0) return -1;
    ActSlot& slot = act_slots_[static_cast<std::size_t>(best)];
    if (slot.key >= 0) act_slot_of_[static_cast<std::size_t>(slot.key)] = -1;
    slot.key = key;
    slot.rows_loaded = 0;
    slot.rows_total = rows_of(static_cast<int>(key / n_kb_));
    act_slot_of_[static_cast<std::size_t>(key)] = best;
    return best;
  }

  // Emits activation LOAD pieces of `slot` until it is complete or `budget` bytes are spent.
  void emit_act_pieces(int s, std::int64_t* budget) {
    ActSlot& slot = act_slots_[static_cast<std::size_t>(s)];
    const int rt = static_cast<int>(slot.key / n_kb_);
    const int kb = static_cast<int>(slot.key % n_kb_);
    const int cb = chunks_of(kb);
    const std::int64_t row_bytes = static_cast<std::int64_t>(cb) * caps_.act_entry_bytes();
    const int piece_rows = static_cast<int>(std::max<std::int64_t>(1, ACT_PIECE_BYTES / row_bytes));
    while (slot.rows_loaded < slot.rows_total) {
      const int n = std::min(piece_rows, slot.rows_total - slot.rows_loaded);
      if (budget != nullptr && *budget < n * row_bytes) return;
      const std::uint64_t row0 =
          static_cast<std::uint64_t>(rt) * static_cast<std::uint64_t>(p_.beats_per_tile) +
          static_cast<std::uint64_t>(slot.rows_loaded);
      const std::uint64_t host = addr_.x + row0 * g_.k_pad +
                                 static_cast<std::uint64_t>(kb) *
                                     static_cast<std::uint64_t>(p_.chunks_per_act_block) *
                                     static_cast<std::uint64_t>(caps_.act_entry_bytes());
      const auto entry = static_cast<std::uint16_t>(
          s * slot_entries_ + static_cast<std::int64_t>(slot.rows_loaded) * cb);
      add(Command::load(LoadTarget::ACTIVATIONS, entry, static_cast<std::uint16_t>(n),
                        static_cast<std::uint16_t>(row_bytes), host, g_.k_pad),
          {}, {act_res(s)});
      out_.stats.act_bytes += static_cast<std::uint64_t>(n * row_bytes);
      slot.rows_loaded += n;
      if (budget != nullptr) *budget -= n * row_bytes;
    }
  }

  bool act_complete(std::int64_t key) const {
    const int s = act_slot_of_[static_cast<std::size_t>(key)];
    return s >= 0 && act_slots_[static_cast<std::size_t>(s)].rows_loaded ==
                         act_slots_[static_cast<std::size_t>(s)].rows_total;
  }

  void emit_epilogue_upfront() {
    const std::uint64_t eb = static_cast<std::uint64_t>(caps_.epi_entry_bytes());
    int done = 0;
    while (done < n_epi_) {
      const int n = std::min(n_epi_ - done, 65535);
      add(Command::load(LoadTarget::EPILOGUE, static_cast<std::uint16_t>(done),
                        static_cast<std::uint16_t>(n), static_cast<std::uint16_t>(eb),
                        addr_.e + static_cast<std::uint64_t>(done) * eb, eb),
          {}, {});
      for (int e = done; e < done + n; ++e) {
        // Record the writes one entry at a time (an initializer list cannot be built at run time).
        History& h = history_[static_cast<std::size_t>(epi_res(e))];
        h.writer = static_cast<int>(out_.cmds.size()) - 1;
      }
      out_.stats.epilogue_bytes += static_cast<std::uint64_t>(n) * eb;
      done += n;
    }
    for (int b = 0; b < g_.blocks; ++b) epi_entry_of_.push_back(g_.int32_out ? 0 : b);
  }

  // Epilogue cache (when the blocks' parameters do not all fit): LRU over entries not in use.
  int ensure_epilogue(int block) {
    int& entry = epi_entry_of_[static_cast<std::size_t>(block)];
    if (entry >= 0) {
      epi_last_use_[static_cast<std::size_t>(entry)] = ++epi_clock_;
      return entry;
    }
    int victim = -1;
    for (int e = 0; e < n_epi_; ++e) {
      if (epi_pinned_[static_cast<std::size_t>(e)] > 0) continue;
      if (victim < 0 || epi_last_use_[static_cast<std::size_t>(e)] <
                            epi_last_use_[static_cast<std::size_t>(victim)])
        victim = e;
    }
    if (victim < 0) throw std::logic_error("GEMM compiler: no free epilogue entry");
    if (epi_block_in_[static_cast<std::size_t>(victim)] >= 0) {
      epi_entry_of_[static_cast<std::size_t>(epi_block_in_[static_cast<std::size_t>(victim)])] = -1;
    }
    epi_block_in_[static_cast<std::size_t>(victim)] = block;
    entry = victim;
    epi_last_use_[static_cast<std::size_t>(victim)] = ++epi_clock_;
    const std::uint64_t eb = static_cast<std::uint64_t>(caps_.epi_entry_bytes());
    add(Command::load(LoadTarget::EPILOGUE, static_cast<std::uint16_t>(victim), 1,
                      static_cast<std::uint16_t>(eb),
                      addr_.e + static_cast<std::uint64_t>(block) * eb, eb),
        {}, {epi_res(victim)});
    out_.stats.epilogue_bytes += eb;
    return victim;
  }

  void emit_all() {
    act_slots_.assign(static_cast<std::size_t>(n_act_slots_), ActSlot{});
    for (int s = 0; s < n_acc_slots_; ++s) acc_free_.push_back(s);
    acc_slot_of_.assign(static_cast<std::size_t>(g_.blocks), -1);
    window_ = -1;
    if (!epi_cached_) {
      epi_entry_of_.assign(static_cast<std::size_t>(g_.blocks), -1);
      epi_block_in_.assign(static_cast<std::size_t>(n_epi_), -1);
      epi_last_use_.assign(static_cast<std::size_t>(n_epi_), 0);
      epi_pinned_.assign(static_cast<std::size_t>(n_epi_), 0);
    }
    const std::int64_t tile_bytes =
        static_cast<std::int64_t>(caps_.rows) * caps_.weight_record_bytes();
    std::int64_t credit = 0;
    int weights_emitted = 0;  // batches
    const int n = static_cast<int>(ops_.size());
    for (int i = 0; i < n; ++i) {
      const Op& op = ops_[static_cast<std::size_t>(i)];
      window_ = i == 0 ? -1 : op.batch;
      // What op i cannot start without.
      while (weights_emitted <= op.batch) emit_weight_batch(weights_emitted++);
      if (!act_complete(op.act_key)) {
        int s = act_slot_of_[static_cast<std::size_t>(op.act_key)];
        if (s < 0) s = allocate_act(op.act_key, i, i);
        if (s < 0) throw std::logic_error("GEMM compiler: no activation slot");
        emit_act_pieces(s, nullptr);
      }
      // All epilogue parameters, when they fit, once: behind the first tile's operands, which
      // the first COMPUTE needs sooner; the first STORE is far later.
      if (i == 0 && epi_cached_) {
        window_ = op.batch;
        emit_epilogue_upfront();
      }
      int epi_entry = -1;
      if (!epi_cached_ && !op.accumulate) {
        epi_entry = ensure_epilogue(op.b);
        ++epi_pinned_[static_cast<std::size_t>(epi_entry)];
      }
      window_ = op.batch;
      // Prefetch: the next weight batch, then the next activation block within the DMA time left.
      if (cap_.halves == 2 && weights_emitted == op.batch + 1 &&
          weights_emitted < static_cast<int>(batch_first_.size()) - 1) {
        emit_weight_batch(weights_emitted++);
      }
      credit = std::min<std::int64_t>(
          credit + std::max<std::int64_t>(0, rows_of(op.rt) * caps_.axi_bytes() - tile_bytes),
          2 * ACT_PIECE_BYTES + 2 * tile_bytes);
      const int j = next_key_change_[static_cast<std::size_t>(i)];
      if (j < n && !act_complete(ops_[static_cast<std::size_t>(j)].act_key)) {
        const std::int64_t key = ops_[static_cast<std::size_t>(j)].act_key;
        int s = act_slot_of_[static_cast<std::size_t>(key)];
        if (s < 0) s = allocate_act(key, i, j);
        if (s >= 0) emit_act_pieces(s, &credit);
      }
      emit_compute(op);
      if (op.last) emit_store(op, epi_entry);
    }
  }

  void emit_compute(const Op& op) {
    int& acc_slot = acc_slot_of_[static_cast<std::size_t>(op.b)];
    if (!op.accumulate) {
      if (acc_free_.empty()) throw std::logic_error("GEMM compiler: no free accumulator slot");
      acc_slot = acc_free_.front();
      acc_free_.pop_front();
    }
    const int act_slot = act_slot_of_[static_cast<std::size_t>(op.act_key)];
    const int half = op.batch % static_cast<int>(cap_.halves);
    const auto wrec =
        static_cast<std::uint16_t>((half * cap_.half_tiles + op.batch_pos) * caps_.rows);
    const auto act = static_cast<std::uint16_t>(act_slot * slot_entries_ + op.chunk);
    const auto acc =
        static_cast<std::uint16_t>(static_cast<std::int64_t>(acc_slot) * p_.beats_per_tile);
    const int beats = rows_of(op.rt);
    const Command c = Command::compute(wrec, static_cast<std::uint16_t>(beats), act,
                                       static_cast<std::uint16_t>(op.cb), acc, g_.dense,
                                       op.accumulate, static_cast<std::uint8_t>(op.part));
    int idx = 0;
    if (op.accumulate) {
      idx = add(c, {wgt_res(half), act_res(act_slot), acc_res(acc_slot)}, {acc_res(acc_slot)});
    } else {
      idx = add(c, {wgt_res(half), act_res(act_slot)}, {acc_res(acc_slot)});
    }
    out_.tiles.push_back({static_cast<std::uint32_t>(idx), op.rt, op.b, op.kt});
    ++out_.stats.compute_tiles;
    out_.stats.beats += static_cast<std::uint64_t>(beats);
  }

  void emit_store(const Op& op, int epi_entry_at_first) {
    const int acc_slot = acc_slot_of_[static_cast<std::size_t>(op.b)];
    int entry = epi_entry_of_[static_cast<std::size_t>(op.b)];
    if (entry < 0) entry = epi_entry_at_first;
    if (!epi_cached_) {
      --epi_pinned_[static_cast<std::size_t>(entry)];
      epi_last_use_[static_cast<std::size_t>(entry)] = ++epi_clock_;
    }
    const int rows = rows_of(op.rt);
    const std::uint64_t host = addr_.o +
                               static_cast<std::uint64_t>(op.rt) *
                                   static_cast<std::uint64_t>(p_.beats_per_tile) * g_.out_stride +
                               static_cast<std::uint64_t>(op.b) * g_.out_pitch;
    const Command c = Command::store(
        static_cast<std::uint16_t>(static_cast<std::int64_t>(acc_slot) * p_.beats_per_tile),
        static_cast<std::uint16_t>(rows), static_cast<std::uint16_t>(entry), host, g_.out_stride,
        g_.int32_out, g_.relu);
    add(c, {acc_res(acc_slot), epi_res(entry)}, {});
    out_.stats.output_bytes += static_cast<std::uint64_t>(rows) * g_.out_row_bytes;
    acc_free_.push_back(acc_slot);
  }

  const DeviceCaps& caps_;
  const Geometry& g_;
  const TilingPlan& p_;
  Addresses addr_;
  Capacity cap_;
  int n_rt_ = 0, n_kb_ = 0, n_act_slots_ = 0, n_acc_slots_ = 0, n_epi_ = 0;
  std::int64_t slot_entries_ = 0;
  bool epi_cached_ = true;
  int res_wgt_ = 0, res_acc_ = 0, res_epi_ = 0;

  std::vector<Op> ops_;
  std::vector<int> batch_first_;
  std::vector<std::vector<int>> act_uses_;
  std::vector<int> next_key_change_;

  std::vector<ActSlot> act_slots_;
  std::vector<int> act_slot_of_;
  std::deque<int> acc_free_;
  std::vector<int> acc_slot_of_;
  std::vector<int> epi_entry_of_, epi_block_in_, epi_pinned_;
  std::vector<std::uint64_t> epi_last_use_;
  std::uint64_t epi_clock_ = 0;

  std::vector<History> history_;
  std::array<std::vector<int>, 4> need_;
  int last_compute_ = -1;
  int window_ = -1;
  Emitted out_;
};

// --- cycle model -------------------------------------------------------------------------------
//
// The program runs as a sequence of windows, one per weight batch: while the array computes the
// tiles of batch j, the DMA brings in what batch j+1 needs (its weights, activation blocks) and
// writes back finished blocks. A window takes max(compute, DMA) cycles:
//   compute = its beats (one per cycle) plus the bubbles of docs/architecture.md section 8: a
//             tile of T < L + Rows beats cannot hide the next tile's weight load, and costs on
//             average (L + Rows - T) / 2 idle cycles;
//   DMA     = (bytes of the LOADs and STOREs issued in it + 32 per command fetched) / bandwidth
//             (reads and writes share one beat per cycle).
// Before the first beat: the read latency, the commands and data the first tile needs, and the
// Rows cycles of its weight load into the array. After the last beat: the array latency L, the
// STOREs that follow, and the write latency.
CyclePrediction predict(const DeviceCaps& caps, const Geometry& g, const Emitted& prog,
                        const PerfModelParams& params) {
  CyclePrediction p;
  const double bw = params.dma_bytes_per_cycle > 0 ? params.dma_bytes_per_cycle : caps.axi_bytes();
  const int lat = caps.latency();
  auto bytes_of = [&](const Command& c) -> double {
    switch (c.opcode) {
      case Opcode::LOAD:
        return static_cast<double>(c.rows) * c.bytes_per_row;
      case Opcode::STORE:
        return static_cast<double>(c.rows) * static_cast<double>(g.out_row_bytes);
      case Opcode::COMPUTE:
        return 0.0;
    }
    return 0.0;
  };
  std::size_t last_compute = 0;
  for (std::size_t i = 0; i < prog.cmds.size(); ++i) {
    if (prog.cmds[i].opcode == Opcode::COMPUTE) last_compute = i;
  }
  double startup_bytes = 0, tail_bytes = 0, total_bytes = 0, beats = 0, bubbles = 0;
  std::vector<double> w_compute, w_dma;
  for (std::size_t i = 0; i < prog.cmds.size(); ++i) {
    const Command& c = prog.cmds[i];
    const double bytes = bytes_of(c) + isa::COMMAND_BYTES;
    total_bytes += bytes;
    const int w = prog.window[i];
    if (w < 0) {
      startup_bytes += bytes;
      continue;
    }
    if (i > last_compute) {
      tail_bytes += bytes;
      continue;
    }
    if (static_cast<std::size_t>(w) >= w_compute.size()) {
      w_compute.resize(static_cast<std::size_t>(w) + 1, 0.0);
      w_dma.resize(static_cast<std::size_t>(w) + 1, 0.0);
    }
    w_dma[static_cast<std::size_t>(w)] += bytes;
    if (c.opcode == Opcode::COMPUTE) {
      const double t = c.beats;
      const double bubble = t < lat + caps.rows ? (lat + caps.rows - t) / 2.0 : 0.0;
      beats += t;
      bubbles += bubble;
      w_compute[static_cast<std::size_t>(w)] += t + bubble;
    }
  }
  double steady = 0;
  for (std::size_t w = 0; w < w_compute.size(); ++w)
    steady += std::max(w_compute[w], w_dma[w] / bw);
  p.startup = static_cast<std::uint64_t>(
      std::llround(params.dma_read_latency + startup_bytes / bw + caps.rows));
  p.steady = static_cast<std::uint64_t>(std::llround(steady));
  p.tail =
      static_cast<std::uint64_t>(std::llround(lat + tail_bytes / bw + params.dma_write_latency));
  p.total = p.startup + p.steady + p.tail;
  p.bubble_cycles = static_cast<std::uint64_t>(std::llround(bubbles));
  p.compute_cycles = static_cast<std::uint64_t>(std::llround(beats + bubbles)) +
                     static_cast<std::uint64_t>(caps.rows + lat);
  p.dma_cycles = static_cast<std::uint64_t>(std::llround(total_bytes / bw));
  const double peak =
      static_cast<double>(caps.rows) * caps.cols * (g.dense ? caps.pattern.n : caps.pattern.m);
  p.ideal_cycles =
      static_cast<std::uint64_t>(std::ceil(static_cast<double>(g.rows) * static_cast<double>(g.k) *
                                           static_cast<double>(g.n_out) / peak));
  return p;
}

// --- planning ----------------------------------------------------------------------------------

// A quick estimate of a plan's DMA bytes and cycles, used to pick the few plans worth compiling.
double quick_estimate(const DeviceCaps& caps, const Geometry& g, const TilingPlan& p,
                      double* bytes_out) {
  const Capacity cap = capacity(caps);
  const std::int64_t r = p.beats_per_tile;
  const std::int64_t n_rt = ceil_div(g.rows, r);
  const std::int64_t n_kb = ceil_div(g.k_chunks, p.chunks_per_act_block);
  const std::int64_t slots = cap.act_entries / (r * p.chunks_per_act_block);
  const std::int64_t groups = ceil_div(g.blocks, p.blocks_per_group);
  const std::int64_t kept = std::min(n_kb, std::max<std::int64_t>(0, slots - 1));
  const double act_loads = slots >= n_kb ? 1.0
                                         : 1.0 + static_cast<double>(groups - 1) *
                                                     static_cast<double>(n_kb - kept) /
                                                     static_cast<double>(n_kb);
  const double act = act_loads * static_cast<double>(g.rows) * static_cast<double>(g.k_pad);
  const double tiles = static_cast<double>(n_rt) * g.blocks * g.k_tiles;
  const double wgt = tiles * caps.rows * caps.weight_record_bytes();
  const double out = static_cast<double>(g.rows) * static_cast<double>(g.blocks) *
                     static_cast<double>(g.out_row_bytes);
  const double cmds = tiles * (1.0 + 1.0 / p.weight_batch_tiles) +
                      static_cast<double>(n_rt) * g.blocks + act / ACT_PIECE_BYTES + 4;
  const double bytes =
      act + wgt + out + cmds * isa::COMMAND_BYTES + g.epi_needed * caps.epi_entry_bytes();
  double compute = 0;
  const int lat = caps.latency();
  for (std::int64_t rt = 0; rt < n_rt; ++rt) {
    const double t = static_cast<double>(std::min<std::int64_t>(r, g.rows - rt * r));
    compute +=
        g.blocks * g.k_tiles * (t + (t < lat + caps.rows ? (lat + caps.rows - t) / 2.0 : 0.0));
  }
  *bytes_out = bytes;
  return std::max(compute, bytes / caps.axi_bytes());
}

std::vector<TilingPlan> candidate_plans(const DeviceCaps& caps, const Geometry& g) {
  const Capacity cap = capacity(caps);
  std::vector<TilingPlan> out;
  const std::int64_t r_max =
      std::min<std::int64_t>({g.rows, 65535, cap.acc_entries, cap.act_entries});
  const std::int64_t n_rt_min = ceil_div(g.rows, r_max);
  std::vector<std::int64_t> rs;
  for (std::int64_t n_rt = n_rt_min; n_rt < n_rt_min + 16; ++n_rt) {
    const std::int64_t r = ceil_div(g.rows, n_rt);
    if (rs.empty() || rs.back() != r) rs.push_back(r);
    if (r == 1) break;
  }
  std::vector<int> cs;
  for (int c = 1; c <= g.k_chunks && c <= 64; c *= 2) cs.push_back(c);
  if (g.k_chunks <= 64 && cs.back() != g.k_chunks) cs.push_back(g.k_chunks);
  std::vector<int> bs;
  for (int n_g = 1; n_g <= g.blocks; ++n_g) {
    const int b = static_cast<int>(ceil_div(g.blocks, n_g));
    if (bs.empty() || bs.back() != b) bs.push_back(b);
  }
  for (const std::int64_t r : rs) {
    for (const int c : cs) {
      for (const int b : bs) {
        TilingPlan p;
        p.beats_per_tile = static_cast<int>(r);
        p.chunks_per_act_block = c;
        p.blocks_per_group = b;
        p.weight_batch_tiles = static_cast<int>(cap.half_tiles);
        if (plan_problem(caps, g, p).empty()) out.push_back(p);
      }
    }
  }
  return out;
}

Addresses dummy_addresses() {
  return Addresses{0x1000'0000, 0x2000'0000, 0x3000'0000, 0x4000'0000};
}

struct Chosen {
  TilingPlan plan;
  Emitted program;
  CyclePrediction cycles;
};

Chosen choose_plan(const DeviceCaps& caps, const Geometry& g, const GemmOptions& options,
                   const PerfModelParams& params) {
  if (options.plan) {
    const std::string problem = plan_problem(caps, g, *options.plan);
    if (!problem.empty()) {
      throw std::invalid_argument("tiling plan " + options.plan->describe() + " does not fit " +
                                  caps.describe() + ": " + problem);
    }
    Chosen c;
    c.plan = *options.plan;
    c.program = Emitter(caps, g, c.plan, dummy_addresses()).run();
    c.cycles = predict(caps, g, c.program, params);
    return c;
  }
  std::vector<TilingPlan> plans = candidate_plans(caps, g);
  if (plans.empty()) {
    TilingPlan minimal{1, 1, 1, 1};
    throw std::invalid_argument("GEMM " + std::to_string(g.rows) + " x " + std::to_string(g.k) +
                                " x " + std::to_string(g.n_out) + " cannot run on " +
                                caps.describe() + ": even a minimal tile does not fit (" +
                                plan_problem(caps, g, minimal) + ")");
  }
  std::vector<std::pair<std::pair<double, double>, std::size_t>> ranked;
  for (std::size_t i = 0; i < plans.size(); ++i) {
    double bytes = 0;
    const double cycles = quick_estimate(caps, g, plans[i], &bytes);
    ranked.push_back({{cycles, bytes}, i});
  }
  // Rank by cycles rounded to 0.5 %, then bytes: among plans that run equally fast, move less.
  std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    const double qa = std::floor(std::log(a.first.first) / std::log(1.005));
    const double qb = std::floor(std::log(b.first.first) / std::log(1.005));
    if (qa != qb) return qa < qb;
    return a.first.second < b.first.second;
  });
  // The plan with the best score: predicted cycles plus a tenth of the DMA time, so that among
  // plans about as fast the one that moves fewer bytes wins (the bus is shared and bytes cost
  // energy) without giving up real speed.
  auto score = [&caps, &params](const Chosen& c) {
    const double bw =
        params.dma_bytes_per_cycle > 0 ? params.dma_bytes_per_cycle : caps.axi_bytes();
    return static_cast<double>(c.cycles.total) +
           0.1 * static_cast<double>(c.program.stats.dma_bytes()) / bw;
  };
  Chosen best;
  double best_score = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < ranked.size() && i < PLANS_BUILT; ++i) {
    Chosen c;
    c.plan = plans[ranked[i].second];
    c.program = Emitter(caps, g, c.plan, dummy_addresses()).run();
    c.cycles = predict(caps, g, c.program, params);
    const double sc = score(c);
    if (sc < best_score) {
      best_score = sc;
      best = std::move(c);
    }
  }
  return best;
}

void check_inputs(const DeviceCaps& caps, const MatrixI8& x, const MatrixI8& w,
                  const GemmOptions& o) {
  caps.validate();
  if (x.cols() != w.cols()) {
    throw std::invalid_argument("GEMM: activations have K = " + std::to_string(x.cols()) +
                                " but weights have K = " + std::to_string(w.cols()));
  }
  if (o.mode == GemmMode::SPARSE && !caps.sparse_supported) {
    throw std::invalid_argument(
        "GEMM: sparse mode requested but the device reports CAP_ARRAY.SPARSE = 0");
  }
  if (o.epilogue) o.epilogue->validate(static_cast<std::size_t>(w.rows()));
}

}  // namespace

std::string_view to_string(GemmMode m) {
  return m == GemmMode::SPARSE ? "sparse" : "dense";
}

std::string TilingPlan::describe() const {
  std::ostringstream s;
  s << "R=" << beats_per_tile << " B=" << blocks_per_group << " c=" << chunks_per_act_block
    << " wbatch=" << weight_batch_tiles;
  return s.str();
}

bool TilingPlan::operator==(const TilingPlan& o) const {
  return beats_per_tile == o.beats_per_tile && blocks_per_group == o.blocks_per_group &&
         chunks_per_act_block == o.chunks_per_act_block &&
         weight_batch_tiles == o.weight_batch_tiles;
}

std::string CyclePrediction::describe() const {
  std::ostringstream s;
  s << total << " cycles (startup " << startup << ", steady " << steady << ", tail " << tail
    << "; compute " << compute_cycles << " incl. " << bubble_cycles << " bubbles, DMA "
    << dma_cycles << ", ideal " << ideal_cycles << ", utilization " << utilization() << ")";
  return s.str();
}

GemmEstimate estimate_gemm(const DeviceCaps& caps, Eigen::Index rows, Eigen::Index k,
                           Eigen::Index n_out, const GemmOptions& options,
                           const PerfModelParams& params) {
  caps.validate();
  const Geometry g = make_geometry(caps, rows, k, n_out, options);
  Chosen c = choose_plan(caps, g, options, params);
  return GemmEstimate{c.plan, c.program.stats, c.cycles};
}

GemmProgram::GemmProgram(const DeviceCaps& caps, const MatrixI8& x, const MatrixI8& w,
                         const GemmOptions& options, HostMemory& mem)
    : caps_(caps), mem_(&mem) {
  check_inputs(caps, x, w, options);
  const Geometry g = make_geometry(caps, x.rows(), x.cols(), w.rows(), options);
  rows_ = x.rows();
  k_ = x.cols();
  n_out_ = w.rows();
  blocks_ = g.blocks;
  k_tiles_ = g.k_tiles;
  k_pad_ = g.k_pad;
  dense_ = g.dense;
  int32_output_ = g.int32_out;
  out_stride_ = g.out_stride;
  out_block_pitch_ = g.out_pitch;

  const int rws = caps.rows;
  const int cols = caps.cols;
  const int n = caps.pattern.n;
  const auto rb = static_cast<std::size_t>(caps.weight_record_bytes());
  const auto vb = static_cast<std::size_t>(caps.weight_value_bytes());
  const int meta_w = caps.pattern.meta_bits();

  // Weights padded to whole output blocks and K-chunks (padding is zero; in sparse mode its groups
  // get the canonical all-zero code, never an illegal one).
  MatrixI8 w_pad =
      MatrixI8::Zero(static_cast<Eigen::Index>(blocks_) * cols, static_cast<Eigen::Index>(k_pad_));
  w_pad.topLeftCorner(w.rows(), w.cols()) = w;
  std::vector<std::uint8_t> records(static_cast<std::size_t>(k_tiles_) *
                                        static_cast<std::size_t>(blocks_) *
                                        static_cast<std::size_t>(rws) * rb,
                                    0);
  if (dense_) {
    for (int kt = 0; kt < k_tiles_; ++kt) {
      for (int b = 0; b < blocks_; ++b) {
        for (int r = 0; r < rws; ++r) {
          std::uint8_t* rec =
              records.data() + ((static_cast<std::size_t>(kt) * blocks_ + b) * rws + r) * rb;
          for (int c = 0; c < cols; ++c) {
            for (int j = 0; j < n; ++j) {
              rec[c * n + j] = static_cast<std::uint8_t>(
                  w_pad(b * cols + c, (static_cast<Eigen::Index>(kt) * rws + r) * n + j));
            }
          }
        }
      }
    }
  } else {
    const CompressedWeights cw = compress(w_pad, caps.pattern);
    for (int kt = 0; kt < k_tiles_; ++kt) {
      for (int b = 0; b < blocks_; ++b) {
        for (int r = 0; r < rws; ++r) {
          std::uint8_t* rec =
              records.data() + ((static_cast<std::size_t>(kt) * blocks_ + b) * rws + r) * rb;
          const Eigen::Index group = static_cast<Eigen::Index>(kt) * rws + r;
          for (int c = 0; c < cols; ++c) {
            const Eigen::Index ch = static_cast<Eigen::Index>(b) * cols + c;
            for (int j = 0; j < n; ++j)
              rec[c * n + j] = static_cast<std::uint8_t>(cw.values(ch, group * n + j));
            const unsigned field = cw.meta(ch, group);
            const int bit = c * meta_w;
            for (int i = 0; i < meta_w; ++i) {
              if ((field >> i) & 1u)
                rec[vb + static_cast<std::size_t>((bit + i) / 8)] |=
                    static_cast<std::uint8_t>(1u << ((bit + i) % 8));
            }
          }
        }
      }
    }
  }

  // Epilogue entries: bias, multiplier, shift per column; zero for padding channels. INT32 output
  // uses one all-zero entry (bias 0).
  const std::size_t eb = static_cast<std::size_t>(caps.epi_entry_bytes());
  std::vector<std::uint8_t> epi(static_cast<std::size_t>(g.int32_out ? 1 : blocks_) * eb, 0);
  if (options.epilogue) {
    const EpilogueParams& ep = *options.epilogue;
    auto put32 = [&epi](std::size_t at, std::uint32_t v) {
      for (int i = 0; i < 4; ++i)
        epi[at + static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(v >> (8 * i));
    };
    for (Eigen::Index ch = 0; ch < n_out_; ++ch) {
      const std::size_t at =
          static_cast<std::size_t>(ch / cols) * eb + static_cast<std::size_t>(ch % cols) * 12;
      const auto c = static_cast<std::size_t>(ch);
      put32(at, static_cast<std::uint32_t>(ep.bias[c]));
      put32(at + 4, static_cast<std::uint32_t>(ep.multiplier[c]));
      put32(at + 8, ep.shift[c]);
    }
  }

  // Plan with dummy addresses, then lay out memory and emit for real (the program does not depend
  // on the addresses except through them).
  Chosen chosen = choose_plan(caps, g, options, PerfModelParams{});
  plan_ = chosen.plan;
  const std::uint64_t align = 64;
  Addresses addr;
  addr.x = mem.alloc(static_cast<std::uint64_t>(rows_) * k_pad_, align);
  addr.w = mem.alloc(records.size(), align);
  addr.e = mem.alloc(epi.size(), align);
  addr.o = mem.alloc(static_cast<std::uint64_t>(rows_) * out_stride_, align);
  x_addr_ = addr.x;
  w_addr_ = addr.w;
  e_addr_ = addr.e;
  o_addr_ = addr.o;

  std::vector<std::uint8_t> row(static_cast<std::size_t>(k_pad_), 0);
  for (Eigen::Index r = 0; r < rows_; ++r) {
    for (Eigen::Index k = 0; k < k_; ++k)
      row[static_cast<std::size_t>(k)] = static_cast<std::uint8_t>(x(r, k));
    mem.write(addr.x + static_cast<std::uint64_t>(r) * k_pad_, row.data(), row.size());
  }
  mem.write(addr.w, records.data(), records.size());
  mem.write(addr.e, epi.data(), epi.size());
  // A pattern, not zeros, in the output: a row the program forgets to store shows up.
  mem.fill(addr.o, 0xA5, static_cast<std::size_t>(static_cast<std::uint64_t>(rows_) * out_stride_));

  Emitted prog = Emitter(caps, g, plan_, addr).run();
  commands_ = std::move(prog.cmds);
  tiles_ = std::move(prog.tiles);
  stats_ = prog.stats;
  window_ = std::move(prog.window);
  cmd_addr_ = mem.alloc(commands_.size() * isa::COMMAND_BYTES, align);
  for (std::size_t i = 0; i < commands_.size(); ++i) {
    const EncodedCommand bytes = encode(commands_[i]);
    mem.write(cmd_addr_ + i * isa::COMMAND_BYTES, bytes.data(), bytes.size());
  }
}

CyclePrediction GemmProgram::predict_cycles(const PerfModelParams& params) const {
  GemmOptions o;
  o.mode = dense_ ? GemmMode::DENSE : GemmMode::SPARSE;
  if (!int32_output_) o.epilogue = EpilogueParams{};
  const Geometry g = make_geometry(caps_, rows_, k_, n_out_, o);
  Emitted view;
  view.cmds = commands_;
  view.window = window_;
  return predict(caps_, g, view, params);
}

std::uint64_t GemmProgram::weight_record_address(int block, int k_tile, int pe_row) const {
  if (block < 0 || block >= blocks_ || k_tile < 0 || k_tile >= k_tiles_ || pe_row < 0 ||
      pe_row >= caps_.rows) {
    throw std::out_of_range("weight_record_address: no tile (" + std::to_string(block) + ", " +
                            std::to_string(k_tile) + ") row " + std::to_string(pe_row));
  }
  return w_addr_ + ((static_cast<std::uint64_t>(k_tile) * static_cast<std::uint64_t>(blocks_) +
                     static_cast<std::uint64_t>(block)) *
                        static_cast<std::uint64_t>(caps_.rows) +
                    static_cast<std::uint64_t>(pe_row)) *
                       static_cast<std::uint64_t>(caps_.weight_record_bytes());
}

MatrixI32 GemmProgram::read_output() const {
  MatrixI32 y(rows_, n_out_);
  const int cols = caps_.cols;
  const std::uint64_t elem = int32_output_ ? 4 : 1;
  std::vector<std::uint8_t> row(static_cast<std::size_t>(out_stride_));
  for (Eigen::Index r = 0; r < rows_; ++r) {
    mem_->read(o_addr_ + static_cast<std::uint64_t>(r) * out_stride_, row.data(), row.size());
    for (Eigen::Index ch = 0; ch < n_out_; ++ch) {
      const std::size_t at =
          static_cast<std::size_t>(static_cast<std::uint64_t>(ch / cols) * out_block_pitch_ +
                                   static_cast<std::uint64_t>(ch % cols) * elem);
      if (int32_output_) {
        const std::uint32_t v = std::uint32_t{row[at]} | std::uint32_t{row[at + 1]} << 8 |
                                std::uint32_t{row[at + 2]} << 16 | std::uint32_t{row[at + 3]} << 24;
        y(r, ch) = static_cast<std::int32_t>(v);
      } else {
        y(r, ch) = static_cast<std::int8_t>(row[at]);
      }
    }
  }
  return y;
}

}  // namespace nmsa
