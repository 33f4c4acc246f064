// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// nmsa: the command-line front end of libnmsa. Every subcommand talks to the device only through
// nmsa::Device, backed by the Verilated RTL (--backend rtl) or the functional model (--backend
// model). Exit codes: 0 success, 1 a result that does not match the golden model or a device
// error, 2 bad input (with a message naming it).
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "nmsa/device.hpp"
#include "nmsa/gemm_program.hpp"
#include "nmsa/golden.hpp"
#include "nmsa/progress.hpp"
#include "nmsa/sparse_format.hpp"
#include "nmsa/tb/rtl_device.hpp"

namespace {

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// --key value options and --flag switches, checked against what the subcommand accepts.
class Options {
 public:
  Options(int argc, char** argv, int first, const std::set<std::string>& with_value,
          const std::set<std::string>& flags) {
    for (int i = first; i < argc; ++i) {
      const std::string arg = argv[i];
      if (arg == "--help" || arg == "-h") {
        help_ = true;
      } else if (with_value.count(arg)) {
        if (i + 1 >= argc) throw UsageError(arg + " needs a value");
        values_[arg] = argv[++i];
      } else if (flags.count(arg)) {
        values_[arg] = "1";
      } else if (arg.rfind("--", 0) == 0) {
        throw UsageError("unknown option " + arg);
      } else {
        positional_.push_back(arg);
      }
    }
  }
  bool help() const { return help_; }
  bool has(const std::string& key) const { return values_.count(key) != 0; }
  std::string get(const std::string& key, const std::string& fallback) const {
    const auto it = values_.find(key);
    return it == values_.end() ? fallback : it->second;
  }
  long get_int(const std::string& key, long fallback, long lo, long hi) const {
    if (!has(key)) return fallback;
    const std::string text = values_.at(key);
    std::size_t used = 0;
    long v = 0;
    try {
      v = std::stol(text, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != text.size()) throw UsageError(key + " '" + text + "' is not a number");
    if (v < lo || v > hi) {
      throw UsageError(key + " " + text + " is outside [" + std::to_string(lo) + ", " +
                       std::to_string(hi) + "]");
    }
    return v;
  }
  const std::vector<std::string>& positional() const { return positional_; }

 private:
  bool help_ = false;
  std::map<std::string, std::string> values_;
  std::vector<std::string> positional_;
};

std::unique_ptr<nmsa::Device> open_device(const Options& o) {
  const std::string backend = o.get("--backend", "rtl");
  const std::string config = o.get("--config", "default");
  if (backend == "model") return nmsa::make_model_device(config);
  if (backend == "rtl") return nmsa::tb::make_rtl_device(config);
  throw UsageError("--backend must be rtl or model, not '" + backend + "'");
}

const char* kMainHelp =
    "usage: nmsa <command> [options]\n"
    "\n"
    "commands:\n"
    "  info    the device's capabilities, read from its registers\n"
    "  gemm    a random GEMM on the device, checked against the golden model\n"
    "\n"
    "Run 'nmsa <command> --help' for the options of a command.\n";

const char* kInfoHelp =
    "usage: nmsa info [--backend rtl|model] [--config NAME]\n"
    "\n"
    "Prints the capability registers of the device.\n"
    "  --backend  rtl: the Verilated accelerator (default); model: the functional model\n"
    "  --config   named configuration of rtl/configs.json (default: default)\n";

int cmd_info(const Options& o) {
  if (o.help()) {
    std::cout << kInfoHelp;
    return 0;
  }
  auto dev = open_device(o);
  const nmsa::DeviceCaps caps = dev->caps();
  const std::uint32_t version = dev->read_reg(nmsa::regs::VERSION_OFFSET);
  std::printf("device          %s\n", dev->name().c_str());
  std::printf("version         %u.%u.%u\n", (version >> 16) & 0xff, (version >> 8) & 0xff,
              version & 0xff);
  std::printf("array           %d x %d PEs, %s sparsity (sparse support: %s)\n", caps.rows,
              caps.cols, caps.pattern.name().c_str(), caps.sparse_supported ? "yes" : "no");
  std::printf("operands        INT%d, accumulators INT%d\n", caps.data_w, caps.acc_w);
  std::printf("host bus        AXI4 %d bits\n", caps.axi_data_w);
  std::printf("activations     %u entries of %d bytes\n", caps.act_entries, caps.act_entry_bytes());
  std::printf("weights         %u records (%d PE rows of a tile each tile)\n", caps.wgt_records,
              caps.rows);
  std::printf("epilogue        %u entries\n", caps.epi_entries);
  std::printf("accumulators    %u rows of %d x INT%d\n", caps.acc_entries, caps.cols, caps.acc_w);
  std::printf("peak            %d dense-equivalent MACs per cycle (sparse), %d (dense)\n",
              caps.rows * caps.cols * caps.pattern.m, caps.rows * caps.cols * caps.pattern.n);
  return 0;
}

const char* kGemmHelp =
    "usage: nmsa gemm --m ROWS --k K --n N_OUT [--sparsity N:M] [--mode sparse|dense|both]\n"
    "                 [--backend rtl|model] [--config NAME] [--seed S] [--json]\n"
    "\n"
    "Runs Y = X * W^T with random INT8 X [m x k] and W [n x k] (pruned to N:M for sparse mode),\n"
    "checks Y bit-exactly against the Eigen golden model, and prints cycles, utilization, the\n"
    "effective speedup (dense cycles / sparse cycles, with --mode both) and the counters.\n"
    "  --sparsity  must be the device's pattern (default: the device's)\n"
    "  --mode      default: both\n"
    "  --backend   rtl (default, cycle-accurate) or model (functional, no cycles)\n"
    "  --json      one JSON object on stdout instead of the table\n";

struct ModeResult {
  std::string mode;
  nmsa::DeviceRun run;
  std::uint64_t predicted = 0;
  bool exact = false;
};

int cmd_gemm(const Options& o) {
  if (o.help()) {
    std::cout << kGemmHelp;
    return 0;
  }
  for (const char* required : {"--m", "--k", "--n"}) {
    if (!o.has(required)) throw UsageError(std::string("gemm needs ") + required);
  }
  const long m = o.get_int("--m", 0, 1, 65535);
  const long k = o.get_int("--k", 0, 1, 1 << 20);
  const long n = o.get_int("--n", 0, 1, 1 << 20);
  const auto seed = static_cast<std::uint64_t>(o.get_int("--seed", 1, 0, 1L << 62));
  const std::string mode = o.get("--mode", "both");
  if (mode != "sparse" && mode != "dense" && mode != "both") {
    throw UsageError("--mode must be sparse, dense or both, not '" + mode + "'");
  }
  auto dev = open_device(o);
  const nmsa::DeviceCaps caps = dev->caps();
  if (o.has("--sparsity")) {
    const nmsa::NmPattern wanted = nmsa::parse_nm_pattern(o.get("--sparsity", ""));
    if (!(wanted == caps.pattern)) {
      throw UsageError("--sparsity " + wanted.name() + ": device " + dev->name() + " is " +
                       caps.pattern.name() + " (pick a configuration with --config)");
    }
  }

  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> dist(-128, 127);
  auto random_matrix = [&](long rows, long cols) {
    nmsa::MatrixI8 a(rows, cols);
    for (Eigen::Index i = 0; i < a.size(); ++i) a.data()[i] = static_cast<std::int8_t>(dist(rng));
    return a;
  };
  const nmsa::MatrixI8 x = random_matrix(m, k);
  const nmsa::MatrixI8 w_dense = random_matrix(n, k);
  // Prune with K padded to whole groups, so the last partial group follows the rule too.
  const long groups = (k + caps.pattern.m - 1) / caps.pattern.m;
  nmsa::MatrixI8 padded = nmsa::MatrixI8::Zero(n, groups * caps.pattern.m);
  padded.leftCols(k) = w_dense;
  const nmsa::MatrixI8 w_sparse = nmsa::prune_nm(padded, caps.pattern).leftCols(k);

  std::vector<ModeResult> results;
  for (const std::string which : {"sparse", "dense"}) {
    if (mode != "both" && mode != which) continue;
    const bool sparse = which == "sparse";
    const nmsa::MatrixI8& w = sparse ? w_sparse : w_dense;
    nmsa::GemmOptions options;
    options.mode = sparse ? nmsa::GemmMode::SPARSE : nmsa::GemmMode::DENSE;
    const nmsa::GemmProgram program(caps, x, w, options, dev->memory());
    ModeResult r;
    r.mode = which;
    r.predicted = program.predict_cycles().total;
    nmsa::ProgressBar bar(which + " GEMM on " + dev->name(), r.predicted);
    r.run = dev->run(program.command_address(), program.command_count(),
                     [&bar](std::uint64_t cycles) { bar.update(cycles); });
    bar.finish();
    r.exact = r.run.ok() && program.read_output() == nmsa::golden::gemm_i8(x, w);
    results.push_back(r);
  }

  namespace r = nmsa::regs;
  // The functional model has no clock: its figures come from the compiler's cycle prediction.
  const bool measured = !results.empty() && results[0].run.cycles > 0;
  auto cycles_of = [measured](const ModeResult& res) {
    return static_cast<double>(measured ? res.run.cycles : res.predicted);
  };
  const double peak = static_cast<double>(caps.rows) * caps.cols * caps.pattern.m;
  const double useful = static_cast<double>(m) * k * n;
  auto utilization = [&](const ModeResult& res) { return useful / (cycles_of(res) * peak); };
  const bool both = results.size() == 2;
  const double speedup = both ? cycles_of(results[1]) / cycles_of(results[0]) : 0.0;
  const char* source = measured ? "rtl" : "predicted";
  bool all_exact = true;
  for (const auto& res : results) all_exact = all_exact && res.exact;

  const char* counter_names[] = {"cycles_total", "cycles_busy", "cycles_compute",
                                 "cycles_dma_stall", "macs", "tiles_sparse", "tiles_dense",
                                 "dma_rd_bytes", "dma_wr_bytes", "meta_bytes", "illegal_meta",
                                 "axi_errors"};
  if (o.has("--json")) {
    std::ostringstream js;
    js << "{\"device\": \"" << dev->name() << "\", \"m\": " << m << ", \"k\": " << k
       << ", \"n\": " << n << ", \"seed\": " << seed << ", \"pattern\": \""
       << caps.pattern.name() << "\", \"runs\": [";
    for (std::size_t i = 0; i < results.size(); ++i) {
      const auto& res = results[i];
      js << (i ? ", " : "") << "{\"mode\": \"" << res.mode << "\", \"status\": \""
         << res.run.describe() << "\", \"bit_exact\": " << (res.exact ? "true" : "false")
         << ", \"cycles\": " << res.run.cycles << ", \"predicted_cycles\": " << res.predicted
         << ", \"utilization\": " << utilization(res) << ", \"counters\": {";
      for (std::size_t c = 0; c < r::NUM_COUNTERS; ++c) {
        js << (c ? ", " : "") << "\"" << counter_names[c] << "\": " << res.run.counters[c];
      }
      js << "}}";
    }
    js << "], \"figures_from\": \"" << source << "\"";
    if (both) js << ", \"effective_speedup\": " << speedup;
    js << "}\n";
    std::cout << js.str();
  } else {
    std::printf("GEMM %ld x %ld x %ld on %s (%s), seed %llu\n\n", m, k, n, dev->name().c_str(),
                caps.pattern.name().c_str(), static_cast<unsigned long long>(seed));
    std::printf("%-22s", "");
    for (const auto& res : results) std::printf("%16s", res.mode.c_str());
    std::printf("\n%-22s", "status");
    for (const auto& res : results) {
      std::printf("%16s", res.run.ok() ? "done" : res.run.describe().substr(0, 15).c_str());
    }
    std::printf("\n%-22s", "bit-exact vs golden");
    for (const auto& res : results) std::printf("%16s", res.exact ? "yes" : "NO");
    std::printf("\n%-22s", "cycles");
    for (const auto& res : results) {
      std::printf("%16llu", static_cast<unsigned long long>(res.run.cycles));
    }
    std::printf("\n%-22s", "predicted cycles");
    for (const auto& res : results) {
      std::printf("%16llu", static_cast<unsigned long long>(res.predicted));
    }
    std::printf("\n%-22s", measured ? "utilization" : "utilization (pred.)");
    for (const auto& res : results) std::printf("%15.1f%%", 100 * utilization(res));
    for (std::size_t c = 0; c < r::NUM_COUNTERS; ++c) {
      std::printf("\n%-22s", counter_names[c]);
      for (const auto& res : results) {
        std::printf("%16llu", static_cast<unsigned long long>(res.run.counters[c]));
      }
    }
    std::printf("\n");
    if (both && speedup > 0) {
      std::printf("\neffective speedup (dense cycles / sparse cycles%s): %.3fx\n",
                  measured ? "" : ", predicted", speedup);
    }
  }
  if (!all_exact) {
    std::cerr << "nmsa gemm: result does not match the golden model or the device reported an "
                 "error\n";
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc < 2) {
      std::cerr << kMainHelp;
      return 2;
    }
    const std::string command = argv[1];
    if (command == "--help" || command == "-h" || command == "help") {
      std::cout << kMainHelp;
      return 0;
    }
    if (command == "info") {
      return cmd_info(Options(argc, argv, 2, {"--backend", "--config"}, {}));
    }
    if (command == "gemm") {
      return cmd_gemm(Options(argc, argv, 2,
                              {"--m", "--k", "--n", "--sparsity", "--mode", "--backend",
                               "--config", "--seed"},
                              {"--json"}));
    }
    throw UsageError("unknown command '" + command + "'\n" + kMainHelp);
  } catch (const UsageError& e) {
    std::cerr << "nmsa: " << e.what() << "\n";
    return 2;
  } catch (const std::invalid_argument& e) {
    std::cerr << "nmsa: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "nmsa: " << e.what() << "\n";
    return 1;
  }
}
