// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
#include "cnn_demo.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <memory>
#include <vector>

#include "nmsa/accuracy_stats.hpp"
#include "nmsa/device.hpp"
#include "nmsa/file_io.hpp"
#include "nmsa/int8_mlp.hpp"
#include "nmsa/onnx_export.hpp"
#include "nmsa/onnx_model.hpp"
#include "nmsa/runtime.hpp"
#include "nmsa/tb/rtl_device.hpp"
#include "test_set.hpp"

namespace nmsa::demo {

namespace {

// Part of every CNN cache key: bump it when the CNN's training code changes what it produces.
constexpr int kCnnCodeVersion = 1;

// Without it the network overfits within the 8 epochs and stays near 90.5% on the test set; with
// it, about 91.5% (docs/demo.md).
constexpr float kWeightDecay = 5e-4f;

std::string describe_shape(const CnnShape& s) {
  std::string out = "CNN " + std::to_string(s.channels) + "x" + std::to_string(s.height) + "x" +
                    std::to_string(s.width) + ":";
  for (const CnnConv& c : s.convs) {
    out += " conv" + std::to_string(c.kernel) + "x" + std::to_string(c.kernel) + " " +
           std::to_string(c.out_channels) + (c.pool ? " + pool," : ",");
  }
  for (const int h : s.hidden) out += " fc " + std::to_string(h) + ",";
  return out + " fc " + std::to_string(s.classes);
}

// Trained models on disk: <hash>.cnn, then <hash>.cnnkey holding the key, written last as the mark
// of a complete entry (a hash collision or a stale file reads as a miss).
class CnnCache {
 public:
  explicit CnnCache(std::string dir) : dir_(std::move(dir)) {}

  Cnn get(const std::string& key, const std::function<Cnn()>& train) {
    const std::string stem = (std::filesystem::path(dir_) / hash_key(key)).string();
    std::ifstream k(stem + ".cnnkey");
    std::string stored;
    if (k && std::getline(k, stored) && stored == key) {
      try {
        Cnn m = load_cnn(stem + ".cnn");
        ++cached;
        return m;
      } catch (const std::exception& e) {
        std::fprintf(stderr, "demo: ignoring the cached CNN (%s); training again\n", e.what());
      }
    }
    Cnn m = train();
    std::filesystem::create_directories(dir_);
    save_cnn(m, stem + ".cnn");
    write_file_atomically(stem + ".cnnkey", key + "\n");
    ++trained;
    return m;
  }

  std::atomic<int> trained{0};
  std::atomic<int> cached{0};

 private:
  std::string dir_;
};

std::uint64_t cycles_of(const DeviceStats& d) {
  return d.cycles != 0 ? d.cycles : d.predicted_cycles;
}

std::uint64_t device_cycles(const Runtime& rt) {
  std::uint64_t total = 0;
  for (const LayerReport& l : rt.layers()) total += cycles_of(l.device);
  return total;
}

// Some batches of x through the exported model on one device.
struct BatchedRun {
  MatrixF logits;                           // the rows of the batches run (others zero)
  std::vector<std::uint64_t> batch_cycles;  // per batch run, in order
  std::vector<LayerReport> layers;          // the runtime's, summed over the batches
};

BatchedRun run_batches(Device& device, const std::string& onnx, const MatrixF& x, int batch,
                       const std::vector<Eigen::Index>& batches, const RuntimeOptions& options,
                       std::atomic<long>& done) {
  Runtime rt(parse_onnx_model(onnx, "cnn.onnx"), device, options);
  BatchedRun out;
  for (const Eigen::Index b : batches) {
    const Eigen::Index start = b * batch;
    const Eigen::Index n = std::min<Eigen::Index>(batch, x.rows() - start);
    const std::uint64_t before = device_cycles(rt);
    const MatrixF rows = x.middleRows(start, n);
    const Tensor y =
        rt.run({{"input", Tensor::make_float({n, x.cols()}, std::vector<float>(
                                                               rows.data(), rows.data() + rows.size()))}})
            .at("logits");
    const auto classes = static_cast<Eigen::Index>(y.shape.back());
    if (out.logits.size() == 0) out.logits = MatrixF::Zero(x.rows(), classes);
    out.logits.middleRows(start, n) = Eigen::Map<const MatrixF>(y.floats.data(), n, classes);
    out.batch_cycles.push_back(device_cycles(rt) - before);
    ++done;
  }
  out.layers = rt.layers();
  return out;
}

double accuracy(const MatrixF& logits, const std::vector<std::uint8_t>& labels) {
  const std::vector<std::uint8_t> predicted = predict_classes(logits);
  long right = 0;
  for (std::size_t i = 0; i < labels.size(); ++i) right += predicted[i] == labels[i] ? 1 : 0;
  return labels.empty() ? kNotMeasured : static_cast<double>(right) / labels.size();
}

// The supported layer matrix: every layer that runs (device layers with their cycles, host
// fallbacks), not the shape ops nor the nodes fused into a device layer.
std::vector<ReportLayer> layer_rows(const Cnn& model, const std::vector<bool>& prunable,
                                    const std::vector<double>& sensitivity_pp,
                                    double gate_threshold_pp, NmPattern pattern,
                                    const BatchedRun& deployed, const BatchedRun& dense) {
  std::vector<ReportLayer> rows;
  for (std::size_t i = 0; i < deployed.layers.size(); ++i) {
    const LayerReport& l = deployed.layers[i];
    const bool host = l.placement == Placement::HOST;
    if (!l.fused_into.empty() || (host && l.fallback == Fallback::NONE)) continue;
    ReportLayer r;
    r.name = l.name;
    // The exporter names every Relu "<layer>.relu"; a QDQ layer also fuses its quantizers.
    const bool relu = std::any_of(l.fused_nodes.begin(), l.fused_nodes.end(),
                                  [](const std::string& n) {
                                    return n.size() > 5 && n.compare(n.size() - 5, 5, ".relu") == 0;
                                  });
    r.op = l.op_type + (relu ? " + ReLU" : "");
    r.placement = host ? "host"
                  : l.placement == Placement::DEVICE_SPARSE ? "device sparse"
                                                            : "device dense";
    r.reason = l.reason;
    for (std::size_t p = 0; p < model.params.layers.size(); ++p) {
      if (cnn_layer_name(model, p) != l.name) continue;
      r.k = static_cast<int>(model.params.layers[p].w.cols());
      r.n_out = static_cast<int>(model.params.layers[p].w.rows());
      r.sensitivity_pp = sensitivity_pp[p];
      char gate[128];
      std::snprintf(gate, sizeof gate,
                    "quality gate: pruning costs %+.2f pp, %s the %.2f pp allowed; ",
                    sensitivity_pp[p],
                    sensitivity_pp[p] <= gate_threshold_pp ? "within" : "more than",
                    gate_threshold_pp);
      r.reason = (prunable[p] ? std::string(gate)
                              : "not pruned: K = " + std::to_string(r.k) +
                                    " is not a multiple of M = " + std::to_string(pattern.m) +
                                    "; ") +
                 r.reason;
    }
    if (!host) {
      r.deployed_cycles = cycles_of(l.device);
      r.dense_cycles = cycles_of(dense.layers[i].device);
      r.macs = l.device.macs;
    }
    rows.push_back(std::move(r));
  }
  return rows;
}

}  // namespace

CnnShape demo_cnn_shape() {
  CnnShape s;
  s.convs = {{24, 3, true}, {48, 3, true}};
  s.hidden = {128};
  return s;
}

CnnDemoResult run_cnn_demo(const Data& data, const CnnDemoOptions& opt,
                           const tb::AxiMemoryConfig& memory, const PerfModelParams& perf) {
  const DeviceCaps caps = DeviceCaps::named(opt.config);
  const NmPattern pattern = caps.pattern;
  const CnnShape shape = demo_cnn_shape();
  CnnDemoResult result;
  result.shape_name = describe_shape(shape);
  CnnCache cache(opt.cache);

  TrainRecipe dense_recipe;
  dense_recipe.weight_decay = kWeightDecay;
  dense_recipe.epochs = opt.epochs;
  dense_recipe.seed = opt.seed;
  TrainRecipe ft_recipe = dense_recipe;
  ft_recipe.epochs = opt.finetune_epochs;
  ft_recipe.seed = opt.seed + 1000;
  const std::string dense_key = "cnn v" + std::to_string(kCnnCodeVersion) + " dense " +
                                result.shape_name + " init" + std::to_string(opt.seed) + " train" +
                                std::to_string(data.train.images.rows()) + " [" +
                                dense_recipe.key() + "]";
  const Cnn dense = cache.get(dense_key, [&] {
    Cnn m = make_cnn(shape, opt.seed);
    train(m.params, data.train.images, data.train.labels,
          cnn_train_options(m, dense_recipe.options()));
    return m;
  });
  // The quality gate on the layers the rule lets prune: each pruned alone (one-shot) and
  // fine-tuned briefly, against an unpruned control fine-tuned alike.
  const std::vector<bool> prunable = prunable_layers(dense, pattern);
  std::vector<bool> selected = prunable;
  std::vector<double> sensitivity_pp(prunable.size(), kNotMeasured);
  {
    TrainRecipe gate_recipe = ft_recipe;
    gate_recipe.epochs = opt.gate_epochs;
    const std::string gate_key = dense_key + " | gate [" + gate_recipe.key() + "]";
    auto trial = [&](std::size_t layer) {  // layer == prunable.size(): the control
      const std::string key = gate_key + (layer < prunable.size() ? " layer " + std::to_string(layer)
                                                                  : std::string(" control"));
      return cache.get(key, [&] {
        Cnn m = dense;
        if (layer < prunable.size()) {
          std::vector<bool> one(prunable.size(), false);
          one[layer] = true;
          apply_nm_masks(m.params, pattern, false, {}, one);
        }
        train(m.params, data.train.images, data.train.labels,
              cnn_train_options(m, gate_recipe.options()));
        return m;
      });
    };
    std::vector<std::size_t> trials;
    for (std::size_t i = 0; i < prunable.size(); ++i) {
      if (prunable[i]) trials.push_back(i);
    }
    trials.push_back(prunable.size());
    std::vector<double> val(trials.size());
    std::atomic<long> trials_done{0};
    std::vector<std::function<void()>> jobs;
    for (std::size_t t = 0; t < trials.size(); ++t) {
      jobs.push_back([&, t] {
        val[t] = evaluate_cnn_accuracy(trial(trials[t]), data.val.images, data.val.labels);
        ++trials_done;
      });
    }
    run_parallel(jobs, opt.threads, "cnn gate", &trials_done, static_cast<long>(trials.size()));
    for (std::size_t t = 0; t + 1 < trials.size(); ++t) {
      const std::size_t i = trials[t];
      sensitivity_pp[i] = 100.0 * (val.back() - val[t]);
      selected[i] = sensitivity_pp[i] <= opt.gate_threshold_pp;
      std::printf("      cnn %s: pruning costs %+.2f pp on validation -> %s\n",
                  cnn_layer_name(dense, i).c_str(), sensitivity_pp[i],
                  selected[i] ? "sparse" : "dense fallback");
    }
  }
  std::string selection;
  for (const bool b : selected) selection += b ? '1' : '0';
  // The control and the pruned model train alike from the dense one, one per core.
  std::future<Cnn> control = std::async(std::launch::async, [&] {
    return cache.get(dense_key + " | control [" + ft_recipe.key() + "]", [&] {
      Cnn m = dense;
      train(m.params, data.train.images, data.train.labels,
            cnn_train_options(m, ft_recipe.options()));
      return m;
    });
  });
  Cnn pruned =
      cache.get(dense_key + " | gradual " + pattern.name() + " layers " + selection + " [" +
                    ft_recipe.key() + "]",
                [&] {
        Cnn m = dense;
        train_with_gradual_pruning(m.params, data.train.images, data.train.labels, pattern,
                                   cnn_train_options(m, ft_recipe.options()), {}, selected);
        return m;
      });
  const Cnn control_model = control.get();
  result.models_trained = cache.trained;
  result.models_from_cache = cache.cached;

  // The test set through the runtime: deployed, the same model all dense, and the control, on
  // the functional model; a spaced subset of the deployed batches on the RTL.
  const MatrixF& x = data.test.images;
  const int batch = std::max(1, opt.batch);
  const auto n_batches = static_cast<Eigen::Index>((x.rows() + batch - 1) / batch);
  std::vector<Eigen::Index> all(static_cast<std::size_t>(n_batches));
  for (Eigen::Index b = 0; b < n_batches; ++b) all[static_cast<std::size_t>(b)] = b;
  std::vector<Eigen::Index> rtl_ids;
  const Eigen::Index k = std::min<Eigen::Index>(std::max(opt.rtl_batches, 0), n_batches);
  for (Eigen::Index i = 0; i < k; ++i) rtl_ids.push_back(i * n_batches / k);
  // Both networks calibrated statically, each on its own activations, and run in QDQ form.
  const MatrixF calibration = data.val.images.topRows(
      std::min<Eigen::Index>(std::max(opt.calibration_rows, 1), data.val.images.rows()));
  result.input_scales =
      calibrate_cnn_input_scales(pruned, calibration, opt.calibration_percentile);
  const std::string pruned_onnx =
      serialize_int8_cnn_onnx(pruned, result.input_scales, "nmsa_fashion_mnist_cnn");
  const std::string control_onnx = serialize_int8_cnn_onnx(
      control_model, calibrate_cnn_input_scales(control_model, calibration, opt.calibration_percentile),
      "nmsa_fashion_mnist_cnn_control");
  RuntimeOptions deployed_options;
  deployed_options.memory = perf;
  RuntimeOptions dense_options = deployed_options;
  dense_options.allow_sparse = false;
  // On the RTL every device GEMM is also checked against the golden model (a difference stops
  // the demo with an error naming the layer).
  RuntimeOptions rtl_options = deployed_options;
  rtl_options.check_golden = true;
  BatchedRun dep, dense_run, ctrl, rtl, model_subset;
  std::atomic<long> done{0};
  auto on_model = [&](BatchedRun& out, const std::string& onnx, const RuntimeOptions& o,
                      const std::vector<Eigen::Index>& ids) {
    return [&, out_at = &out, onnx_at = &onnx, o, ids_at = &ids] {
      const std::unique_ptr<Device> dev = make_model_device(opt.config);
      *out_at = run_batches(*dev, *onnx_at, x, batch, *ids_at, o, done);
    };
  };
  std::vector<std::function<void()>> jobs{
      [&] {
        const std::unique_ptr<Device> dev = tb::make_rtl_device(opt.config, memory, opt.seed + 40);
        rtl = run_batches(*dev, pruned_onnx, x, batch, rtl_ids, rtl_options, done);
      },
      on_model(dep, pruned_onnx, deployed_options, all),
      on_model(dense_run, pruned_onnx, dense_options, all),
      on_model(ctrl, control_onnx, deployed_options, all),
      // The RTL's batches again on the functional model, in the same order on a fresh device:
      // the same command streams at the same addresses as the RTL ran.
      on_model(model_subset, pruned_onnx, deployed_options, rtl_ids)};
  run_parallel(jobs, opt.threads, "cnn test set", &done,
               static_cast<long>(3 * n_batches + 2 * static_cast<Eigen::Index>(rtl_ids.size())));

  SecondModelReport& r = result.report;
  r.model = result.shape_name;
  r.measured_on = "model:" + opt.config + " (functional model, cycles from its cycle model) over " +
                  std::to_string(n_batches) + " batches of " + std::to_string(batch) + "; " +
                  std::to_string(rtl_ids.size()) + " evenly spaced batches also on rtl:" +
                  opt.config;
  char calibration_text[160];
  std::snprintf(calibration_text, sizeof calibration_text,
                "static, in the model (QDQ): each layer's input scale from %lld validation images "
                "at the %gth percentile of |x|; weights per output channel",
                static_cast<long long>(calibration.rows()), opt.calibration_percentile);
  r.calibration = calibration_text;
  r.test_images = static_cast<int>(x.rows());
  r.dense_fp32_accuracy = evaluate_cnn_accuracy(dense, x, data.test.labels);
  const std::vector<std::uint8_t> control_fp32 = cnn_predict(control_model, x);
  r.control_fp32_accuracy = evaluate_cnn_accuracy(control_model, x, data.test.labels);
  r.sparse_fp32_accuracy = evaluate_cnn_accuracy(pruned, x, data.test.labels);
  r.control_int8_accuracy = accuracy(ctrl.logits, data.test.labels);
  r.sparse_int8_accuracy = accuracy(dep.logits, data.test.labels);
  r.quality_comparison = compare_paired(
      "CNN: deployed 2:4 INT8 vs dense control FP32, equal training", "deployed 2:4 INT8",
      outcomes_of(predict_classes(dep.logits), data.test.labels), "dense control FP32",
      outcomes_of(control_fp32, data.test.labels), BootstrapSettings{2000, opt.seed});
  r.quality_comparison->measured_on = "A: model:" + opt.config + "; B: host FP32";
  r.layers = layer_rows(pruned, prunable, sensitivity_pp, opt.gate_threshold_pp, pattern, dep,
                        dense_run);
  std::uint64_t deployed = 0, all_dense = 0, fallback = 0, sparse_deployed = 0, sparse_dense = 0;
  for (const ReportLayer& l : r.layers) {
    deployed += l.deployed_cycles;
    all_dense += l.dense_cycles;
    if (l.placement == "device dense") fallback += l.deployed_cycles;
    if (l.placement == "device sparse") {
      sparse_deployed += l.deployed_cycles;
      sparse_dense += l.dense_cycles;
    }
  }
  auto ratio = [](std::uint64_t a, std::uint64_t b) {
    return b == 0 ? kNotMeasured : static_cast<double>(a) / static_cast<double>(b);
  };
  r.effective_speedup = ratio(all_dense, deployed);
  r.sparse_layers_speedup = ratio(sparse_dense, sparse_deployed);
  r.fallback_cycle_share = ratio(fallback, deployed);
  r.rtl_batches = rtl_ids.size();
  for (const LayerReport& l : rtl.layers) {
    r.rtl_gemms += l.device.programs;
    r.rtl_gemms_golden_exact += l.device.golden_checked;
  }
  r.rtl_prediction_max_error = rtl_ids.empty() ? kNotMeasured : 0.0;
  for (std::size_t j = 0; j < rtl_ids.size(); ++j) {
    const Eigen::Index start = rtl_ids[j] * batch;
    const Eigen::Index n = std::min<Eigen::Index>(batch, x.rows() - start);
    if (rtl.logits.middleRows(start, n) == model_subset.logits.middleRows(start, n) &&
        rtl.logits.middleRows(start, n) == dep.logits.middleRows(start, n)) {
      ++r.rtl_batches_bit_exact;
    }
    if (rtl.batch_cycles[j] == model_subset.batch_cycles[j]) ++r.rtl_batches_cycle_exact;
    // The whole-set run's prediction of this batch: its buffers may sit at other addresses (the
    // runs before it differ), which moves where bursts split.
    const double predicted =
        static_cast<double>(dep.batch_cycles[static_cast<std::size_t>(rtl_ids[j])]);
    const double measured = static_cast<double>(std::max<std::uint64_t>(rtl.batch_cycles[j], 1));
    r.rtl_prediction_max_error =
        std::max(r.rtl_prediction_max_error, std::abs(predicted - measured) / measured);
  }
  result.deployed = std::move(pruned);
  return result;
}

}  // namespace nmsa::demo
