// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// Error-message checks of the software tests: a call must throw, and its message must name what
// is wrong, e.g. the file and the offending key.
#pragma once

#include <gtest/gtest.h>

#include <exception>
#include <functional>
#include <string>
#include <vector>

namespace nmsa::testing {

inline void expect_throw_containing(const std::function<void()>& f,
                                    const std::vector<std::string>& needles) {
  try {
    f();
    ADD_FAILURE() << "no exception; expected one containing '" << needles.front() << "'";
  } catch (const std::exception& e) {
    for (const auto& needle : needles) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos)
          << "message: " << e.what() << "\nexpected to contain: " << needle;
    }
  }
}

inline void expect_throw_containing(const std::function<void()>& f, const std::string& needle) {
  expect_throw_containing(f, std::vector<std::string>{needle});
}

}  // namespace nmsa::testing
