// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// nmsa: the command-line front end of libnmsa. Every subcommand talks to the device only through
// nmsa::Device, backed by the Verilated RTL (--backend rtl), the functional model (--backend
// model) or an FPGA board over its UART (--backend uart:/dev/ttyUSB0). Exit codes: 0 success,
// 1 a result that does not match the golden model, a device error or a failure of the link to a
// board, 2 bad input (with a message naming it; docs/errors.md). Options are declared and parsed
// in cli_options.cpp (CLI11, which also writes the help of every command), apart from the device,
// so that the parser can be fuzzed alone (tests/fuzz/fuzz_options.cpp).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "nmsa/bandwidth_lens.hpp"
#include "nmsa/device.hpp"
#include "nmsa/file_io.hpp"
#include "nmsa/gemm_program.hpp"
#include "nmsa/golden.hpp"
#include "nmsa/npy.hpp"
#include "nmsa/onnx_model.hpp"
#include "nmsa/progress.hpp"
#include "nmsa/prune.hpp"
#include "nmsa/quant.hpp"
#include "nmsa/release_gate.hpp"
#include "nmsa/runtime.hpp"
#include "nmsa/sparse_format.hpp"
#include "nmsa/tensor_npy.hpp"
#include "nmsa/triage.hpp"
#include "nmsa/tb/host_memory.hpp"
#include "nmsa/tb/rtl_device.hpp"
#include "nmsa/uart_device.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli_options.hpp"

namespace {

using nmsa::cli::CompressArgs;
using nmsa::cli::DeviceArgs;
using nmsa::cli::GateArgs;
using nmsa::cli::GemmArgs;
using nmsa::cli::InfoArgs;
using nmsa::cli::PruneArgs;
using nmsa::cli::RunArgs;
using nmsa::cli::SweepArgs;
using nmsa::cli::TriageArgs;

// Bad input found after the options were parsed (a file, a pattern, a combination): exit code 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// `memory` and `memory_seed` configure the rtl backend's host memory model.
std::unique_ptr<nmsa::Device> open_device(const DeviceArgs& a,
                                          const nmsa::tb::AxiMemoryConfig& memory = {},
                                          std::uint64_t memory_seed = 1) {
  if (a.backend.rfind("uart:", 0) == 0) {
    if (a.config_option->count() > 0) {
      throw UsageError("--config does not apply to --backend " + a.backend +
                       ": a board reports the configuration it was built with");
    }
    return nmsa::make_uart_device(a.backend);
  }
  try {
    if (a.backend == "model") return nmsa::make_model_device(a.config);
    if (a.backend == "rtl") return nmsa::tb::make_rtl_device(a.config, memory, memory_seed);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("--config: ") + e.what());
  }
  throw UsageError("--backend must be rtl, model or uart:<device>[@<baud>], not '" + a.backend +
                   "'");
}

// --- nmsa info -----------------------------------------------------------------------------------

int cmd_info(const InfoArgs& a) {
  auto dev = open_device(a.device);
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
  const nmsa::HostMemory& mem = dev->memory();
  if (mem.alloc_limit() != std::numeric_limits<std::uint64_t>::max()) {
    std::printf("memory window   %llu KiB at 0x%llx\n",
                static_cast<unsigned long long>((mem.alloc_limit() - mem.alloc_base()) / 1024),
                static_cast<unsigned long long>(mem.alloc_base()));
  }
  return 0;
}

// --- nmsa gemm -----------------------------------------------------------------------------------

struct ModeResult {
  std::string mode;
  nmsa::DeviceRun run;
  std::uint64_t predicted = 0;
  bool exact = false;
};

int cmd_gemm(const GemmArgs& a) {
  const long m = a.m, k = a.k, n = a.n;
  const std::uint64_t seed = a.seed;
  const std::string& mode = a.mode;
  auto dev = open_device(a.device);
  const nmsa::DeviceCaps caps = dev->caps();
  if (!a.sparsity.empty()) {
    nmsa::NmPattern wanted;
    try {
      wanted = nmsa::parse_nm_pattern(a.sparsity);
    } catch (const std::invalid_argument& e) {
      throw UsageError(std::string("--sparsity: ") + e.what());
    }
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
  const nmsa::MatrixI8 w_sparse = nmsa::prune_nm_any_k(w_dense, caps.pattern);

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
    // The RTL backend's host memory answers after one cycle (nmsa::tb::make_rtl_device defaults).
    nmsa::PerfModelParams perf;
    perf.dma_read_latency = 1;
    perf.dma_write_latency = 1;
    r.predicted = program.predict_cycles(perf).total;
    nmsa::ProgressBar bar(which + " GEMM on " + dev->name(), r.predicted);
    r.run = dev->run(program.command_address(), program.command_count(),
                     [&bar](std::uint64_t cycles) { bar.update(cycles); });
    bar.finish();
    r.exact = r.run.ok() && program.read_output() == nmsa::golden::gemm_i8(x, w);
    results.push_back(r);
  }

  namespace r = nmsa::regs;
  // The functional model has no clock: its figures come from the compiler's cycle prediction.
  // A board's DeviceRun::cycles is CYCLES_TOTAL, which also counts the UART round trips around
  // the run; its CYCLES_BUSY counter is the run alone.
  const bool on_board = dev->name().rfind("uart:", 0) == 0;
  auto run_cycles = [on_board](const nmsa::DeviceRun& run) {
    return on_board ? run.counter(r::CYCLES_BUSY_LO_OFFSET) : run.cycles;
  };
  const bool measured = !results.empty() && run_cycles(results[0].run) > 0;
  auto cycles_of = [&](const ModeResult& res) {
    return static_cast<double>(measured ? run_cycles(res.run) : res.predicted);
  };
  const double peak = static_cast<double>(caps.rows) * caps.cols * caps.pattern.m;
  const double useful = static_cast<double>(m) * k * n;
  auto utilization = [&](const ModeResult& res) { return useful / (cycles_of(res) * peak); };
  const bool both = results.size() == 2;
  const double speedup = both ? cycles_of(results[1]) / cycles_of(results[0]) : 0.0;
  const char* source = !measured ? "predicted" : on_board ? "board" : "rtl";
  bool all_exact = true;
  for (const auto& res : results) all_exact = all_exact && res.exact;

  const char* counter_names[] = {"cycles_total", "cycles_busy", "cycles_compute",
                                 "cycles_dma_stall", "macs", "tiles_sparse", "tiles_dense",
                                 "dma_rd_bytes", "dma_wr_bytes", "meta_bytes", "illegal_meta",
                                 "axi_errors"};
  if (a.json) {
    nlohmann::ordered_json js = {{"device", dev->name()}, {"m", m}, {"k", k}, {"n", n},
                                 {"seed", seed}, {"pattern", caps.pattern.name()},
                                 {"runs", nlohmann::ordered_json::array()}};
    for (const auto& res : results) {
      nlohmann::ordered_json counters;
      for (std::size_t c = 0; c < r::NUM_COUNTERS; ++c) {
        counters[counter_names[c]] = res.run.counters[c];
      }
      js["runs"].push_back({{"mode", res.mode}, {"status", res.run.describe()},
                            {"bit_exact", res.exact}, {"cycles", run_cycles(res.run)},
                            {"predicted_cycles", res.predicted},
                            {"utilization", utilization(res)}, {"counters", counters}});
    }
    js["figures_from"] = source;
    if (both) js["effective_speedup"] = speedup;
    std::cout << js.dump() << "\n";
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
      std::printf("%16llu", static_cast<unsigned long long>(run_cycles(res.run)));
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

// --- weight files (prune, compress) ------------------------------------------------------------

// A weight matrix [N_out x K] from a .npy file: float32, float64 or int8 (held as float, exactly),
// not empty, every value finite, K a multiple of M. Errors name the file and what is wrong.
struct WeightFile {
  nmsa::MatrixF values;
  bool int8 = false;
};

WeightFile read_weights(const std::string& path, nmsa::NmPattern p) {
  const nmsa::NpyArray raw = nmsa::read_npy(path);
  WeightFile w;
  if (raw.dtype == nmsa::NpyDtype::kInt8) {
    w.int8 = true;
    w.values = nmsa::read_npy_matrix_i8(path).cast<float>();
  } else if (raw.dtype == nmsa::NpyDtype::kFloat32 || raw.dtype == nmsa::NpyDtype::kFloat64) {
    w.values = nmsa::read_npy_matrix_f(path);
  } else {
    throw UsageError(path + ": weights must be float32, float64 or int8; the file holds " +
                     nmsa::npy_dtype_name(raw.dtype) + " (" + nmsa::npy_descr(raw.dtype) + ")");
  }
  const std::string shape =
      std::to_string(w.values.rows()) + " x " + std::to_string(w.values.cols());
  if (w.values.size() == 0) throw UsageError(path + ": the weight matrix is empty (" + shape + ")");
  for (Eigen::Index r = 0; r < w.values.rows(); ++r) {
    for (Eigen::Index c = 0; c < w.values.cols(); ++c) {
      if (!std::isfinite(w.values(r, c))) {
        throw UsageError(path + ": the weight at row " + std::to_string(r) + ", column " +
                         std::to_string(c) + " is " + std::to_string(w.values(r, c)) +
                         "; weights must be finite");
      }
    }
  }
  if (w.values.cols() % p.m != 0) {
    throw UsageError(path + ": K = " + std::to_string(w.values.cols()) +
                     " is not a multiple of M = " + std::to_string(p.m));
  }
  return w;
}

// The N:M pattern of --sparsity, which must be one the hardware runs.
nmsa::NmPattern hardware_pattern(const std::string& text) {
  try {
    const nmsa::NmPattern p = nmsa::parse_nm_pattern(text);
    nmsa::require_hardware_pattern(p);
    return p;
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("--sparsity: ") + e.what());
  }
}

// One output file of a command: written with the others once everything is computed, so that a
// failed command leaves no file behind.
std::pair<std::string, std::string> npy_output(const std::string& path, const nmsa::NpyArray& a) {
  const std::vector<std::uint8_t> bytes = nmsa::serialize_npy(a);
  return {path, std::string(bytes.begin(), bytes.end())};
}

template <typename MatrixT>
std::pair<std::string, std::string> npy_output(const std::string& path, const MatrixT& m) {
  return npy_output(path, nmsa::to_npy_array(m));
}

// Inputs and outputs of one command, by role: two roles on one file would lose an output or
// overwrite an input, so that is an error before any work starts.
void require_distinct_files(const std::vector<std::pair<std::string, std::string>>& roles) {
  std::map<std::string, std::string> seen;  // canonical path -> role
  for (const auto& [role, path] : roles) {
    if (path.empty()) continue;
    std::error_code ec;
    std::string key = std::filesystem::weakly_canonical(path, ec).string();
    if (ec) key = path;
    const auto [it, fresh] = seen.emplace(key, role);
    if (!fresh) {
      throw UsageError(path + " is given as both " + it->second + " and " + role +
                       ": each needs a file of its own");
    }
  }
}

// Outputs of one command, by role, each checked before any work starts: a directory, a device or a
// missing directory found only at the write would cost the run (and, for a set, its outputs).
void require_output_paths(const std::vector<std::pair<std::string, std::string>>& roles) {
  for (const auto& [role, path] : roles) {
    if (path.empty()) continue;
    try {
      nmsa::require_output_path(path);
    } catch (const std::runtime_error& e) {
      throw UsageError(std::string(e.what()) + " (" + role + ")");
    }
  }
}

// --- nmsa prune ----------------------------------------------------------------------------------

int cmd_prune(const PruneArgs& a) {
  const std::string& in = a.in;
  const std::string& out = a.out;
  const nmsa::NmPattern p = hardware_pattern(a.sparsity);
  const std::string perm_path = out.substr(0, out.rfind(".npy")) + ".perm.npy";
  require_distinct_files(
      {{"IN", in}, {"OUT", out}, {"the permutation", a.permute ? perm_path : ""}});
  require_output_paths({{"OUT", out}, {"the permutation", a.permute ? perm_path : ""}});
  const WeightFile file = read_weights(in, p);
  nmsa::MatrixF w = file.values;
  std::vector<std::pair<std::string, std::string>> outputs;
  const double plain = nmsa::retained_magnitude(nmsa::prune_nm(w, p));
  const double total = w.cwiseAbs().cast<double>().sum();
  if (a.permute) {
    nmsa::PermutationOptions options;
    options.seed = a.seed;
    const std::vector<int> perm = nmsa::search_input_permutation(w, p, options);
    w = nmsa::apply_column_permutation(w, perm);
    nmsa::MatrixI32 perm_row(1, static_cast<Eigen::Index>(perm.size()));
    for (std::size_t j = 0; j < perm.size(); ++j) perm_row(0, static_cast<Eigen::Index>(j)) = perm[j];
    outputs.push_back(npy_output(perm_path, perm_row));
  }
  const nmsa::MatrixF pruned = nmsa::prune_nm(w, p);
  const double kept = nmsa::retained_magnitude(pruned);
  if (file.int8) {
    outputs.push_back(npy_output(out, nmsa::MatrixI8(pruned.cast<std::int8_t>())));
  } else {
    outputs.push_back(npy_output(out, pruned));
  }
  nmsa::write_files_atomically(outputs);
  const auto nonzeros = (pruned.array() != 0.0f).count();
  std::printf("pruned             %s -> %s (%ld x %ld, %s)\n", in.c_str(), out.c_str(),
              static_cast<long>(w.rows()), static_cast<long>(w.cols()), p.name().c_str());
  if (a.permute) std::printf("permutation        %s\n", perm_path.c_str());
  std::printf("nonzeros           %ld of %ld (%.1f%%)\n", static_cast<long>(nonzeros),
              static_cast<long>(pruned.size()), 100.0 * nonzeros / pruned.size());
  std::printf("retained magnitude %.2f%% of the total", total > 0 ? 100.0 * kept / total : 100.0);
  if (a.permute) std::printf(" (%.2f%% without the permutation)", total > 0 ? 100.0 * plain / total : 100.0);
  std::printf("\n");
  return 0;
}

// --- nmsa compress -------------------------------------------------------------------------------

int cmd_compress(const CompressArgs& a) {
  const std::string& in = a.in;
  const nmsa::NmPattern p = hardware_pattern(a.sparsity);
  require_distinct_files(
      {{"IN", in}, {"VALUES", a.values}, {"META", a.meta}, {"--scales", a.scales}});
  // --scales is checked even when IN is int8 and it goes unused.
  require_output_paths({{"VALUES", a.values}, {"META", a.meta}, {"--scales", a.scales}});
  const WeightFile file = read_weights(in, p);
  std::vector<std::pair<std::string, std::string>> outputs;
  nmsa::MatrixI8 w;
  if (file.int8) {
    w = file.values.cast<std::int8_t>();
  } else {
    if (a.scales.empty()) throw UsageError(in + " is float: --scales SCALES.npy is needed");
    const nmsa::QuantizedWeights q = nmsa::quantize_weights_per_channel(file.values);
    w = q.values;
    nmsa::MatrixF scales(1, static_cast<Eigen::Index>(q.scales.size()));
    for (std::size_t i = 0; i < q.scales.size(); ++i) scales(0, static_cast<Eigen::Index>(i)) = q.scales[i];
    outputs.push_back(npy_output(a.scales, scales));
  }
  nmsa::CompressedWeights c;
  try {
    c = nmsa::compress(w, p);
  } catch (const std::invalid_argument& e) {
    throw UsageError(in + ": " + e.what() + " (run nmsa prune first)");
  }
  const nmsa::Matrix<std::uint8_t> packed = nmsa::pack_meta(c.meta, p);
  outputs.push_back(npy_output(a.values, c.values));
  outputs.push_back(npy_output(a.meta, packed));
  nmsa::write_files_atomically(outputs);
  // Sizes are the arrays' bytes as the files hold them (each .npy adds its header).
  const double dense_bytes = static_cast<double>(w.size());
  const double value_bytes = static_cast<double>(c.values.size());
  const double meta_bytes = static_cast<double>(packed.size());
  std::printf("compressed         %s (%ld x %ld, %s)\n", in.c_str(), static_cast<long>(w.rows()),
              static_cast<long>(w.cols()), p.name().c_str());
  std::printf("values             %s: %ld x %ld int8, %.0f bytes\n", a.values.c_str(),
              static_cast<long>(c.values.rows()), static_cast<long>(c.values.cols()), value_bytes);
  std::printf("metadata           %s: %ld x %ld uint8, %.0f bytes (%d bits per group in %d)\n",
              a.meta.c_str(), static_cast<long>(packed.rows()), static_cast<long>(packed.cols()),
              meta_bytes, p.meta_bits(), nmsa::meta_field_stride_bits(p));
  std::printf("size vs dense INT8 %.1f%% (values %.1f%% + metadata %.1f%%)\n",
              100 * (value_bytes + meta_bytes) / dense_bytes, 100 * value_bytes / dense_bytes,
              100 * meta_bytes / dense_bytes);
  return 0;
}

// --- nmsa run ------------------------------------------------------------------------------------

// "NAME=FILE" split at the first '='; no '=': an empty name.
std::pair<std::string, std::string> split_binding(const std::string& spec) {
  const auto eq = spec.find('=');
  if (eq == std::string::npos) return {"", spec};
  return {spec.substr(0, eq), spec.substr(eq + 1)};
}

std::string value_names(const std::vector<nmsa::ValueInfo>& values) {
  std::string names;
  for (const auto& v : values) names += (names.empty() ? "'" : ", '") + v.name + "'";
  return names.empty() ? "none" : names;
}

// A NaN or infinity in an input would surface deep in a layer, naming the node and not the file.
void require_finite(const nmsa::Tensor& t, const std::string& what) {
  if (!t.is_float()) return;
  for (std::size_t i = 0; i < t.floats.size(); ++i) {
    if (std::isfinite(t.floats[i])) continue;
    std::string index;  // the element's index, last axis fastest
    std::size_t rest = i;
    for (std::size_t d = t.shape.size(); d-- > 0;) {
      const auto extent = static_cast<std::size_t>(t.shape[d]);
      index = std::to_string(rest % extent) + (index.empty() ? "" : ", ") + index;
      rest /= extent;
    }
    throw UsageError(what + ": the value at [" + index + "] is " +
                     (std::isnan(t.floats[i]) ? "nan" : t.floats[i] < 0 ? "-inf" : "inf") + "; inputs must be finite");
  }
}

// The tensors of --input, one for every graph input: an unknown, repeated or missing name is an
// error, never a silent pick.
std::map<std::string, nmsa::Tensor> read_inputs(const nmsa::Graph& graph,
                                                const std::vector<std::string>& specs) {
  std::map<std::string, nmsa::Tensor> bound;
  for (const std::string& spec : specs) {
    auto [name, path] = split_binding(spec);
    if (name.empty()) {
      if (graph.inputs.size() != 1 || specs.size() != 1) {
        throw UsageError("--input " + spec + " names no input, and the model has " +
                         std::to_string(graph.inputs.size()) + " (" +
                         value_names(graph.inputs) + "): use --input NAME=FILE for each");
      }
      name = graph.inputs[0].name;
    }
    const auto info = std::find_if(graph.inputs.begin(), graph.inputs.end(),
                                   [&](const nmsa::ValueInfo& v) { return v.name == name; });
    if (info == graph.inputs.end()) {
      throw UsageError("--input " + spec + ": the model has no input '" + name + "' (its inputs: " +
                       value_names(graph.inputs) + ")");
    }
    if (bound.count(name)) throw UsageError("--input: '" + name + "' is given twice");
    const std::string what = path + " (input '" + name + "')";
    bound[name] = nmsa::tensor_from_npy(nmsa::read_npy(path), info->type, what);
    const std::vector<std::int64_t>& got = bound[name].shape;
    bool fits = !info->shape || info->shape->size() == got.size();
    for (std::size_t d = 0; fits && info->shape && d < got.size(); ++d) {
      fits = (*info->shape)[d] < 0 || (*info->shape)[d] == got[d];
    }
    if (!fits) {  // named here, with the file: the runtime's own check knows only the model
      std::string declared;
      for (std::int64_t d : *info->shape) declared += (declared.empty() ? "" : "x") + std::to_string(d);
      throw UsageError(what + ": " + bound[name].describe() + ", the model declares [" + declared + "]");
    }
    require_finite(bound[name], what);
  }
  for (const auto& v : graph.inputs) {
    if (!bound.count(v.name)) {
      throw UsageError("--input: the model's input '" + v.name + "' is not given (its inputs: " +
                       value_names(graph.inputs) + ")");
    }
  }
  return bound;
}

// Where --output puts each graph output: output name -> file. Checked before the model runs.
std::map<std::string, std::string> output_files(const nmsa::Graph& graph,
                                                const std::vector<std::string>& specs) {
  std::map<std::string, std::string> files;
  if (specs.size() == 1 && split_binding(specs[0]).first.empty()) {
    const std::string& path = specs[0];
    const bool is_file = path.size() > 4 && path.compare(path.size() - 4, 4, ".npy") == 0;
    if (is_file) {
      if (graph.outputs.size() != 1) {
        throw UsageError("--output " + path + ": the model has " +
                         std::to_string(graph.outputs.size()) + " outputs (" +
                         value_names(graph.outputs) +
                         "): give a directory or NAME=FILE for each");
      }
      files[graph.outputs[0].name] = path;
      return files;
    }
    // A directory: one file per output, its name made safe for a file system.
    std::map<std::string, std::string> owner;
    for (const auto& v : graph.outputs) {
      std::string safe = v.name;
      for (char& c : safe) {
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') c = '_';
      }
      if (owner.count(safe)) {
        throw UsageError("--output " + path + ": outputs '" + owner[safe] + "' and '" + v.name +
                         "' would both be written to " + safe + ".npy; use NAME=FILE");
      }
      owner[safe] = v.name;
      files[v.name] = (std::filesystem::path(path) / (safe + ".npy")).string();
    }
    return files;
  }
  for (const std::string& spec : specs) {
    const auto [name, path] = split_binding(spec);
    if (name.empty()) {
      throw UsageError("--output " + spec + ": with several --output, each is NAME=FILE");
    }
    const bool known = std::any_of(graph.outputs.begin(), graph.outputs.end(),
                                   [&](const nmsa::ValueInfo& v) { return v.name == name; });
    if (!known) {
      throw UsageError("--output " + spec + ": the model has no output '" + name +
                       "' (its outputs: " + value_names(graph.outputs) + ")");
    }
    if (!files.emplace(name, path).second) {
      throw UsageError("--output: '" + name + "' is given twice");
    }
  }
  return files;
}

// Rows [first, first + count) of a tensor whose first axis is the batch.
nmsa::Tensor rows_of(const nmsa::Tensor& t, std::int64_t first, std::int64_t count) {
  nmsa::Tensor out = t;
  const std::int64_t per_row = t.shape[0] == 0 ? 0 : t.size() / t.shape[0];
  out.shape[0] = count;
  if (t.is_float()) {
    out.floats.assign(t.floats.begin() + first * per_row, t.floats.begin() + (first + count) * per_row);
  } else {
    out.ints.assign(t.ints.begin() + first * per_row, t.ints.begin() + (first + count) * per_row);
  }
  return out;
}

// The device cycles of every layer so far: measured, or the cycle model's predictions on a
// device without a clock (the functional model).
struct DeviceCycles {
  std::uint64_t measured = 0, predicted = 0;
};

DeviceCycles device_cycles(const nmsa::Runtime& runtime) {
  DeviceCycles c;
  for (const auto& layer : runtime.layers()) {
    c.measured += layer.device.cycles;
    c.predicted += layer.device.predicted_cycles;
  }
  return c;
}

// The graph run on `batch` rows of every input at a time, the outputs joined along their first
// axis: what a server running batches of that size computes. Every input must have the same
// number of rows, and every output one row per input row. Each batch's device cycles go to
// `batch_cycles`.
std::map<std::string, nmsa::Tensor> run_in_batches(nmsa::Runtime& runtime,
                                                   const std::map<std::string, nmsa::Tensor>& inputs,
                                                   std::int64_t batch,
                                                   std::vector<DeviceCycles>& batch_cycles) {
  std::int64_t rows = -1;
  for (const auto& [name, t] : inputs) {
    if (t.rank() < 1 || (rows >= 0 && t.shape[0] != rows)) {
      throw UsageError("--batch: every input needs the same first axis; '" + name + "' is " +
                       t.describe());
    }
    rows = t.shape[0];
  }
  std::map<std::string, nmsa::Tensor> joined;
  for (std::int64_t first = 0; first < rows; first += batch) {
    const std::int64_t count = std::min(batch, rows - first);
    std::map<std::string, nmsa::Tensor> part;
    for (const auto& [name, t] : inputs) part.emplace(name, rows_of(t, first, count));
    const DeviceCycles before = device_cycles(runtime);
    std::map<std::string, nmsa::Tensor> outputs = runtime.run(part);
    const DeviceCycles after = device_cycles(runtime);
    batch_cycles.push_back({after.measured - before.measured, after.predicted - before.predicted});
    for (auto& [name, y] : outputs) {
      if (y.rank() < 1 || y.shape[0] != count) {
        throw UsageError("--batch: the output '" + name + "' is " + y.describe() + " for " +
                         std::to_string(count) + " input rows, not one row per input row");
      }
      auto [at, fresh] = joined.emplace(name, y);
      if (fresh) continue;
      nmsa::Tensor& all = at->second;
      all.shape[0] += count;
      all.floats.insert(all.floats.end(), y.floats.begin(), y.floats.end());
      all.ints.insert(all.ints.end(), y.ints.begin(), y.ints.end());
    }
  }
  return joined;
}

// --rows FIRST:END against an input of `rows` rows: {FIRST, END - FIRST}.
std::pair<std::int64_t, std::int64_t> row_range(const std::string& spec, std::int64_t rows) {
  const std::size_t colon = spec.find(':');
  std::int64_t first = -1, end = -1;
  try {
    std::size_t used_first = 0, used_end = 0;
    if (colon != std::string::npos) {
      first = std::stoll(spec.substr(0, colon), &used_first);
      end = std::stoll(spec.substr(colon + 1), &used_end);
    }
    if (used_first != colon || used_end != spec.size() - colon - 1) first = -1;
  } catch (const std::exception&) {
    first = -1;
  }
  if (first < 0 || end <= first || end > rows) {
    throw UsageError("--rows " + spec + ": want FIRST:END with 0 <= FIRST < END <= " +
                     std::to_string(rows) + " (the input's rows)");
  }
  return {first, end - first};
}

int cmd_run(const RunArgs& a) {
  nmsa::Graph graph = nmsa::load_onnx_model(a.model);
  if (graph.inputs.empty()) throw UsageError(a.model + " has no runtime input");
  std::map<std::string, nmsa::Tensor> inputs = read_inputs(graph, a.inputs);
  const std::map<std::string, std::string> files = output_files(graph, a.outputs);
  {
    std::vector<std::pair<std::string, std::string>> roles{{"the model", a.model},
                                                           {"--labels", a.labels}};
    for (const std::string& spec : a.inputs) {
      roles.push_back({"--input " + spec, split_binding(spec).second});
    }
    for (const auto& [name, path] : files) {
      roles.push_back({"the output '" + name + "'", path});
      if (std::filesystem::is_directory(path)) {
        throw UsageError(path + ": cannot write: a directory, not a file (the output '" + name +
                         "')");
      }
    }
    require_distinct_files(roles);
  }
  const nmsa::Tensor& first_input = inputs.at(graph.inputs[0].name);
  nmsa::Matrix<std::uint8_t> labels;
  if (!a.labels.empty()) {
    try {
      labels = nmsa::read_npy_matrix_u8(a.labels);
    } catch (const std::exception& e) {
      throw UsageError(e.what());
    }
    if (first_input.rank() < 1 || labels.size() != first_input.shape[0]) {
      throw UsageError(a.labels + ": " + std::to_string(labels.size()) + " labels for " +
                       first_input.describe() + " (one per row)");
    }
  }

  std::int64_t first_row = 0;
  if (!a.rows.empty()) {
    if (first_input.rank() < 1) throw UsageError("--rows: the input is " + first_input.describe());
    const std::int64_t all_rows = first_input.shape[0];
    const auto [first, count] = row_range(a.rows, all_rows);
    for (auto& [name, t] : inputs) {
      if (t.rank() < 1 || t.shape[0] != all_rows) {
        throw UsageError("--rows: every input needs the same first axis; '" + name + "' is " +
                         t.describe());
      }
      t = rows_of(t, first, count);
    }
    first_row = first;
  }

  const bool rtl = a.device.backend == "rtl";
  if (a.memory_seed_option->count() > 0 && !rtl) {
    throw UsageError("--memory-seed applies to --backend rtl only (the memory model's seed)");
  }
  const bool demo_memory = a.host_memory == "demo";
  if (demo_memory && a.device.backend.rfind("uart:", 0) == 0) {
    throw UsageError("--host-memory demo does not apply to a board: it has its own memory");
  }
  nmsa::tb::AxiMemoryConfig memory;
  if (demo_memory && rtl) {
    try {
      memory = nmsa::tb::demo_host_memory(nmsa::DeviceCaps::named(a.device.config));
    } catch (const std::invalid_argument& e) {
      throw UsageError(std::string("--config: ") + e.what());
    }
  }
  auto dev = open_device(a.device, memory, a.memory_seed);
  nmsa::RuntimeOptions options;
  options.allow_sparse = !a.dense;
  options.check_golden = a.check_golden;
  options.chain_layers = !a.no_chain;
  if (demo_memory) options.memory = nmsa::tb::demo_host_memory_perf();
  nmsa::Runtime runtime(std::move(graph), *dev, options);
  std::vector<DeviceCycles> batch_cycles;
  const auto outputs =
      a.batch > 0 ? run_in_batches(runtime, inputs, a.batch, batch_cycles) : runtime.run(inputs);

  // The functional model has no clock: its cycles are the cycle model's predictions.
  const bool predicted = runtime.layers().end() !=
                         std::find_if(runtime.layers().begin(), runtime.layers().end(),
                                      [](const nmsa::LayerReport& l) {
                                        return l.device.predicted_cycles != 0;
                                      });
  const auto layer_cycles = [&](const nmsa::LayerReport& l) {
    return predicted ? l.device.predicted_cycles : l.device.cycles;
  };
  std::printf("%-28s %-12s %-14s %10s  %s\n", "layer", "op", "placement",
              predicted ? "pred. cyc." : "cycles", "reason");
  // Every node, in graph order: fused nodes name the layer they run in, folded constants say so.
  for (const auto& layer : runtime.layers()) {
    const std::string placement = !layer.fused_into.empty() ? "fused"
                                  : layer.folded            ? "folded"
                                                 : std::string(nmsa::to_string(layer.placement));
    std::printf("%-28s %-12s %-14s %10llu  %s\n", layer.name.substr(0, 28).c_str(),
                layer.op_type.c_str(), placement.c_str(),
                static_cast<unsigned long long>(layer_cycles(layer)), layer.reason.c_str());
  }
  const nmsa::PlacementCounts counts = runtime.counts();
  std::printf("\nlayers: %zu sparse, %zu dense on the device, %zu on the host; fallbacks: %zu "
              "dense, %zu host\n",
              counts.device_sparse, counts.device_dense, counts.host, counts.dense_fallbacks,
              counts.host_fallbacks());
  std::string last_stream;
  for (const auto& layer : runtime.layers()) {
    if (layer.stream.empty() || layer.stream == last_stream) continue;
    std::printf("one command stream: %s\n", layer.stream.c_str());
    last_stream = layer.stream;
  }
  const DeviceCycles total = device_cycles(runtime);
  std::printf("device cycles%s: %llu\n", predicted ? " (predicted by the cycle model)" : "",
              static_cast<unsigned long long>(predicted ? total.predicted : total.measured));
  const nmsa::HostStats host = runtime.host_total();
  if (host.runs > 0) {
    std::printf("host layers: %llu runs, %.3f ms wall clock on this machine (not device time)\n",
                static_cast<unsigned long long>(host.runs), host.seconds * 1e3);
  }
  if (!batch_cycles.empty()) {
    std::printf("batch device cycles:");
    for (const DeviceCycles& c : batch_cycles) {
      std::printf(" %llu", static_cast<unsigned long long>(predicted ? c.predicted : c.measured));
    }
    std::printf("\n");
  }
  if (a.check_golden) {
    std::uint64_t programs = 0, checked = 0;
    for (const auto& layer : runtime.layers()) {
      programs += layer.device.programs;
      checked += layer.device.golden_checked;
    }
    std::printf("golden model: %llu of %llu device GEMMs checked, every one bit-exact\n",
                static_cast<unsigned long long>(checked),
                static_cast<unsigned long long>(programs));
  }
  if (!a.labels.empty()) {
    const nmsa::Tensor& y = outputs.at(runtime.graph().outputs.at(0).name);
    const std::int64_t rows = inputs.at(runtime.graph().inputs.at(0).name).shape[0];
    if (!y.is_float() || y.rank() != 2 || y.shape[0] != rows) {
      throw UsageError("--labels: the first output is " + y.describe() + ", not float [" +
                       std::to_string(rows) + " x classes]");
    }
    const std::int64_t classes = y.shape[1];
    std::int64_t correct = 0;
    for (std::int64_t r = 0; r < rows; ++r) {
      const auto row = y.floats.begin() + r * classes;
      const auto predicted = std::max_element(row, row + classes) - row;
      correct += predicted == labels.data()[first_row + r] ? 1 : 0;
    }
    std::printf("top-1 accuracy: %lld / %lld = %.4f\n", static_cast<long long>(correct),
                static_cast<long long>(rows),
                static_cast<double>(correct) / static_cast<double>(std::max<std::int64_t>(rows, 1)));
  }
  for (const auto& [name, tensor] : outputs) {
    std::printf("output %s: %s\n", name.c_str(), tensor.describe().c_str());
    const std::size_t shown = std::min<std::size_t>(tensor.size(), 10);
    for (std::size_t i = 0; i < shown; ++i) {
      if (tensor.is_float()) {
        std::printf("%s%.6g", i ? " " : "  ", tensor.floats[i]);
      } else {
        std::printf("%s%lld", i ? " " : "  ", static_cast<long long>(tensor.ints[i]));
      }
    }
    if (shown) std::printf("%s\n", static_cast<std::size_t>(tensor.size()) > shown ? " ..." : "");
  }
  std::vector<std::pair<std::string, std::string>> written;
  for (const auto& [name, path] : files) {
    written.push_back(npy_output(path, nmsa::npy_from_tensor(outputs.at(name))));
  }
  nmsa::write_files_creating_directories(written);
  for (const auto& [name, path] : files) std::printf("wrote %s (output '%s')\n", path.c_str(), name.c_str());
  return 0;
}

// --- nmsa gate -----------------------------------------------------------------------------------

int cmd_gate(const GateArgs& a) {
  const nmsa::ReportSummary baseline = nmsa::read_report_summary(a.baseline);
  // Limits given win; without any, the baseline's own release criteria decide.
  const bool from_baseline = !a.limits.any();
  const nmsa::GateLimits& limits = from_baseline ? baseline.release_criteria : a.limits;
  // A gate that checks nothing would pass every release: refuse it rather than pass.
  if (!limits.any()) {
    throw UsageError("gate needs at least one limit: --max-quality-drop, --min-speedup, "
                     "--max-p99-cycles or --bit-exact (" + baseline.source +
                     " states no release criteria)");
  }
  const nmsa::ReportSummary candidate = nmsa::read_report_summary(a.candidate);
  const nmsa::GateResult result = nmsa::evaluate_gate(baseline, candidate, limits);
  std::printf("baseline  %s\ncandidate %s\n", baseline.source.c_str(), candidate.source.c_str());
  if (from_baseline) std::printf("limits: the baseline's release criteria\n");
  for (const std::string& reason : result.reasons) std::printf("%s\n", reason.c_str());
  std::printf("gate: %s\n", result.pass ? "PASS" : "FAIL");
  return result.pass ? 0 : 1;
}

// --- nmsa triage ---------------------------------------------------------------------------------

int cmd_triage(const TriageArgs& a) {
  require_distinct_files({{"--baseline", a.baseline}, {"--memo", a.memo}});  // the same report
  require_distinct_files({{"--candidate", a.candidate}, {"--memo", a.memo}});  // twice is allowed
  require_output_paths({{"--memo", a.memo}});
  const nmsa::TriageResult r = nmsa::triage_reports(a.baseline, a.candidate, a.limits);
  if (!a.memo.empty()) nmsa::write_files_atomically({{a.memo, nmsa::triage_memo(r)}});
  std::fputs((a.json ? nmsa::triage_json(r) : nmsa::triage_text(r)).c_str(), stdout);
  return r.regressed() ? 1 : 0;
}

// --- nmsa sweep ----------------------------------------------------------------------------------

int cmd_sweep(const SweepArgs& a) {
  nmsa::DeviceCaps caps;
  try {
    caps = nmsa::make_model_device(a.config)->caps();
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("--config: ") + e.what());
  }
  if (std::filesystem::exists(a.out) && !std::filesystem::is_directory(a.out)) throw UsageError("--out " + a.out + ": not a directory");
  const nmsa::LensResult r = nmsa::run_bandwidth_lens(caps, a.settings);
  std::printf("bandwidth lens on %s (cycle-model predictions, AXI %d bits, read latency %d)\n\n",
              r.device.c_str(), caps.axi_data_w, r.settings.base_latency);
  std::printf("%-9s %12s %12s %10s %10s %10s %8s %12s\n", "family", "knee sparse", "knee dense",
              "at knee", "compute", "memory", "bytes", "gain < 1.1x");
  for (const nmsa::LensFamily& f : r.families) {
    std::printf("%-9s %8.0f B/c %8.0f B/c %9.2fx %9.2fx %9.2fx %7.2fx %12s\n", f.family.c_str(),
                f.knee_sparse, f.knee_dense, f.speedup_at_knee, f.speedup_compute_bound,
                f.speedup_memory_bound, f.bytes_ratio,
                f.vanishes_below > 0 ? (std::to_string(static_cast<int>(f.vanishes_below)) +
                                        " B/c and below").c_str()
                                     : "never");
  }
  const std::filesystem::path dir(a.out);
  nmsa::write_files_creating_directories({{(dir / "sweep.json").string(), nmsa::lens_json(r)},
                                          {(dir / "sweep.html").string(), nmsa::lens_html(r)}});
  std::printf("\nwrote %s and %s\n", (dir / "sweep.json").c_str(), (dir / "sweep.html").c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  nmsa::cli::CommandLine cl;
  const int parsed = nmsa::cli::parse_command_line(cl, argc, argv);
  if (parsed >= 0) return parsed;
  try {
    if (*cl.info_cmd) return cmd_info(cl.info);
    if (*cl.gemm_cmd) return cmd_gemm(cl.gemm);
    if (*cl.prune_cmd) return cmd_prune(cl.prune);
    if (*cl.compress_cmd) return cmd_compress(cl.compress);
    if (*cl.run_cmd) return cmd_run(cl.run);
    if (*cl.gate_cmd) return cmd_gate(cl.gate);
    if (*cl.sweep_cmd) return cmd_sweep(cl.sweep);
    if (*cl.triage_cmd) return cmd_triage(cl.triage);
    return 2;  // require_subcommand(1) leaves no other case
  } catch (const UsageError& e) {
    std::cerr << "nmsa: " << e.what() << "\n";
    return 2;
  } catch (const nmsa::LinkError& e) {
    // The board did not answer, answered wrongly, or could not be reached.
    std::cerr << "nmsa: " << e.what() << "\n";
    return 1;
  } catch (const std::invalid_argument& e) {
    std::cerr << "nmsa: " << e.what() << "\n";
    return 2;
  } catch (const std::runtime_error& e) {
    // Unreadable or malformed input files (.npy, ONNX) and unsupported models.
    std::cerr << "nmsa: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "nmsa: " << e.what() << "\n";
    return 1;
  }
}
