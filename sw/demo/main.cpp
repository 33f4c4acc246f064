// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// nmsa_demo, the main job (make demo): Fashion-MNIST from dense training to 2:4 sparse INT8 on the
// Verilated accelerator, and the sparsity deployment report. The steps and every decision are
// described in docs/demo.md:
//
//   1. train the dense FP32 baseline, and a wider model sized to the dense latency budget
//   2. quality gate: each layer pruned alone and briefly fine-tuned; a layer that costs more
//      validation accuracy than the threshold stays dense (a dense fallback)
//   3. the pruning schedules (prune only, one-shot + fine-tune, gradual; with and without the
//      channel permutation search), each a quality row; the best on validation is deployed
//   4. INT8 quantization with calibrated activation scales
//   5. the test set through the RTL: the deployed model, the all-dense INT8 model and the wider
//      model, bit-exact against the golden model, the first two also on the functional model;
//      the first batches again under contention (a second AXI master), and a regressed workload
//      (less host bandwidth) beside its comparator, which nmsa triage explains
//   6. the second model, a CNN: trained, pruned and run through the runtime (cnn_demo.hpp)
//   7. the report (JSON, Markdown, HTML) and the ONNX export of the deployed models
//
// Exit codes: 0 done (targets met or not: the report says which), 1 a device result that is not
// bit-exact or a device error, 2 bad options or missing data.
#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <variant>
#include <vector>

#include "nmsa/accuracy_stats.hpp"
#include "nmsa/bandwidth_lens.hpp"
#include "nmsa/device.hpp"
#include "nmsa/fpga_results.hpp"
#include "nmsa/int8_mlp.hpp"
#include "nmsa/mlp_cycles.hpp"
#include "nmsa/npy.hpp"
#include "nmsa/onnx_export.hpp"
#include "nmsa/regs.hpp"
#include "nmsa/report.hpp"
#include "nmsa/tb/host_memory.hpp"
#include "nmsa/tb/rtl_device.hpp"
#include "cnn_demo.hpp"
#include "hardware.hpp"
#include "options.hpp"
#include "recipes.hpp"
#include "regressed_workload.hpp"
#include "test_set.hpp"
#include "wide_model.hpp"

namespace {

using namespace nmsa;
using namespace nmsa::demo;

std::string percent(double fraction) {
  if (std::isnan(fraction)) return "n/a";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f%%", 100.0 * fraction);
  return buf;
}

std::string fixed(double v, int digits) {
  if (std::isnan(v)) return "n/a";
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string command_output(const std::string& cmd) {
  std::string out;
  if (FILE* p = popen((cmd + " 2>/dev/null").c_str(), "r")) {
    char buf[256];
    while (std::fgets(buf, sizeof buf, p) != nullptr) out += buf;
    pclose(p);
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out.empty() ? "unknown" : out;
}

const auto kStart = std::chrono::steady_clock::now();

double seconds_since_start() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - kStart).count();
}

// A stage line with the seconds since the demo started, so that a log shows where time goes.
void stage(int n, const std::string& what) {
  std::printf("[%d/7 %5.0f s] %s\n", n, seconds_since_start(), what.c_str());
  std::fflush(stdout);
}

// A model through the whole quality path: FP32 and INT8 accuracies.
struct Evaluated {
  TrainedModel trained;
  std::string schedule;
  bool permuted = false;
  double fp32_val = 0, fp32_test = 0;
  double int8_val = 0, int8_test = 0;
  Outcomes fp32_test_outcomes, int8_test_outcomes;  // per test image (INT8: the golden model)
  Int8Mlp int8;
  MatrixF test_golden;  // its golden logits of the test set, what every device must return
};

// "-0.23 pp [-0.51, +0.05], McNemar p 0.1210": a paired comparison in one line.
std::string signed_pp_text(const PairedComparison& c) {
  const auto pp = [](double v) { return (v >= 0 ? "+" : "") + fixed(v, 2); };
  return pp(c.delta_pp) + " pp [" + pp(c.ci95_pp.lo) + ", " + pp(c.ci95_pp.hi) + "], McNemar p " +
         fixed(c.mcnemar_p, 4);
}

double accuracy_of(const Outcomes& o) {
  return o.empty() ? 0.0
                   : static_cast<double>(std::count(o.begin(), o.end(), true)) /
                         static_cast<double>(o.size());
}

Evaluated evaluate(const TrainedModel& m, const std::string& schedule, bool permuted,
                   const std::vector<GemmMode>& modes, const Data& data, int calibration_rows,
                   NmPattern pattern) {
  Evaluated e;
  e.trained = m;
  e.schedule = schedule;
  e.permuted = permuted;
  e.fp32_val = evaluate_accuracy(m.mlp, data.val.images, data.val.labels);
  e.fp32_test_outcomes =
      outcomes_of(predict_classes(mlp_forward(m.mlp, data.test.images)), data.test.labels);
  e.fp32_test = accuracy_of(e.fp32_test_outcomes);
  const Eigen::Index calib = std::min<Eigen::Index>(calibration_rows, data.val.images.rows());
  const std::vector<float> scales =
      calibrate_input_scales(m.mlp, data.val.images.topRows(calib), 99.99);
  e.int8 = quantize_mlp(m.mlp, scales, modes, pattern);
  e.int8_val = evaluate_int8_accuracy(e.int8, data.val.images, data.val.labels);
  e.test_golden = golden_logits(e.int8, data.test.images);
  e.int8_test_outcomes = outcomes_of(predict_classes(e.test_golden), data.test.labels);
  e.int8_test = accuracy_of(e.int8_test_outcomes);
  return e;
}

std::vector<GemmMode> modes_of(const std::vector<bool>& sparse) {
  std::vector<GemmMode> m;
  for (bool s : sparse) m.push_back(s ? GemmMode::SPARSE : GemmMode::DENSE);
  return m;
}

// The VERSION register of the accelerator that ran, as major.minor.patch.
std::string register_map_version(const std::string& config) {
  const std::uint32_t v = tb::make_rtl_device(config)->read_reg(regs::VERSION_OFFSET);
  return std::to_string((v >> 16) & 0xff) + "." + std::to_string((v >> 8) & 0xff) + "." +
         std::to_string(v & 0xff);
}

int run_demo(const DemoOptions& opt) {
  const DeviceCaps caps = DeviceCaps::named(opt.config);
  const NmPattern pattern = caps.pattern;
  const PerfModelParams perf = tb::demo_host_memory_perf();
  std::printf("nmsa demo: Fashion-MNIST, %s on rtl:%s (%s), %d threads\n",
              pattern.name().c_str(), opt.config.c_str(), caps.describe().c_str(), opt.threads);

  stage(1, "data and dense training");
  Data data;
  try {
    data = load_data(opt.train_images, opt.val_images, opt.test_images);
  } catch (const std::exception& e) {
    throw UsageError(e.what());  // missing or malformed data: exit code 2
  }
  std::printf("      %ld training, %ld validation, %ld test images\n",
              static_cast<long>(data.train.images.rows()),
              static_cast<long>(data.val.images.rows()),
              static_cast<long>(data.test.images.rows()));
  std::atomic<long> epochs_done{0};
  const Trainer trainer(data, opt.cache, pattern, &epochs_done);
  TrainRecipe dense_recipe;
  dense_recipe.epochs = opt.epochs;
  dense_recipe.seed = opt.seed;
  TrainRecipe ft_recipe = dense_recipe;
  ft_recipe.epochs = opt.finetune_epochs;
  ft_recipe.seed = opt.seed + 1000;
  TrainRecipe gate_recipe = ft_recipe;
  gate_recipe.epochs = opt.gate_epochs;

  const std::vector<int> base_sizes = {784, 512, 256, 10};
  const std::size_t n_layers = base_sizes.size() - 1;
  // The latency budget: the all-dense base model, predicted by the cycle model (measured on the
  // RTL later); the wider model is the widest whose all-sparse prediction fits it.
  const Eigen::Index batch = std::min<Eigen::Index>(opt.batch, data.test.images.rows());
  const std::uint64_t budget_predicted =
      predict_mlp_batch_cycles(caps, base_sizes, batch, GemmMode::DENSE, perf);
  const WideShape wide = size_wide_model(caps, base_sizes, batch, budget_predicted, perf);
  const std::vector<int>& wide_sizes = wide.sizes;
  const std::uint64_t wide_predicted = wide.predicted_cycles;
  std::printf("      latency budget %llu cycles per batch of %ld (dense %s, predicted); wider "
              "2:4 model %s predicted at %llu (%d shapes searched)\n",
              static_cast<unsigned long long>(budget_predicted), static_cast<long>(batch),
              sizes_name(base_sizes).c_str(), sizes_name(wide_sizes).c_str(),
              static_cast<unsigned long long>(wide_predicted), wide.searched);

  const long total_epochs = 2L * opt.epochs + (n_layers + 1) * opt.gate_epochs +
                            6L * opt.finetune_epochs;
  TrainedModel base;
  TrainedModel wide_dense;
  run_parallel({[&] { base = trainer.dense(base_sizes, opt.seed, dense_recipe); },
                [&] { wide_dense = trainer.dense(wide_sizes, opt.seed, dense_recipe); }},
               opt.threads, "dense training", &epochs_done, total_epochs);

  stage(2, "quality gate: each layer pruned alone, " + std::to_string(opt.gate_epochs) +
               " epoch(s) of fine-tuning");
  std::vector<TrainedModel> gate_trials(n_layers);
  TrainedModel control;
  TrainedModel wide_sparse;
  SparseRecipe wide_recipe;
  wide_recipe.schedule = Schedule::kOneShot;
  wide_recipe.permute = true;
  wide_recipe.finetune = ft_recipe;
  {
    std::vector<std::function<void()>> jobs;
    jobs.push_back([&] { wide_sparse = trainer.sparse(wide_dense, wide_recipe); });
    SparseRecipe none;
    none.schedule = Schedule::kOneShot;
    none.selected.assign(n_layers, false);
    none.finetune = gate_recipe;
    jobs.push_back([&, none] { control = trainer.sparse(base, none); });
    for (std::size_t i = 0; i < n_layers; ++i) {
      SparseRecipe one = none;
      one.selected[i] = true;
      jobs.push_back([&, one, i] { gate_trials[i] = trainer.sparse(base, one); });
    }
    run_parallel(jobs, opt.threads, "gate + wider model", &epochs_done, total_epochs);
  }
  const double control_val = trainer.val_accuracy(control.mlp);
  std::vector<bool> sparse_layers(n_layers, true);
  std::vector<double> sensitivity(n_layers);
  for (std::size_t i = 0; i < n_layers; ++i) {
    sensitivity[i] = 100.0 * (control_val - trainer.val_accuracy(gate_trials[i].mlp));
    sparse_layers[i] = sensitivity[i] <= opt.gate_threshold_pp;
    std::printf("      fc%zu: pruning costs %+.2f pp on validation -> %s\n", i + 1,
                sensitivity[i], sparse_layers[i] ? "sparse" : "dense fallback");
  }

  stage(3, "pruning schedules");
  struct Row {
    Schedule schedule;
    bool permute;
    TrainedModel model;
  };
  std::vector<Row> rows;
  for (Schedule s : {Schedule::kPruneOnly, Schedule::kOneShot, Schedule::kGradual}) {
    for (bool p : {false, true}) rows.push_back({s, p, {}});
  }
  // The dense model retrained with the fine-tuning recipe (nothing pruned): the control that
  // tells what the extra epochs alone give, beside what pruning + fine-tuning gives.
  TrainedModel dense_retrained;
  {
    std::vector<std::function<void()>> jobs;
    SparseRecipe retrain;
    retrain.schedule = Schedule::kOneShot;
    retrain.selected.assign(n_layers, false);
    retrain.finetune = ft_recipe;
    jobs.push_back([&, retrain] { dense_retrained = trainer.sparse(base, retrain); });
    for (auto& r : rows) {
      SparseRecipe recipe;
      recipe.schedule = r.schedule;
      recipe.permute = r.permute;
      recipe.selected = sparse_layers;
      recipe.finetune = ft_recipe;
      jobs.push_back([&, recipe] { r.model = trainer.sparse(base, recipe); });
    }
    run_parallel(jobs, opt.threads, "pruning schedules", &epochs_done, total_epochs);
  }

  std::printf("      models: %d trained, %d from the cache (%s)\n", trainer.models_trained(),
              trainer.models_from_cache(), opt.cache.c_str());

  stage(4, "INT8 quantization (calibrated on " + std::to_string(opt.calibration_images) +
               " validation images) and quality");
  const std::vector<GemmMode> deployed_modes = modes_of(sparse_layers);
  const std::vector<GemmMode> all_dense(n_layers, GemmMode::DENSE);
  Evaluated dense_eval, retrained_eval, wide_eval;
  std::vector<Evaluated> schedule_evals(rows.size());
  {
    std::atomic<long> evaluated{0};
    auto job = [&](Evaluated& out, const TrainedModel& m, const std::string& schedule,
                   bool permuted, const std::vector<GemmMode>& modes) {
      return [&, schedule, permuted, modes] {
        out = evaluate(m, schedule, permuted, modes, data, opt.calibration_images, pattern);
        ++evaluated;
      };
    };
    std::vector<std::function<void()>> jobs = {
        job(wide_eval, wide_sparse, "one-shot + fine-tune", true,
            std::vector<GemmMode>(n_layers, GemmMode::SPARSE)),
        job(dense_eval, base, "dense", false, all_dense),
        job(retrained_eval, dense_retrained, "dense, retrained with the fine-tune recipe", false,
            all_dense)};
    for (std::size_t i = 0; i < rows.size(); ++i) {
      jobs.push_back(job(schedule_evals[i], rows[i].model, to_string(rows[i].schedule),
                         rows[i].permute, deployed_modes));
    }
    run_parallel(jobs, opt.threads, "quantize + evaluate", &evaluated,
                 static_cast<long>(jobs.size()));
  }
  // The deployed model: the fine-tuned schedule with the best INT8 validation accuracy (the test
  // set plays no part in the choice).
  std::size_t deployed = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (rows[i].schedule == Schedule::kPruneOnly) continue;
    if (rows[deployed].schedule == Schedule::kPruneOnly ||
        schedule_evals[i].int8_val > schedule_evals[deployed].int8_val) {
      deployed = i;
    }
  }
  const Evaluated& dep = schedule_evals[deployed];
  std::printf("      deployed: %s (INT8 validation %s)\n",
              SparseRecipe{rows[deployed].schedule, rows[deployed].permute, {}, {}}.name().c_str(),
              percent(dep.int8_val).c_str());

  stage(5, "the test set on the RTL (" + std::to_string(data.test.images.rows()) +
               " images, batches of " + std::to_string(batch) + ")");
  // Every model takes the float test images; each quantizes them itself (its QuantizeLinear).
  const MatrixF& x_dep = data.test.images;
  const MatrixF& x_dense = data.test.images;
  const MatrixF& x_wide = data.test.images;
  const MatrixF& g_dep = dep.test_golden;
  const MatrixF& g_dense = dense_eval.test_golden;
  const MatrixF& g_wide = wide_eval.test_golden;
  // The wider model runs a subset of the batches on the RTL: enough for its latency and for
  // bit-exactness; its accuracy over the whole test set is the golden model's, which the RTL
  // reproduces exactly.
  const Eigen::Index wide_rows =
      std::min<Eigen::Index>(x_wide.rows(), batch * std::max(opt.wide_rtl_batches, 1));
  TestSetRun rtl_dep, rtl_dense, rtl_wide, model_dep, model_dense;
  // Beside the test set: the first batches again under contention, and the regressed workload
  // with its comparator.
  const Eigen::Index contention_rows =
      std::min<Eigen::Index>(x_dep.rows(), batch * opt.contention_batches);
  const Eigen::Index workload_rows =
      std::min<Eigen::Index>(x_dep.rows(), batch * opt.workload_batches);
  std::vector<TestSetRun> contention_dep(opt.contention_loads.size());
  std::vector<TestSetRun> contention_dense(opt.contention_loads.size());
  WorkloadRuns comparator, regressed;
  std::atomic<long> batches_done{0};
  auto batches_in = [&](Eigen::Index rows_n) {
    return static_cast<long>((rows_n + batch - 1) / batch);
  };
  std::string deployed_rtl_runs;
  {
    const tb::AxiMemoryConfig axi = tb::demo_host_memory(caps);
    tb::AxiMemoryConfig slow = axi;
    slow.bytes_per_cycle = opt.regressed_bytes_per_cycle;
    // A run split in two halves on a batch boundary, each on its own device, so that the cores
    // share the long runs; the halves are joined again afterwards.
    const Eigen::Index half = (x_dep.rows() / batch + 1) / 2 * batch;
    std::vector<TestSetRun> parts(7);
    std::vector<std::function<void()>> jobs;
    auto rtl_job = [&](TestSetRun& out, const Int8Mlp& m, const MatrixF& x, const MatrixF& g,
                       Eigen::Index first, Eigen::Index count, std::uint64_t seed,
                       const tb::AxiMemoryConfig& memory) {
      jobs.push_back([&, first, count, seed, memory] {
        auto dev = tb::make_rtl_device(opt.config, memory, seed);
        out = run_test_set(*dev, m, x.middleRows(first, count), g.middleRows(first, count),
                           static_cast<int>(batch), perf, &batches_done);
      });
    };
    auto model_job = [&](TestSetRun& out, const Int8Mlp& m, const MatrixF& x, const MatrixF& g,
                         Eigen::Index count) {
      jobs.push_back([&, count] {
        auto dev = make_model_device(opt.config);
        out = run_test_set(*dev, m, x.topRows(count), g.topRows(count), static_cast<int>(batch),
                           perf, &batches_done);
      });
    };
    const Eigen::Index rest = x_dep.rows() - half;
    // Where each deployed batch ran: `nmsa run --host-memory demo --memory-seed S --rows A:B`
    // takes the same cycles (docs/demo.md).
    for (const auto& [first, count, seed] :
         {std::tuple{Eigen::Index{0}, half, opt.seed + 3}, std::tuple{half, rest, opt.seed + 4}}) {
      if (count == 0) continue;
      deployed_rtl_runs += (deployed_rtl_runs.empty() ? "" : ", ") + std::string("rows ") +
                           std::to_string(first) + ":" + std::to_string(first + count) +
                           " on memory seed " + std::to_string(seed);
    }
    // Longest first, so that the cores finish together.
    rtl_job(parts[0], dense_eval.int8, x_dense, g_dense, 0, half, opt.seed + 1, axi);
    rtl_job(parts[1], dense_eval.int8, x_dense, g_dense, half, rest, opt.seed + 2, axi);
    rtl_job(parts[2], dep.int8, x_dep, g_dep, 0, half, opt.seed + 3, axi);
    rtl_job(parts[3], dep.int8, x_dep, g_dep, half, rest, opt.seed + 4, axi);
    rtl_job(parts[4], wide_eval.int8, x_wide, g_wide, 0, wide_rows, opt.seed + 5, axi);
    model_job(parts[5], dep.int8, x_dep, g_dep, x_dep.rows());
    model_job(parts[6], dense_eval.int8, x_dense, g_dense, x_dense.rows());
    if (rest == 0) {  // a single batch: no second half
      jobs.erase(jobs.begin() + 3);
      jobs.erase(jobs.begin() + 1);
    }
    for (std::size_t i = 0; i < opt.contention_loads.size(); ++i) {
      tb::AxiMemoryConfig loaded = axi;
      loaded.background_load = opt.contention_loads[i];
      rtl_job(contention_dep[i], dep.int8, x_dep, g_dep, 0, contention_rows, opt.seed + 10 + 2 * i,
              loaded);
      rtl_job(contention_dense[i], dense_eval.int8, x_dense, g_dense, 0, contention_rows,
              opt.seed + 11 + 2 * i, loaded);
    }
    auto workload_jobs = [&](WorkloadRuns& w, const tb::AxiMemoryConfig& memory,
                             std::uint64_t seed) {
      rtl_job(w.deployed, dep.int8, x_dep, g_dep, 0, workload_rows, seed, memory);
      rtl_job(w.dense, dense_eval.int8, x_dense, g_dense, 0, workload_rows, seed + 1, memory);
      model_job(w.model, dep.int8, x_dep, g_dep, workload_rows);
    };
    workload_jobs(comparator, axi, opt.seed + 6);
    workload_jobs(regressed, slow, opt.seed + 8);
    run_parallel(jobs, opt.threads, "RTL and functional model", &batches_done,
                 4 * batches_in(x_dep.rows()) + batches_in(wide_rows) +
                     2 * static_cast<long>(opt.contention_loads.size()) *
                         batches_in(contention_rows) +
                     6 * batches_in(workload_rows));
    rtl_dense = rest == 0 ? parts[0] : concatenate({parts[0], parts[1]});
    rtl_dep = rest == 0 ? parts[2] : concatenate({parts[2], parts[3]});
    rtl_wide = parts[4];
    model_dep = parts[5];
    model_dense = parts[6];
  }

  stage(6, "the second model: a CNN, trained, pruned and run through the runtime");
  CnnDemoOptions cnn_options;
  cnn_options.config = opt.config;
  cnn_options.cache = opt.cache;
  cnn_options.epochs = opt.cnn_epochs;
  cnn_options.finetune_epochs = opt.cnn_finetune_epochs;
  cnn_options.batch = static_cast<int>(batch);
  cnn_options.calibration_rows = opt.calibration_images;
  cnn_options.rtl_batches = opt.cnn_rtl_batches;
  cnn_options.gate_epochs = opt.gate_epochs;
  cnn_options.gate_threshold_pp = opt.gate_threshold_pp;
  cnn_options.threads = opt.threads;
  cnn_options.seed = opt.seed;
  // No random read gaps, and every burst the DMA issues taken at once: the memory the cycle
  // model assumes, so that its prediction is exact against the RTL.
  tb::AxiMemoryConfig steady_memory = tb::demo_host_memory(caps);
  steady_memory.p_r_gap = 0;
  steady_memory.max_reads = 64;
  steady_memory.max_writes = 64;
  const CnnDemoResult cnn = run_cnn_demo(data, cnn_options, steady_memory, perf);
  std::printf("      cnn: %d trained, %d from the cache\n", cnn.models_trained,
              cnn.models_from_cache);
  const SecondModelReport& cnn_rep = cnn.report;

  stage(7, "the deployment report");
  DeploymentReport rep;
  rep.second_model = cnn_rep;
  rep.dataset = "Fashion-MNIST test set (" + std::to_string(data.test.images.rows()) + " images)";
  rep.test_images = static_cast<int>(data.test.images.rows());
  rep.device = "rtl:" + opt.config + " (" + caps.describe() + ")";
  const auto& labels = data.test.labels;
  const Outcomes dense_rtl_outcomes = outcomes_of(predict_classes(rtl_dense.logits), labels);
  const Outcomes dep_rtl_outcomes = outcomes_of(predict_classes(rtl_dep.logits), labels);
  rep.dense_fp32_accuracy = dense_eval.fp32_test;
  rep.dense_int8_accuracy = accuracy_of(dense_rtl_outcomes);
  rep.sparse_fp32_accuracy = dep.fp32_test;
  rep.sparse_int8_accuracy = accuracy_of(dep_rtl_outcomes);
  rep.control_fp32_accuracy = retrained_eval.fp32_test;
  const BootstrapSettings bootstrap{2000, opt.seed};
  {
    // Every quality claim against the dense model trained as long (the control); the first
    // training run's dense model stays as context.
    const std::string rtl = "rtl:" + opt.config;
    const std::string golden = "golden (Eigen INT8)";
    auto compare = [&](const std::string& name, const std::string& a, const Outcomes& oa,
                       const std::string& a_on, const std::string& b, const Outcomes& ob,
                       const std::string& b_on) {
      PairedComparison c = compare_paired(name, a, oa, b, ob, bootstrap);
      c.measured_on = "A: " + a_on + "; B: " + b_on;
      rep.comparisons.push_back(c);
    };
    const std::string fp32 = "host FP32";
    compare("deployed 2:4 vs dense, equal training", "deployed 2:4 INT8", dep_rtl_outcomes, rtl,
            "dense control FP32", retrained_eval.fp32_test_outcomes, fp32);
    compare("wider 2:4 vs dense, equal training and latency", "wider 2:4 INT8 " +
                sizes_name(wide_sizes), wide_eval.int8_test_outcomes, golden,
            "dense control INT8", retrained_eval.int8_test_outcomes, golden);
    compare("INT8 quantization of the deployed model", "deployed 2:4 INT8", dep_rtl_outcomes, rtl,
            "deployed 2:4 FP32", dep.fp32_test_outcomes, fp32);
    compare("the extra epochs alone (context)", "dense control FP32",
            retrained_eval.fp32_test_outcomes, fp32, "dense FP32, first run",
            dense_eval.fp32_test_outcomes, fp32);
    compare("deployed 2:4 vs dense, first run (context)", "deployed 2:4 INT8", dep_rtl_outcomes,
            rtl, "dense FP32, first run", dense_eval.fp32_test_outcomes, fp32);
    compare("wider 2:4 vs dense INT8, first run (context)", "wider 2:4 INT8 " +
                sizes_name(wide_sizes), wide_eval.int8_test_outcomes, golden,
            "dense INT8, first run", dense_rtl_outcomes, rtl);
  }
  const PairedComparison& headline = rep.comparisons[0];
  const PairedComparison& equal_budget_quality = rep.comparisons[1];
  rep.quality_baseline = "dense control FP32 (" + sizes_name(base_sizes) + ", trained as long)";
  rep.quality_delta_pp = headline.delta_pp;
  rep.quality_delta_ci95_pp = headline.ci95_pp;
  rep.effective_speedup = static_cast<double>(rtl_dense.total_cycles()) /
                          static_cast<double>(rtl_dep.total_cycles());
  set_clock_and_hardware_cost(rep, opt.config, opt.clock_mhz, caps, base_sizes, batch, perf);
  {
    // The deployed network at other host memories (the lens's MLP is the demo's base network).
    LensSettings lens;
    lens.families = {"mlp"};
    rep.bandwidth_lens = run_bandwidth_lens(caps, lens);
    rep.memory_bytes_per_cycle = perf.dma_bytes_per_cycle;
  }
  // What the fallbacks cost: the cycle model's all-dense over all-sparse ratio for the same
  // batches (a ratio of two predictions, so that the memory model's random gaps cancel).
  auto predict_run = [&](GemmMode mode) {
    const Eigen::Index rows_total = x_dep.rows();
    std::uint64_t c = predict_mlp_batch_cycles(caps, base_sizes, batch, mode, perf) *
                      static_cast<std::uint64_t>(rows_total / batch);
    if (rows_total % batch != 0) {
      c += predict_mlp_batch_cycles(caps, base_sizes, rows_total % batch, mode, perf);
    }
    return static_cast<double>(c);
  };
  rep.all_sparse_speedup_predicted = predict_run(GemmMode::DENSE) / predict_run(GemmMode::SPARSE);
  rep.deployed_latency = full_batch_latency("deployed", rtl_dep, x_dep.rows());
  rep.dense_latency = full_batch_latency("all dense", rtl_dense, x_dep.rows());
  rep.other_latency.push_back(
      full_batch_latency("wider sparse " + sizes_name(wide_sizes), rtl_wide, wide_rows));
  // Under contention: load 0 is the test-set run itself.
  rep.contention.push_back({0.0, rep.deployed_latency, rep.dense_latency});
  for (std::size_t i = 0; i < opt.contention_loads.size(); ++i) {
    rep.contention.push_back(
        {opt.contention_loads[i],
         full_batch_latency("deployed", contention_dep[i], contention_rows),
         full_batch_latency("all dense", contention_dense[i], contention_rows)});
  }
  rep.batches = rtl_dep.batches();
  rep.batches_bit_exact_golden = rtl_dep.batches_matching_golden;
  rep.batches_bit_exact_model = matching_batches(rtl_dep, model_dep);

  // Per layer.
  const double peak_sparse = static_cast<double>(caps.rows) * caps.cols * pattern.m;
  const double peak_dense = static_cast<double>(caps.rows) * caps.cols * pattern.n;
  double busy_equivalent = 0;  // ideal cycles of the useful work, per layer in its mode
  std::uint64_t deployed_total = 0;
  for (std::size_t i = 0; i < n_layers; ++i) {
    const Int8MlpLayer& l = dep.int8.layers[i];
    ReportLayer r;
    r.name = l.name;
    r.op = l.last ? "Gemm (INT32 out, host dequantizes)" : "Gemm + bias + requant + ReLU";
    r.k = static_cast<int>(l.weights.cols());
    r.n_out = static_cast<int>(l.weights.rows());
    const bool sparse = l.mode == GemmMode::SPARSE;
    r.placement = sparse ? "device sparse" : "device dense";
    char why[200];
    std::snprintf(why, sizeof why,
                  "quality gate: pruned alone, it costs %.2f pp of validation accuracy (%s %.2f "
                  "pp allowed)",
                  sensitivity[i], sparse ? "<=" : ">", opt.gate_threshold_pp);
    r.reason = why;
    r.sensitivity_pp = sensitivity[i];
    r.deployed_cycles = rtl_dep.layers[i].cycles;
    r.dense_cycles = rtl_dense.layers[i].cycles;
    const double useful = static_cast<double>(x_dep.rows()) * r.k * r.n_out;
    r.macs = static_cast<std::uint64_t>(useful);
    const double ideal = useful / (sparse ? peak_sparse : peak_dense);
    r.utilization = r.deployed_cycles == 0 ? 0.0 : ideal / static_cast<double>(r.deployed_cycles);
    busy_equivalent += ideal;
    deployed_total += r.deployed_cycles;
    const std::uint64_t dense_bytes = static_cast<std::uint64_t>(r.k) * r.n_out;
    r.dense_weight_bytes = dense_bytes;
    if (sparse) {
      const std::uint64_t groups = dense_bytes / static_cast<std::uint64_t>(pattern.m);
      r.meta_bytes = groups * static_cast<std::uint64_t>(pattern.meta_bits()) / 8;
      r.deployed_weight_bytes = groups * static_cast<std::uint64_t>(pattern.n) + r.meta_bytes;
    } else {
      r.deployed_weight_bytes = dense_bytes;
      rep.fallback_layers.push_back(r.name);
      rep.fallback_cycles += r.deployed_cycles;
    }
    rep.weight_bytes_dense += r.dense_weight_bytes;
    rep.weight_bytes_deployed += r.deployed_weight_bytes;
    rep.meta_bytes += r.meta_bytes;
    rep.dma_read_bytes += rtl_dep.layers[i].dma_rd_bytes;
    rep.dma_meta_bytes += rtl_dep.layers[i].meta_bytes;
    rep.layers.push_back(r);
  }
  rep.fallback_cycle_share = deployed_total == 0 ? 0.0
                                                 : static_cast<double>(rep.fallback_cycles) /
                                                       static_cast<double>(deployed_total);
  rep.pe_utilization =
      deployed_total == 0 ? 0.0 : busy_equivalent / static_cast<double>(deployed_total);

  // Quality rows: INT8 from the golden model, except where the RTL ran the whole test set.
  const std::string golden_name = "golden (Eigen INT8)";
  auto quality_row = [&](const Evaluated& e, const std::string& model_name, bool is_deployed,
                         const std::string& note) {
    QualityRow q;
    q.model = model_name;
    q.schedule = e.schedule;
    q.permuted = e.permuted;
    q.fp32_accuracy = e.fp32_test;
    q.fp32_ci95 = estimate_accuracy(e.fp32_test_outcomes, bootstrap).ci95;
    q.int8_accuracy = e.int8_test;
    q.int8_ci95 = estimate_accuracy(e.int8_test_outcomes, bootstrap).ci95;
    q.int8_measured_on = golden_name;
    q.deployed = is_deployed;
    q.note = note;
    return q;
  };
  auto measured_on_rtl = [&](QualityRow& q, const Outcomes& rtl_outcomes) {
    const AccuracyEstimate e = estimate_accuracy(rtl_outcomes, bootstrap);
    q.int8_accuracy = e.accuracy;
    q.int8_ci95 = e.ci95;
    q.int8_measured_on = "rtl:" + opt.config;
  };
  QualityRow dense_row =
      quality_row(dense_eval, sizes_name(base_sizes), false, "dense, first training run");
  measured_on_rtl(dense_row, dense_rtl_outcomes);
  rep.quality.push_back(dense_row);
  rep.quality.push_back(quality_row(
      retrained_eval, sizes_name(base_sizes), false,
      "control: trained as long as the fine-tuned models, nothing pruned (the quality baseline)"));
  for (std::size_t i = 0; i < rows.size(); ++i) {
    QualityRow q = quality_row(schedule_evals[i], sizes_name(base_sizes), i == deployed, "");
    if (i == deployed) {
      measured_on_rtl(q, dep_rtl_outcomes);
      q.note = "deployed (best INT8 validation accuracy)";
    }
    rep.quality.push_back(q);
  }
  // The golden model over the whole test set; the RTL matched it on the batches it ran.
  const double wide_rtl_acc = wide_eval.int8_test;
  QualityRow wide_row = quality_row(wide_eval, sizes_name(wide_sizes), false,
                                    "equal latency budget");
  wide_row.int8_measured_on = golden_name + ", rtl:" + opt.config + " bit-exact on " +
                              std::to_string(rtl_wide.batches_matching_golden) + "/" +
                              std::to_string(rtl_wide.batches()) + " batches";
  rep.quality.push_back(wide_row);

  // Schedules: the dense training, then every fine-tuned schedule.
  rep.schedules.push_back(base.curve);
  for (const auto& r : rows) {
    if (r.schedule != Schedule::kPruneOnly) rep.schedules.push_back(r.model.curve);
  }

  EqualBudget eb;
  eb.dense_model = sizes_name(base_sizes);
  eb.sparse_model = sizes_name(wide_sizes);
  eb.budget_cycles_p50 = rep.dense_latency.p50;
  eb.sparse_cycles_p50 = rep.other_latency.front().p50;
  eb.predicted_budget_cycles = budget_predicted;
  eb.predicted_sparse_cycles = wide_predicted;
  eb.shapes_searched = wide.searched;
  eb.dense_int8_accuracy = retrained_eval.int8_test;
  eb.sparse_int8_accuracy = wide_rtl_acc;
  eb.accuracy_measured_on = golden_name + " for both: the dense control and the wider model";
  rep.equal_budget = eb;

  // Targets (the issue's, on the full test set; --quick runs report them too, far from met).
  auto target = [&](const std::string& name, const std::string& required,
                    const std::string& measured, bool met) {
    rep.targets.push_back({name, required, measured, met});
  };
  target("dense FP32 top-1", ">= 88%", percent(rep.dense_fp32_accuracy),
         rep.dense_fp32_accuracy >= 0.88);
  target("2:4 sparse INT8 vs dense control FP32 (equal training)", "within 0.5 pp",
         signed_pp_text(headline) + ", " + headline.verdict(), headline.delta_pp >= -0.5);
  target("effective speedup over all-dense (same RTL)", ">= 1.8x",
         fixed(rep.effective_speedup, 3) + "x", rep.effective_speedup >= 1.8);
  // A claim that the wider model is better needs an interval above zero, not a lead of a few
  // images.
  target("wider sparse model at the dense budget vs dense control INT8 (equal training)",
         "measurably higher accuracy (95% CI above 0), within the budget",
         signed_pp_text(equal_budget_quality) + ", " + equal_budget_quality.verdict() +
             (eb.fits() ? "" : " (does NOT fit the budget)"),
         equal_budget_quality.ci95_pp.lo > 0 && eb.fits());
  const bool bit_exact = rtl_dep.batches_matching_golden == rtl_dep.batches() &&
                         rtl_dense.batches_matching_golden == rtl_dense.batches() &&
                         rtl_wide.batches_matching_golden == rtl_wide.batches() &&
                         rep.batches_bit_exact_model == rep.batches &&
                         matching_batches(rtl_dense, model_dense) == rtl_dense.batches() &&
                         all_match_golden(contention_dep) && all_match_golden(contention_dense) &&
                         all_match_golden({comparator.deployed, comparator.dense,
                                           regressed.deployed, regressed.dense});
  target("RTL bit-exact vs golden and functional model", "every batch",
         std::to_string(rep.batches_bit_exact_golden) + "/" + std::to_string(rep.batches),
         bit_exact);
  target("CNN dense FP32 top-1", ">= 91%", percent(cnn_rep.dense_fp32_accuracy),
         cnn_rep.dense_fp32_accuracy >= 0.91);
  target("CNN 2:4 INT8 vs its dense control FP32 (equal training)", "within 0.5 pp",
         signed_pp_text(*cnn_rep.quality_comparison) + ", " +
             cnn_rep.quality_comparison->verdict(),
         cnn_rep.quality_delta_pp() >= -0.5);
  const bool cnn_exact = cnn_rep.rtl_batches_bit_exact == cnn_rep.rtl_batches &&
                         cnn_rep.rtl_batches_cycle_exact == cnn_rep.rtl_batches &&
                         cnn_rep.rtl_gemms_golden_exact == cnn_rep.rtl_gemms;
  target("CNN on the RTL: bit- and cycle-exact vs the functional model, bit-exact vs golden",
         "every batch run, every device GEMM",
         std::to_string(cnn_rep.rtl_batches_bit_exact) + "/" +
             std::to_string(cnn_rep.rtl_batches) + " bit-exact, " +
             std::to_string(cnn_rep.rtl_batches_cycle_exact) + "/" +
             std::to_string(cnn_rep.rtl_batches) + " cycle-exact; " +
             std::to_string(cnn_rep.rtl_gemms_golden_exact) + "/" +
             std::to_string(cnn_rep.rtl_gemms) + " GEMMs equal to golden",
         cnn_exact);
  {
    // The validation matrix: every claim with its evidence, run, owner and status.
    const std::string rtl_run = "rtl:" + opt.config + ", " + std::to_string(rep.batches) +
                                " batches of " + std::to_string(batch) + ", seed " +
                                std::to_string(opt.seed);
    const auto holds = [](bool ok) { return std::string(ok ? "holds" : "does not hold"); };
    const std::uint64_t dense_p50 = rep.dense_latency.p50;
    const double leaves_at = p99_leaves_budget_at(rep.contention);
    rep.validation = {
        {"2:4 runs the network faster than all-dense on the same RTL (>= 1.8x)",
         "effective speedup " + fixed(rep.effective_speedup, 3) + "x (dense " +
             std::to_string(rtl_dense.total_cycles()) + " / deployed " +
             std::to_string(rtl_dep.total_cycles()) + " cycles)",
         rtl_run, "accelerator architecture owner", holds(rep.effective_speedup >= 1.8)},
        {"the deployed 2:4 INT8 model is within 0.5 pp of the dense model trained as long",
         signed_pp_text(headline) + ", " + headline.verdict(),
         "A: " + rtl_run + "; B: host FP32, " + std::to_string(rep.test_images) + " images",
         "model optimization lead", holds(headline.delta_pp >= -0.5)},
        {"at the dense latency budget a wider 2:4 model is more accurate than the dense model",
         signed_pp_text(equal_budget_quality) + ", " + equal_budget_quality.verdict() + "; p50 " +
             std::to_string(eb.sparse_cycles_p50) + " vs " + std::to_string(eb.budget_cycles_p50) +
             " cycles",
         golden_name + " over the test set; latency " + rtl_run, "model optimization lead",
         !eb.fits() ? "does not hold"
         : equal_budget_quality.ci95_pp.lo > 0 ? "holds"
                                                : "no measurable difference"},
        {"dense fallbacks cost the share of cycles shown",
         std::to_string(rep.fallback_layers.size()) + " fallback layer(s), " +
             percent(rep.fallback_cycle_share) + " of the deployed cycles; all sparse the cycle "
             "model predicts " + fixed(rep.all_sparse_speedup_predicted, 3) + "x",
         rtl_run + "; cycle model", "compiler sparsity pass owner", "measured"},
        {"every device result is bit-exact",
         std::to_string(rep.batches_bit_exact_golden) + "/" + std::to_string(rep.batches) +
             " batches equal the golden model, " + std::to_string(rep.batches_bit_exact_model) +
             "/" + std::to_string(rep.batches) + " the functional model",
         rtl_run, "accelerator architecture owner", holds(bit_exact)},
        {"the deployed model's p99 batch latency stays inside the dense model's median",
         "p99 " + std::to_string(rep.deployed_latency.p99) + " vs dense p50 " +
             std::to_string(dense_p50) + " cycles",
         rtl_run + ", host memory with 2% random read gaps", "serving performance owner",
         holds(rep.deployed_latency.p99 > 0 && rep.deployed_latency.p99 <= dense_p50)},
        {"under contention the deployed model's p99 stays inside the dense median up to the "
         "load shown",
         std::isnan(leaves_at) ? "p99 inside at every load run (up to " +
                                     percent(opt.contention_loads.back()) + ")"
                               : "p99 leaves it at load " + percent(leaves_at),
         "rtl:" + opt.config + ", " + std::to_string(contention_rows / batch) +
             " batches per load and model, a second AXI master with random bursts",
         "serving performance owner", "measured"},
    };
  }
  for (const auto& t : rep.targets) {
    if (!t.met) rep.notes.push_back("Target not met: " + t.name + ": measured " + t.measured +
                                    ", required " + t.required + ".");
  }
  rep.notes.push_back(
      "Training budget: the sparse models are the dense model fine-tuned for " +
      std::to_string(opt.finetune_epochs) + " more epochs, so every quality target is judged "
      "against the dense control trained as long (" + std::to_string(opt.epochs) + " + " +
      std::to_string(opt.finetune_epochs) + " epochs, nothing pruned). The dense model of the "
      "first run (" + std::to_string(opt.epochs) + " epochs) is context, in the comparisons "
      "marked so.");
  if (opt.quick) {
    rep.notes.push_back("A --quick run (the regression's short path): " +
                        std::to_string(opt.epochs) + " epoch(s) on " +
                        std::to_string(data.train.images.rows()) +
                        " images; its accuracies are not the demo's.");
  }
  rep.notes.push_back("Latency is a batch's device time: the MLP's three layers run as one "
                      "command stream, START to done; the CNN's device runs (conv1, conv2, then "
                      "fc1 and fc2 as one stream) are summed. Host layers (the input quantizer, "
                      "the pools) are host time, not in it: the latency table's host column times "
                      "them on the machine that ran the demo. Host memory: 16 B/cycle, "
                      "100-cycle read latency, 2% random read gaps.");

  // Tags.
  const std::string src = NMSA_SOURCE_DIR;
  rep.tags = {
      {"git revision", command_output("git -C '" + src + "' describe --always --dirty")},
      {"rtl configuration", opt.config + ": " + caps.describe()},
      {"rtl hash", rtl_hash(src, opt.config)},
      {"register map", register_map_version(opt.config)},
      {"verilator", NMSA_VERILATOR_VERSION},
      {"compiler", std::string("g++ ") + __VERSION__},
      {"build flags", NMSA_BUILD_FLAGS},
      {"seed", std::to_string(opt.seed)},
      {"rtl seeds", std::to_string(opt.seed + 1) + ".." +
                        std::to_string(opt.seed + 9 + 2 * opt.contention_loads.size())},
      {"deployed rtl runs", deployed_rtl_runs},
      {"dense recipe", dense_recipe.key()},
      {"fine-tune recipe", ft_recipe.key()},
      {"quality gate", std::to_string(opt.gate_epochs) + " epoch(s), threshold " +
                           fixed(opt.gate_threshold_pp, 2) + " pp"},
      {"calibration", std::to_string(opt.calibration_images) +
                          " validation images, 99.99th percentile of |x|"},
      {"data", std::to_string(data.train.images.rows()) + " train / " +
                   std::to_string(data.val.images.rows()) + " validation / " +
                   std::to_string(data.test.images.rows()) + " test"},
      {"batch", std::to_string(batch)},
      {"clock", rep.clock_source.empty() ? "n/a" : rep.clock_source},
  };

  const std::string first_failing = triage_regressed_workload(
      rep, comparator, regressed, opt.regressed_bytes_per_cycle, opt.out);
  write_report(rep, opt.out);
  const std::string onnx_path = (std::filesystem::path(opt.out) / "model.onnx").string();
  export_int8_mlp_onnx(dep.int8, onnx_path, "nmsa_fashion_mnist");
  export_int8_cnn_onnx(cnn.deployed, cnn.input_scales,
                       (std::filesystem::path(opt.out) / "cnn.onnx").string(),
                       "nmsa_fashion_mnist_cnn");
  // The test set as the model takes it, so that `nmsa run model.onnx --input test_set/images.npy
  // --labels test_set/labels.npy` reproduces the deployed accuracy above.
  const std::filesystem::path test_dir = std::filesystem::path(opt.out) / "test_set";
  std::filesystem::create_directories(test_dir);
  write_npy((test_dir / "images.npy").string(), data.test.images);
  write_npy((test_dir / "labels.npy").string(),
            Matrix<std::uint8_t>(Eigen::Map<const Matrix<std::uint8_t>>(
                labels.data(), static_cast<Eigen::Index>(labels.size()), 1)));

  // The summary.
  const double seconds = seconds_since_start();
  std::printf("\n%-46s %s\n", "", "measured");
  std::printf("%-46s %s\n", "dense FP32 top-1", percent(rep.dense_fp32_accuracy).c_str());
  std::printf("%-46s %s (rtl)\n", "dense INT8 top-1", percent(rep.dense_int8_accuracy).c_str());
  std::printf("%-46s %s\n", "dense control FP32 top-1 (equal training)",
              percent(rep.control_fp32_accuracy).c_str());
  std::printf("%-46s %s (rtl), %s vs the control: %s\n", "deployed 2:4 INT8 top-1",
              percent(rep.sparse_int8_accuracy).c_str(), signed_pp_text(headline).c_str(),
              headline.verdict().c_str());
  std::printf("%-46s %s x (dense %llu / deployed %llu cycles)\n", "effective speedup",
              fixed(rep.effective_speedup, 3).c_str(),
              static_cast<unsigned long long>(rtl_dense.total_cycles()),
              static_cast<unsigned long long>(rtl_dep.total_cycles()));
  std::printf("%-46s %zu (%s of the deployed cycles)\n", "dense-fallback layers",
              rep.fallback_layers.size(), percent(rep.fallback_cycle_share).c_str());
  std::printf("%-46s %s\n", "PE utilization (deployed)", percent(rep.pe_utilization).c_str());
  const auto p50 = static_cast<unsigned long long>(rep.deployed_latency.p50);
  const auto p95 = static_cast<unsigned long long>(rep.deployed_latency.p95);
  const auto p99 = static_cast<unsigned long long>(rep.deployed_latency.p99);
  if (rep.clock_mhz > 0) {
    std::printf("%-46s %llu / %llu / %llu cycles (%s / %s / %s us at %.1f MHz, %s)\n",
                "latency per batch p50 / p95 / p99", p50, p95, p99,
                fixed(p50 / rep.clock_mhz, 1).c_str(), fixed(p95 / rep.clock_mhz, 1).c_str(),
                fixed(p99 / rep.clock_mhz, 1).c_str(), rep.clock_mhz,
                rep.clock_measured ? "measured Fmax" : "stated");
  } else {
    std::printf("%-46s %llu / %llu / %llu cycles (no measured clock: %s)\n",
                "latency per batch p50 / p95 / p99", p50, p95, p99, rep.clock_source.c_str());
  }
  if (rep.hardware) {
    std::printf("%-46s %s x throughput per LUT, %s x per DSP (N:M vs dense-only)\n",
                "equal-area speedup", fixed(rep.hardware->per_lut_ratio(), 2).c_str(),
                fixed(rep.hardware->per_dsp_ratio(), 2).c_str());
  }
  std::printf("%-46s %s %s vs dense control INT8 %s: %s, %s (%llu vs %llu cycles p50)\n",
              "equal latency budget: wider 2:4", eb.sparse_model.c_str(),
              percent(wide_rtl_acc).c_str(), percent(eb.dense_int8_accuracy).c_str(),
              signed_pp_text(equal_budget_quality).c_str(),
              equal_budget_quality.verdict().c_str(),
              static_cast<unsigned long long>(eb.sparse_cycles_p50),
              static_cast<unsigned long long>(eb.budget_cycles_p50));
  const double leaves_at = p99_leaves_budget_at(rep.contention);
  std::printf("%-46s %s\n", "p99 under contention leaves the dense p50",
              std::isnan(leaves_at) ? "at no load run" : ("at load " + percent(leaves_at)).c_str());
  std::printf("%-46s %s: first failing mechanism %s (%s/%s)\n", "regressed workload",
              rep.regressed_workload.c_str(),
              first_failing.empty() ? "none" : first_failing.c_str(), opt.out.c_str(),
              rep.triage_memo.c_str());
  std::printf("%-46s %s FP32 dense, %s INT8 deployed (%s pp vs control), %s x (%s x "
              "without its fallbacks, %s of cycles in them)\n",
              "second model: CNN", percent(cnn_rep.dense_fp32_accuracy).c_str(),
              percent(cnn_rep.sparse_int8_accuracy).c_str(),
              fixed(cnn_rep.quality_delta_pp(), 2).c_str(),
              fixed(cnn_rep.effective_speedup, 3).c_str(),
              fixed(cnn_rep.sparse_layers_speedup, 3).c_str(),
              percent(cnn_rep.fallback_cycle_share).c_str());
  std::printf("\ntargets:\n");
  for (const auto& t : rep.targets) {
    std::printf("  %-8s %-52s %s (required %s)\n", t.met ? "met" : "NOT MET", t.name.c_str(),
                t.measured.c_str(), t.required.c_str());
  }
  std::printf("\nreport: %s/index.html (and report.json, report.md, model.onnx, cnn.onnx, "
              "test_set/)\n",
              opt.out.c_str());
  std::printf("done in %.0f s\n", seconds);
  if (!bit_exact || cnn_rep.rtl_batches_bit_exact != cnn_rep.rtl_batches) {
    std::fprintf(stderr, "nmsa_demo: the device results are not bit-exact (see the report)\n");
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const auto parsed = parse_options(argc, argv);
    if (const int* exit_code = std::get_if<int>(&parsed)) return *exit_code;
    return run_demo(std::get<DemoOptions>(parsed));
  } catch (const UsageError& e) {
    std::fprintf(stderr, "nmsa_demo: %s\n", e.what());
    return 2;
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "nmsa_demo: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "nmsa_demo: %s\n", e.what());
    return 1;
  }
}
