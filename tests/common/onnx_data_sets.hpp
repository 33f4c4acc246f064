// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// The data sets of an ONNX backend test directory (test_data_set_*/input_<i>.pb, output_<i>.pb),
// for the node tests and the conformance run.
#pragma once

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "nmsa/onnx_model.hpp"

namespace nmsa::testing {

struct OnnxDataSet {
  std::vector<Tensor> inputs;
  std::vector<Tensor> outputs;
};

// In directory order; throws std::runtime_error naming the file for an unreadable tensor.
inline std::vector<OnnxDataSet> load_onnx_data_sets(const std::string& dir) {
  namespace fs = std::filesystem;
  std::vector<fs::path> set_dirs;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.is_directory() && entry.path().filename().string().rfind("test_data_set_", 0) == 0) {
      set_dirs.push_back(entry.path());
    }
  }
  std::sort(set_dirs.begin(), set_dirs.end());
  std::vector<OnnxDataSet> sets;
  for (const fs::path& s : set_dirs) {
    OnnxDataSet d;
    const auto file = [&](const char* kind, int i) {
      return s / (kind + std::to_string(i) + ".pb");
    };
    for (int i = 0; fs::exists(file("input_", i)); ++i) {
      d.inputs.push_back(load_onnx_tensor(file("input_", i).string()).tensor);
    }
    for (int i = 0; fs::exists(file("output_", i)); ++i) {
      d.outputs.push_back(load_onnx_tensor(file("output_", i).string()).tensor);
    }
    sets.push_back(std::move(d));
  }
  return sets;
}

}  // namespace nmsa::testing
