// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// A DeploymentReport with every section filled with synthetic but self-consistent figures (an
// MLP on Fashion-MNIST on the default 8x8 2:4 array at a stated 200 MHz). The report tests and
// nmsa_report_sample (the Chromium check's input) share it, so the page the browser renders is
// the one the unit tests take apart. Nothing here was measured.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <tuple>
#include <vector>

#include "nmsa/report.hpp"

namespace nmsa::testing {

inline DeploymentReport make_sample_report() {
  DeploymentReport r;
  r.dataset = "Fashion-MNIST test set (10000 images)";
  r.test_images = 10000;
  r.device = "rtl:default (8x8 PEs, 2:4, INT8/INT32, AXI4 64 bits)";
  r.clock_mhz = 200.0;
  r.dense_fp32_accuracy = 0.8934;
  r.dense_int8_accuracy = 0.8921;
  r.sparse_fp32_accuracy = 0.8912;
  r.sparse_int8_accuracy = 0.8905;
  r.control_fp32_accuracy = 0.8941;
  r.quality_baseline = "dense control FP32 (784-512-256-10, trained as long)";
  r.quality_delta_pp = (r.sparse_int8_accuracy - r.control_fp32_accuracy) * 100.0;
  r.quality_delta_ci95_pp = {-0.71, 0.00};
  PairedComparison headline;
  headline.name = "deployed 2:4 vs dense, equal training";
  headline.a = "deployed 2:4 INT8";
  headline.b = "dense control FP32";
  headline.measured_on = "A: rtl:default; B: host FP32";
  headline.images = 10000;
  headline.only_a = 152;
  headline.only_b = 188;
  headline.delta_pp = r.quality_delta_pp;
  headline.ci95_pp = r.quality_delta_ci95_pp;
  headline.mcnemar_p = 0.0571;
  PairedComparison wider_vs_control = headline;
  wider_vs_control.name = "wider 2:4 vs dense, equal training and latency";
  wider_vs_control.a = "wider 2:4 INT8 784-768-384-10";
  wider_vs_control.b = "dense control INT8";
  wider_vs_control.measured_on = "A: golden (Eigen INT8); B: golden (Eigen INT8)";
  wider_vs_control.only_a = 201;
  wider_vs_control.only_b = 140;
  wider_vs_control.delta_pp = 0.61;
  wider_vs_control.ci95_pp = {0.25, 0.97};
  wider_vs_control.mcnemar_p = 0.0011;
  r.comparisons = {headline, wider_vs_control};

  // Per-image cycles of each layer at a plausible utilization: 64 dense MACs per cycle, 128
  // dense-equivalent sparse; the last layer stays dense (quality gate), softmax on the host.
  struct Spec {
    const char* name;
    const char* op;
    int k, n;
    const char* placement;
    const char* reason;
    double sensitivity;
    double sparse_util, dense_util;
  };
  const Spec specs[] = {
      {"fc1", "Gemm + bias + ReLU", 784, 512, "device sparse", "2:4 within the quality budget",
       0.21, 0.86, 0.91},
      {"fc2", "Gemm + bias + ReLU", 512, 256, "device sparse", "2:4 within the quality budget",
       0.34, 0.83, 0.90},
      {"fc3", "Gemm + bias", 256, 10, "device dense",
       "quality gate: pruning costs 1.30 pp > 1.00 pp", 1.30, 0.0, 0.16},
      {"softmax", "Softmax", 10, 10, "host", "operator not supported on the device", kNotMeasured,
       0.0, 0.0},
  };
  const int batch = 100;
  const int batches = r.test_images / batch;
  std::vector<double> deployed_per_batch_layer, dense_per_batch_layer;
  for (const Spec& s : specs) {
    ReportLayer l;
    l.name = s.name;
    l.op = s.op;
    l.k = s.k;
    l.n_out = s.n;
    l.placement = s.placement;
    l.reason = s.reason;
    l.sensitivity_pp = s.sensitivity;
    const bool device = l.placement != "host";
    const bool sparse = l.placement == "device sparse";
    const double macs_per_batch = static_cast<double>(s.k) * s.n * batch;
    const double dense_cycles = device ? macs_per_batch / (64 * s.dense_util) + 900 : 0;
    const double deployed_cycles =
        !device ? 0 : sparse ? macs_per_batch / (128 * s.sparse_util) + 1100 : dense_cycles;
    deployed_per_batch_layer.push_back(deployed_cycles);
    dense_per_batch_layer.push_back(dense_cycles);
    l.deployed_cycles = static_cast<std::uint64_t>(deployed_cycles * batches);
    l.dense_cycles = static_cast<std::uint64_t>(dense_cycles * batches);
    l.macs = device ? static_cast<std::uint64_t>(macs_per_batch * batches) : 0;
    const double peak = sparse ? 128 : 64;
    l.utilization = device ? static_cast<double>(l.macs) / (l.deployed_cycles * peak) : 0;
    l.dense_weight_bytes = device ? static_cast<std::uint64_t>(s.k) * s.n : 0;
    l.meta_bytes = sparse ? l.dense_weight_bytes / 8 : 0;  // 4 bits per group of 4 weights
    l.deployed_weight_bytes = sparse ? l.dense_weight_bytes / 2 + l.meta_bytes
                                     : l.dense_weight_bytes;
    r.layers.push_back(l);
  }
  std::uint64_t deployed_total = 0, dense_total = 0, useful = 0;
  double peak_cycles = 0;
  for (const ReportLayer& l : r.layers) {
    deployed_total += l.deployed_cycles;
    dense_total += l.dense_cycles;
    useful += l.macs;
    peak_cycles += static_cast<double>(l.deployed_cycles) *
                   (l.placement == "device sparse" ? 128 : 64);
    r.weight_bytes_dense += l.dense_weight_bytes;
    r.weight_bytes_deployed += l.deployed_weight_bytes;
    r.meta_bytes += l.meta_bytes;
    if (l.placement == "device dense") {
      r.fallback_layers.push_back(l.name);
      r.fallback_cycles += l.deployed_cycles;
    }
  }
  r.effective_speedup = static_cast<double>(dense_total) / static_cast<double>(deployed_total);
  r.all_sparse_speedup_predicted = r.effective_speedup * 1.012;
  r.fallback_cycle_share =
      static_cast<double>(r.fallback_cycles) / static_cast<double>(deployed_total);
  r.pe_utilization = static_cast<double>(useful) / peak_cycles;
  r.dma_meta_bytes = r.meta_bytes * static_cast<std::uint64_t>(batches);
  r.dma_read_bytes = r.weight_bytes_deployed * static_cast<std::uint64_t>(batches) +
                     static_cast<std::uint64_t>(784 + 512 + 256) * 10000;
  r.batches = static_cast<std::uint64_t>(batches);
  r.batches_bit_exact_golden = r.batches;
  r.batches_bit_exact_model = r.batches;

  // Per-batch latency: the sum of the layers with a small deterministic jitter (DMA arbitration
  // in the real run), and a slow tail of a few batches.
  auto batch_list = [&](const std::vector<double>& per_layer, std::uint32_t salt) {
    double base = 0;
    for (const double c : per_layer) base += c;
    std::vector<std::uint64_t> out;
    std::uint32_t x = 2463534242u ^ salt;
    for (int b = 0; b < batches; ++b) {
      x ^= x << 13;
      x ^= x >> 17;
      x ^= x << 5;
      const double jitter = 1.0 + 0.012 * ((x % 1000) / 1000.0) + (b % 37 == 36 ? 0.03 : 0.0);
      out.push_back(static_cast<std::uint64_t>(base * jitter));
    }
    return out;
  };
  r.deployed_latency.label = "deployed";
  r.deployed_latency.batch_size = batch;
  r.deployed_latency.batch_cycles = batch_list(deployed_per_batch_layer, 1);
  compute_percentiles(r.deployed_latency);
  // The host layers' wall clock per batch (the input's quantizer): tens of microseconds.
  for (int b = 0; b < batches; ++b) r.deployed_latency.batch_host_us.push_back(40.0 + b % 9);
  r.dense_latency.label = "all dense";
  r.dense_latency.batch_size = batch;
  r.dense_latency.batch_cycles = batch_list(dense_per_batch_layer, 2);
  compute_percentiles(r.dense_latency);
  LatencySummary wider;
  wider.label = "wider sparse (784-768-384-10)";
  wider.batch_size = batch;
  // 1.5x the outputs of fc1 and fc2 (fc2 also 1.5x the inputs), the larger tiles a bit faster.
  std::vector<double> wider_layers = {deployed_per_batch_layer[0] * 1.5 * 0.97,
                                      deployed_per_batch_layer[1] * 2.25 * 0.95,
                                      deployed_per_batch_layer[2] * 1.5};
  wider.batch_cycles = batch_list(wider_layers, 3);
  compute_percentiles(wider);
  r.other_latency.push_back(wider);
  // Under contention: ten batches at each load, slower with the load; at 90% the deployed
  // model's p99 passes the dense p50.
  r.contention.push_back({0.0, r.deployed_latency, r.dense_latency});
  for (const auto& [load, sparse_slowdown, dense_slowdown] :
       {std::tuple{0.5, 1.3, 1.15}, std::tuple{0.9, 2.4, 1.8}}) {
    ContentionRun c{load, r.deployed_latency, r.dense_latency};
    for (auto* l : {&c.sparse, &c.dense}) {
      l->batch_cycles.resize(10);
      for (auto& v : l->batch_cycles) {
        v = static_cast<std::uint64_t>(static_cast<double>(v) *
                                       (l == &c.sparse ? sparse_slowdown : dense_slowdown));
      }
      compute_percentiles(*l);
    }
    r.contention.push_back(c);
  }
  r.regressed_workload = "host memory at 2 B/cycle instead of 16 B/cycle";
  r.triage_memo = "regressed/triage.md";

  r.quality = {
      {"784-512-256-10", "dense", false, 0.8934, 0.8921, "golden (Eigen INT8)", false, ""},
      {"784-512-256-10", "prune only", false, 0.8702, 0.8688, "golden (Eigen INT8)", false,
       "2:4 magnitude pruning, no fine-tuning"},
      {"784-512-256-10", "one-shot + fine-tune", false, 0.8893, 0.8884, "model:default", false,
       ""},
      {"784-512-256-10", "gradual", true, 0.8912, 0.8905, "rtl:default", true, ""},
      {"784-768-384-10", "gradual", true, 0.8979, 0.8968, "rtl:default", false,
       "equal latency budget"},
  };

  for (auto& q : r.quality) {  // intervals of a test set of 10,000 images: about 0.6 pp
    q.fp32_ci95 = {q.fp32_accuracy - 0.006, q.fp32_accuracy + 0.006};
    q.int8_ci95 = {q.int8_accuracy - 0.006, q.int8_accuracy + 0.006};
  }

  ScheduleCurve oneshot{"one-shot + fine-tune", {{0.0, 0.0}, {0.0, 0.5}}, {}};
  ScheduleCurve gradual{"gradual (permuted)", {}, {}};
  for (int step = 0; step <= 12; ++step) {
    const double e = 0.25 * step;  // cubic ramp over 3 epochs
    const double t = e / 3.0;
    gradual.sparsity.push_back({e, 0.5 * (1 - (1 - t) * (1 - t) * (1 - t))});
  }
  const double oneshot_acc[] = {0.8702, 0.8821, 0.8862, 0.8880, 0.8889, 0.8893};
  const double gradual_acc[] = {0.8934, 0.8901, 0.8885, 0.8893, 0.8906, 0.8912};
  for (int e = 0; e <= 5; ++e) {
    oneshot.val_accuracy.push_back({e, oneshot_acc[e]});
    gradual.val_accuracy.push_back({e, gradual_acc[e]});
  }
  r.schedules = {oneshot, gradual};

  // The bandwidth lens of the MLP: memory-bound at 1-4 B/cycle, compute-bound from 8 on.
  LensResult lens;
  lens.device = "8x8 2:4, 8/32 bit, AXI 64";
  lens.settings.bytes_per_cycle = {1, 2, 4, 8, 16};
  lens.settings.axi_data_w = {64};
  const double sparse_at[] = {905000, 452600, 241800, 120300, 120100};
  const double dense_at[] = {1316000, 658100, 412900, 227600, 227500};
  for (std::size_t i = 0; i < 5; ++i) {
    LensPoint p;
    p.family = "mlp";
    p.bytes_per_cycle = lens.settings.bytes_per_cycle[i];
    p.read_latency = 100;
    p.axi_data_w = 64;
    p.sparse_cycles = static_cast<std::uint64_t>(sparse_at[i]);
    p.dense_cycles = static_cast<std::uint64_t>(dense_at[i]);
    p.sparse_bound = i < 3 ? "memory" : "compute";
    p.dense_bound = i < 3 ? "memory" : "compute";
    lens.bandwidth.push_back(p);
  }
  LensFamily mlp;
  mlp.family = "mlp";
  mlp.bytes_ratio = 1.45;
  mlp.knee_sparse = 8;
  mlp.knee_dense = 8;
  mlp.speedup_at_knee = dense_at[3] / sparse_at[3];
  mlp.speedup_compute_bound = dense_at[4] / sparse_at[4];
  mlp.speedup_memory_bound = dense_at[0] / sparse_at[0];
  lens.families = {mlp};
  r.bandwidth_lens = lens;
  r.memory_bytes_per_cycle = 16;

  EqualBudget budget;
  budget.dense_model = "784-512-256-10";
  budget.sparse_model = "784-768-384-10";
  budget.budget_cycles_p50 = r.dense_latency.p50;
  budget.sparse_cycles_p50 = wider.p50;
  budget.predicted_budget_cycles = static_cast<std::uint64_t>(r.dense_latency.p50 * 0.99);
  budget.predicted_sparse_cycles = static_cast<std::uint64_t>(wider.p50 * 0.985);
  budget.shapes_searched = 425;
  budget.dense_int8_accuracy = 0.8907;
  budget.accuracy_measured_on = "golden (Eigen INT8) for both";
  budget.sparse_int8_accuracy = 0.8968;
  r.equal_budget = budget;

  SecondModelReport cnn;
  cnn.model = "CNN 1x28x28: conv3x3 16 + pool, conv3x3 32 + pool, fc 128, fc 10";
  cnn.measured_on = "model:default, 10 of 100 batches also on rtl:default";
  cnn.calibration = "per batch";
  cnn.test_images = 10000;
  cnn.dense_fp32_accuracy = 0.9102;
  cnn.control_fp32_accuracy = 0.9131;
  cnn.sparse_fp32_accuracy = 0.9117;
  cnn.control_int8_accuracy = 0.9125;
  cnn.sparse_int8_accuracy = 0.9109;
  PairedComparison cnn_quality;
  cnn_quality.name = "CNN: deployed 2:4 INT8 vs dense control FP32, equal training";
  cnn_quality.delta_pp = -0.22;
  cnn_quality.ci95_pp = {-0.51, 0.07};
  cnn_quality.only_a = 40;
  cnn_quality.only_b = 62;
  cnn_quality.images = 10000;
  cnn_quality.mcnemar_p = 0.037;
  cnn.quality_comparison = cnn_quality;
  ReportLayer conv1{"conv1", "Conv + ReLU", 9, 16, "device dense", "K = 9 is not a multiple of 4"};
  conv1.deployed_cycles = conv1.dense_cycles = 3'000'000;
  ReportLayer pool1{"conv1.pool", "MaxPool", 0, 0, "host", "the device has no MaxPool layer"};
  ReportLayer conv2{"conv2", "Conv + ReLU", 144, 32, "device sparse", ""};
  conv2.deployed_cycles = 7'000'000;
  conv2.dense_cycles = 13'000'000;
  cnn.layers = {conv1, pool1, conv2};
  cnn.effective_speedup = 16.0 / 10.0;
  cnn.sparse_layers_speedup = 13.0 / 7.0;
  cnn.fallback_cycle_share = 0.3;
  cnn.rtl_batches = 10;
  cnn.rtl_batches_bit_exact = 10;
  cnn.rtl_batches_cycle_exact = 10;
  cnn.rtl_gemms = 40;
  cnn.rtl_gemms_golden_exact = 40;
  cnn.rtl_prediction_max_error = 2e-5;
  r.second_model = cnn;

  auto text = [](const char* format, double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, format, v);
    return std::string(buf);
  };
  auto pct = [&](double a) { return text("%.2f%%", 100 * a); };
  r.targets = {
      {"dense FP32 top-1", ">= 88%", pct(r.dense_fp32_accuracy), r.dense_fp32_accuracy >= 0.88},
      {"sparse INT8 top-1 vs dense control FP32", ">= -1.0 pp", text("%+.2f pp", r.quality_delta_pp),
       r.quality_delta_pp >= -1.0},
      {"effective speedup", ">= 1.5x", text("%.2fx", r.effective_speedup),
       r.effective_speedup >= 1.5},
      {"bit-exact batches (golden)", "all", "100 of 100", true},
      {"PE utilization", ">= 90%", pct(r.pe_utilization), r.pe_utilization >= 0.90},
  };
  r.validation = {
      {"2:4 runs the network faster than all-dense on the same RTL (>= 1.8x)",
       "effective speedup 1.91x", "rtl:default, 100 batches of 100, seed 7",
       "accelerator architecture owner", "holds"},
      {"the deployed 2:4 INT8 model is within 0.5 pp of the dense model trained as long",
       "-0.36 pp [-0.71, +0.00], no measurable difference", "A: rtl:default; B: host FP32",
       "model optimization lead", "holds"},
      {"every device result is bit-exact", "100/100 batches equal the golden model",
       "rtl:default, 100 batches of 100, seed 7", "accelerator architecture owner", "holds"},
      {"PE utilization >= 90%", "88.1%", "rtl:default", "accelerator architecture owner",
       "does not hold"},
  };
  r.tags = {{"git", "3f2c9e1 (dirty)"},
            {"rtl config", "default"},
            {"verilator", "Verilator 5.006 2023-01-22"},
            {"compiler", "g++ (Debian 12.2.0-14) 12.2.0"},
            {"seed", "2021"},
            {"options", "--schedule gradual --permute --batch 100 --backend rtl"}};
  r.notes = {"Synthetic figures for the report layout test: nothing here was measured.",
             "PE utilization target not met: fc3 (10 outputs) fills 10 of 64 PE columns <8x8>."};
  return r;
}

}  // namespace nmsa::testing
