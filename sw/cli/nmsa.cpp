// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// nmsa: the command-line front end of libnmsa. Every subcommand talks to the device only through
// nmsa::Device, backed by the Verilated RTL (--backend rtl), the functional model (--backend
// model) or an FPGA board over its UART (--backend uart:/dev/ttyUSB0). Exit codes: 0 success,
// 1 a result that does not match the golden model, a device error or a failure of the link to a
// board, 2 bad input (with a message naming it).
#include <cstdio>
#include <cstring>
#include <iostream>
#include <limits>
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
#include "nmsa/npy.hpp"
#include "nmsa/onnx_model.hpp"
#include "nmsa/progress.hpp"
#include "nmsa/prune.hpp"
#include "nmsa/quant.hpp"
#include "nmsa/release_gate.hpp"
#include "nmsa/runtime.hpp"
#include "nmsa/sparse_format.hpp"
#include "nmsa/tb/rtl_device.hpp"
#include "nmsa/uart_device.hpp"
#include "options.hpp"

namespace {

using nmsa::cli::Options;
using nmsa::cli::UsageError;

std::unique_ptr<nmsa::Device> open_device(const Options& o) {
  const std::string backend = o.get("--backend", "rtl");
  if (backend.rfind("uart:", 0) == 0) {
    if (o.has("--config")) {
      throw UsageError("--config does not apply to --backend " + backend +
                       ": a board reports the configuration it was built with");
    }
    return nmsa::make_uart_device(backend);
  }
  const std::string config = o.get("--config", "default");
  if (backend == "model") return nmsa::make_model_device(config);
  if (backend == "rtl") return nmsa::tb::make_rtl_device(config);
  throw UsageError("--backend must be rtl, model or uart:<device>[@<baud>], not '" + backend + "'");
}

// The help text of --backend and --config, shared by the commands that take them.
const std::string kBackendHelp =
    "  --backend  rtl: the Verilated accelerator (default); model: the functional model;\n"
    "             uart:<device>[@<baud>]: an FPGA board on a serial port, e.g.\n"
    "             uart:/dev/ttyUSB0 (1000000 baud unless given; docs/fpga.md)\n"
    "  --config   named configuration of rtl/configs.json for rtl and model (default: default)\n";

const char* kMainHelp =
    "usage: nmsa <command> [options]\n"
    "\n"
    "commands:\n"
    "  info      the device's capabilities, read from its registers\n"
    "  gemm      a random GEMM on the device, checked against the golden model\n"
    "  prune     N:M-prune a weight matrix (.npy), optionally after a channel permutation search\n"
    "  compress  compress an N:M weight matrix (.npy) into values and metadata (.npy)\n"
    "  run       run an ONNX model layer by layer on the device, with its placement per layer\n"
    "  gate      the release gate: compare two deployment reports (report.json) against limits\n"
    "\n"
    "Run 'nmsa <command> --help' for the options of a command.\n";

const std::string kInfoHelp =
    "usage: nmsa info [--backend rtl|model|uart:DEVICE[@BAUD]] [--config NAME]\n"
    "\n"
    "Prints the capability registers of the device.\n" + kBackendHelp;

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
  const nmsa::HostMemory& mem = dev->memory();
  if (mem.alloc_limit() != std::numeric_limits<std::uint64_t>::max()) {
    std::printf("memory window   %llu KiB at 0x%llx\n",
                static_cast<unsigned long long>((mem.alloc_limit() - mem.alloc_base()) / 1024),
                static_cast<unsigned long long>(mem.alloc_base()));
  }
  return 0;
}

const std::string kGemmHelp =
    "usage: nmsa gemm --m ROWS --k K --n N_OUT [--sparsity N:M] [--mode sparse|dense|both]\n"
    "                 [--backend rtl|model|uart:DEVICE[@BAUD]] [--config NAME] [--seed S]\n"
    "                 [--json]\n"
    "\n"
    "Runs Y = X * W^T with random INT8 X [m x k] and W [n x k] (pruned to N:M for sparse mode),\n"
    "checks Y bit-exactly against the Eigen golden model, and prints cycles, utilization, the\n"
    "effective speedup (dense cycles / sparse cycles, with --mode both) and the counters.\n"
    "  --sparsity  must be the device's pattern (default: the device's)\n"
    "  --mode      default: both\n"
    "  --json      one JSON object on stdout instead of the table\n"
    "The model has no clock: its figures are the compiler's predictions. On a board the cycles\n"
    "are its CYCLES_BUSY counter (the run alone, without the UART traffic around it).\n" +
    kBackendHelp;

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
  if (o.has("--json")) {
    std::ostringstream js;
    js << "{\"device\": \"" << dev->name() << "\", \"m\": " << m << ", \"k\": " << k
       << ", \"n\": " << n << ", \"seed\": " << seed << ", \"pattern\": \""
       << caps.pattern.name() << "\", \"runs\": [";
    for (std::size_t i = 0; i < results.size(); ++i) {
      const auto& res = results[i];
      js << (i ? ", " : "") << "{\"mode\": \"" << res.mode << "\", \"status\": \""
         << res.run.describe() << "\", \"bit_exact\": " << (res.exact ? "true" : "false")
         << ", \"cycles\": " << run_cycles(res.run) << ", \"predicted_cycles\": " << res.predicted
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

const char* kPruneHelp =
    "usage: nmsa prune IN.npy OUT.npy [--sparsity N:M] [--permute] [--seed S]\n"
    "\n"
    "Magnitude N:M pruning along K of a weight matrix [N_out x K] (float32/float64 or int8).\n"
    "  --sparsity  default 2:4\n"
    "  --permute   search an input-channel permutation first (Pool & Yu, 2021); the permutation\n"
    "              is written to OUT.perm.npy (int32) and must be applied to the activations too\n";

int cmd_prune(const Options& o) {
  if (o.help()) {
    std::cout << kPruneHelp;
    return 0;
  }
  if (o.positional().size() != 2) throw UsageError("prune needs IN.npy and OUT.npy");
  const std::string in = o.positional()[0], out = o.positional()[1];
  const nmsa::NmPattern p = nmsa::parse_nm_pattern(o.get("--sparsity", "2:4"));
  const nmsa::NpyArray raw = nmsa::read_npy(in);
  nmsa::MatrixF w = raw.dtype == nmsa::NpyDtype::kInt8
                        ? nmsa::read_npy_matrix_i8(in).cast<float>().eval()
                        : nmsa::read_npy_matrix_f(in);
  if (w.cols() % p.m != 0) {
    throw UsageError(in + ": K = " + std::to_string(w.cols()) + " is not a multiple of M = " +
                     std::to_string(p.m));
  }
  const double plain = nmsa::retained_magnitude(nmsa::prune_nm(w, p));
  const double total = w.cwiseAbs().cast<double>().sum();
  if (o.has("--permute")) {
    nmsa::PermutationOptions options;
    options.seed = static_cast<std::uint64_t>(o.get_int("--seed", 2021, 0, 1L << 62));
    const std::vector<int> perm = nmsa::search_input_permutation(w, p, options);
    w = nmsa::apply_column_permutation(w, perm);
    nmsa::MatrixI32 perm_row(1, static_cast<Eigen::Index>(perm.size()));
    for (std::size_t j = 0; j < perm.size(); ++j) perm_row(0, static_cast<Eigen::Index>(j)) = perm[j];
    const std::string perm_path = out.substr(0, out.rfind(".npy")) + ".perm.npy";
    nmsa::write_npy(perm_path, perm_row);
    std::printf("permutation        %s\n", perm_path.c_str());
  }
  const nmsa::MatrixF pruned = nmsa::prune_nm(w, p);
  const double kept = nmsa::retained_magnitude(pruned);
  if (raw.dtype == nmsa::NpyDtype::kInt8) {
    nmsa::write_npy(out, nmsa::MatrixI8(pruned.cast<std::int8_t>()));
  } else {
    nmsa::write_npy(out, pruned);
  }
  const auto nonzeros = (pruned.array() != 0.0f).count();
  std::printf("pruned             %s -> %s (%ld x %ld, %s)\n", in.c_str(), out.c_str(),
              static_cast<long>(w.rows()), static_cast<long>(w.cols()), p.name().c_str());
  std::printf("nonzeros           %ld of %ld (%.1f%%)\n", static_cast<long>(nonzeros),
              static_cast<long>(pruned.size()), 100.0 * nonzeros / std::max<Eigen::Index>(1, pruned.size()));
  std::printf("retained magnitude %.2f%% of the total", total > 0 ? 100.0 * kept / total : 100.0);
  if (o.has("--permute")) std::printf(" (%.2f%% without the permutation)", total > 0 ? 100.0 * plain / total : 100.0);
  std::printf("\n");
  return 0;
}

const char* kCompressHelp =
    "usage: nmsa compress IN.npy VALUES.npy META.npy [--sparsity N:M] [--scales SCALES.npy]\n"
    "\n"
    "Compresses an N:M sparse weight matrix [N_out x K] (docs/format.md): VALUES [N_out x K*N/M]\n"
    "int8 and META [N_out x K/M] uint8, one metadata field per group. A float input is first\n"
    "quantized per output channel; then --scales names where its scales (float32) go.\n";

int cmd_compress(const Options& o) {
  if (o.help()) {
    std::cout << kCompressHelp;
    return 0;
  }
  if (o.positional().size() != 3) throw UsageError("compress needs IN.npy VALUES.npy META.npy");
  const std::string in = o.positional()[0];
  const nmsa::NmPattern p = nmsa::parse_nm_pattern(o.get("--sparsity", "2:4"));
  const nmsa::NpyArray raw = nmsa::read_npy(in);
  nmsa::MatrixI8 w;
  if (raw.dtype == nmsa::NpyDtype::kInt8) {
    w = nmsa::read_npy_matrix_i8(in);
  } else {
    if (!o.has("--scales")) throw UsageError(in + " is float: --scales SCALES.npy is needed");
    const nmsa::QuantizedWeights q = nmsa::quantize_weights_per_channel(nmsa::read_npy_matrix_f(in));
    w = q.values;
    nmsa::MatrixF scales(1, static_cast<Eigen::Index>(q.scales.size()));
    for (std::size_t i = 0; i < q.scales.size(); ++i) scales(0, static_cast<Eigen::Index>(i)) = q.scales[i];
    nmsa::write_npy(o.get("--scales", ""), scales);
  }
  if (w.cols() % p.m != 0) {
    throw UsageError(in + ": K = " + std::to_string(w.cols()) + " is not a multiple of M = " +
                     std::to_string(p.m));
  }
  nmsa::CompressedWeights c;
  try {
    c = nmsa::compress(w, p);
  } catch (const std::invalid_argument& e) {
    throw UsageError(in + ": " + e.what() + " (run nmsa prune first)");
  }
  nmsa::write_npy(o.positional()[1], c.values);
  nmsa::write_npy(o.positional()[2], c.meta);
  const double dense_bytes = static_cast<double>(w.size());
  const double value_bytes = static_cast<double>(c.values.size());
  const double meta_bytes = static_cast<double>(c.meta.size()) * p.meta_bits() / 8.0;
  std::printf("compressed         %s (%ld x %ld, %s)\n", in.c_str(), static_cast<long>(w.rows()),
              static_cast<long>(w.cols()), p.name().c_str());
  std::printf("values             %s: %.0f bytes\n", o.positional()[1].c_str(), value_bytes);
  std::printf("metadata           %s: %.0f bytes packed (%d bits per group)\n",
              o.positional()[2].c_str(), meta_bytes, p.meta_bits());
  std::printf("size vs dense INT8 %.1f%% (values %.1f%% + metadata %.1f%%)\n",
              100 * (value_bytes + meta_bytes) / dense_bytes, 100 * value_bytes / dense_bytes,
              100 * meta_bytes / dense_bytes);
  return 0;
}

// A float tensor of any rank from a float32 or float64 .npy file.
nmsa::Tensor float_tensor_from_npy(const std::string& path) {
  const nmsa::NpyArray raw = nmsa::read_npy(path);
  std::vector<float> values(static_cast<std::size_t>(raw.element_count()));
  if (raw.dtype == nmsa::NpyDtype::kFloat32) {
    std::memcpy(values.data(), raw.bytes.data(), values.size() * sizeof(float));
  } else if (raw.dtype == nmsa::NpyDtype::kFloat64) {
    for (std::size_t i = 0; i < values.size(); ++i) {
      double v = 0;
      std::memcpy(&v, raw.bytes.data() + 8 * i, 8);
      values[i] = static_cast<float>(v);
    }
  } else {
    throw UsageError(path + ": the model input must be float32 or float64");
  }
  return nmsa::Tensor::make_float(raw.shape, std::move(values));
}

const std::string kRunHelp =
    "usage: nmsa run MODEL.onnx --input X.npy [--output Y.npy]\n"
    "                [--backend rtl|model|uart:DEVICE[@BAUD]] [--config NAME] [--dense]\n"
    "\n"
    "Runs an ONNX model layer by layer: each layer sparse on the device, dense on the device\n"
    "(fallback) or on the host (unsupported operator), as the supported-layer matrix decides.\n"
    "Prints each layer's placement and reason, device cycles, and the output.\n"
    "  --input    float32 .npy for the model's first input (its shape must match)\n"
    "  --dense    run every device layer dense (for comparisons)\n" + kBackendHelp;

int cmd_run(const Options& o) {
  if (o.help()) {
    std::cout << kRunHelp;
    return 0;
  }
  if (o.positional().size() != 1) throw UsageError("run needs MODEL.onnx");
  if (!o.has("--input")) throw UsageError("run needs --input X.npy");
  nmsa::Graph graph = nmsa::load_onnx_model(o.positional()[0]);
  if (graph.inputs.empty()) throw UsageError(o.positional()[0] + " has no runtime input");
  const std::string input_name = graph.inputs[0].name;
  const nmsa::Tensor input = float_tensor_from_npy(o.get("--input", ""));

  auto dev = open_device(o);
  nmsa::RuntimeOptions options;
  options.allow_sparse = !o.has("--dense");
  nmsa::Runtime runtime(std::move(graph), *dev, options);
  const auto outputs = runtime.run({{input_name, input}});

  std::printf("%-28s %-12s %-14s %10s  %s\n", "layer", "op", "placement", "cycles", "reason");
  for (const auto& layer : runtime.layers()) {
    if (!layer.fused_into.empty()) continue;
    std::printf("%-28s %-12s %-14s %10llu  %s\n", layer.name.substr(0, 28).c_str(),
                layer.op_type.c_str(), std::string(nmsa::to_string(layer.placement)).c_str(),
                static_cast<unsigned long long>(layer.device.cycles), layer.reason.c_str());
  }
  const nmsa::PlacementCounts counts = runtime.counts();
  std::printf("\nlayers: %zu sparse, %zu dense on the device, %zu on the host; fallbacks: %zu "
              "dense, %zu host\n",
              counts.device_sparse, counts.device_dense, counts.host, counts.dense_fallbacks,
              counts.host_fallbacks());
  for (const auto& [name, tensor] : outputs) {
    std::printf("output %s: %s\n", name.c_str(), tensor.describe().c_str());
    const std::size_t shown = std::min<std::size_t>(tensor.floats.size(), 10);
    for (std::size_t i = 0; i < shown; ++i) std::printf("%s%.6g", i ? " " : "  ", tensor.floats[i]);
    if (shown) std::printf("%s\n", tensor.floats.size() > shown ? " ..." : "");
    if (o.has("--output") && tensor.is_float()) {
      nmsa::MatrixF y(1, static_cast<Eigen::Index>(tensor.floats.size()));
      for (std::size_t i = 0; i < tensor.floats.size(); ++i) y(0, static_cast<Eigen::Index>(i)) = tensor.floats[i];
      nmsa::write_npy(o.get("--output", ""), y);
    }
  }
  return 0;
}

const char* kGateHelp =
    "usage: nmsa gate --baseline A.json --candidate B.json [--max-quality-drop PP]\n"
    "                 [--min-speedup X] [--max-p99-cycles C]\n"
    "\n"
    "The release gate: checks the candidate deployment report against the baseline report and\n"
    "the limits given (at least one). A report directory stands for the report.json in it.\n"
    "Prints one line per check, then gate: PASS or gate: FAIL. Exit codes: 0 pass, 1 fail,\n"
    "2 bad options or an unreadable or malformed report.\n"
    "  --max-quality-drop  largest allowed drop in sparse INT8 top-1, baseline - candidate, in\n"
    "                      percentage points (at the limit passes; a negative one demands a gain)\n"
    "  --min-speedup       smallest allowed candidate effective speedup (all-dense / deployed\n"
    "                      device cycles)\n"
    "  --max-p99-cycles    largest allowed candidate p99 device cycles per batch\n";

int cmd_gate(const Options& o) {
  if (o.help()) {
    std::cout << kGateHelp;
    return 0;
  }
  if (!o.positional().empty()) {
    throw UsageError("gate takes no positional argument ('" + o.positional()[0] +
                     "'): use --baseline and --candidate");
  }
  for (const char* required : {"--baseline", "--candidate"}) {
    if (!o.has(required)) throw UsageError(std::string("gate needs ") + required + " REPORT.json");
  }
  nmsa::GateLimits limits;
  if (o.has("--max-quality-drop")) {
    limits.max_quality_drop_pp = o.get_double("--max-quality-drop", 0.0, -100.0, 100.0);
  }
  if (o.has("--min-speedup")) limits.min_speedup = o.get_double("--min-speedup", 0.0, 0.0, 1e6);
  if (o.has("--max-p99-cycles")) {
    limits.max_p99_cycles =
        static_cast<std::uint64_t>(o.get_int("--max-p99-cycles", 0, 0, 1L << 62));
  }
  // A gate that checks nothing would pass every release: refuse it rather than pass.
  if (!limits.max_quality_drop_pp && !limits.min_speedup && !limits.max_p99_cycles) {
    throw UsageError("gate needs at least one limit: --max-quality-drop, --min-speedup or "
                     "--max-p99-cycles");
  }
  const nmsa::ReportSummary baseline = nmsa::read_report_summary(o.get("--baseline", ""));
  const nmsa::ReportSummary candidate = nmsa::read_report_summary(o.get("--candidate", ""));
  const nmsa::GateResult result = nmsa::evaluate_gate(baseline, candidate, limits);
  std::printf("baseline  %s\ncandidate %s\n", baseline.source.c_str(), candidate.source.c_str());
  for (const std::string& reason : result.reasons) std::printf("%s\n", reason.c_str());
  std::printf("gate: %s\n", result.pass ? "PASS" : "FAIL");
  return result.pass ? 0 : 1;
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
    if (command == "prune") {
      return cmd_prune(Options(argc, argv, 2, {"--sparsity", "--seed"}, {"--permute"}));
    }
    if (command == "compress") {
      return cmd_compress(Options(argc, argv, 2, {"--sparsity", "--scales"}, {}));
    }
    if (command == "run") {
      return cmd_run(Options(argc, argv, 2, {"--input", "--output", "--backend", "--config"},
                             {"--dense"}));
    }
    if (command == "gate") {
      return cmd_gate(Options(argc, argv, 2,
                              {"--baseline", "--candidate", "--max-quality-drop", "--min-speedup",
                               "--max-p99-cycles"},
                              {}));
    }
    throw UsageError("unknown command '" + command + "'\n" + kMainHelp);
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
