// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// libFuzzer target: any bytes as an nmsa command line (arguments separated by NUL bytes), parsed
// by the CLI's own parser. It must return 0 (help), 2 (a usage error) or -1 (a command to run),
// and never crash, hang or throw.
#include <cstddef>
#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

#include "cli_options.hpp"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // Help and usage messages are what the parser prints; they are not what is tested.
  std::cout.setstate(std::ios::failbit);
  std::cerr.setstate(std::ios::failbit);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> args{"nmsa"};
  std::string current;
  for (std::size_t i = 0; i < size && args.size() < 64; ++i) {
    if (data[i] == 0) {
      args.push_back(current);
      current.clear();
    } else {
      current += static_cast<char>(data[i]);
    }
  }
  if (!current.empty()) args.push_back(current);
  std::vector<const char*> argv;
  for (const std::string& a : args) argv.push_back(a.c_str());
  nmsa::cli::CommandLine cl;
  const int rc = nmsa::cli::parse_command_line(cl, static_cast<int>(argv.size()), argv.data());
  if (rc != -1 && rc != 0 && rc != 2) __builtin_trap();
  return 0;
}
