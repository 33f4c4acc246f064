// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
#include "nmsa/file_io.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <stdexcept>

namespace nmsa {

void write_file_atomically(const std::string& path, const std::string& bytes) {
  std::random_device rd;
  char suffix[16];
  std::snprintf(suffix, sizeof suffix, ".tmp-%08x", static_cast<unsigned>(rd()));
  const std::string tmp = path + suffix;
  auto fail = [&](const std::string& why) {
    std::error_code ignored;
    std::filesystem::remove(tmp, ignored);
    throw std::runtime_error(path + ": " + why);
  };
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) {
      throw std::runtime_error(path + ": cannot create the temporary file " + tmp + ": " +
                               std::strerror(errno));
    }
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    f.close();
    if (!f) fail("write to " + tmp + " failed");
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) fail("cannot rename " + tmp + " to it: " + ec.message());
}

}  // namespace nmsa
