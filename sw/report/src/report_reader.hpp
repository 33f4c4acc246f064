// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// Reading report.json back (nmsa gate, nmsa triage): the file as JSON, and its figures each
// checked for presence, type and range, every error naming the file and the key.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace nmsa::report_detail {

using ReadJson = nlohmann::json;

struct ReadReport {
  std::string file;  // the file read (a directory stands for its report.json)
  ReadJson json;     // an object, of a report_format this nmsa reads
};

// Throws std::runtime_error naming the file when it cannot be read, is not JSON, is not an
// object, or has a report_format newer than this nmsa's.
ReadReport read_report_json(const std::string& path);

const ReadJson& require_key(const ReadJson& j, const std::string& file, const char* key);
// An accuracy in [0, 1], NaN for null.
double read_accuracy(const ReadJson& j, const std::string& file, const char* key);
// A speedup, finite and > 0, NaN for null.
double read_speedup(const ReadJson& j, const std::string& file, const char* key);
// A whole number of cycles (or bytes) >= 0, 0 for null.
std::uint64_t read_cycles(const ReadJson& j, const std::string& file, const char* key);
// Any finite number, NaN for null or absent.
double read_optional_number(const ReadJson& j, const std::string& file, const char* key);

}  // namespace nmsa::report_detail
