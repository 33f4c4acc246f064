// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// Command-line options of nmsa's programs (the nmsa CLI, nmsa_demo): --key value options and
// --flag switches, checked against what the command accepts, with numbers parsed and range-checked
// so that bad input ends in a UsageError naming the option (exit code 2 in both programs).
#pragma once

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace nmsa::cli {

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// --key value options and --flag switches, checked against what the subcommand accepts.
class Options {
 public:
  Options(int argc, char** argv, int first, const std::set<std::string>& with_value,
          const std::set<std::string>& flags) {
    for (int i = first; i < argc; ++i) {
      const std::string arg = argv[i];
      if (arg == "--help" || arg == "-h") {
        help_ = true;
      } else if (with_value.count(arg)) {
        if (i + 1 >= argc) throw UsageError(arg + " needs a value");
        values_[arg] = argv[++i];
      } else if (flags.count(arg)) {
        values_[arg] = "1";
      } else if (arg.rfind("--", 0) == 0) {
        throw UsageError("unknown option " + arg);
      } else {
        positional_.push_back(arg);
      }
    }
  }
  bool help() const { return help_; }
  bool has(const std::string& key) const { return values_.count(key) != 0; }
  std::string get(const std::string& key, const std::string& fallback) const {
    const auto it = values_.find(key);
    return it == values_.end() ? fallback : it->second;
  }
  long get_int(const std::string& key, long fallback, long lo, long hi) const {
    if (!has(key)) return fallback;
    const std::string text = values_.at(key);
    std::size_t used = 0;
    long v = 0;
    try {
      v = std::stol(text, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != text.size()) throw UsageError(key + " '" + text + "' is not a number");
    if (v < lo || v > hi) {
      throw UsageError(key + " " + text + " is outside [" + std::to_string(lo) + ", " +
                       std::to_string(hi) + "]");
    }
    return v;
  }
  double get_double(const std::string& key, double fallback, double lo, double hi) const {
    if (!has(key)) return fallback;
    const std::string text = values_.at(key);
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(text.c_str(), &end);
    if (text.empty() || end != text.c_str() + text.size() || errno == ERANGE || !std::isfinite(v)) {
      throw UsageError(key + " '" + text + "' is not a number");
    }
    if (v < lo || v > hi) {
      throw UsageError(key + " " + text + " is outside [" + std::to_string(lo) + ", " +
                       std::to_string(hi) + "]");
    }
    return v;
  }
  const std::vector<std::string>& positional() const { return positional_; }

 private:
  bool help_ = false;
  std::map<std::string, std::string> values_;
  std::vector<std::string> positional_;
};

}  // namespace nmsa::cli
