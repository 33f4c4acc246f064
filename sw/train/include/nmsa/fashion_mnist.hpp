// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// Fashion-MNIST in the IDX format of LeCun's MNIST files, as Debian's dataset-fashion-mnist
// package ships it (gzipped, under /usr/share/datasets/fashion-mnist). Plain and gzipped files
// are both read: zlib passes an uncompressed file through unchanged.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nmsa/types.hpp"

namespace nmsa {

inline constexpr const char* kFashionMnistDir = "/usr/share/datasets/fashion-mnist";
inline constexpr const char* kFashionMnistPackage = "dataset-fashion-mnist";

enum class FashionMnistSplit { kTrain, kTest };

struct LabeledImages {
  MatrixF images;                     // [n x rows*cols], pixel / 255 in [0, 1], row-major pixels
  std::vector<std::uint8_t> labels;   // n class indices
  int rows = 0;
  int cols = 0;
};

// Parses the bytes of an IDX3 ubyte image file (magic 0x00000803). `name` is the file name used
// in error messages. Throws std::runtime_error on a wrong magic, a truncated or oversized body, or
// zero-sized dimensions.
MatrixF parse_idx_images(const std::vector<std::uint8_t>& bytes, const std::string& name,
                         int* rows = nullptr, int* cols = nullptr);

// Parses the bytes of an IDX1 ubyte label file (magic 0x00000801); same errors as above.
std::vector<std::uint8_t> parse_idx_labels(const std::vector<std::uint8_t>& bytes,
                                           const std::string& name);

// The whole content of a file, gunzipped if it is gzip. Throws std::runtime_error naming the file
// when it cannot be opened or the gzip stream is corrupt or truncated.
std::vector<std::uint8_t> read_maybe_gzipped(const std::string& path);

// Reads an image file and its label file and checks that they hold the same number of items.
LabeledImages load_idx_pair(const std::string& images_path, const std::string& labels_path);

// Loads one split from `dir` ("train-images-idx3-ubyte[.gz]" / "t10k-..."). Throws
// std::runtime_error when dir does not exist (naming the Debian package to install), when a file
// is missing, or when a file is malformed; the labels are also checked to be < 10.
LabeledImages load_fashion_mnist(const std::string& dir = kFashionMnistDir,
                                 FashionMnistSplit split = FashionMnistSplit::kTest);

}  // namespace nmsa
