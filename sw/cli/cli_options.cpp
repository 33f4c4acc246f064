// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
#include "cli_options.hpp"

#include <cctype>
#include <iostream>

#include "number_options.hpp"

namespace nmsa::cli {

namespace {

using nmsa::cli::non_empty;

void add_device_options(CLI::App* cmd, DeviceArgs& a) {
  cmd->add_option("--backend", a.backend,
                  "rtl: the Verilated accelerator (default); model: the functional model; "
                  "uart:<device>[@<baud>]: an FPGA board on a serial port, e.g. uart:/dev/ttyUSB0 "
                  "(1000000 baud unless given; docs/fpga.md)");
  a.config_option = cmd->add_option("--config", a.config,
                                    "named configuration of rtl/configs.json for rtl and model "
                                    "(default: default)")
                        ->check(non_empty());
}

CLI::App* add_info(CLI::App& app, InfoArgs& a) {
  CLI::App* cmd = app.add_subcommand("info", "the device's capabilities, read from its registers");
  add_device_options(cmd, a.device);
  return cmd;
}

CLI::App* add_gemm(CLI::App& app, GemmArgs& a) {
  CLI::App* cmd = app.add_subcommand(
      "gemm", "a random GEMM on the device, checked against the golden model");
  cmd->footer(
      "Runs Y = X * W^T with random INT8 X [m x k] and W [n x k] (pruned to N:M for sparse\n"
      "mode), checks Y bit-exactly against the Eigen golden model, and prints cycles,\n"
      "utilization, the effective speedup (dense cycles / sparse cycles, with --mode both) and\n"
      "the counters. The model has no clock: its figures are the compiler's predictions. On a\n"
      "board the cycles are its CYCLES_BUSY counter (the run alone, without the UART traffic\n"
      "around it).\n");
  cmd->add_option("--m", a.m, "activation rows")->required()->check(nmsa::cli::integer_in(1, 65535));
  cmd->add_option("--k", a.k, "reduction length")->required()->check(nmsa::cli::integer_in(1, 1 << 20));
  cmd->add_option("--n", a.n, "output channels")->required()->check(nmsa::cli::integer_in(1, 1 << 20));
  cmd->add_option("--sparsity", a.sparsity, "N:M; must be the device's pattern (default: it)")
      ->check(non_empty());
  cmd->add_option("--mode", a.mode, "sparse, dense or both (default)")
      ->check(CLI::IsMember({"sparse", "dense", "both"}));
  cmd->add_option("--seed", a.seed, "random seed (default 1)")
      ->check(nmsa::cli::integer_in(0, 1LL << 62));
  cmd->add_flag("--json", a.json, "one JSON object on stdout instead of the table");
  add_device_options(cmd, a.device);
  return cmd;
}

CLI::App* add_prune(CLI::App& app, PruneArgs& a) {
  CLI::App* cmd = app.add_subcommand(
      "prune",
      "N:M-prune a weight matrix (.npy), optionally after a channel permutation search");
  cmd->footer("Magnitude N:M pruning along K of a weight matrix [N_out x K] (float32, float64 or "
              "int8;\nOUT is int8 for int8, else float32). N:M is one the hardware runs: 1:4, 2:4 "
              "or 2:8.\n");
  cmd->add_option("in", a.in, "IN.npy")->required()->check(non_empty());
  cmd->add_option("out", a.out, "OUT.npy")->required()->check(non_empty());
  cmd->add_option("--sparsity", a.sparsity, "N:M (default 2:4)");
  CLI::Option* permute =
      cmd->add_flag("--permute", a.permute,
                    "search an input-channel permutation first; it is written to OUT.perm.npy "
                    "(int32) and must be applied to the activations too");
  // A seed without the search would be ignored silently: refuse it instead.
  cmd->add_option("--seed", a.seed, "seed of the permutation search (default 2021)")
      ->check(nmsa::cli::integer_in(0, 1LL << 62))
      ->needs(permute);
  return cmd;
}

CLI::App* add_compress(CLI::App& app, CompressArgs& a) {
  CLI::App* cmd = app.add_subcommand(
      "compress", "compress an N:M weight matrix (.npy) into values and metadata (.npy)");
  cmd->footer(
      "Compresses an N:M sparse weight matrix [N_out x K] (float32, float64 or int8;\n"
      "docs/format.md): VALUES [N_out x K*N/M] int8, the kept values group by group, and META\n"
      "[N_out x B] uint8, each row's metadata fields packed LSB-first (2:4: two groups a byte, the\n"
      "nibble order of PyTorch's meta tensor; 1:4: four; 2:8: one, 6 bits used). A float input is\n"
      "first quantized per output channel; then --scales names where its scales (float32) go.\n");
  cmd->add_option("in", a.in, "IN.npy")->required()->check(non_empty());
  cmd->add_option("values", a.values, "VALUES.npy")->required()->check(non_empty());
  cmd->add_option("meta", a.meta, "META.npy")->required()->check(non_empty());
  cmd->add_option("--sparsity", a.sparsity, "N:M: 1:4, 2:4 (default) or 2:8");
  cmd->add_option("--scales", a.scales, "SCALES.npy, for a float input")
      ->check(non_empty());
  return cmd;
}

CLI::App* add_run(CLI::App& app, RunArgs& a) {
  CLI::App* cmd = app.add_subcommand(
      "run", "run an ONNX model layer by layer on the device, with its placement per layer");
  cmd->footer(
      "Runs an ONNX model layer by layer: each layer sparse on the device, dense on the device\n"
      "(fallback) or on the host (unsupported operator), as the supported-layer matrix decides.\n"
      "Prints each layer's placement and reason, device cycles, and the outputs; with --labels\n"
      "also the top-1 accuracy. A quantized network in QDQ form (the demo's model.onnx) runs\n"
      "each layer as one device GEMM with bias, requantization and ReLU in its epilogue.\n"
      "Inputs and outputs are .npy files with the tensor's shape and dtype (float32 or float64\n"
      "for a float input).\n");
  cmd->add_option("model", a.model, "MODEL.onnx")->required()->check(non_empty());
  cmd->add_option("--input", a.inputs,
                  "NAME=X.npy for the model input NAME, repeated for every input; X.npy alone for "
                  "a model with one input")
      ->required()
      ->check(non_empty());
  cmd->add_option("--output", a.outputs,
                  "NAME=Y.npy for the output NAME (repeatable); a DIRECTORY (a path not ending in "
                  ".npy) for every output as DIRECTORY/NAME.npy; Y.npy alone for a model with one "
                  "output")
      ->check(non_empty());
  cmd->add_option("--labels", a.labels,
                  "uint8 .npy with the class of every input row: prints the top-1 accuracy of "
                  "the first output (its argmax per row)")
      ->check(non_empty());
  cmd->add_flag("--dense", a.dense, "run every device layer dense (for comparisons)");
  cmd->add_flag("--no-chain", a.no_chain,
                "run every device layer as its own program and START, instead of consecutive "
                "quantized layers as one command stream (for comparisons)");
  cmd->add_flag("--check-golden", a.check_golden,
                "compute every device GEMM again with the golden model and stop with an error "
                "naming the layer if the device's result differs in any bit");
  cmd->add_option("--batch", a.batch,
                  "rows per run: the inputs are split along their first axis and the outputs "
                  "joined again (a float layer calibrates on each run's input, so this "
                  "reproduces a run made in such batches, e.g. the demo's CNN; default: all rows "
                  "at once)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 40));
  cmd->add_option("--rows", a.rows,
                  "FIRST:END: run input rows FIRST..END-1 only (--labels still holds every row), "
                  "e.g. the part of the test set one of the demo's devices ran")
      ->check(non_empty());
  cmd->add_option("--host-memory", a.host_memory,
                  "fast: the backend's own memory (default; rtl: every burst answered after a "
                  "cycle); demo: the demo's host memory (16 bytes per cycle, 100 cycles of read "
                  "latency, 2% random read gaps on rtl; docs/demo.md), also told to the compiler, "
                  "so that the cycles are the report's")
      ->check(CLI::IsMember({"fast", "demo"}));
  a.memory_seed_option =
      cmd->add_option("--memory-seed", a.memory_seed,
                      "seed of the rtl backend's memory model, which draws the random read gaps "
                      "of --host-memory demo (default 1)")
          ->check(nmsa::cli::integer_in(0, 1LL << 62));
  add_device_options(cmd, a.device);
  return cmd;
}

CLI::App* add_gate(CLI::App& app, GateArgs& a) {
  CLI::App* cmd = app.add_subcommand(
      "gate", "the release gate: compare two deployment reports (report.json) against limits");
  cmd->footer(
      "Checks the candidate deployment report against the baseline report and the limits given;\n"
      "with none given, against the baseline's own release criteria (its release_criteria:\n"
      "accuracy, speedup, p99 and bit-exactness, docs/demo.md). A report directory stands for\n"
      "the report.json in it. Prints one line per check, then gate: PASS or gate: FAIL. Exit\n"
      "codes: 0 pass, 1 fail, 2 bad options, an unreadable or malformed report, or no limit at\n"
      "all.\n");
  cmd->add_option("--baseline", a.baseline, "A.json, the report to compare against")->required()
      ->check(non_empty());
  cmd->add_option("--candidate", a.candidate, "B.json, the report checked")->required()
      ->check(non_empty());
  cmd->add_option("--max-quality-drop", a.limits.max_quality_drop_pp,
                  "largest allowed drop in sparse INT8 top-1, baseline - candidate, in percentage "
                  "points (at the limit passes; a negative one demands a gain)")
      ->check(nmsa::cli::number_in(-100.0, 100.0));
  cmd->add_option("--min-speedup", a.limits.min_speedup,
                  "smallest allowed candidate effective speedup (all-dense / deployed device "
                  "cycles)")
      ->check(nmsa::cli::number_in(0.0, 1e6));
  cmd->add_option("--max-p99-cycles", a.limits.max_p99_cycles,
                  "largest allowed candidate p99 device cycles per batch")
      ->check(nmsa::cli::integer_in(0, 1LL << 62));
  cmd->add_flag("--bit-exact", a.limits.bit_exact,
                "require every candidate batch bit-exact against the golden and the functional "
                "model");
  return cmd;
}

CLI::App* add_triage(CLI::App& app, TriageArgs& a) {
  CLI::App* cmd = app.add_subcommand(
      "triage", "why a candidate deployment report regressed: the first failing mechanism");
  cmd->footer(
      "Compares two deployment reports (report.json, or their directories), or two benchmark\n"
      "files of the same kind (build/bench/workloads.json, lens.json), mechanism by mechanism\n"
      "in execution order: lowering, sparse format, scheduling and memory, execution,\n"
      "quality, latency tail. Names the first failing one with its evidence and owner, the\n"
      "commands that reproduce the failing workload and the stable comparator, and the rollback\n"
      "criteria (docs/triage.md). Exit codes as nmsa gate: 0 no regression, 1 regression,\n"
      "2 bad options, unreadable reports or runs that are not comparable.\n");
  cmd->add_option("--baseline", a.baseline, "A.json, the stable report or benchmark file")
      ->required()
      ->check(non_empty());
  cmd->add_option("--candidate", a.candidate, "B.json, the one that regressed")->required()
      ->check(non_empty());
  cmd->add_option("--memo", a.memo, "also write the triage as a Markdown memo to this file")
      ->check(non_empty());
  cmd->add_flag("--json", a.json, "print JSON instead of text");
  cmd->add_option("--quality-tolerance", a.limits.quality_drop_pp,
                  "sparse INT8 top-1 drop in pp that counts as a regression (default 0.3)")
      ->check(nmsa::cli::number_in(0.0, 100.0));
  cmd->add_option("--cycles-tolerance", a.limits.cycles_growth,
                  "relative growth of cycles that counts (default 0.02)")
      ->check(nmsa::cli::number_in(0.0, 10.0));
  return cmd;
}

CLI::App* add_sweep(CLI::App& app, SweepArgs& a) {
  CLI::App* cmd = app.add_subcommand(
      "sweep", "the bandwidth lens: sparse and dense cycles against host-memory bandwidth, AXI "
               "width and read latency");
  cmd->footer(
      "Prices every layer of the workload families (mlp, cnn, bert, resnet50) sparse and dense\n"
      "with the cycle model over a grid of host-memory bandwidths and AXI data widths (at one read\n"
      "latency) and of read latencies (at one bandwidth). Prints each family's knee (where it\n"
      "becomes compute-bound) and its speedup there, memory-bound and compute-bound; writes\n"
      "OUT/sweep.json and OUT/sweep.html (docs/bandwidth.md). Predictions, not RTL runs.\n");
  cmd->add_option("--config", a.config, "configuration of rtl/configs.json (default: default)")
      ->check(non_empty());
  cmd->add_option("--out", a.out, "output directory (default build/sweep)")
      ->check(non_empty());
  cmd->add_option("--bytes-per-cycle", a.settings.bytes_per_cycle,
                  "host-memory bandwidths to sweep (default 1 2 4 8 16 32 64)")
      ->check(nmsa::cli::number_in(0.01, 4096.0));
  cmd->add_option("--latency", a.settings.read_latency,
                  "read latencies in cycles to sweep (default 50 100 200 500 1000)")
      ->check(nmsa::cli::integer_in(1, 1000000));
  cmd->add_option("--axi-width", a.settings.axi_data_w, "AXI data widths, 32 and/or 64 bits")
      ->check(CLI::IsMember({32, 64}));
  cmd->add_option("--family", a.settings.families,
                  "workload families to sweep (default all: mlp cnn bert resnet50)")
      ->check(non_empty());
  return cmd;
}

}  // namespace

CommandLine::CommandLine() {
  app.require_subcommand(1);
  app.footer("Run 'nmsa <command> --help' for the options of a command.\n");
  info_cmd = add_info(app, info);
  gemm_cmd = add_gemm(app, gemm);
  prune_cmd = add_prune(app, prune);
  compress_cmd = add_compress(app, compress);
  run_cmd = add_run(app, run);
  gate_cmd = add_gate(app, gate);
  sweep_cmd = add_sweep(app, sweep);
  triage_cmd = add_triage(app, triage);
}

int parse_command_line(CommandLine& cl, int argc, const char* const* argv) {
  // CLI11 would answer "a subcommand is required" for a misspelt command: name it instead.
  if (argc > 1 && argv[1][0] != '-') {
    try {
      (void)cl.app.get_subcommand(argv[1]);
    } catch (const CLI::OptionNotFound&) {
      std::cerr << "nmsa: unknown command '" << argv[1]
                << "' (commands: info, gemm, prune, compress, run, gate, triage, sweep)\n";
      return 2;
    }
  }
  try {
    cl.app.parse(argc, argv);
  } catch (const CLI::ExtrasError& e) {
    // CLI11 names the argument it had no place for, which is the last positional even when the
    // stray one came first: say what the command takes.
    std::string takes;
    for (const CLI::App* sub : cl.app.get_subcommands()) {
      for (const CLI::Option* o : sub->get_options()) {
        if (!o->get_positional()) continue;
        std::string name = o->get_name();
        for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        takes += (takes.empty() ? "" : " ") + name;
      }
      takes = "; nmsa " + sub->get_name() + " takes " +
              (takes.empty() ? "no positional arguments" : "the positional arguments " + takes);
    }
    std::cerr << e.what() << takes << "\nRun with --help for more information.\n";
    return 2;
  } catch (const CLI::ParseError& e) {
    return cl.app.exit(e) == 0 ? 0 : 2;  // --help: 0; bad options: 2, with CLI11's message
  }
  return -1;
}

}  // namespace nmsa::cli
