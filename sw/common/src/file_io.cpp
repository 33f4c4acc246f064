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

void require_output_path(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    throw std::runtime_error(path + ": cannot write: a directory, not a file");
  }
  const fs::file_status st = fs::status(path, ec);
  if (fs::exists(st) && !fs::is_regular_file(st)) {
    throw std::runtime_error(path + ": cannot write: not a regular file (a device, FIFO or socket)");
  }
  fs::path parent = fs::path(path).parent_path();
  if (parent.empty()) parent = ".";
  if (!fs::is_directory(parent, ec)) {
    throw std::runtime_error(path + ": cannot write: the directory " + parent.string() +
                             " does not exist");
  }
}

void write_files_atomically(const std::vector<std::pair<std::string, std::string>>& files) {
  namespace fs = std::filesystem;
  // Every destination checked first: a directory or a missing directory in the set fails before
  // anything is staged, instead of at its rename, after the others are in place.
  for (const auto& file : files) require_output_path(file.first);
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
  // A file that exists keeps a second name until every rename succeeded, so that a rename that
  // fails late (the destination replaced by a directory meanwhile, a full disk) can put each
  // earlier file back: on failure no output is new and none is changed.
  std::vector<std::string> backups(files.size());
  auto restore = [&](std::size_t renamed) {
    for (std::size_t j = 0; j < renamed; ++j) {
      std::error_code ignored;
      if (backups[j].empty()) {
        fs::remove(files[j].first, ignored);
      } else {
        fs::rename(backups[j], files[j].first, ignored);
      }
    }
    for (const std::string& b : backups) {
      std::error_code ignored;
      if (!b.empty()) fs::remove(b, ignored);
    }
  };
  for (std::size_t i = 0; i < files.size(); ++i) {
    std::error_code ec;
    if (!fs::exists(files[i].first, ec)) continue;
    backups[i] = temporary_beside(files[i].first);
    fs::create_hard_link(files[i].first, backups[i], ec);
    if (ec) {
      backups[i].clear();
      restore(0);
      fail(files[i].first, "cannot keep the existing file while writing: " + ec.message());
    }
  }
  for (std::size_t i = 0; i < files.size(); ++i) {
    std::error_code ec;
    fs::rename(temporaries[i], files[i].first, ec);
    if (ec) {
      const std::string why = "cannot rename " + temporaries[i] + " to it: " + ec.message();
      restore(i);
      fail(files[i].first, why);
    }
  }
  for (const std::string& b : backups) {
    std::error_code ignored;
    if (!b.empty()) fs::remove(b, ignored);
  }
}

void write_files_creating_directories(
    const std::vector<std::pair<std::string, std::string>>& files) {
  namespace fs = std::filesystem;
  std::vector<fs::path> created;  // outermost first, as they were made
  const auto remove_created = [&] {
    for (auto it = created.rbegin(); it != created.rend(); ++it) {
      std::error_code ignored;
      fs::remove(*it, ignored);  // removes only what is still empty
    }
  };
  try {
    for (const auto& file : files) {
      fs::path missing;
      for (const fs::path& part : fs::path(file.first).parent_path()) {
        missing /= part;
        if (fs::exists(missing)) continue;
        fs::create_directory(missing);
        created.push_back(missing);
      }
    }
    write_files_atomically(files);
  } catch (const fs::filesystem_error& e) {
    remove_created();
    throw std::runtime_error(e.path1().string() + ": cannot create the directory: " +
                             e.code().message());
  } catch (...) {
    remove_created();
    throw;
  }
}

}  // namespace nmsa
