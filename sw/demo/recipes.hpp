// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// The training recipes of the deployment demo: the dense baseline, and the N:M pruning schedules
// reported as quality rows (docs/demo.md): prune only, one-shot prune + fine-tune with the
// original recipe (prune once, then retrain with the masks fixed), gradual magnitude pruning over
// the fine-tuning epochs (a cubic sparsity schedule), each with or without the channel permutation search. Every
// trained model is cached under the demo's cache directory, keyed by everything it depends on
// (data sizes, layer sizes, recipe, seeds, the parent model), so a second run skips training.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "nmsa/fashion_mnist.hpp"
#include "nmsa/mlp.hpp"
#include "nmsa/report.hpp"

namespace nmsa::demo {

// Fashion-MNIST split three ways: the last `val` images of the training file are held out for
// every decision the demo makes (quality gate, schedule choice, calibration); the test set is
// only measured.
struct Data {
  LabeledImages train;
  LabeledImages val;
  LabeledImages test;
};
// train_images / val_images / test_images: how many to use (0: all that remain).
Data load_data(int train_images, int val_images, int test_images);

struct TrainRecipe {
  int epochs = 10;
  int batch_size = 128;
  float learning_rate = 0.05f;
  float momentum = 0.9f;
  float weight_decay = 0.0f;
  bool cosine = true;
  std::uint64_t seed = 1;  // example order
  std::string key() const;
  TrainOptions options() const;
};

enum class Schedule { kDense, kPruneOnly, kOneShot, kGradual };
std::string to_string(Schedule s);  // "dense", "prune only", "one-shot + fine-tune", "gradual"

struct SparseRecipe {
  Schedule schedule = Schedule::kOneShot;
  bool permute = false;
  std::vector<bool> selected;  // the layers to prune (the others stay dense); empty: all
  TrainRecipe finetune;        // unused for kPruneOnly
  std::string name() const;    // "one-shot + fine-tune (permuted)"
  std::string key() const;
};

struct TrainedModel {
  Mlp mlp;
  std::string key;  // what the model was made from, for the keys of models derived from it
  ScheduleCurve curve;
};

// Trains and prunes, with the cache. Thread-safe for concurrent calls on different models (each
// call is single-threaded and deterministic for its inputs).
class Trainer {
 public:
  // `epochs_done` (optional) counts finished training epochs, for a progress display; a cached
  // model counts its epochs at once.
  Trainer(const Data& data, std::string cache_dir, NmPattern pattern,
          std::atomic<long>* epochs_done = nullptr);

  TrainedModel dense(const std::vector<int>& sizes, std::uint64_t init_seed,
                     const TrainRecipe& recipe) const;
  TrainedModel sparse(const TrainedModel& dense, const SparseRecipe& recipe) const;

  // Validation accuracy of a model (FP32).
  double val_accuracy(const Mlp& m) const;

  int models_trained() const { return trained_; }
  int models_from_cache() const { return cached_; }

 private:
  std::string cache_path(const std::string& key, const char* ext) const;
  bool load_cached(const std::string& key, TrainedModel& out, int epochs) const;
  void store(const TrainedModel& m) const;

  const Data* data_;
  std::string cache_dir_;
  NmPattern pattern_;
  std::atomic<long>* epochs_done_;
  mutable std::atomic<int> trained_{0};
  mutable std::atomic<int> cached_{0};
};

// Fraction of the weights of the selected layers (all if empty) that are zero.
double weight_sparsity(const Mlp& m, const std::vector<bool>& selected = {});

std::string sizes_name(const std::vector<int>& sizes);  // "784-512-256-10"

// A cache key as a file name: 16 hex digits of its FNV-1a hash.
std::string hash_key(const std::string& key);

}  // namespace nmsa::demo
