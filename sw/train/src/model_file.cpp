// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
#include "model_file.hpp"

#include <cstring>
#include <limits>
#include <stdexcept>

#include "nmsa/file_io.hpp"

namespace nmsa {

namespace {

constexpr std::uint32_t kMaxDim = 1u << 20;
constexpr std::uint32_t kMaxLayers = 64;

static_assert(sizeof(float) == 4 && std::numeric_limits<float>::is_iec559);

void require_little_endian_host() {
  const std::uint32_t one = 1;
  unsigned char c = 0;
  std::memcpy(&c, &one, 1);
  if (c != 1) throw std::runtime_error("model files: big-endian host unsupported");
}

void put_u32(std::string& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

void put_floats(std::string& out, const float* p, std::size_t n) {
  out.append(reinterpret_cast<const char*>(p), n * 4);
}

}  // namespace

std::string model_file_bytes(const char (&magic)[8], std::uint32_t version,
                             const std::vector<std::uint32_t>& header, const Mlp& model) {
  require_little_endian_host();
  std::string out(magic, sizeof magic);
  put_u32(out, version);
  for (const std::uint32_t word : header) put_u32(out, word);
  put_u32(out, static_cast<std::uint32_t>(model.layers.size()));
  for (const auto& l : model.layers) {
    put_u32(out, static_cast<std::uint32_t>(l.w.rows()));
    put_u32(out, static_cast<std::uint32_t>(l.w.cols()));
    put_u32(out, l.mask.size() != 0 ? 1u : 0u);
    put_floats(out, l.w.data(), static_cast<std::size_t>(l.w.size()));
    put_floats(out, l.b.data(), static_cast<std::size_t>(l.b.size()));
    for (Eigen::Index j = 0; j < l.mask.size(); ++j)
      out.push_back(l.mask.data()[j] != 0.0f ? 1 : 0);
  }
  return out;
}

ModelFileReader::ModelFileReader(const std::string& path, const char (&magic)[8],
                                 std::uint32_t version, const char* kind)
    : path_(path) {
  require_little_endian_host();
  // Through read_regular_file: a device or FIFO given as a model would be read until memory ran out.
  bytes_ = read_regular_file(path);
  need(sizeof magic, "the magic");
  if (std::memcmp(bytes_.data(), magic, sizeof magic) != 0) {
    fail(std::string("not an nmsa ") + kind + " file (wrong magic)");
  }
  at_ = sizeof magic;
  const std::uint32_t v = u32("the version");
  if (v != version) {
    fail("unsupported version " + std::to_string(v) + " (this build reads " +
         std::to_string(version) + ")");
  }
}

void ModelFileReader::fail(const std::string& what) const {
  throw std::runtime_error(path_ + ": " + what);
}

void ModelFileReader::need(std::size_t n, const std::string& what) {
  if (bytes_.size() - at_ < n) {
    fail("truncated in " + what + " at byte " + std::to_string(at_) + " (file is " +
         std::to_string(bytes_.size()) + " bytes)");
  }
}

std::uint32_t ModelFileReader::u32(const char* what) {
  need(4, what);
  std::uint32_t v = 0;
  for (int i = 0; i < 4; ++i)
    v |= std::uint32_t{static_cast<unsigned char>(bytes_[at_ + i])} << (8 * i);
  at_ += 4;
  return v;
}

Mlp ModelFileReader::layers(bool chained) {
  const std::uint32_t n_layers = u32("the layer count");
  if (n_layers == 0 || n_layers > kMaxLayers) {
    fail("implausible layer count " + std::to_string(n_layers));
  }
  Mlp m;
  for (std::uint32_t i = 0; i < n_layers; ++i) {
    const std::string li = "layer " + std::to_string(i);
    const std::uint32_t rows = u32("a layer header");
    const std::uint32_t cols = u32("a layer header");
    const std::uint32_t has_mask = u32("a layer header");
    if (rows == 0 || cols == 0 || rows > kMaxDim || cols > kMaxDim || has_mask > 1) {
      fail(li + ": implausible header " + std::to_string(rows) + "x" + std::to_string(cols) +
           " mask flag " + std::to_string(has_mask));
    }
    if (chained && i > 0 && cols != m.layers.back().w.rows()) {
      fail(li + " has K = " + std::to_string(cols) + " but the previous layer has " +
           std::to_string(m.layers.back().w.rows()) + " outputs");
    }
    const std::size_t n = std::size_t{rows} * cols;
    need(4 * (n + rows) + (has_mask ? n : 0), li + " data");
    MlpLayer l;
    l.w.resize(rows, cols);
    std::memcpy(l.w.data(), bytes_.data() + at_, 4 * n);
    at_ += 4 * n;
    l.b.resize(rows);
    std::memcpy(l.b.data(), bytes_.data() + at_, 4 * std::size_t{rows});
    at_ += 4 * std::size_t{rows};
    if (has_mask) {
      l.mask.resize(rows, cols);
      for (std::size_t j = 0; j < n; ++j) {
        const auto v = static_cast<unsigned char>(bytes_[at_ + j]);
        if (v > 1) fail(li + ": mask byte " + std::to_string(v) + " is not 0 or 1");
        l.mask.data()[j] = static_cast<float>(v);
      }
      at_ += n;
    }
    if (!l.w.allFinite() || !l.b.allFinite()) fail(li + ": non-finite weight or bias");
    m.layers.push_back(std::move(l));
  }
  return m;
}

void ModelFileReader::expect_end() {
  if (at_ != bytes_.size()) {
    fail(std::to_string(bytes_.size() - at_) + " trailing bytes after the last layer");
  }
}

}  // namespace nmsa
