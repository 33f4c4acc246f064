// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// The FPGA measurements the project cites (docs/fpga.md): result files of syn/fpga.py, either
// fresh ones in <build>/fpga or the published ones in syn/results. A deployment report takes its
// clock from here (the measured Fmax of the configuration it ran), never from an assumption, and
// says whether the RTL changed since the measurement.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace nmsa {

struct FpgaResult {
  std::string path;    // the file it was read from
  std::string target;  // "ecp5"
  std::string config;  // "default"
  std::string top;     // "nmsa_top"
  std::string device;  // "LFE5U-85F-8BG381"
  double fmax_mhz_median = 0;
  double fmax_mhz_best = 0;
  int seeds = 0;           // seeds that routed: median and best are over these
  int seeds_unrouted = 0;  // seeds stopped by the flow's time limit before routing finished
  std::map<std::string, std::uint64_t> used;       // resource kind -> cells used
  std::map<std::string, std::uint64_t> available;  // resource kind -> cells on the device
  std::string yosys, nextpnr, git_revision, date, rtl_hash;

  std::uint64_t luts() const;  // TRELLIS_COMB (ECP5) or ICESTORM_LC (iCE40)
  std::uint64_t dsps() const;  // MULT18X18D or ICESTORM_DSP
  std::uint64_t brams() const; // DP16KD or ICESTORM_RAM
  // "124.9 MHz: median Fmax of 3 seed(s) (1 more stopped unrouted), nextpnr-ecp5 ... place and
  // route of nmsa_top (default) on LFE5U-85F-8BG381 (out of context), Yosys 0.70, revision abc,
  // 2026-12-03 (syn/results/ecp5-default.json)"; the parenthesis only when a seed was stopped.
  std::string describe() const;
};

// Reads one result file. Throws std::runtime_error naming the file and the field on a file that
// is not a place-and-route result.
FpgaResult read_fpga_result(const std::string& path);

// The result of `config` (module `top`) on `target`: <build_dir>/fpga/<target>-<config>[-<top>]
// .json if present, else <source_dir>/syn/results/ of the same name; nothing if neither exists.
std::optional<FpgaResult> find_fpga_result(const std::string& source_dir,
                                           const std::string& build_dir, const std::string& target,
                                           const std::string& config,
                                           const std::string& top = "nmsa_top");

// The hash syn/fpga.py records as rtl_hash for a result of configuration `config`: FNV-1a over
// the files of rtl/files.f (path, newline, contents) and that configuration's entry of
// rtl/configs.json (other configurations do not count). Throws std::runtime_error if a file
// cannot be read or the configuration does not exist.
std::string rtl_hash(const std::string& source_dir, const std::string& config);

}  // namespace nmsa
