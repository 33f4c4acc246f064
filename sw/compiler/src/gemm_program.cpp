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
  // A K-chunk is what one activation entry holds: ROWS*M positions (ROWS*N on a dense-only
  // device), one sparse tile or dense_parts() dense ones.
  g.k_chunks = static_cast<int>(ceil_div(k, caps.act_entry_bytes()));
  g.k_pad =
      static_cast<std::uint64_t>(g.k_chunks) * static_cast<std::uint64_t>(caps.act_entry_bytes());
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
// predict() replays the command stream on a model of the device at command and burst
// granularity: an event-driven simulation of the command processor, the three engines, the
// dependency tokens, the two DMA engines and the host memory, with the timing of the RTL. It
// visits only the cycles in which something can change (every component knows the earliest cycle
// its conditions can all hold), so a program costs a few operations per command and per DMA
// burst, however many cycles it runs, and the result is deterministic. Cycles are counted as
// tb/src/top_runner.cpp does, from the START register write (the fetch can make its first
// request in cycle 1) to the done interrupt; a registered signal set in cycle t counts from t + 1.
// On the benchmark memories the prediction matches the Verilated RTL to the cycle.
//
// What is modelled (rtl/ and tb/src/axi_memory.cpp). The structure (queue depths, chunk sizes,
// bursts in flight, pipeline depths) comes from the device's capability registers (DeviceCaps),
// so a changed RTL parameter cannot silently desynchronize the model.
//   command fetch  (nmsa_cmd) requests chunks of up to FETCH_CHUNK commands once the beat FIFO
//                  (FETCH_CHUNKS chunks) has room: chunk j waits until every command up to
//                  (its last command - FETCH_CHUNKS * FETCH_CHUNK) has been taken out of the FIFO.
//                  A command's beats are taken out one per cycle once the previous command moved
//                  on to decoding; then it is decoded, checked and dispatched, one register each,
//                  each stage waiting for the next one to be free, and dispatched once its engine
//                  queue (QUEUE_DEPTH) has room.
//   read DMA       one request register shared by fetch (priority) and loads, then the burst
//                  generator: one request at a time, one AR per cycle (bursts of <= MAX_BURST,
//                  no 4 KiB crossing), at most MAX_OUTSTANDING bursts in flight and
//                  READ_REQUESTS requests with data outstanding. The AR and R register slices
//                  add a cycle each: the memory takes an AR the cycle after the DMA issues it and
//                  its first beat reaches the DMA ReadLatency + 1 cycles after that; beats come in
//                  order, at most one per cycle and as the memory's bandwidth allows (Bandwidth,
//                  WriteBandwidth below, in the memory's cycles).
//   load engine    (nmsa_load) takes a LOAD when its token is there and its request register is
//                  free; the request goes to the DMA while up to PENDING_LOADS earlier LOADs still
//                  wait for data. A LOAD finishes with its last beat; its buffer write and token
//                  follow one cycle later.
//   compute engine (nmsa_compute) loader: takes a tile when its tokens are there, the previous
//                  tile left the loader and its weight bank is no longer read by the array (the
//                  tile two before issued its last beat ROWS + COLS + 2 cycles ago); ROWS + 3
//                  cycles later the tile is ready, and the streamer starts it in the cycle after
//                  the previous tile's last issue (no bubble). A beat that accumulates into a row
//                  issued in the last AccHazard - 1 cycles waits. A beat enters the array 2 cycles
//                  after its issue; tokens are pushed when the tile's last result is written into
//                  the accumulators, ARRAY_LATENCY + 3 cycles after its last beat entered.
//   store engine   (nmsa_store) its write request the cycle after it starts; once the DMA takes
//                  it, a row is read every Groups = COLS / EPI_LANES cycles while one of its
//                  STORE_ROWS credits is free (a credit comes back with a row's last beat), and
//                  reaches the finished-row FIFO Groups + EPI_LATENCY + 3 cycles after its read.
//                  Each beat goes to the DMA after its burst's AW (with at most MAX_OUTSTANDING
//                  bursts awaiting their response), through the W register slice to the memory
//                  as its bandwidth allows (the slice holds two beats); a response comes back
//                  through the B slice WriteLatency + 1 cycles after the burst's last beat reached
//                  the memory. The STORE finishes 2 cycles after its last response.
// Not modelled: reads delayed by writes that drained the bandwidth before them, which only
// happens below one beat per cycle; the host memory's own limits on bursts in flight (assumed
// at least the DMA's); random back-pressure.

// Cycles from a beat's issue to the accumulator write of its result row (nmsa_pkg::
// AccHazardCycles): a beat that accumulates into a row issued fewer cycles ago waits.
constexpr std::int64_t ACC_HAZARD_CYCLES = 4;

constexpr std::int64_t NEVER = std::numeric_limits<std::int64_t>::max() / 4;

// Per-command times of one simulated run.
struct CommandTimes {
  std::int64_t dispatch = NEVER;  // handed to its engine's queue
  std::int64_t accept = NEVER;    // taken by its engine (tokens popped)
};

// One direction's view of the host memory's bandwidth (tb/src/axi_memory.cpp): a token bucket
// that gains `rate` bytes per cycle, holds at most rate + 2 beats, and lets a beat through in a
// cycle that starts with at least a beat's worth of tokens. Beats are placed in increasing cycles.
class Bandwidth {
 public:
  Bandwidth(double rate, double beat)
      : rate_(rate), beat_(beat), cap_(rate + 2 * beat), level_(rate + 2 * beat) {}

  // The cycle of the next beat, at `t` or later.
  std::int64_t place(std::int64_t t) {
    t = std::max(t, at_);
    if (rate_ >= beat_) {  // never short of tokens: one beat per cycle
      at_ = t + 1;
      return t;
    }
    double level = std::min(level_ + rate_ * static_cast<double>(t - at_), cap_);
    if (level < beat_) {
      const auto wait = static_cast<std::int64_t>(std::ceil((beat_ - level) / rate_));
      t += wait;
      level = std::min(level + rate_ * static_cast<double>(wait), cap_);
    }
    level_ = std::min(level - beat_ + rate_, cap_);  // the tokens at the start of cycle t + 1
    at_ = t + 1;
    return t;
  }

  bool one_per_cycle() const { return rate_ >= beat_; }

  // The cycle of the last of `n` beats from `t` on.
  std::int64_t place(std::int64_t t, std::int64_t n) {
    if (rate_ >= beat_) {
      t = std::max(t, at_);
      at_ = t + n;
      return t + n - 1;
    }
    for (std::int64_t k = 0; k < n; ++k) t = place(t) + 1;
    return t - 1;
  }

 private:
  double rate_, beat_, cap_, level_;
  std::int64_t at_ = 0;  // the first cycle not yet decided
};

// The write direction's view of the same bucket. In a cycle the memory serves a due read beat
// first and a write beat only if a beat's worth of tokens is left, so a write beat is placed
// once every read beat up to its cycle is known (`limit`): from rate >= 1 beat per cycle on,
// reads then never wait for writes and both directions are exact; below that, writes that drain
// the bucket before a read are not charged to it. From 2 beats per cycle on nothing is shared
// and write beats are placed at once.
class WriteBandwidth {
 public:
  WriteBandwidth(double rate, double beat)
      : rate_(rate), beat_(beat), cap_(rate + 2 * beat), level_(rate + 2 * beat),
        shared_(rate < 2 * beat), alone_(rate, beat) {}

  bool shared() const { return shared_; }
  std::int64_t decided() const { return at_; }

  // Read beats in cycles [first, last], in increasing order.
  void reads(std::int64_t first, std::int64_t last) {
    if (!shared_ || last < at_) return;
    if (!runs_.empty() && runs_.back().second + 1 >= first) {
      runs_.back().second = std::max(runs_.back().second, last);
    } else {
      runs_.push_back({first, last});
    }
  }

  // The cycle of the next write beat, at `t` or later, or NEVER if it is after `limit` (cycles
  // inside a run of read beats already placed are known further on).
  std::int64_t place(std::int64_t t, std::int64_t limit) {
    if (!shared_) return alone_.place(t);
    for (;;) {
      while (!runs_.empty() && runs_.front().second < at_) runs_.pop_front();
      const bool read = !runs_.empty() && runs_.front().first <= at_;
      if (!read && at_ > limit) return NEVER;  // reads may still be placed here
      if (at_ < t) {
        // No write before t: up to the next read beat, or through the run of read beats.
        std::int64_t to = std::min(t, read ? runs_.front().second + 1 : limit + 1);
        if (!read && !runs_.empty()) to = std::min(to, runs_.front().first);
        advance(to, read ? rate_ - beat_ : rate_);
      } else if (!read) {
        if (level_ >= beat_) return take(0.0);
        advance(at_ + 1, rate_);
      } else if (level_ >= 2 * beat_) {
        return take(beat_);
      } else {
        // Blocked by reads: skip the cycles of the run in which the level stays short.
        std::int64_t to = runs_.front().second + 1;
        if (rate_ > beat_) {
          to = std::min(to, at_ + static_cast<std::int64_t>(
                                      std::ceil((2 * beat_ - level_) / (rate_ - beat_))));
        }
        advance(to, rate_ - beat_);
      }
    }
  }

 private:
  // Cycles [at_, to) that gain `gain` tokens each (the refill, minus a read beat if any).
  void advance(std::int64_t to, double gain) {
    level_ = std::min(level_ + gain * static_cast<double>(to - at_), cap_);
    at_ = to;
  }

  // A write beat in cycle at_, after `read` tokens of a read beat.
  std::int64_t take(double read) {
    level_ = std::min(level_ - read - beat_ + rate_, cap_);
    return at_++;
  }

  double rate_, beat_, cap_, level_;
  bool shared_;
  Bandwidth alone_;
  std::int64_t at_ = 0;  // the first cycle not yet accounted for
  std::deque<std::pair<std::int64_t, std::int64_t>> runs_;
};

class PerfSim {
 public:
  PerfSim(const DeviceCaps& caps, const std::vector<Command>& cmds, std::uint64_t cmd_addr,
          const PerfModelParams& p)
      : caps_(caps), cmds_(cmds), cmd_addr_(cmd_addr), p_(p) {
    n_ = static_cast<int>(cmds.size());
    axi_ = caps.axi_bytes();
    cmd_beats_ = static_cast<int>(isa::COMMAND_BYTES) / axi_;
    const double bw = p.dma_bytes_per_cycle > 0 ? p.dma_bytes_per_cycle : axi_;
    read_bw_ = Bandwidth(bw, axi_);
    write_bw_ = WriteBandwidth(bw, axi_);
    chunk_ = caps.fetch_chunk;
    fifo_cmds_ = chunk_ * caps.fetch_chunks;
    times_.assign(static_cast<std::size_t>(n_), CommandTimes{});
    have_.assign(static_cast<std::size_t>(n_), NEVER);
    decode_.assign(static_cast<std::size_t>(n_), NEVER);
    check_.assign(static_cast<std::size_t>(n_), NEVER);
    beat_arr_.assign(static_cast<std::size_t>(n_) * static_cast<std::size_t>(cmd_beats_), NEVER);
    for (int i = 0; i < n_; ++i) {
      const int e = static_cast<int>(engine_of(cmds[static_cast<std::size_t>(i)].opcode));
      engine_.push_back(e);
      qpos_.push_back(static_cast<int>(elist_[static_cast<std::size_t>(e)].size()));
      elist_[static_cast<std::size_t>(e)].push_back(i);
    }
    load_fin_.assign(elist_[0].size(), NEVER);
    n_chunks_ = (n_ + chunk_ - 1) / chunk_;
  }

  enum class Outcome { DONE, OVER_LIMIT, STUCK };
  // Runs the program, or stops once it is sure to take more than `limit` cycles. STUCK: no
  // command can ever start again (a stream the device would report as BAD_DEPS).
  Outcome run(double limit) {
    std::int64_t t = 0;
    for (;;) {
      const Due due = next();
      const std::int64_t nt = due.earliest(rq_ == NONE);
      if (nt >= NEVER) return Outcome::STUCK;
      t = std::max(nt, t + 1);
      // Unfinished work in cycle t: the total is at least t + 1.
      if (static_cast<double>(t) + 1 > limit) return Outcome::OVER_LIMIT;
      step(t, due);
      if (finished()) return Outcome::DONE;
    }
  }

  std::int64_t total() const { return end_ + 1; }
  std::int64_t first_beat() const { return first_beat_; }
  std::int64_t last_beat() const { return last_beat_; }

 private:
  enum Owner { NONE, FETCH, LOADER };
  static constexpr int LC = 0, CL = 1, CS = 2, SC = 3;  // token counters (docs/isa.md)

  const Command& cmd(int i) const { return cmds_[static_cast<std::size_t>(i)]; }
  int n_loads() const { return static_cast<int>(elist_[0].size()); }
  int n_computes() const { return static_cast<int>(elist_[1].size()); }
  int n_stores() const { return static_cast<int>(elist_[2].size()); }

  bool finished() const {
    return d_ == n_ && li_ == n_loads() && pend_ < 0 && rq_ == NONE && ci_ == n_computes() &&
           si_ == n_stores() && st_.cmd < 0;
  }

  // --- tokens: push cycles per counter (a push in cycle p is visible from p + 1) -------------
  std::int64_t token_time(int k) const {
    const auto& v = push_[static_cast<std::size_t>(k)];
    const std::size_t used = popped_[static_cast<std::size_t>(k)];
    return used < v.size() ? v[used] + 1 : NEVER;
  }
  void push(int k, std::int64_t at) { push_[static_cast<std::size_t>(k)].push_back(at); }
  void pop(int k) { ++popped_[static_cast<std::size_t>(k)]; }

  // --- command fetch and dispatch ---------------------------------------------------------------
  int chunk_cmds(int j) const { return std::min(chunk_, n_ - j * chunk_); }

  std::int64_t fetch_valid_time() const {
    if (next_chunk_ >= n_chunks_) return NEVER;
    std::int64_t t = std::max<std::int64_t>(1, last_fetch_take_ + 1);
    // Room in the beat FIFO: every command up to `room_after` taken out of it.
    const int room_after = next_chunk_ * chunk_ + chunk_cmds(next_chunk_) - fifo_cmds_ - 1;
    if (room_after >= 0) t = std::max(t, have_time(room_after));
    return t;
  }

  // The cycle command c is assembled (all its beats out of the FIFO), or NEVER if not known yet.
  // Its first beat comes out the cycle after the previous command moved on to decoding.
  std::int64_t have_time(int c) const {
    std::int64_t& h = have_[static_cast<std::size_t>(c)];
    if (h < NEVER) return h;
    std::int64_t p = c == 0 ? 0 : decode_time(c - 1);
    if (p >= NEVER) return NEVER;
    for (int k = 0; k < cmd_beats_; ++k) {
      const std::int64_t a =
          beat_arr_[static_cast<std::size_t>(c) * static_cast<std::size_t>(cmd_beats_) +
                    static_cast<std::size_t>(k)];
      if (a >= NEVER) return NEVER;
      p = std::max(p + 1, a + 1);  // one pop per cycle, the cycle after the beat arrived
    }
    h = p + 1;
    return h;
  }

  // The earliest cycle the engine queue of command c has room for it.
  std::int64_t queue_room_time(int c) const {
    const int e = engine_[static_cast<std::size_t>(c)];
    const int pos = qpos_[static_cast<std::size_t>(c)];
    if (pos < caps_.queue_depth) return 0;
    const int older = elist_[static_cast<std::size_t>(e)]
                            [static_cast<std::size_t>(pos - caps_.queue_depth)];
    const std::int64_t a = times_[static_cast<std::size_t>(older)].accept;
    return a >= NEVER ? NEVER : a + 1;
  }

  // The cycle command c moves from the assembly register into the decode register, and from
  // there into the check register: each waits until the next stage is free (or frees in the same
  // cycle). NEVER while not known yet.
  std::int64_t decode_time(int c) const {
    std::int64_t& t = decode_[static_cast<std::size_t>(c)];
    if (t < NEVER) return t;
    const std::int64_t have = have_time(c);
    const std::int64_t free = c == 0 ? 0 : check_time(c - 1);
    if (have >= NEVER || free >= NEVER) return NEVER;
    t = std::max(have, free);
    return t;
  }
  std::int64_t check_time(int c) const {
    std::int64_t& t = check_[static_cast<std::size_t>(c)];
    if (t < NEVER) return t;
    const std::int64_t dec = decode_time(c);
    const std::int64_t free = c == 0 ? 0 : times_[static_cast<std::size_t>(c) - 1].dispatch;
    if (dec >= NEVER || free >= NEVER) return NEVER;
    t = std::max(dec + 1, free);
    return t;
  }

  std::int64_t dispatch_time() const {
    if (d_ >= n_) return NEVER;
    const std::int64_t chk = check_time(d_);
    return chk >= NEVER ? NEVER : std::max(chk + 1, queue_room_time(d_));
  }

  // --- read DMA -----------------------------------------------------------------------------
  std::int64_t handshake_time() const {
    if (rq_ == NONE) return NEVER;
    std::int64_t t = std::max(rq_time_ + 1, dma_free_);
    const std::size_t n = req_end_.size();
    const auto depth = static_cast<std::size_t>(caps_.read_requests);
    if (n >= depth) t = std::max(t, req_end_[n - depth] + 1);
    return t;
  }

  std::int64_t load_request_time() const {
    if (pend_ < 0) return NEVER;
    std::int64_t t = pend_acc_ + 1;
    if (fired_ >= caps_.pending_loads) {
      const std::int64_t f = load_fin_[static_cast<std::size_t>(fired_ - caps_.pending_loads)];
      t = std::max(t, f >= NEVER ? NEVER : f + 1);
    }
    return t;
  }

  // Issues the bursts of a request the DMA takes in cycle h; returns the cycle its last beat
  // reaches the DMA and appends every beat's such cycle to `beats` if given. The memory sees an
  // AR one cycle after the DMA issued it (AR slice), and the DMA a beat one cycle after the
  // memory sent it (R slice); the bandwidth is the memory's, in its cycles.
  std::int64_t read_request(std::int64_t h, std::uint64_t addr, std::uint64_t row_bytes,
                            std::uint64_t rows, std::uint64_t stride,
                            std::vector<std::int64_t>* beats) {
    std::int64_t ar = h;
    std::int64_t end = h;  // in the memory's cycles
    const auto a = static_cast<std::uint64_t>(axi_);
    for (std::uint64_t r = 0; r < rows; ++r) {
      std::uint64_t at = addr + r * stride;
      std::uint64_t left = row_bytes / a;
      while (left > 0) {
        const std::uint64_t to_4k = (4096 - at % 4096) / a;
        const std::uint64_t n =
            std::min({left, static_cast<std::uint64_t>(caps_.max_burst_beats), to_4k});
        ar += 1;
        const std::size_t b = burst_end_.size();
        const auto limit = static_cast<std::size_t>(caps_.max_outstanding);
        if (b >= limit) ar = std::max(ar, burst_end_[b - limit] + 1);
        // Data in order on the R channel, the first beat ReadLatency cycles after the memory
        // took the AR.
        const std::int64_t first = ar + 1 + p_.dma_read_latency;
        if (beats == nullptr && read_bw_.one_per_cycle()) {
          end = read_bw_.place(first, static_cast<std::int64_t>(n));
          write_bw_.reads(end - static_cast<std::int64_t>(n) + 1, end);
        } else {
          for (std::uint64_t k = 0; k < n; ++k) {
            end = read_bw_.place(k == 0 ? first : end + 1);
            write_bw_.reads(end, end);
            if (beats != nullptr) beats->push_back(end + 1);
          }
        }
        burst_end_.push_back(end + 1);
        left -= n;
        at += n * a;
      }
    }
    dma_free_ = ar + 1;
    req_end_.push_back(end + 1);
    return end + 1;
  }

  void handshake(std::int64_t h) {
    if (rq_ == FETCH) {
      const int j = rq_id_;
      const int first = j * chunk_;
      const int nc = chunk_cmds(j);
      fetch_beats_.clear();
      read_request(h, cmd_addr_ + static_cast<std::uint64_t>(first) * isa::COMMAND_BYTES,
                   static_cast<std::uint64_t>(nc) * isa::COMMAND_BYTES, 1, 0, &fetch_beats_);
      std::copy(fetch_beats_.begin(), fetch_beats_.end(),
                beat_arr_.begin() + static_cast<std::ptrdiff_t>(first) * cmd_beats_);
    } else {
      const int i = elist_[0][static_cast<std::size_t>(rq_id_)];
      const Command& c = cmd(i);
      const std::int64_t end =
          read_request(h, c.host_address, c.bytes_per_row, c.rows, c.host_stride, nullptr);
      load_fin_[static_cast<std::size_t>(rq_id_)] = end;
      // The last beat's buffer write and the token are registered.
      if (c.push_next) push(LC, end + 1);
      end_ = std::max(end_, end + 1);
    }
    rq_ = NONE;
  }

  // --- engines ------------------------------------------------------------------------------
  std::int64_t load_accept_time() const {
    if (li_ >= n_loads() || pend_ >= 0) return NEVER;  // a pending request frees it when fired
    const int i = elist_[0][static_cast<std::size_t>(li_)];
    std::int64_t t = times_[static_cast<std::size_t>(i)].dispatch;
    t = t >= NEVER ? NEVER : t + 1;
    if (cmd(i).pop_next) t = std::max(t, token_time(CL));
    return t;
  }

  std::int64_t compute_accept_time() const {
    if (ci_ >= n_computes()) return NEVER;
    const int i = elist_[1][static_cast<std::size_t>(ci_)];
    const Command& c = cmd(i);
    std::int64_t t = times_[static_cast<std::size_t>(i)].dispatch;
    t = t >= NEVER ? NEVER : t + 1;
    if (c.pop_prev) t = std::max(t, token_time(LC));
    if (c.pop_next) t = std::max(t, token_time(SC));
    return std::max({t, loader_free_, bank_free_[static_cast<std::size_t>(ci_ % 2)]});
  }

  void compute_accept(std::int64_t a) {
    const int i = elist_[1][static_cast<std::size_t>(ci_)];
    const Command& c = cmd(i);
    if (c.pop_prev) pop(LC);
    if (c.pop_next) pop(SC);
    // Rows record reads, registered and loaded, plus the handoff, then the streamer takes it in
    // the cycle of the previous tile's last issue at the earliest.
    const std::int64_t take = std::max(a + caps_.rows + 3, stream_free_);
    const std::int64_t first = issue_beats(c, take + 1);
    const std::int64_t last = recent_.back().first;
    loader_free_ = take + 1;
    stream_free_ = last;
    // A beat enters the array 2 cycles after its issue; its result is written into the
    // accumulators ARRAY_LATENCY + 3 cycles after that.
    const std::int64_t done = last + 2 + caps_.latency() + 3;
    // The bank is read until the bottom-right PE selected the last beat's weights.
    bank_free_[static_cast<std::size_t>(ci_ % 2)] = last + (caps_.rows + caps_.cols - 1) + 3;
    if (c.push_prev) push(CL, done);
    if (c.push_next) push(CS, done);
    first_beat_ = std::min(first_beat_, first + 2);
    last_beat_ = std::max(last_beat_, last + 2);
    end_ = std::max(end_, done);
    times_[static_cast<std::size_t>(i)].accept = a;
    ++ci_;
  }

  // Issues the beats of COMPUTE c from cycle `from` on, one per cycle, except that a beat which
  // accumulates into a row issued fewer than ACC_HAZARD_CYCLES cycles before waits. Returns the
  // first beat's cycle; recent_ ends with the last one's.
  std::int64_t issue_beats(const Command& c, std::int64_t from) {
    std::int64_t t = from;
    std::int64_t first = NEVER;
    const std::int64_t earlier = recent_.empty() ? -NEVER : recent_.back().first;
    int j = 0;
    // Only the first beats can meet rows of earlier tiles; a tile's own rows are all different.
    for (; j < c.beats && t < earlier + ACC_HAZARD_CYCLES; ++j) {
      const std::int64_t row = c.first_acc_row + j;
      if (c.accumulate) {
        for (const auto& [cycle, r] : recent_) {
          if (r == row && t < cycle + ACC_HAZARD_CYCLES) t = cycle + ACC_HAZARD_CYCLES;
        }
      }
      if (first >= NEVER) first = t;
      remember(t, row);
      ++t;
    }
    if (j < c.beats) {
      if (first >= NEVER) first = t;
      const std::int64_t last = t + (c.beats - 1 - j);
      // The last (up to) ACC_HAZARD_CYCLES - 1 beats, issued in consecutive cycles.
      for (std::int64_t k = std::max<std::int64_t>(j, c.beats - (ACC_HAZARD_CYCLES - 1));
           k < c.beats; ++k) {
        remember(last - (c.beats - 1 - k), c.first_acc_row + k);
      }
    }
    return first;
  }

  void remember(std::int64_t cycle, std::int64_t row) {
    recent_.push_back({cycle, row});
    while (recent_.size() > static_cast<std::size_t>(ACC_HAZARD_CYCLES - 1)) recent_.pop_front();
  }

  std::int64_t store_accept_time() const {
    if (si_ >= n_stores() || st_.cmd >= 0) return NEVER;
    const int i = elist_[2][static_cast<std::size_t>(si_)];
    std::int64_t t = times_[static_cast<std::size_t>(i)].dispatch;
    t = t >= NEVER ? NEVER : t + 1;
    if (cmd(i).pop_prev) t = std::max(t, token_time(CS));
    return std::max(t, store_free_);
  }

  void store_accept(std::int64_t s) {
    const int i = elist_[2][static_cast<std::size_t>(si_)];
    const Command& c = cmd(i);
    if (c.pop_prev) pop(CS);
    times_[static_cast<std::size_t>(i)].accept = s;
    ++si_;
    const int row_bytes = caps_.cols * (c.int32_output ? 4 : 1);
    st_ = StoreRun{};
    st_.cmd = i;
    st_.rows = c.rows;
    st_.row_beats = (row_bytes + axi_ - 1) / axi_;
    // The request is presented the cycle after the accept; the DMA takes it once its previous
    // request's AWs are all out, and issues its first AW the cycle after. Rows are read from then.
    st_.aw = std::max(s + 1, dw_free_);
    st_.start = st_.aw + 1;
    st_.sent.clear();
  }

  // Places the running STORE's write beats up to memory cycle `limit`; finishes it after its
  // last one.
  void store_advance(std::int64_t limit) {
    const auto bursts = static_cast<std::size_t>(caps_.max_outstanding);
    const std::int64_t groups = caps_.epi_groups();
    while (st_.cmd >= 0) {
      if (st_.burst_left == 0) {
        if (st_.left == 0) {
          if (st_.row == st_.rows) {
            store_finish();
            return;
          }
          // A row is read Groups cycles after the previous one, while a credit is free, and
          // its beats reach the row FIFO's output Groups + EPI_LATENCY + 3 cycles later.
          std::int64_t read = st_.row == 0 ? st_.start : std::max(st_.read + groups, st_.start);
          const int slots = caps_.store_rows;
          if (st_.row >= slots) {
            read = std::max(read, st_.sent[static_cast<std::size_t>(st_.row - slots)] + 1);
          }
          st_.read = read;
          st_.left = st_.row_beats;
          st_.next = std::max(st_.next, read + groups + caps_.epi_latency + 3);
        }
        // The AW of a burst goes out one cycle after the previous one, once fewer than
        // MAX_OUTSTANDING bursts wait for their response; its W beats follow it.
        st_.burst_left = std::min(st_.left, caps_.max_burst_beats);
        st_.aw += 1;
        const std::size_t nb = write_b_.size();
        if (nb >= bursts) st_.aw = std::max(st_.aw, write_b_[nb - bursts] + 1);
        st_.next = std::max(st_.next, st_.aw + 1);
      }
      // The W slice holds two beats: a beat enters it once the one two before has left.
      const std::int64_t w = std::max(st_.next, w_mem_[0] + 1);
      const std::int64_t m = write_bw_.place(w + 1, limit);
      if (m >= NEVER) return;
      w_mem_[0] = w_mem_[1];
      w_mem_[1] = m;
      st_.next = w + 1;
      --st_.left;
      if (--st_.burst_left == 0) {
        // The memory's response WriteLatency after the burst's last beat, one per cycle, and
        // one more cycle through the B slice.
        last_b_ = std::max(m + std::max(1, p_.dma_write_latency) + 1, last_b_ + 1);
        write_b_.push_back(last_b_);
      }
      if (st_.left == 0) {
        st_.sent.push_back(w);
        ++st_.row;
      }
    }
  }

  void store_finish() {
    // Completion pulse one cycle after the last response; the engine is idle the cycle after.
    const std::int64_t done = last_b_ + 1;
    if (cmd(st_.cmd).push_prev) push(SC, done);
    store_free_ = done + 1;
    end_ = std::max(end_, done + 1);
    dw_free_ = st_.aw + 1;
    st_.cmd = -1;
  }

  // Write beats can be placed up to the last cycle whose read beats are all known: a read
  // request taken in cycle t has its first beat ReadLatency + 1 cycles later at the earliest.
  // Nothing else depends on them, so they are placed in the cycle before the next one is due,
  // a ReadLatency's worth at a time.
  std::int64_t write_horizon(std::int64_t t) const {
    return write_bw_.shared() ? t + p_.dma_read_latency : NEVER;
  }

  std::int64_t store_next_time() const {
    if (st_.cmd < 0) return NEVER;
    // The next beat reaches the memory the cycle after it leaves the DMA at the earliest.
    return std::max(st_.next + 1, write_bw_.decided()) - 1;
  }

  // --- one cycle ----------------------------------------------------------------------------
  // The earliest cycle each component can act in, as far as known after the last step.
  struct Due {
    std::int64_t handshake, fetch, load_request, load_accept, dispatch, compute, store, store_run;
    std::int64_t earliest(bool rq_free) const {
      // The request register takes a request once it is free and one is valid.
      const std::int64_t take =
          std::max(rq_free ? 0 : handshake, std::min(fetch, load_request));
      return std::min({handshake, take, load_accept, dispatch, compute, store, store_run});
    }
  };

  Due next() const {
    return Due{handshake_time(),      fetch_valid_time(), load_request_time(),
               load_accept_time(),    dispatch_time(),    compute_accept_time(),
               store_accept_time(),   store_next_time()};
  }

  // Cycle t, with `due` computed before it. Within a cycle, only the request register's
  // handover and the load engine's accept depend on each other; every other effect of an action
  // counts from the next cycle on, so `due` still decides the rest.
  void step(std::int64_t t, const Due& due) {
    // Read DMA: the request register hands its request over and can take a new one in the same
    // cycle; the command fetch wins over the load engine.
    bool rq_free = rq_ == NONE;
    if (!rq_free && due.handshake <= t) {
      handshake(t);
      rq_free = true;
    }
    bool fired = false;
    if (rq_free) {
      if (due.fetch <= t) {
        rq_ = FETCH;
        rq_id_ = next_chunk_++;
        rq_time_ = t;
        last_fetch_take_ = t;
      } else if (due.load_request <= t) {
        rq_ = LOADER;
        rq_id_ = pend_;
        rq_time_ = t;
        pend_ = -1;
        ++fired_;
        fired = true;
      }
    }
    // Load engine: takes the next LOAD once its request register is free (also in the cycle
    // its previous request fired).
    if ((fired ? load_accept_time() : due.load_accept) <= t) {
      const int i = elist_[0][static_cast<std::size_t>(li_)];
      if (cmd(i).pop_next) pop(CL);
      pend_ = li_;
      pend_acc_ = t;
      times_[static_cast<std::size_t>(i)].accept = t;
      ++li_;
    }
    if (due.dispatch <= t) {
      times_[static_cast<std::size_t>(d_)].dispatch = t;
      ++d_;
    }
    if (due.compute <= t) compute_accept(t);
    if (due.store <= t) store_accept(t);
    store_advance(write_horizon(t));
  }

  const DeviceCaps& caps_;
  const std::vector<Command>& cmds_;
  std::uint64_t cmd_addr_;
  PerfModelParams p_;
  int n_ = 0, axi_ = 8, cmd_beats_ = 4, chunk_ = 8, fifo_cmds_ = 16, n_chunks_ = 0;
  Bandwidth read_bw_{0, 8};
  WriteBandwidth write_bw_{0, 8};

  std::vector<CommandTimes> times_;
  std::array<std::vector<int>, 3> elist_;  // commands of each engine, in stream order
  std::vector<int> engine_;                // engine of each command
  std::vector<int> qpos_;                  // position of each command in its engine's list
  mutable std::vector<std::int64_t> have_, decode_, check_;
  std::vector<std::int64_t> beat_arr_;  // arrival cycle of every command beat
  std::vector<std::int64_t> fetch_beats_;

  // Fetch and dispatch.
  int next_chunk_ = 0;
  std::int64_t last_fetch_take_ = -NEVER;
  int d_ = 0;

  // Read DMA.
  Owner rq_ = NONE;
  int rq_id_ = 0;
  std::int64_t rq_time_ = 0;
  std::int64_t dma_free_ = 0;
  std::vector<std::int64_t> burst_end_, req_end_;

  // Load engine.
  int li_ = 0, pend_ = -1, fired_ = 0;
  std::int64_t pend_acc_ = 0;
  std::vector<std::int64_t> load_fin_;

  // Compute engine.
  int ci_ = 0;
  std::int64_t loader_free_ = 0, stream_free_ = 0;
  std::array<std::int64_t, 2> bank_free_{{0, 0}};
  std::deque<std::pair<std::int64_t, std::int64_t>> recent_;  // last issues: cycle, acc row

  // Store engine and write DMA.
  int si_ = 0;
  struct StoreRun {
    int cmd = -1;  // the running STORE; -1: none
    int rows = 0, row_beats = 0;
    int row = 0;         // rows whose beats are all placed
    int left = 0;        // beats of the current row not yet placed
    int burst_left = 0;  // beats of the current burst not yet placed
    std::int64_t start = 0;  // first cycle a row can be read
    std::int64_t read = 0;   // read cycle of the current row
    std::int64_t next = 0;   // earliest cycle the next beat can leave the DMA
    std::int64_t aw = 0;     // cycle of the last AW
    std::vector<std::int64_t> sent;  // cycle each row's last beat left the DMA (its credit)
  };
  StoreRun st_;
  std::int64_t store_free_ = 0, dw_free_ = 0, last_b_ = 0;
  std::vector<std::int64_t> write_b_;  // response cycle of every write burst, at the DMA
  std::array<std::int64_t, 2> w_mem_{{-NEVER, -NEVER}};  // memory cycles of the last two beats

  std::array<std::vector<std::int64_t>, 4> push_;
  std::array<std::size_t, 4> popped_{};
  std::int64_t first_beat_ = NEVER, last_beat_ = 0, end_ = 0;
};

// The prediction for a command stream at `cmd_addr`; nothing if it takes more than `limit` cycles.
std::optional<CyclePrediction> predict(
    const DeviceCaps& caps, const Geometry& g, const std::vector<Command>& cmds,
    std::uint64_t cmd_addr, const PerfModelParams& params,
    double limit = std::numeric_limits<double>::infinity()) {
  CyclePrediction p;
  const double bw = params.dma_bytes_per_cycle > 0 ? params.dma_bytes_per_cycle : caps.axi_bytes();
  const int lat = caps.latency();
  PerfSim sim(caps, cmds, cmd_addr, params);
  switch (sim.run(limit)) {
    case PerfSim::Outcome::DONE:
      break;
    case PerfSim::Outcome::OVER_LIMIT:
      return std::nullopt;
    case PerfSim::Outcome::STUCK:
      throw std::logic_error("cycle model: the command stream cannot finish (token deadlock)");
  }
  p.total = static_cast<std::uint64_t>(sim.total());
  const std::int64_t first = std::min(sim.first_beat(), sim.total());
  const std::int64_t last = std::max(first, std::min(sim.last_beat() + 1, sim.total()));
  p.startup = static_cast<std::uint64_t>(first);
  p.steady = static_cast<std::uint64_t>(last - first);
  p.tail = static_cast<std::uint64_t>(sim.total() - last);
  double beats = 0, bubbles = 0, bytes = 0;
  for (const Command& c : cmds) {
    bytes += isa::COMMAND_BYTES;
    if (c.opcode == Opcode::LOAD) bytes += static_cast<double>(c.rows) * c.bytes_per_row;
    if (c.opcode == Opcode::STORE) bytes += static_cast<double>(c.rows) * g.out_row_bytes;
    if (c.opcode != Opcode::COMPUTE) continue;
    beats += c.beats;
    if (c.beats < lat + caps.rows) bubbles += (lat + caps.rows - c.beats) / 2.0;
  }
  p.bubble_cycles = static_cast<std::uint64_t>(std::llround(bubbles));
  p.compute_cycles = static_cast<std::uint64_t>(std::llround(beats + bubbles)) +
                     static_cast<std::uint64_t>(caps.rows + lat);
  p.dma_cycles = static_cast<std::uint64_t>(std::llround(bytes / bw));
  const double peak =
      static_cast<double>(caps.rows) * caps.cols * (g.dense ? caps.pattern.n : caps.pattern.m);
  p.ideal_cycles =
      static_cast<std::uint64_t>(std::ceil(static_cast<double>(g.rows) * static_cast<double>(g.k) *
                                           static_cast<double>(g.n_out) / peak));
  return p;
}

// --- plan ranking without a memory ---------------------------------------------------------------
//
// When the caller does not say which memory the program will run with (GemmOptions::memory),
// plans are ranked by this estimate, as they always were, so that such callers keep their
// command streams. Ranking by predict() for a guessed memory (the PerfModelParams defaults)
// instead picks plans that are faster on memories like the guess but can be much slower on
// others: e.g. activation LOADs of one entry per row make 4-beat bursts, which 16 bursts in
// flight cannot stream at a read latency of 100. The program runs as a sequence of
// windows, one per weight batch: while the array computes the tiles of batch j, the DMA brings in
// what batch j+1 needs and writes back finished blocks. A window takes max(compute, DMA) cycles:
//   compute = its beats (one per cycle) plus a bubble per tile in the spirit of
//             docs/architecture.md section 8: a tile of T < L + Rows beats is taken not to hide
//             the next tile's weight load, and to cost on average (L + Rows - T) / 2 idle cycles
//             (a rough bound: the array's own limit is W + Rows, the engine's 2*Rows + Cols + 5);
//   DMA     = (bytes of the LOADs and STOREs issued in it + 32 per command fetched) / bandwidth.
// Before the first beat: the read latency, the commands and data the first tile needs, and the
// Rows cycles of its weight load into the array. After the last beat: the array latency L, the
// STOREs that follow, and the write latency. (It ignores the command fetch, the store engine's
// per-row cost and the DMA's burst limits, so its cycles are no prediction.)
std::uint64_t window_estimate(const DeviceCaps& caps, const Geometry& g, const Emitted& prog,
                              const PerfModelParams& params) {
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
  double startup_bytes = 0, tail_bytes = 0;
  std::vector<double> w_compute, w_dma;
  for (std::size_t i = 0; i < prog.cmds.size(); ++i) {
    const Command& c = prog.cmds[i];
    const double bytes = bytes_of(c) + isa::COMMAND_BYTES;
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
      w_compute[static_cast<std::size_t>(w)] += t + bubble;
    }
  }
  double steady = 0;
  for (std::size_t w = 0; w < w_compute.size(); ++w)
    steady += std::max(w_compute[w], w_dma[w] / bw);
  return static_cast<std::uint64_t>(
             std::llround(params.dma_read_latency + startup_bytes / bw + caps.rows)) +
         static_cast<std::uint64_t>(std::llround(steady)) +
         static_cast<std::uint64_t>(
             std::llround(lat + tail_bytes / bw + params.dma_write_latency));
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

// The plan (options.plan, or the best candidate) and its program with dummy addresses; with
// `want_cycles`, also its prediction for `params`. Candidates are ranked for options.memory by
// predict() when it is given, else by window_estimate() with `params`.
Chosen choose_plan(const DeviceCaps& caps, const Geometry& g, const GemmOptions& options,
                   const PerfModelParams& params, bool want_cycles) {
  if (options.plan) {
    const std::string problem = plan_problem(caps, g, *options.plan);
    if (!problem.empty()) {
      throw std::invalid_argument("tiling plan " + options.plan->describe() + " does not fit " +
                                  caps.describe() + ": " + problem);
    }
    Chosen c;
    c.plan = *options.plan;
    c.program = Emitter(caps, g, c.plan, dummy_addresses()).run();
    if (want_cycles) c.cycles = *predict(caps, g, c.program.cmds, 0, params);
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
  // Build the most promising plans; the best score wins: cycles plus a tenth of the DMA time, so
  // that among plans about as fast the one that moves fewer bytes wins (the bus is shared and
  // bytes cost energy) without giving up real speed. A simulation stops as soon as its plan can
  // no longer beat the best score so far.
  const PerfModelParams& rank_params = options.memory ? *options.memory : params;
  const double bw = rank_params.dma_bytes_per_cycle > 0 ? rank_params.dma_bytes_per_cycle
                                                        : caps.axi_bytes();
  Chosen best;
  double best_score = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < ranked.size() && i < PLANS_BUILT; ++i) {
    Chosen c;
    c.plan = plans[ranked[i].second];
    c.program = Emitter(caps, g, c.plan, dummy_addresses()).run();
    const double bytes_term = 0.1 * static_cast<double>(c.program.stats.dma_bytes()) / bw;
    double cycles = 0;
    if (options.memory) {
      const std::optional<CyclePrediction> p =
          predict(caps, g, c.program.cmds, 0, rank_params, best_score - bytes_term);
      if (!p) continue;
      cycles = static_cast<double>(p->total);
    } else {
      cycles = static_cast<double>(window_estimate(caps, g, c.program, rank_params));
    }
    if (cycles + bytes_term < best_score) {
      best_score = cycles + bytes_term;
      best = std::move(c);
    }
  }
  if (want_cycles) best.cycles = *predict(caps, g, best.program.cmds, 0, params);
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
  Chosen c = choose_plan(caps, g, options, params, true);
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
  Chosen chosen = choose_plan(caps, g, options, PerfModelParams{}, false);
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
  return *predict(caps_, g, commands_, cmd_addr_, params);
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
