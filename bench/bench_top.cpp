// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// Accelerator benchmark: the `default` configuration runs a GEMM of 256 rows x
// K 1024 x 256 output channels, compiled by libnmsa, with host memory at 16 bytes per cycle and
// 100 cycles of read latency. It measures, on the same RTL in the same run, end-to-end cycles
// from START to the done interrupt in sparse and in dense mode, the effective speedup, sparse
// utilization (useful dense-equivalent MACs over the array's peak), the fraction of DMA time
// hidden behind compute, the compiler's cycle prediction against the RTL, and Verilator's speed.
// Writes build/bench/top.json. Targets (bench_common.hpp): effective speedup >= 1.85x, sparse
// end-to-end utilization >= 90%, the cycle prediction exact in both modes.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>

#include "../tests/common/random_matrix.hpp"
#include "bench_common.hpp"
#include "nmsa/device_caps.hpp"
#include "nmsa/epilogue.hpp"
#include "nmsa/gemm_program.hpp"
#include "nmsa/golden.hpp"
#include "nmsa/sparse_format.hpp"
#include "nmsa/tb/top_runner.hpp"

namespace {

struct Args : nmsa::bench::GemmShapeArgs {
  Args() : GemmShapeArgs{"default", 256, 1024, 256, "build/bench/top.json"} {}
  double bytes_per_cycle = 16.0;
  unsigned latency = 100;
};

struct ModeRun {
  nmsa::tb::TopRunResult rtl;
  nmsa::CyclePrediction predicted;
  bool exact = false;
  double seconds = 0;
};

ModeRun run_mode(const Args& args, nmsa::GemmMode mode, const nmsa::MatrixI8& x,
                 const nmsa::MatrixI8& w, const nmsa::EpilogueParams& epilogue) {
  nmsa::tb::AxiMemoryConfig memory;
  memory.read_latency = args.latency;
  memory.bytes_per_cycle = args.bytes_per_cycle;
  memory.max_reads = 32;  // a host memory that queues more bursts than the DMA keeps in flight
  memory.max_writes = 32;
  auto sim = nmsa::tb::make_top_sim(args.config, memory, 1);
  const nmsa::DeviceCaps caps =
      nmsa::from_registers([&](std::uint32_t off) { return sim->read_reg(off); });
  nmsa::HostMemory host;
  nmsa::GemmOptions options;
  options.mode = mode;
  options.epilogue = epilogue;
  options.relu = true;
  const nmsa::GemmProgram program(caps, x, w, options, host);
  nmsa::PerfModelParams perf;
  perf.dma_bytes_per_cycle = args.bytes_per_cycle;
  perf.dma_read_latency = static_cast<int>(args.latency);
  perf.dma_write_latency = static_cast<int>(memory.write_latency);

  ModeRun run;
  run.predicted = program.predict_cycles(perf);
  const auto t0 = std::chrono::steady_clock::now();
  run.rtl = nmsa::tb::run_on_top(*sim, host, program.command_address(), program.command_count(),
                                 50'000'000);
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const nmsa::MatrixI32 want =
      nmsa::apply_epilogue(nmsa::golden::gemm_i8(x, w), epilogue, true, false);
  run.exact = run.rtl.done() && program.read_output() == want && sim->protocol_report().empty();
  return run;
}

}  // namespace

int main(int argc, char** argv) {
  namespace bench = nmsa::bench;
  Args args;
  CLI::App app{"Accelerator benchmark: one GEMM in sparse and dense mode on the same RTL"};
  bench::add_gemm_shape_options(app, args);
  app.add_option("--bytes-per-cycle", args.bytes_per_cycle, "host memory bandwidth")
      ->check(CLI::Range(0.5, 1024.0));
  app.add_option("--latency", args.latency, "host memory read latency in cycles")
      ->check(CLI::Range(0, 100000));
  if (const int rc = bench::parse_options(app, argc, argv); rc >= 0) return rc;
  try {
    std::mt19937_64 rng(2026);
    const nmsa::MatrixI8 x = nmsa::testing::random_i8(args.rows, args.k, rng);
    const nmsa::MatrixI8 w =
        nmsa::prune_nm(nmsa::testing::random_i8(args.n_out, args.k, rng), nmsa::NmPattern{2, 4});
    nmsa::EpilogueParams epilogue;
    for (Eigen::Index c = 0; c < args.n_out; ++c) {
      epilogue.bias.push_back(static_cast<std::int32_t>(c * 7 - 300));
      const auto q = nmsa::quantize_multiplier(1.0 / 4096.0);
      epilogue.multiplier.push_back(q.multiplier);
      epilogue.shift.push_back(q.shift);
    }

    std::printf("accelerator benchmark: config %s, GEMM %ld x %ld x %ld, host memory %.1f B/cycle, "
                "read latency %u\n",
                args.config.c_str(), static_cast<long>(args.rows), static_cast<long>(args.k),
                static_cast<long>(args.n_out), args.bytes_per_cycle, args.latency);
    const ModeRun sparse = run_mode(args, nmsa::GemmMode::SPARSE, x, w, epilogue);
    const ModeRun dense = run_mode(args, nmsa::GemmMode::DENSE, x, w, epilogue);

    namespace r = nmsa::regs;
    const auto& sr = sparse.rtl;
    const auto& dr = dense.rtl;
    // Peak dense-equivalent MACs per cycle in sparse mode: ROWS * COLS * M.
    const double peak = static_cast<double>(sr.counter(r::MACS_LO_OFFSET)) /
                        static_cast<double>(sr.counter(r::CYCLES_COMPUTE_LO_OFFSET));
    const double useful = static_cast<double>(args.rows) * args.k * args.n_out;
    const double speedup = static_cast<double>(dr.cycles) / static_cast<double>(sr.cycles);
    const double util = useful / (static_cast<double>(sr.cycles) * peak);
    auto hidden = [](const nmsa::tb::TopRunResult& run) {
      // DMA-busy cycles in which the array was not starved for data.
      const double stall = static_cast<double>(run.counter(r::CYCLES_DMA_STALL_LO_OFFSET));
      return run.dma_busy_cycles == 0 ? 1.0 : 1.0 - stall / static_cast<double>(run.dma_busy_cycles);
    };
    auto err = [](const ModeRun& m) {
      return (static_cast<double>(m.predicted.total) - static_cast<double>(m.rtl.cycles)) /
             static_cast<double>(m.rtl.cycles);
    };
    const double rate = static_cast<double>(sr.cycles + dr.cycles) / (sparse.seconds + dense.seconds);

    std::printf("\n%-34s %14s %14s\n", "", "sparse", "dense");
    std::printf("%-34s %14llu %14llu\n", "cycles (START to done IRQ)",
                static_cast<unsigned long long>(sr.cycles), static_cast<unsigned long long>(dr.cycles));
    std::printf("%-34s %14llu %14llu\n", "array issue cycles",
                static_cast<unsigned long long>(sr.counter(r::CYCLES_COMPUTE_LO_OFFSET)),
                static_cast<unsigned long long>(dr.counter(r::CYCLES_COMPUTE_LO_OFFSET)));
    std::printf("%-34s %14llu %14llu\n", "DMA read bytes",
                static_cast<unsigned long long>(sr.counter(r::DMA_RD_BYTES_LO_OFFSET)),
                static_cast<unsigned long long>(dr.counter(r::DMA_RD_BYTES_LO_OFFSET)));
    std::printf("%-34s %14llu %14llu\n", "metadata bytes",
                static_cast<unsigned long long>(sr.counter(r::META_BYTES_LO_OFFSET)),
                static_cast<unsigned long long>(dr.counter(r::META_BYTES_LO_OFFSET)));
    std::printf("%-34s %14llu %14llu\n", "DMA stall cycles",
                static_cast<unsigned long long>(sr.counter(r::CYCLES_DMA_STALL_LO_OFFSET)),
                static_cast<unsigned long long>(dr.counter(r::CYCLES_DMA_STALL_LO_OFFSET)));
    std::printf("%-34s %13.1f%% %13.1f%%\n", "DMA time hidden behind compute", 100 * hidden(sr),
                100 * hidden(dr));
    std::printf("%-34s %14llu %14llu\n", "predicted cycles (libnmsa)",
                static_cast<unsigned long long>(sparse.predicted.total),
                static_cast<unsigned long long>(dense.predicted.total));
    std::printf("%-34s %+13.2f%% %+13.2f%%\n", "prediction error vs RTL", 100 * err(sparse),
                100 * err(dense));
    std::printf("%-34s %14s %14s\n", "bit-exact vs golden, AXI clean", sparse.exact ? "yes" : "NO",
                dense.exact ? "yes" : "NO");
    std::printf("\n%-40s %8.3fx (limit 2.0x)\n",
                "effective speedup (dense/sparse cycles)", speedup);
    std::printf("%-40s %8.2f%%\n", "sparse end-to-end utilization", 100 * util);
    std::printf("%-40s %8.0f cycles/s\n", "Verilator simulation speed", rate);

    const std::vector<bench::Target> targets = {
        {"effective_speedup", speedup, 1.85, true},
        {"sparse_utilization", util, 0.90, true},
        // The cycle model is exact against the RTL on this memory (docs/runtime.md).
        {"prediction_error_sparse", std::fabs(err(sparse)), 0.0, false},
        {"prediction_error_dense", std::fabs(err(dense)), 0.0, false},
    };
    const int missed = bench::print_targets(targets);

    const bool exact = sparse.exact && dense.exact;
    bench::Json json = {
        {"config", args.config}, {"rows", args.rows}, {"k", args.k}, {"n", args.n_out},
        {"bytes_per_cycle", args.bytes_per_cycle}, {"read_latency", args.latency},
        {"sparse_cycles", sr.cycles}, {"dense_cycles", dr.cycles},
        {"effective_speedup", speedup}, {"sparse_utilization", util},
        {"dma_hidden_fraction_sparse", hidden(sr)}, {"dma_hidden_fraction_dense", hidden(dr)},
        {"predicted_sparse_cycles", sparse.predicted.total},
        {"predicted_dense_cycles", dense.predicted.total},
        {"bit_exact", exact}, {"sim_cycles_per_s", rate},
        {"targets", bench::targets_json(targets)},
    };
    bench::write_json(args.out, json);
    return bench::exit_code(exact, missed);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_top: %s\n", e.what());
    return bench::kExitUsage;
  }
}
