// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
#include "nmsa/progress.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace nmsa {

ProgressBar::ProgressBar(std::string label, std::uint64_t total)
    : label_(std::move(label)), total_(std::max<std::uint64_t>(total, 1)),
      enabled_(isatty(STDERR_FILENO) != 0) {}

ProgressBar::~ProgressBar() { finish(); }

void ProgressBar::update(std::uint64_t done) {
  if (!enabled_ || finished_) return;
  const int percent = static_cast<int>(std::min<std::uint64_t>(100, done * 100 / total_));
  if (percent == last_percent_) return;
  last_percent_ = percent;
  constexpr int kWidth = 30;
  const int filled = percent * kWidth / 100;
  std::fprintf(stderr, "\r%-24s [%s%s] %3d%%", label_.c_str(), std::string(filled, '#').c_str(),
               std::string(kWidth - filled, '.').c_str(), percent);
  std::fflush(stderr);
}

void ProgressBar::finish() {
  if (!enabled_ || finished_) return;
  update(total_);
  std::fprintf(stderr, "\n");
  finished_ = true;
}

}  // namespace nmsa
