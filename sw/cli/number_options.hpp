// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// CLI11 validators for the numeric options of nmsa's programs (the nmsa CLI, nmsa_demo): the whole
// text must be a number, in range, and a bad value gets a message that says which of the two it
// is ("--k: 'x' is not a number", "--m: 0 is outside [1, 65535]"), which CLI11's own Range does
// not (it calls "x" out of range and parses integers as floats).
#pragma once

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>

#include <CLI/CLI.hpp>

namespace nmsa::cli {

inline CLI::Validator integer_in(long long lo, long long hi) {
  const std::string range = "[" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  return CLI::Validator(
      [lo, hi, range](std::string& text) -> std::string {
        char* end = nullptr;
        errno = 0;
        const long long v = std::strtoll(text.c_str(), &end, 10);
        if (text.empty() || end != text.c_str() + text.size() || errno == ERANGE) {
          return "'" + text + "' is not a number";
        }
        if (v < lo || v > hi) return text + " is outside " + range;
        return "";
      },
      "INT in " + range);
}

inline CLI::Validator number_in(double lo, double hi) {
  const std::string range = "[" + CLI::detail::to_string(lo) + ", " + CLI::detail::to_string(hi) +
                            "]";
  return CLI::Validator(
      [lo, hi, range](std::string& text) -> std::string {
        char* end = nullptr;
        errno = 0;
        const double v = std::strtod(text.c_str(), &end);
        if (text.empty() || end != text.c_str() + text.size() || errno == ERANGE ||
            !std::isfinite(v)) {
          return "'" + text + "' is not a number";
        }
        if (v < lo || v > hi) return text + " is outside " + range;
        return "";
      },
      "NUMBER in " + range);
}

// A path or a name given explicitly as '': an error, never taken for the option's absence.
inline CLI::Validator non_empty() {
  return CLI::Validator(
      [](std::string& text) -> std::string { return text.empty() ? "must not be empty" : ""; },
      "");
}

}  // namespace nmsa::cli
