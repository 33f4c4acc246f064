// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// libFuzzer target: any bytes as a report.json, read as nmsa gate reads it (the file, then its
// three figures). The reader takes a path, so each input goes through one file of its own.
// Rejections are std::runtime_error; anything else is a finding.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "report_reader.hpp"

namespace {

std::string scratch_path() {
  return "/tmp/nmsa_fuzz_report_" + std::to_string(::getpid()) + ".json";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string path = scratch_path();
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return 0;
  std::fwrite(data, 1, size, f);
  std::fclose(f);
  try {
    const nmsa::report_detail::ReadReport r = nmsa::report_detail::read_report_json(path);
    (void)nmsa::report_detail::read_accuracy(r.json, r.file, "sparse_int8_accuracy");
    (void)nmsa::report_detail::read_speedup(r.json, r.file, "effective_speedup");
    (void)nmsa::report_detail::read_cycles(r.json, r.file, "latency_cycles_p99");
    (void)nmsa::report_detail::read_optional_number(r.json, r.file, "test_images");
  } catch (const std::runtime_error&) {
  }
  return 0;
}
