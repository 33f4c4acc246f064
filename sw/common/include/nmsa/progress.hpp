// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// A one-line progress bar on stderr for long runs; silent when stderr is not a terminal, so logs
// and pipes stay clean.
#pragma once

#include <cstdint>
#include <string>

namespace nmsa {

class ProgressBar {
 public:
  ProgressBar(std::string label, std::uint64_t total);
  ~ProgressBar();
  void update(std::uint64_t done);
  void finish();

 private:
  std::string label_;
  std::uint64_t total_;
  bool enabled_;
  bool finished_ = false;
  int last_percent_ = -1;
};

}  // namespace nmsa
