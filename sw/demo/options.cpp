// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
#include "options.hpp"

#include <algorithm>
#include <thread>

#include "nmsa/device_caps.hpp"
#include "../cli/number_options.hpp"

namespace nmsa::demo {

std::variant<DemoOptions, int> parse_options(int argc, char** argv) {
  using nmsa::cli::integer_in;
  using nmsa::cli::number_in;
  DemoOptions o;
  CLI::App app{"Trains a Fashion-MNIST MLP and a CNN, prunes them to the device's N:M pattern, "
               "quantizes them to INT8, runs the test set on the Verilated accelerator and writes "
               "the sparsity deployment report.",
               "nmsa_demo"};
  app.add_flag("--quick", o.quick,
               "the short version of the regression: config small, 6000 training images, 1 "
               "epoch (the CNN 1 + 1), 300 test images in batches of 50, gate 3 pp, one CNN "
               "batch on the RTL (options given still win)");
  app.add_option("--config", o.config, "accelerator configuration (rtl/configs.json; default: "
                                       "default)");
  app.add_option("--out", o.out, "report directory (default: build/report)");
  app.add_option("--cache", o.cache, "trained-model cache (default: build/demo-cache)");
  app.add_option("--epochs", o.epochs, "dense training epochs (default 10)")
      ->check(integer_in(1, 1000));
  app.add_option("--finetune-epochs", o.finetune_epochs,
                 "fine-tuning epochs of the pruning schedules (default: --epochs, the original "
                 "recipe)")
      ->check(integer_in(1, 1000));
  app.add_option("--gate-epochs", o.gate_epochs,
                 "fine-tuning epochs of the quality gate's per-layer trial (default 1)")
      ->check(integer_in(1, 1000));
  app.add_option("--gate-threshold", o.gate_threshold_pp,
                 "validation accuracy a layer may lose to pruning, in pp (default 0.5)")
      ->check(number_in(0, 100));
  app.add_option("--train-images", o.train_images,
                 "training images (0: all 55000 not held out; default 0)")
      ->check(integer_in(0, 60000));
  app.add_option("--val-images", o.val_images, "held-out validation images (default 5000)")
      ->check(integer_in(100, 30000));
  app.add_option("--test-images", o.test_images, "test images (0: all 10000; default 0)")
      ->check(integer_in(0, 10000));
  app.add_option("--batch", o.batch, "images per device batch (default 100)")
      ->check(integer_in(1, 10000));
  app.add_option("--calibration-images", o.calibration_images,
                 "validation images for INT8 calibration (default 2000)")
      ->check(integer_in(1, 30000));
  app.add_option("--clock-mhz", o.clock_mhz,
                 "a clock for latencies in microseconds, reported as stated, not measured "
                 "(default: the measured Fmax of the configuration, build/fpga or syn/results; "
                 "docs/fpga.md)")
      ->check(number_in(1e-3, 1e5));
  app.add_option("--seed", o.seed, "weight initialization and data order (default 1)")
      ->check(integer_in(0, 1'000'000'000'000'000LL));
  app.add_option("--threads", o.threads, "worker threads (default: the cores, at most 4)")
      ->check(integer_in(1, 64));
  app.add_option("--wide-rtl-batches", o.wide_rtl_batches,
                 "batches of the wider model run on the RTL (default 20; its accuracy is the "
                 "golden model's over the whole test set)")
      ->check(integer_in(1, 10000));
  app.add_option("--contention-batches", o.contention_batches,
                 "batches per background load and model for the latency under contention "
                 "(default 10)")
      ->check(integer_in(1, 10000));
  app.add_option("--contention-loads", o.contention_loads,
                 "background loads of the second AXI master, shares of the host bandwidth in "
                 "(0, 0.95] (default 0.25 0.5 0.75)")
      ->check(number_in(1e-3, 0.95));
  app.add_option("--workload-batches", o.workload_batches,
                 "batches of the regressed workload and of its comparator (default 5)")
      ->check(integer_in(1, 10000));
  app.add_option("--cnn-epochs", o.cnn_epochs,
                 "dense training epochs of the second model, the CNN (default 8)")
      ->check(integer_in(1, 1000));
  app.add_option("--cnn-finetune-epochs", o.cnn_finetune_epochs,
                 "epochs of the CNN's gradual pruning and, equally, of its dense control (default 4)")
      ->check(integer_in(1, 1000));
  app.add_option("--cnn-rtl-batches", o.cnn_rtl_batches,
                 "CNN batches also run on the RTL, evenly spaced over the test set (default 10; "
                 "the functional model runs them all)")
      ->check(integer_in(0, 10000));
  app.add_option("--regressed-bytes-per-cycle", o.regressed_bytes_per_cycle,
                 "host bandwidth of the regressed workload, below the demo's 16 (default 2)")
      ->check(number_in(0.5, 15.9));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (o.quick) {
    // The --quick preset replaces the defaults; options given explicitly still win.
    auto preset = [&app](const char* name, auto& field, auto value) {
      if (app.count(name) == 0) field = value;
    };
    preset("--config", o.config, std::string("small"));
    preset("--train-images", o.train_images, 6000);
    preset("--val-images", o.val_images, 1000);
    preset("--test-images", o.test_images, 300);
    preset("--batch", o.batch, 50);
    preset("--epochs", o.epochs, 1);
    preset("--calibration-images", o.calibration_images, 500);
    // 1000 validation images resolve 0.1 pp, and one epoch on 6000 images leaves the trial models
    // noisy: a gate at the full run's 0.5 pp would send layers dense on noise alone.
    preset("--gate-threshold", o.gate_threshold_pp, 3.0);
    preset("--contention-batches", o.contention_batches, 2);
    preset("--contention-loads", o.contention_loads, std::vector<double>{0.5});
    preset("--workload-batches", o.workload_batches, 2);
    preset("--cnn-epochs", o.cnn_epochs, 1);
    preset("--cnn-finetune-epochs", o.cnn_finetune_epochs, 1);
    preset("--cnn-rtl-batches", o.cnn_rtl_batches, 1);
  }
  if (o.finetune_epochs < 0) o.finetune_epochs = o.epochs;
  std::sort(o.contention_loads.begin(), o.contention_loads.end());
  o.contention_loads.erase(std::unique(o.contention_loads.begin(), o.contention_loads.end()),
                           o.contention_loads.end());
  if (o.threads == 0) {
    o.threads = static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1u, 4u));
  }
  try {
    (void)DeviceCaps::named(o.config);
  } catch (const std::exception& e) {
    throw UsageError(std::string("--config: ") + e.what());
  }
  return o;
}

}  // namespace nmsa::demo
