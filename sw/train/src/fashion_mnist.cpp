// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
#include "nmsa/fashion_mnist.hpp"

#include <zlib.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <stdexcept>

namespace nmsa {

namespace {

constexpr std::uint32_t kImagesMagic = 0x00000803;  // ubyte, 3 dimensions
constexpr std::uint32_t kLabelsMagic = 0x00000801;  // ubyte, 1 dimension

[[noreturn]] void fail(const std::string& name, const std::string& what) {
  throw std::runtime_error(name + ": " + what);
}

std::uint32_t read_be32(const std::vector<std::uint8_t>& b, std::size_t at) {
  return (std::uint32_t{b[at]} << 24) | (std::uint32_t{b[at + 1]} << 16) |
         (std::uint32_t{b[at + 2]} << 8) | std::uint32_t{b[at + 3]};
}

std::string hex32(std::uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", v);
  return buf;
}

// Header words, the magic checked. Returns the dimension sizes.
std::vector<std::uint32_t> read_header(const std::vector<std::uint8_t>& bytes,
                                       const std::string& name, std::uint32_t magic, int dims) {
  const std::size_t header = 4 * (1 + static_cast<std::size_t>(dims));
  if (bytes.size() < 4)
    fail(name, "truncated: " + std::to_string(bytes.size()) + " bytes, no IDX magic");
  const std::uint32_t got = read_be32(bytes, 0);
  if (got != magic) {
    fail(name, "wrong IDX magic " + hex32(got) + ", expected " + hex32(magic) +
                   (dims == 3 ? " (ubyte images, 3 dimensions)" : " (ubyte labels, 1 dimension)"));
  }
  if (bytes.size() < header) {
    fail(name, "truncated header: " + std::to_string(bytes.size()) + " bytes, need " +
                   std::to_string(header));
  }
  std::vector<std::uint32_t> sizes;
  for (int d = 0; d < dims; ++d)
    sizes.push_back(read_be32(bytes, 4 + 4 * static_cast<std::size_t>(d)));
  return sizes;
}

void check_body(const std::vector<std::uint8_t>& bytes, const std::string& name, std::size_t header,
                std::uint64_t expected) {
  const std::uint64_t body = bytes.size() - header;
  if (body < expected) {
    fail(name, "truncated: the header announces " + std::to_string(expected) +
                   " data bytes but the file holds " + std::to_string(body));
  }
  if (body > expected) {
    fail(name, std::to_string(body - expected) + " trailing bytes after the " +
                   std::to_string(expected) + " data bytes the header announces");
  }
}

}  // namespace

MatrixF parse_idx_images(const std::vector<std::uint8_t>& bytes, const std::string& name, int* rows,
                         int* cols) {
  const auto s = read_header(bytes, name, kImagesMagic, 3);
  if (s[1] == 0 || s[2] == 0 || s[1] > 4096 || s[2] > 4096) {
    fail(name, "implausible image size " + std::to_string(s[1]) + "x" + std::to_string(s[2]));
  }
  const std::uint64_t pixels = std::uint64_t{s[1]} * s[2];
  check_body(bytes, name, 16, std::uint64_t{s[0]} * pixels);
  MatrixF images(static_cast<Eigen::Index>(s[0]), static_cast<Eigen::Index>(pixels));
  const std::uint8_t* src = bytes.data() + 16;
  float* dst = images.data();
  const std::size_t total = static_cast<std::size_t>(s[0]) * pixels;
  for (std::size_t i = 0; i < total; ++i) dst[i] = static_cast<float>(src[i]) * (1.0f / 255.0f);
  if (rows != nullptr) *rows = static_cast<int>(s[1]);
  if (cols != nullptr) *cols = static_cast<int>(s[2]);
  return images;
}

std::vector<std::uint8_t> parse_idx_labels(const std::vector<std::uint8_t>& bytes,
                                           const std::string& name) {
  const auto s = read_header(bytes, name, kLabelsMagic, 1);
  check_body(bytes, name, 8, s[0]);
  return std::vector<std::uint8_t>(bytes.begin() + 8, bytes.end());
}

namespace {

// zlib's gzerror() prefixes its message with the path; the caller names the file already.
std::string zlib_message(gzFile f, const std::string& path) {
  int err = 0;
  const char* raw = gzerror(f, &err);
  std::string msg = raw != nullptr ? raw : "unknown zlib error";
  if (msg.rfind(path + ": ", 0) == 0) msg.erase(0, path.size() + 2);
  return msg;
}

}  // namespace

std::vector<std::uint8_t> read_maybe_gzipped(const std::string& path) {
  std::unique_ptr<gzFile_s, int (*)(gzFile)> f(gzopen(path.c_str(), "rb"), gzclose);
  if (!f) fail(path, std::string("cannot open: ") + std::strerror(errno));
  std::vector<std::uint8_t> out;
  std::uint8_t buf[1 << 16];
  for (;;) {
    const int n = gzread(f.get(), buf, sizeof buf);
    if (n < 0) fail(path, "corrupt gzip stream: " + zlib_message(f.get(), path));
    if (n == 0) break;
    out.insert(out.end(), buf, buf + n);
  }
  // zlib reports a stream cut short only as an error state after the last read.
  int err = 0;
  gzerror(f.get(), &err);
  if (err != Z_OK && err != Z_STREAM_END) {
    fail(path, "corrupt or truncated gzip stream: " + zlib_message(f.get(), path));
  }
  return out;
}

LabeledImages load_idx_pair(const std::string& images_path, const std::string& labels_path) {
  LabeledImages d;
  d.images = parse_idx_images(read_maybe_gzipped(images_path), images_path, &d.rows, &d.cols);
  d.labels = parse_idx_labels(read_maybe_gzipped(labels_path), labels_path);
  if (static_cast<std::size_t>(d.images.rows()) != d.labels.size()) {
    fail(labels_path, "holds " + std::to_string(d.labels.size()) + " labels but " + images_path +
                          " holds " + std::to_string(d.images.rows()) + " images");
  }
  return d;
}

LabeledImages load_fashion_mnist(const std::string& dir, FashionMnistSplit split) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    throw std::runtime_error("Fashion-MNIST directory " + dir +
                             " does not exist; install it with `apt-get install " +
                             kFashionMnistPackage + "` (scripts/setup.sh does)");
  }
  const std::string prefix = split == FashionMnistSplit::kTrain ? "train" : "t10k";
  auto find = [&](const std::string& stem) {
    const fs::path plain = fs::path(dir) / stem;
    if (fs::exists(plain, ec)) return plain.string();
    const fs::path gz = fs::path(dir) / (stem + ".gz");
    if (fs::exists(gz, ec)) return gz.string();
    throw std::runtime_error(gz.string() + ": missing (nor is " + plain.string() +
                             " there); reinstall " + kFashionMnistPackage);
  };
  const std::string images = find(prefix + "-images-idx3-ubyte");
  const std::string labels = find(prefix + "-labels-idx1-ubyte");
  LabeledImages d = load_idx_pair(images, labels);
  for (std::size_t i = 0; i < d.labels.size(); ++i) {
    if (d.labels[i] >= 10) {
      fail(labels, "label " + std::to_string(d.labels[i]) + " at item " + std::to_string(i) +
                       " is not a class 0..9");
    }
  }
  return d;
}

}  // namespace nmsa
