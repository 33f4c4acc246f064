// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
#include "nmsa/fpga_results.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <vector>

#include <nlohmann/json.hpp>

#include "nmsa/file_io.hpp"

namespace nmsa {

namespace {

std::uint64_t first_of(const std::map<std::string, std::uint64_t>& m,
                       std::initializer_list<const char*> keys) {
  for (const char* k : keys) {
    const auto it = m.find(k);
    if (it != m.end()) return it->second;
  }
  return 0;
}

// Regular files only (a FIFO among the results would block, a device fill memory); errors name p.
std::string read_text(const std::filesystem::path& p) { return read_regular_file(p.string()); }

// `make synth` writes the same file name as `make pnr`, without a place-and-route result: such a
// file says nothing about the clock, so a search passes over it. Anything else, malformed files
// included, is read (and reported) by read_fpga_result.
bool is_synthesis_only(const std::filesystem::path& p) {
  const nlohmann::json j = nlohmann::json::parse(read_text(p), nullptr, /*allow_exceptions=*/false);
  return j.is_object() && j.contains("cells") &&
         (!j.contains("fmax_mhz_median") || j["fmax_mhz_median"].is_null());
}

}  // namespace

std::uint64_t FpgaResult::luts() const { return first_of(used, {"TRELLIS_COMB", "ICESTORM_LC"}); }
std::uint64_t FpgaResult::dsps() const { return first_of(used, {"MULT18X18D", "ICESTORM_DSP"}); }
std::uint64_t FpgaResult::brams() const { return first_of(used, {"DP16KD", "ICESTORM_RAM"}); }

std::string FpgaResult::describe() const {
  char mhz[32];
  std::snprintf(mhz, sizeof mhz, "%.1f MHz", fmax_mhz_median);
  const std::string unrouted =
      seeds_unrouted > 0 ? " (" + std::to_string(seeds_unrouted) + " more stopped unrouted)" : "";
  return std::string(mhz) + ": median Fmax of " + std::to_string(seeds) + " seed(s)" + unrouted +
         ", " + nextpnr + " place and route of " + top + " (" + config + ") on " + device +
         (target == "ecp5" ? " (out of context)" : "") + ", " + yosys + ", revision " +
         git_revision + ", " + date + " (" + path + ")";
}

FpgaResult read_fpga_result(const std::string& path) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(read_text(path));
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(path + ": not JSON (" + e.what() + ")");
  }
  auto need = [&](const char* key) -> const nlohmann::json& {
    if (!j.is_object() || !j.contains(key) || j[key].is_null()) {
      throw std::runtime_error(path + ": no field '" + key +
                               "' (not a place-and-route result of syn/fpga.py)");
    }
    return j[key];
  };
  FpgaResult r;
  r.path = path;
  try {
    r.target = need("target").get<std::string>();
    r.config = need("config").get<std::string>();
    r.top = need("top").get<std::string>();
    r.device = need("device").get<std::string>();
    r.fmax_mhz_median = need("fmax_mhz_median").get<double>();
    r.fmax_mhz_best = need("fmax_mhz_best").get<double>();
    r.seeds = static_cast<int>(need("seeds").size());
    if (j.contains("seeds_unrouted")) {
      r.seeds_unrouted = static_cast<int>(j["seeds_unrouted"].get<nlohmann::json::array_t>().size());
    }
    for (const auto& [kind, v] : need("utilization").items()) {
      r.used[kind] = v.at("used").get<std::uint64_t>();
      r.available[kind] = v.at("available").get<std::uint64_t>();
    }
    r.yosys = need("yosys").get<std::string>();
    r.nextpnr = need("nextpnr").get<std::string>();
    r.git_revision = need("git_revision").get<std::string>();
    r.date = need("date").get<std::string>();
    r.rtl_hash = need("rtl_hash").get<std::string>();
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(path + ": a field has the wrong type (" + e.what() + ")");
  }
  if (!(r.fmax_mhz_median > 0)) throw std::runtime_error(path + ": fmax_mhz_median is not > 0");
  return r;
}

std::optional<FpgaResult> find_fpga_result(const std::string& source_dir,
                                           const std::string& build_dir, const std::string& target,
                                           const std::string& config, const std::string& top) {
  const std::string name =
      target + "-" + config + (top == "nmsa_top" ? std::string() : "-" + top) + ".json";
  for (const std::filesystem::path& dir :
       {std::filesystem::path(build_dir) / "fpga", std::filesystem::path(source_dir) / "syn" /
                                                       "results"}) {
    const auto p = dir / name;
    if (!std::filesystem::is_regular_file(p) || is_synthesis_only(p)) continue;
    return read_fpga_result(p.string());
  }
  return std::nullopt;
}

std::string rtl_hash(const std::string& source_dir, const std::string& config) {
  const std::filesystem::path root(source_dir);
  std::vector<std::string> files;
  std::istringstream list(read_text(root / "rtl" / "files.f"));
  for (std::string line; std::getline(list, line);) {
    const auto b = line.find_first_not_of(" \t\r");
    if (b == std::string::npos) continue;
    line = line.substr(b, line.find_last_not_of(" \t\r") - b + 1);
    if (line.rfind("//", 0) == 0) continue;
    files.push_back(line);
  }
  // nlohmann::json (not ordered_json) keeps an object's keys sorted and dumps it compact, as
  // syn/fpga.py's json.dumps(sort_keys=True, separators=(",", ":")).
  const nlohmann::json configs =
      nlohmann::json::parse(read_text(root / "rtl" / "configs.json")).at("configs");
  if (!configs.contains(config)) {
    throw std::runtime_error("no configuration '" + config + "' in rtl/configs.json");
  }
  std::uint64_t h = 0xcbf29ce484222325ull;
  auto mix = [&h](const std::string& bytes) {
    for (const unsigned char c : bytes) h = (h ^ c) * 0x100000001b3ull;
  };
  for (const auto& f : files) {
    mix(f + "\n");
    mix(read_text(root / f));
  }
  mix("rtl/configs.json#" + config + "\n");
  mix(configs.at(config).dump());
  char out[17];
  std::snprintf(out, sizeof out, "%016llx", static_cast<unsigned long long>(h));
  return out;
}

}  // namespace nmsa
