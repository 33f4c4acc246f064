// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
#include "command_emitter.hpp"

#include <algorithm>
#include <array>
#include <deque>
#include <limits>
#include <stdexcept>
#include <string>

#include "nmsa/functional_model.hpp"

namespace nmsa::compiler_detail {

namespace {

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
      const std::uint64_t host = addr_.x + row0 * g_.x_stride +
                                 static_cast<std::uint64_t>(kb) *
                                     static_cast<std::uint64_t>(p_.chunks_per_act_block) *
                                     static_cast<std::uint64_t>(caps_.act_entry_bytes());
      const auto entry = static_cast<std::uint16_t>(
          s * slot_entries_ + static_cast<std::int64_t>(slot.rows_loaded) * cb);
      add(Command::load(LoadTarget::ACTIVATIONS, entry, static_cast<std::uint16_t>(n),
                        static_cast<std::uint16_t>(row_bytes), host, g_.x_stride),
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

}  // namespace

Emitted emit_commands(const DeviceCaps& caps, const Geometry& g, const TilingPlan& p,
                      const Addresses& addr) {
  return Emitter(caps, g, p, addr).run();
}

}  // namespace nmsa::compiler_detail
