// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// libFuzzer target: any bytes as an ONNX model, and as one ONNX tensor. Rejections are
// std::runtime_error or std::invalid_argument; anything else is a finding.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "nmsa/onnx_model.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    (void)nmsa::parse_onnx_model(bytes, "fuzz.onnx");
  } catch (const std::runtime_error&) {
  } catch (const std::invalid_argument&) {
  }
  try {
    (void)nmsa::parse_onnx_tensor(bytes, "fuzz.pb");
  } catch (const std::runtime_error&) {
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
