// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// The nmsa command line: every subcommand's options and their checks, parsed without a device, so
// that the parser can be tested and fuzzed alone. sw/cli/nmsa.cpp runs the parsed command.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "nmsa/bandwidth_lens.hpp"
#include "nmsa/release_gate.hpp"
#include "nmsa/triage.hpp"

namespace nmsa::cli {

// --backend and --config, shared by the commands that talk to a device.
struct DeviceArgs {
  std::string backend = "rtl";
  std::string config = "default";
  CLI::Option* config_option = nullptr;
};

struct InfoArgs {
  DeviceArgs device;
};

struct GemmArgs {
  long m = 0, k = 0, n = 0;
  std::string sparsity;  // empty: the device's pattern
  std::string mode = "both";
  std::uint64_t seed = 1;
  bool json = false;
  DeviceArgs device;
};

struct PruneArgs {
  std::string in, out;
  std::string sparsity = "2:4";
  bool permute = false;
  std::uint64_t seed = 2021;
};

struct CompressArgs {
  std::string in, values, meta;
  std::string sparsity = "2:4";
  std::string scales;
};

struct RunArgs {
  std::string model, labels;
  std::vector<std::string> inputs, outputs;
  bool dense = false;
  bool check_golden = false;  // every device GEMM against the golden model
  bool no_chain = false;      // every device layer its own program (RuntimeOptions::chain_layers)
  std::int64_t batch = 0;     // rows per run (0: all at once)
  std::string rows;           // FIRST:END, the input rows to run (empty: all)
  std::string host_memory = "fast";  // fast or demo (nmsa/tb/host_memory.hpp)
  std::uint64_t memory_seed = 1;     // the rtl backend's memory model
  CLI::Option* memory_seed_option = nullptr;
  DeviceArgs device;
};

struct GateArgs {
  std::string baseline, candidate;
  nmsa::GateLimits limits;
};

struct TriageArgs {
  std::string baseline, candidate, memo;
  bool json = false;
  nmsa::TriageLimits limits;
};

struct SweepArgs {
  std::string config = "default";
  std::string out = "build/sweep";
  nmsa::LensSettings settings;
};

// The whole command line: the CLI11 application, each subcommand's arguments and its CLI11
// subcommand (set when it was given).
struct CommandLine {
  CommandLine();
  CommandLine(const CommandLine&) = delete;
  CommandLine& operator=(const CommandLine&) = delete;

  CLI::App app{"nmsa: the command-line front end of libnmsa", "nmsa"};
  InfoArgs info;
  GemmArgs gemm;
  PruneArgs prune;
  CompressArgs compress;
  RunArgs run;
  GateArgs gate;
  SweepArgs sweep;
  TriageArgs triage;
  CLI::App* info_cmd = nullptr;
  CLI::App* gemm_cmd = nullptr;
  CLI::App* prune_cmd = nullptr;
  CLI::App* compress_cmd = nullptr;
  CLI::App* run_cmd = nullptr;
  CLI::App* gate_cmd = nullptr;
  CLI::App* sweep_cmd = nullptr;
  CLI::App* triage_cmd = nullptr;
};

// Parses argv into `cl`: -1 when a command is to run, otherwise the exit code after CLI11 or this
// function printed the help (0) or the usage error (2: an unknown command or option, a stray
// argument, a value its check rejects, a missing required option).
int parse_command_line(CommandLine& cl, int argc, const char* const* argv);

}  // namespace nmsa::cli
