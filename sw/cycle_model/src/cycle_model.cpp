// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// predict_stream_cycles() replays the command stream on a model of the device at command and
// burst granularity: an event-driven simulation of the command processor, the three engines, the
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
//                  tile two before issued its last beat ROWS + COLS + 3 cycles ago); ROWS + 3
//                  cycles later the tile is ready, and the streamer starts it in the cycle after
//                  the previous tile's last issue (no bubble). A beat that accumulates into a row
//                  issued in the last AccHazard - 1 cycles waits. A beat enters the array 3 cycles
//                  after its issue (read, entry and lane registers); tokens are pushed when the
//                  tile's last result is written into the accumulators, ARRAY_LATENCY + 3 cycles
//                  after its last beat entered.
//   store engine   (nmsa_store) its write request the cycle after it starts; once the DMA takes
//                  it, a row is read every Groups = COLS / EPI_LANES cycles while one of its
//                  STORE_ROWS credits is free (a credit comes back with a row's last beat), and
//                  reaches the finished-row FIFO Groups + EPI_LATENCY + 3 cycles after its read.
//                  Each beat leaves the FIFO into a register slice (two beats) and from the next
//                  cycle on goes to the DMA after its burst's AW (with at most MAX_OUTSTANDING
//                  bursts awaiting their response), through the W register slice to the memory
//                  as its bandwidth allows (the slice holds two beats); a response comes back
//                  through the B slice WriteLatency + 1 cycles after the burst's last beat reached
//                  the memory. The STORE finishes 2 cycles after its last response.
// Not modelled: reads delayed by writes that drained the bandwidth before them, which only
// happens below one beat per cycle; the host memory's own limits on bursts in flight (assumed
// at least the DMA's). Random back-pressure only as an average: each direction's beats limited
// to channel_beat_rate per cycle (the writes only where they do not share the bandwidth with
// the reads), evenly spread, and no time lost to a withheld AW, AR or B.
#include "nmsa/cycle_model.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "memory_bandwidth.hpp"

namespace nmsa {

namespace {

using namespace cycle_model_detail;

// Cycles from a beat's issue to the accumulator write of its result row (nmsa_pkg::
// AccHazardCycles): a beat that accumulates into a row issued fewer cycles ago waits.
constexpr std::int64_t ACC_HAZARD_CYCLES = 4;
// Cycles by which the run control sees the device idle after it is (nmsa_top's all_idle_q).
constexpr std::int64_t IDLE_REGISTER_CYCLES = 1;
// Cycles from a beat's issue to its entry into the array: the activation scratchpad's read, the
// entry register and the lane register (nmsa_compute's streamer).
constexpr std::int64_t ISSUE_TO_ARRAY_CYCLES = 3;

// Bytes of one STORE row: Cols INT8 values, or Cols INT32 accumulators.
int store_row_bytes(const DeviceCaps& caps, const Command& c) {
  return caps.cols * (c.int32_output ? 4 : 1);
}

// Per-command times of one simulated run.
struct CommandTimes {
  std::int64_t dispatch = NEVER;  // handed to its engine's queue
  std::int64_t accept = NEVER;    // taken by its engine (tokens popped)
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
    if (!(p.channel_beat_rate > 0 && p.channel_beat_rate <= 1)) {
      throw std::invalid_argument("cycle model: channel_beat_rate must be in (0, 1]");
    }
    // Under random back-pressure each direction moves a beat in channel_beat_rate of the cycles,
    // and a bandwidth the two directions share loses the cycles in which neither can use it.
    const double channel = p.channel_beat_rate * axi_;  // one direction's bytes per cycle
    const double shared = bw < 2 * axi_ ? std::min(bw, std::max(bw * p.channel_beat_rate, channel))
                                         : bw;
    read_bw_ = Bandwidth(std::min(shared, channel), axi_);
    write_bw_ = WriteBandwidth(shared, axi_, channel);
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

  // The run control sees the last engine idle a cycle late (nmsa_top registers all_idle).
  std::int64_t total() const { return end_ + 1 + IDLE_REGISTER_CYCLES; }
  std::int64_t first_beat() const { return first_beat_; }
  std::int64_t last_beat() const { return last_beat_; }
  const std::vector<std::int64_t>& store_ends() const { return store_ends_; }

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
    // A beat's result is written into the accumulators ARRAY_LATENCY + 3 cycles after it
    // entered the array.
    const std::int64_t entered = last + ISSUE_TO_ARRAY_CYCLES;
    const std::int64_t done = entered + caps_.latency() + 3;
    // The bank is read until the bottom-right PE selected the last beat's weights.
    bank_free_[static_cast<std::size_t>(ci_ % 2)] = entered + (caps_.rows + caps_.cols - 1) + 1;
    if (c.push_prev) push(CL, done);
    if (c.push_next) push(CS, done);
    first_beat_ = std::min(first_beat_, first + ISSUE_TO_ARRAY_CYCLES);
    last_beat_ = std::max(last_beat_, entered);
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
    const int row_bytes = store_row_bytes(caps_, c);
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
          st_.fifo_next = std::max(st_.fifo_next, read + groups + caps_.epi_latency + 3);
        }
        // The AW of a burst goes out one cycle after the previous one, once fewer than
        // MAX_OUTSTANDING bursts wait for their response; its W beats follow it.
        st_.burst_left = std::min(st_.left, caps_.max_burst_beats);
        st_.aw += 1;
        const std::size_t nb = write_b_.size();
        if (nb >= bursts) st_.aw = std::max(st_.aw, write_b_[nb - bursts] + 1);
        st_.next = std::max(st_.next, st_.aw + 1);
      }
      // Both slices hold two beats: a beat enters one once the one two before has left it. A
      // beat leaves the row FIFO in cycle f and the DMA in cycle w.
      const std::int64_t f = std::max(st_.fifo_next, dw_slice_out_[0] + 1);
      const std::int64_t w = std::max({st_.next, f + 1, w_mem_[0] + 1});
      const std::int64_t m = write_bw_.place(w + 1, limit);
      if (m >= NEVER) return;
      w_mem_[0] = w_mem_[1];
      w_mem_[1] = m;
      dw_slice_out_[0] = dw_slice_out_[1];
      dw_slice_out_[1] = w;
      st_.fifo_next = f + 1;
      st_.next = w + 1;
      --st_.left;
      if (--st_.burst_left == 0) {
        // The memory's response WriteLatency after the burst's last beat, one per cycle, and
        // one more cycle through the B slice.
        last_b_ = std::max(m + std::max(1, p_.dma_write_latency) + 1, last_b_ + 1);
        write_b_.push_back(last_b_);
      }
      if (st_.left == 0) {
        st_.sent.push_back(f);
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
    store_ends_.push_back(done + 2 + IDLE_REGISTER_CYCLES);  // total() if the stream ended here
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
    // The next beat leaves the DMA the cycle after it leaves the row FIFO at the earliest, and
    // reaches the memory the cycle after that.
    return std::max(std::max(st_.next, st_.fifo_next + 1) + 1, write_bw_.decided()) - 1;
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
  WriteBandwidth write_bw_{0, 8, 8};

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
    std::int64_t fifo_next = 0;  // earliest cycle the next beat can leave the row FIFO
    std::int64_t next = 0;       // earliest cycle the next beat can leave the DMA
    std::int64_t aw = 0;     // cycle of the last AW
    std::vector<std::int64_t> sent;  // cycle each row's last beat left the row FIFO (its credit)
  };
  StoreRun st_;
  std::int64_t store_free_ = 0, dw_free_ = 0, last_b_ = 0;
  std::vector<std::int64_t> write_b_;  // response cycle of every write burst, at the DMA
  std::array<std::int64_t, 2> w_mem_{{-NEVER, -NEVER}};  // memory cycles of the last two beats
  std::array<std::int64_t, 2> dw_slice_out_{{-NEVER, -NEVER}};  // DMA cycles of the last two

  std::array<std::vector<std::int64_t>, 4> push_;
  std::array<std::size_t, 4> popped_{};
  std::int64_t first_beat_ = NEVER, last_beat_ = 0, end_ = 0;
  std::vector<std::int64_t> store_ends_;
};

}  // namespace

std::uint64_t payload_bytes(const DeviceCaps& caps, const Command& c) {
  switch (c.opcode) {
    case Opcode::LOAD:
      return std::uint64_t{c.rows} * c.bytes_per_row;
    case Opcode::STORE:
      return std::uint64_t{c.rows} * static_cast<std::uint64_t>(store_row_bytes(caps, c));
    case Opcode::COMPUTE:
      break;
  }
  return 0;
}

std::optional<CyclePrediction> predict_stream_cycles(
    const DeviceCaps& caps, const std::vector<GemmShape>& gemms, const std::vector<Command>& cmds,
    std::uint64_t cmd_addr, const PerfModelParams& params, double limit) {
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
  for (const std::int64_t e : sim.store_ends()) {
    p.store_ends.push_back(static_cast<std::uint64_t>(e));
  }
  double beats = 0, bubbles = 0, bytes = 0;
  for (const Command& c : cmds) {
    bytes += static_cast<double>(isa::COMMAND_BYTES + payload_bytes(caps, c));
    if (c.opcode != Opcode::COMPUTE) continue;
    beats += c.beats;
    if (c.beats < lat + caps.rows) bubbles += (lat + caps.rows - c.beats) / 2.0;
  }
  p.bubble_cycles = static_cast<std::uint64_t>(std::llround(bubbles));
  p.compute_cycles = static_cast<std::uint64_t>(std::llround(beats + bubbles)) +
                     static_cast<std::uint64_t>(caps.rows + lat);
  p.dma_cycles = static_cast<std::uint64_t>(std::llround(bytes / bw));
  for (const GemmShape& g : gemms) {
    const double peak =
        static_cast<double>(caps.rows) * caps.cols * (g.dense ? caps.pattern.n : caps.pattern.m);
    p.ideal_cycles += static_cast<std::uint64_t>(
        std::ceil(static_cast<double>(g.rows) * static_cast<double>(g.k) *
                  static_cast<double>(g.n_out) / peak));
  }
  return p;
}

std::string CyclePrediction::describe() const {
  std::ostringstream s;
  s << total << " cycles (startup " << startup << ", steady " << steady << ", tail " << tail
    << "; compute " << compute_cycles << " incl. " << bubble_cycles << " bubbles, DMA "
    << dma_cycles << ", ideal " << ideal_cycles << ", utilization " << utilization() << ")";
  return s.str();
}

}  // namespace nmsa
