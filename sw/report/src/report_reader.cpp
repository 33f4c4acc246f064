// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
#include "report_reader.hpp"

#include <cmath>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <system_error>

#include "nmsa/file_io.hpp"
#include "nmsa/report.hpp"

namespace nmsa::report_detail {

const ReadJson& require_key(const ReadJson& j, const std::string& file, const char* key) {
  const auto it = j.find(key);
  if (it == j.end()) {
    throw std::runtime_error(file + ": missing key \"" + key +
                             "\" (is it a report.json written by nmsa?)");
  }
  return *it;
}

namespace {

[[noreturn]] void wrong_type(const std::string& file, const char* key, const ReadJson& v,
                             const char* wanted) {
  throw std::runtime_error(file + ": \"" + key + "\" must be " + wanted + ", not " +
                           v.type_name() + " " + v.dump());
}

}  // namespace

double read_accuracy(const ReadJson& j, const std::string& file, const char* key) {
  const ReadJson& v = require_key(j, file, key);
  if (v.is_null()) return kNotMeasured;
  if (!v.is_number()) wrong_type(file, key, v, "a number or null");
  const double a = v.get<double>();
  if (!(std::isfinite(a) && a >= 0.0 && a <= 1.0)) {
    throw std::runtime_error(file + ": \"" + key + "\" = " + v.dump() +
                             " is outside [0, 1] (accuracies are fractions, not percent)");
  }
  return a;
}

double read_speedup(const ReadJson& j, const std::string& file, const char* key) {
  const ReadJson& v = require_key(j, file, key);
  if (v.is_null()) return kNotMeasured;
  if (!v.is_number()) wrong_type(file, key, v, "a number or null");
  const double s = v.get<double>();
  if (!(std::isfinite(s) && s > 0.0)) {
    throw std::runtime_error(file + ": \"" + key + "\" = " + v.dump() +
                             " must be finite and > 0");
  }
  return s;
}

std::uint64_t read_cycles(const ReadJson& j, const std::string& file, const char* key) {
  const ReadJson& v = require_key(j, file, key);
  if (v.is_null()) return 0;
  if (v.is_number_unsigned()) return v.get<std::uint64_t>();
  if (v.is_number_integer()) {
    throw std::runtime_error(file + ": \"" + key + "\" = " + v.dump() + " must be >= 0");
  }
  if (v.is_number_float()) {
    // Another writer may have printed a whole number as 12345.0.
    const double c = v.get<double>();
    if (std::isfinite(c) && c >= 0 && c == std::floor(c) && c < 1.8e19) {
      return static_cast<std::uint64_t>(c);
    }
    throw std::runtime_error(file + ": \"" + key + "\" = " + v.dump() +
                             " must be a whole number of cycles >= 0");
  }
  wrong_type(file, key, v, "a whole number of cycles or null");
}

double read_optional_number(const ReadJson& j, const std::string& file, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return kNotMeasured;
  if (!it->is_number()) wrong_type(file, key, *it, "a number or null");
  const double v = it->get<double>();
  if (!std::isfinite(v)) throw std::runtime_error(file + ": \"" + key + "\" is not finite");
  return v;
}

ReadReport read_report_json(const std::string& path) {
  std::string file = path;
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    file = (std::filesystem::path(path) / "report.json").string();
  }
  const std::string text = read_regular_file(file);
  // nlohmann's parser takes a NUL byte for the end of its input: garbage after one would pass.
  if (const auto nul = text.find('\0'); nul != std::string::npos) {
    throw std::runtime_error(file + ": not valid JSON: a NUL byte at offset " +
                             std::to_string(nul));
  }
  ReadJson j;
  try {
    j = ReadJson::parse(text);
  } catch (const ReadJson::exception& e) {
    // A syntax error, or a number too large for a double (out_of_range.406). Drop nlohmann's
    // "[json.exception.parse_error.101] " prefix: the file name says enough.
    std::string what = e.what();
    const auto bracket = what.find("] ");
    if (what.rfind("[json.exception", 0) == 0 && bracket != std::string::npos) {
      what = what.substr(bracket + 2);
    }
    throw std::runtime_error(file + ": not valid JSON: " + what);
  }
  if (!j.is_object()) {
    throw std::runtime_error(file + ": expected a JSON object (report.json), found " +
                             j.type_name());
  }
  if (const auto it = j.find("report_format"); it != j.end()) {
    if (!it->is_number_integer() || it->get<long long>() > kReportFormatVersion) {
      throw std::runtime_error(file + ": \"report_format\" " + it->dump() +
                               " is not one this nmsa reads (<= " +
                               std::to_string(kReportFormatVersion) + ")");
    }
  }
  return {file, std::move(j)};
}

}  // namespace nmsa::report_detail
