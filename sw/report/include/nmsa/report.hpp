// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// The sparsity deployment report (docs/demo.md): what a model engineer reads after
// deploying a model to the accelerator. One DeploymentReport holds every figure; it is written as
// report.json (machine-readable, read back by `nmsa gate`: nmsa/release_gate.hpp), report.md and
// one self-contained index.html (inline SVG plots, no script or resource from the network).
//
// Units: accuracies are fractions in [0, 1] (top-1 on the test set unless a field says otherwise),
// deltas are percentage points, cycles are device clock cycles of the accelerator, microseconds
// are cycles / clock_mhz. NaN marks a figure that was not measured (written as null in JSON and as
// "n/a" in the Markdown and HTML).
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "nmsa/accuracy_stats.hpp"
#include "nmsa/bandwidth_lens.hpp"

namespace nmsa {

inline constexpr double kNotMeasured = std::numeric_limits<double>::quiet_NaN();

// report.json's "report_format": raised when a key changes meaning or goes away (adding keys
// keeps it), so that a reader can refuse a file it would misread.
// Format 2: quality_delta_pp is measured against the dense control trained as long as the sparse
// models (quality_baseline), no longer against the dense model of the first training run.
inline constexpr int kReportFormatVersion = 2;

inline constexpr Interval kNoInterval{kNotMeasured, kNotMeasured};

// One row of the supported layer matrix, with the layer's cost on the device.
struct ReportLayer {
  std::string name;       // "fc1"
  std::string op;         // "Gemm + bias + ReLU" (what the layer computes)
  int k = 0;              // input features (the reduction dimension)
  int n_out = 0;          // output channels
  std::string placement;  // "device sparse", "device dense" or "host"
  std::string reason;     // why it runs there, e.g. "quality gate: pruning costs 1.3 pp > 1.0 pp"
  // Validation accuracy lost (pp) when this layer alone is pruned to N:M and briefly fine-tuned,
  // against an unpruned control fine-tuned alike: the quality gate's input (negative: a gain).
  double sensitivity_pp = kNotMeasured;
  // Device cycles of this layer over the whole test set: as deployed, and all dense.
  std::uint64_t deployed_cycles = 0;
  std::uint64_t dense_cycles = 0;
  std::uint64_t macs = 0;      // dense-equivalent MACs over the test set
  double utilization = 0.0;    // deployed: macs / (deployed_cycles * peak MACs per cycle)
  // The weights as the device stores them: INT8 dense bytes, and the deployed form's bytes
  // (values + metadata when sparse, the dense bytes otherwise) and its metadata part.
  std::uint64_t dense_weight_bytes = 0;
  std::uint64_t deployed_weight_bytes = 0;
  std::uint64_t meta_bytes = 0;
  double speedup() const {  // dense_cycles / deployed_cycles (1.0 for a dense layer)
    return deployed_cycles == 0 ? kNotMeasured
                                : static_cast<double>(dense_cycles) /
                                      static_cast<double>(deployed_cycles);
  }
};

// One model of the quality table: its test accuracy in FP32 and after INT8 quantization.
struct QualityRow {
  std::string model;     // "784-512-256-10"
  std::string schedule;  // "dense", "prune only", "one-shot + fine-tune", "gradual", ...
  bool permuted = false;  // channel permutation search before pruning
  double fp32_accuracy = kNotMeasured;
  double int8_accuracy = kNotMeasured;
  std::string int8_measured_on;  // "rtl:default", "model:default", "golden (Eigen INT8)"
  bool deployed = false;         // the model the deployment report is about
  std::string note;              // e.g. "equal latency budget"
  Interval fp32_ci95 = kNoInterval;  // 95% bootstrap intervals over the test images
  Interval int8_ci95 = kNoInterval;
};

// The pruning schedule of one recipe over its fine-tuning run, for the schedule plot.
struct ScheduleCurve {
  std::string name;  // "gradual (permuted)"
  // (epoch, weight sparsity of the prunable layers) at each pruning event, epoch fractional.
  std::vector<std::pair<double, double>> sparsity;
  // (epoch, validation accuracy) at the end of each epoch (epoch 0: before fine-tuning).
  std::vector<std::pair<double, double>> val_accuracy;
};

// Per-batch device latency of one run over the test set (all layers of one batch).
struct LatencySummary {
  std::string label;  // "deployed", "all dense", "wider sparse"
  int batch_size = 0;
  std::vector<std::uint64_t> batch_cycles;  // in batch order
  // Wall-clock microseconds of each batch's host layers on the machine that ran it (the input's
  // quantizer, the pools): host time beside the device cycles, not in them. Empty: not measured.
  std::vector<double> batch_host_us;
  // Nearest-rank percentiles of batch_cycles (see percentile_cycles).
  std::uint64_t p50 = 0;
  std::uint64_t p95 = 0;
  std::uint64_t p99 = 0;
  std::uint64_t total_cycles() const;
  double host_us_p50() const;  // the median of batch_host_us; 0 when not measured
};

// The nearest-rank percentile: the smallest value such that at least p% of the values are at or
// below it (p in (0, 100]). 0 for an empty list.
std::uint64_t percentile_cycles(std::vector<std::uint64_t> values, double p);
// Fills p50 / p95 / p99 from batch_cycles. The writers call it on a copy of every LatencySummary
// whose batch_cycles is not empty, so the percentiles in a report always match its batch list;
// with an empty list they report the p50 / p95 / p99 fields as given (all 0: not measured).
void compute_percentiles(LatencySummary& latency);

// The deployed and the all-dense network while a second AXI master competes for host memory:
// random background traffic taking `load` of the bandwidth (docs/bandwidth.md). Load 0 is the
// test-set run itself.
struct ContentionRun {
  double load = 0;
  LatencySummary sparse;  // the deployed model
  LatencySummary dense;   // the all-dense model
};

// The lowest load at which the deployed model's p99 leaves the budget (the all-dense model's p50
// without contention, the first run's dense p50), or NaN when it stays inside at every load.
double p99_leaves_budget_at(const std::vector<ContentionRun>& runs);

// The equal-latency-budget comparison: the all-dense INT8 model's device latency is the budget; a
// wider N:M model chosen to fit it. Its accuracy is compared with the dense model of the same
// training budget (the control), whose latency is the dense model's: the same shape.
struct EqualBudget {
  std::string dense_model;   // "784-512-256-10"
  std::string sparse_model;  // "784-1024-512-10"
  std::uint64_t budget_cycles_p50 = 0;   // the dense model's measured p50 per batch
  std::uint64_t sparse_cycles_p50 = 0;   // the wider sparse model's measured p50 per batch
  // The cycle model's predictions when sizing it: the budget and the chosen shape's cycles.
  std::uint64_t predicted_budget_cycles = 0;
  std::uint64_t predicted_sparse_cycles = 0;
  int shapes_searched = 0;  // candidate shapes the cycle model priced
  double dense_int8_accuracy = kNotMeasured;
  double sparse_int8_accuracy = kNotMeasured;
  std::string accuracy_measured_on;  // where the two INT8 accuracies come from
  bool fits() const { return sparse_cycles_p50 <= budget_cycles_p50; }
  double predicted_budget_use() const {  // predicted sparse cycles / predicted budget
    return predicted_budget_cycles == 0 ? kNotMeasured
                                        : static_cast<double>(predicted_sparse_cycles) /
                                              static_cast<double>(predicted_budget_cycles);
  }
};

// A target of the demo, as printed and reported: measured against required, met or not.
struct ReportTarget {
  std::string name;      // "dense FP32 top-1"
  std::string required;  // ">= 88%"
  std::string measured;  // "89.12%"
  bool met = false;
};

// One row of the validation matrix: a claim of the report, what shows it, where it was measured,
// the role that owns it, and whether it holds.
struct ValidationClaim {
  std::string claim;     // "2:4 runs the network 1.9x faster than dense on the same RTL"
  std::string evidence;  // the figures, with their intervals where they have one
  std::string run;       // "rtl:default, 100 batches, seed 7" or "golden (Eigen INT8)"
  std::string owner;     // "accelerator architecture owner", ...
  std::string status;    // "holds", "does not hold", "no measurable difference"
};

// What 2:4 costs at equal area: the device that ran (N:M support) and the dense-only design of the
// same multipliers, both placed and routed (docs/fpga.md). Throughput is dense-equivalent MACs per
// cycle times Fmax; per LUT and per DSP it compares the two designs at equal area.
struct HardwareCost {
  std::string device;                 // "LFE5U-85F-8BG381"
  std::string sparse_source, dense_source;  // the result files, described (FpgaResult)
  std::uint64_t sparse_luts = 0, dense_luts = 0;
  std::uint64_t sparse_dsps = 0, dense_dsps = 0;
  std::uint64_t sparse_brams = 0, dense_brams = 0;
  double sparse_fmax_mhz = 0, dense_fmax_mhz = 0;
  // The deployed model's cycles on the dense-only design over its cycles as deployed: the
  // dense-only cycles come from the cycle model (exact against the RTL in the regression).
  double cycles_ratio = kNotMeasured;
  double throughput_ratio() const {  // sparse over dense-only, in MACs per second
    return cycles_ratio * sparse_fmax_mhz / dense_fmax_mhz;
  }
  double per_lut_ratio() const {
    return throughput_ratio() * static_cast<double>(dense_luts) / static_cast<double>(sparse_luts);
  }
  double per_dsp_ratio() const {
    return throughput_ratio() * static_cast<double>(dense_dsps) / static_cast<double>(sparse_dsps);
  }
};

// A second network deployed beside the first (the demo's CNN, docs/demo.md): its supported layer
// matrix, what its fallbacks cost, and its quality against a dense control trained as long.
struct SecondModelReport {
  std::string model;        // "CNN 1x28x28: conv3x3 16 + pool, ..."
  std::string measured_on;  // where the cycles and the INT8 accuracies come from
  std::string calibration;  // how the activations are quantized
  int test_images = 0;
  double dense_fp32_accuracy = kNotMeasured;    // the first training run
  double control_fp32_accuracy = kNotMeasured;  // dense, fine-tuned as long as the pruned model
  double sparse_fp32_accuracy = kNotMeasured;   // pruned, before quantization
  double control_int8_accuracy = kNotMeasured;
  double sparse_int8_accuracy = kNotMeasured;   // as deployed
  // Deployed INT8 against the control's FP32 on the same test images: interval and McNemar.
  std::optional<PairedComparison> quality_comparison;
  // Every device layer (cycles over the test set, as deployed and all dense) and every host
  // layer (placement "host", no cycles), in graph order.
  std::vector<ReportLayer> layers;
  double effective_speedup = kNotMeasured;      // all-dense / deployed device cycles
  double sparse_layers_speedup = kNotMeasured;  // the same over the layers that run sparse
  double fallback_cycle_share = kNotMeasured;   // deployed cycles spent in dense fallbacks
  // Batches also run on the RTL, and of them those whose logits equal the functional model's bit
  // for bit and whose device cycles equal its cycle prediction for the same command streams; and
  // the largest relative difference between the RTL's cycles and the whole-set run's prediction
  // of the same batch.
  std::uint64_t rtl_batches = 0;
  std::uint64_t rtl_batches_bit_exact = 0;
  std::uint64_t rtl_batches_cycle_exact = 0;
  // The device GEMMs those batches ran on the RTL, and of them those checked against the golden
  // model and equal to it (RuntimeOptions::check_golden).
  std::uint64_t rtl_gemms = 0;
  std::uint64_t rtl_gemms_golden_exact = 0;
  double rtl_prediction_max_error = kNotMeasured;
  double quality_delta_pp() const {  // deployed INT8 against the control's FP32, pp
    return (sparse_int8_accuracy - control_fp32_accuracy) * 100.0;
  }
};

struct DeploymentReport {
  std::string title = "nmsa sparsity deployment report";
  std::string dataset;  // "Fashion-MNIST test set (10000 images)"
  int test_images = 0;
  std::string device;   // "rtl:default (8x8 2:4, ...)": DeviceCaps::describe() with the backend
  double clock_mhz = 0.0;  // the clock for microsecond figures
  // Where the clock comes from: the measured Fmax of the configuration that ran (its result file,
  // described), or "stated by the user, not measured".
  std::string clock_source;
  bool clock_measured = false;
  std::optional<HardwareCost> hardware;  // the equal-area comparison, when both designs were measured

  // Headline figures (report.json top-level keys of the same names).
  double dense_fp32_accuracy = kNotMeasured;   // the dense model of the first training run
  double dense_int8_accuracy = kNotMeasured;
  double sparse_fp32_accuracy = kNotMeasured;  // the deployed model before quantization
  double sparse_int8_accuracy = kNotMeasured;  // the deployed model on the device
  // What the quality delta is measured against: the dense model trained as long as the sparse
  // ones (the control), in FP32.
  std::string quality_baseline;
  double control_fp32_accuracy = kNotMeasured;
  double quality_delta_pp = kNotMeasured;  // (sparse_int8 - control_fp32) * 100
  Interval quality_delta_ci95_pp = kNoInterval;
  // Every paired comparison of the quality section (the headline delta first), each with its
  // interval and McNemar's test on the same test images.
  std::vector<PairedComparison> comparisons;
  // All-dense cycles over deployed cycles for the whole test set, same RTL, same batches.
  double effective_speedup = kNotMeasured;
  // The same if every fallback layer ran sparse too (cycle-model prediction of the all-sparse
  // placement against the measured all-dense run): what the fallbacks cost.
  double all_sparse_speedup_predicted = kNotMeasured;
  std::uint64_t fallback_cycles = 0;    // deployed cycles spent in dense-fallback layers
  double fallback_cycle_share = 0.0;    // fallback_cycles / deployed total
  double pe_utilization = 0.0;          // deployed: useful MACs / (cycles * peak of each mode)
  std::uint64_t weight_bytes_dense = 0;     // all layers, INT8 dense
  std::uint64_t weight_bytes_deployed = 0;  // all layers as deployed (values + metadata)
  std::uint64_t meta_bytes = 0;             // metadata part of weight_bytes_deployed
  std::uint64_t dma_read_bytes = 0;         // measured over the deployed run
  std::uint64_t dma_meta_bytes = 0;         // of which metadata (META_BYTES counter)
  std::vector<std::string> fallback_layers;  // names of the layers that run dense

  // Cross-checks: batches whose device output equals the golden model's bit for bit, and the
  // functional model's, out of the batches run.
  std::uint64_t batches = 0;
  std::uint64_t batches_bit_exact_golden = 0;
  std::uint64_t batches_bit_exact_model = 0;

  LatencySummary deployed_latency;
  LatencySummary dense_latency;
  std::vector<LatencySummary> other_latency;  // e.g. the wider sparse model
  std::vector<ContentionRun> contention;      // by load, ascending; load 0 first

  // The deployed network's layers at other host memories (cycle-model predictions), and the
  // bandwidth this run's memory model gave (bytes per cycle, shared by reads and writes).
  std::optional<LensResult> bandwidth_lens;
  double memory_bytes_per_cycle = kNotMeasured;

  std::vector<ReportLayer> layers;  // the supported layer matrix of the deployed model
  std::vector<QualityRow> quality;
  std::vector<ScheduleCurve> schedules;
  std::optional<EqualBudget> equal_budget;
  std::optional<SecondModelReport> second_model;
  std::vector<ReportTarget> targets;
  std::vector<ValidationClaim> validation;
  // A regressed workload run beside this one on purpose, and the triage memo that explains it
  // (paths relative to the report directory; empty when the run has none).
  std::string regressed_workload;  // what was changed, e.g. "host memory at 2 B/cycle"
  std::string triage_memo;         // "regressed/triage.md"
  // What pins the run: git revision, RTL configuration, Verilator and compiler versions, seeds,
  // options. In insertion order.
  std::vector<std::pair<std::string, std::string>> tags;
  std::vector<std::string> notes;  // free text shown at the end (e.g. a target that was missed)
};

// Writes report.json, report.md and index.html into `dir` (created if needed); each file is
// written to a temporary name and renamed, so a reader never sees half a report. Throws
// std::runtime_error naming the file on an I/O error.
void write_report(const DeploymentReport& report, const std::string& dir);

std::string report_json(const DeploymentReport& report);
std::string report_markdown(const DeploymentReport& report);
std::string report_html(const DeploymentReport& report);

}  // namespace nmsa
