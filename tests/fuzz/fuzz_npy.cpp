// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// libFuzzer target: any bytes as an .npy file. The reader may reject them, with
// std::runtime_error or std::invalid_argument; any other way out (a crash, a sanitizer report, an
// allocation beyond libFuzzer's -rss_limit_mb, another exception type) is a finding.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "nmsa/npy.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::vector<std::uint8_t> file(data, data + size);
  try {
    const nmsa::NpyArray a = nmsa::parse_npy(file, "fuzz.npy");
    const std::int64_t count = a.element_count();
    const std::size_t item = nmsa::npy_item_size(a.dtype);
    if (a.bytes.size() != static_cast<std::size_t>(count) * item) __builtin_trap();
    (void)a.rows();
    (void)a.cols();
    (void)nmsa::serialize_npy(a);
  } catch (const std::runtime_error&) {
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
