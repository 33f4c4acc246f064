// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// The host memory's bandwidth as the cycle model sees it: one token bucket, from the read side
// (Bandwidth) and from the write side, which shares it with the reads (WriteBandwidth).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <deque>
#include <limits>
#include <utility>

namespace nmsa::cycle_model_detail {

// A cycle that never comes: an event that cannot happen, or one whose cycle is not known yet.
constexpr std::int64_t NEVER = std::numeric_limits<std::int64_t>::max() / 4;

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
  // `channel`: the most bytes per cycle the write channel moves alone (a beat, or less under
  // random back-pressure); applied when the bandwidth is not shared.
  WriteBandwidth(double rate, double beat, double channel)
      : rate_(rate), beat_(beat), cap_(rate + 2 * beat), level_(rate + 2 * beat),
        shared_(rate < 2 * beat), alone_(std::min(rate, channel), beat) {}

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

}  // namespace nmsa::cycle_model_detail
