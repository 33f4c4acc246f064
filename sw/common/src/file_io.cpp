// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
#include "nmsa/file_io.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <stdexcept>

namespace nmsa {

namespace {

std::string temporary_beside(const std::string& path) {
  std::random_device rd;
  char suffix[16];
  std::snprintf(suffix, sizeof suffix, ".tmp-%08x", static_cast<unsigned>(rd()));
  return path + suffix;
}

void remove_quietly(const std::vector<std::string>& paths) {
  for (const std::string& p : paths) {
    std::error_code ignored;
    std::filesystem::remove(p, ignored);
  }
}

}  // namespace

std::string read_regular_file(const std::string& path) {
  std::error_code ec;
  const std::filesystem::file_status st = std::filesystem::status(path, ec);
  if (!std::filesystem::exists(st)) throw std::runtime_error(path + ": cannot read: no such file");
  if (std::filesystem::is_directory(st)) {
    throw std::runtime_error(path + ": cannot read: a directory, not a file");
  }
  if (!std::filesystem::is_regular_file(st)) {
    throw std::runtime_error(path + ": cannot read: not a regular file (a device, FIFO or socket)");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open: " + std::strerror(errno));
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw std::runtime_error(path + ": read error");
  return bytes;
}

void write_file_atomically(const std::string& path, const std::string& bytes) {
  write_files_atomically({{path, bytes}});
}

void write_files_atomically(const std::vector<std::pair<std::string, std::string>>& files) {
  std::vector<std::string> temporaries;
  auto fail = [&](const std::string& path, const std::string& why) {
    remove_quietly(temporaries);
    throw std::runtime_error(path + ": " + why);
  };
  for (const auto& [path, bytes] : files) {
    const std::string tmp = temporary_beside(path);
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) fail(path, "cannot create the temporary file " + tmp + ": " + std::strerror(errno));
    temporaries.push_back(tmp);
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    f.close();
    if (!f) fail(path, "write to " + tmp + " failed");
  }
  for (std::size_t i = 0; i < files.size(); ++i) {
    std::error_code ec;
    std::filesystem::rename(temporaries[i], files[i].first, ec);
    if (ec) {
      // The files renamed already stay: they are complete, and the rest are not written.
      temporaries.erase(temporaries.begin(), temporaries.begin() + static_cast<std::ptrdiff_t>(i));
      fail(files[i].first, "cannot rename " + temporaries.front() + " to it: " + ec.message());
    }
  }
}

}  // namespace nmsa
