// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// The binary layout the trained-model files share (save_mlp, save_cnn): an 8-byte magic, a
// version, a model-specific header of 32-bit words, the layer count, then per layer N_out, K, a
// mask flag, the weights, the bias and the mask bytes, all little-endian.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "nmsa/mlp.hpp"

namespace nmsa {

// The whole file: magic (8 bytes), version, `header` words, then the layers of `model`.
std::string model_file_bytes(const char (&magic)[8], std::uint32_t version,
                             const std::vector<std::uint32_t>& header, const Mlp& model);

// Reads such a file; every error is a std::runtime_error starting with the path.
class ModelFileReader {
 public:
  // Reads the file and checks its magic and version; `kind` names the model in the errors
  // ("not an nmsa MLP file").
  ModelFileReader(const std::string& path, const char (&magic)[8], std::uint32_t version,
                  const char* kind);
  std::uint32_t u32(const char* what);
  // The layers. With `chained`, every layer's K must be the previous layer's N_out (an MLP).
  Mlp layers(bool chained);
  void expect_end();
  [[noreturn]] void fail(const std::string& what) const;

 private:
  void need(std::size_t n, const std::string& what);
  std::string path_;
  std::string bytes_;
  std::size_t at_ = 0;
};

}  // namespace nmsa
