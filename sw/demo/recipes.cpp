// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
#include "recipes.hpp"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "nmsa/file_io.hpp"

namespace nmsa::demo {

namespace {

LabeledImages take_rows(const LabeledImages& d, Eigen::Index first, Eigen::Index count) {
  LabeledImages out;
  out.rows = d.rows;
  out.cols = d.cols;
  out.images = d.images.middleRows(first, count);
  out.labels.assign(d.labels.begin() + first, d.labels.begin() + first + count);
  return out;
}

// Part of every cache key: bump it when training or pruning code changes what a recipe produces,
// so that a cache from an older build is not taken for this one's models.
constexpr int kTrainingCodeVersion = 1;

}  // namespace

// FNV-1a: a stable name for a cache key (std::hash may differ between library versions).
std::string hash_key(const std::string& key) {
  std::uint64_t h = 14695981039346656037ull;
  for (unsigned char c : key) {
    h ^= c;
    h *= 1099511628211ull;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

namespace {

std::string selection_key(const std::vector<bool>& selected) {
  std::string s;
  for (bool b : selected) s += b ? '1' : '0';
  return s.empty() ? "all" : s;
}

}  // namespace

Data load_data(int train_images, int val_images, int test_images) {
  const LabeledImages full = load_fashion_mnist(kFashionMnistDir, FashionMnistSplit::kTrain);
  const LabeledImages test = load_fashion_mnist(kFashionMnistDir, FashionMnistSplit::kTest);
  const Eigen::Index n = full.images.rows();
  if (val_images <= 0 || val_images >= n) {
    throw std::invalid_argument("validation images " + std::to_string(val_images) +
                                " must be in [1, " + std::to_string(n - 1) + "]");
  }
  const Eigen::Index val_first = n - val_images;
  const Eigen::Index train_n =
      train_images <= 0 ? val_first : std::min<Eigen::Index>(train_images, val_first);
  const Eigen::Index test_n = test_images <= 0
                                  ? test.images.rows()
                                  : std::min<Eigen::Index>(test_images, test.images.rows());
  Data d;
  d.train = take_rows(full, 0, train_n);
  d.val = take_rows(full, val_first, val_images);
  d.test = take_rows(test, 0, test_n);
  return d;
}

std::string TrainRecipe::key() const {
  std::ostringstream s;
  s << "e" << epochs << " b" << batch_size << " lr" << learning_rate << " mom" << momentum
    << (cosine ? " cos" : " const") << " seed" << seed;
  if (weight_decay != 0.0f) s << " wd" << weight_decay;  // absent: the keys made before it
  return s.str();
}

TrainOptions TrainRecipe::options() const {
  TrainOptions o;
  o.epochs = epochs;
  o.batch_size = batch_size;
  o.learning_rate = learning_rate;
  o.momentum = momentum;
  o.weight_decay = weight_decay;
  o.cosine_schedule = cosine;
  o.seed = seed;
  return o;
}

std::string to_string(Schedule s) {
  switch (s) {
    case Schedule::kDense:
      return "dense";
    case Schedule::kPruneOnly:
      return "prune only";
    case Schedule::kOneShot:
      return "one-shot + fine-tune";
    case Schedule::kGradual:
      return "gradual";
  }
  return "?";
}

std::string SparseRecipe::name() const {
  return to_string(schedule) + (permute ? " (permuted)" : "");
}

std::string SparseRecipe::key() const {
  std::string k = to_string(schedule) + (permute ? " perm" : "") + " layers " +
                  selection_key(selected);
  if (schedule != Schedule::kPruneOnly) k += " ft[" + finetune.key() + "]";
  return k;
}

double weight_sparsity(const Mlp& m, const std::vector<bool>& selected) {
  double zeros = 0;
  double total = 0;
  for (std::size_t i = 0; i < m.layers.size(); ++i) {
    if (!selected.empty() && !selected[i]) continue;
    const auto& w = m.layers[i].w;
    zeros += static_cast<double>((w.array() == 0.0f).count());
    total += static_cast<double>(w.size());
  }
  return total == 0 ? 0.0 : zeros / total;
}

std::string sizes_name(const std::vector<int>& sizes) {
  std::string s;
  for (int v : sizes) s += (s.empty() ? "" : "-") + std::to_string(v);
  return s;
}

Trainer::Trainer(const Data& data, std::string cache_dir, NmPattern pattern,
                 std::atomic<long>* epochs_done)
    : data_(&data), cache_dir_(std::move(cache_dir)), pattern_(pattern),
      epochs_done_(epochs_done) {
  std::error_code ec;
  std::filesystem::create_directories(cache_dir_, ec);
  if (ec) throw std::runtime_error(cache_dir_ + ": cannot create the model cache: " + ec.message());
}

double Trainer::val_accuracy(const Mlp& m) const {
  return evaluate_accuracy(m, data_->val.images, data_->val.labels);
}

std::string Trainer::cache_path(const std::string& key, const char* ext) const {
  return (std::filesystem::path(cache_dir_) / (hash_key(key) + ext)).string();
}

// A curve file: one line per point, "s EPOCH SPARSITY" or "a EPOCH ACCURACY", after a first line
// holding the key (a hash collision or a stale file then reads as a miss, not as a wrong model).
bool Trainer::load_cached(const std::string& key, TrainedModel& out, int epochs) const {
  std::ifstream curve(cache_path(key, ".curve"));
  if (!curve) return false;
  std::string first;
  if (!std::getline(curve, first) || first != key) return false;
  ScheduleCurve c;
  char kind = 0;
  double x = 0;
  double y = 0;
  while (curve >> kind >> x >> y) {
    if (kind == 's') c.sparsity.emplace_back(x, y);
    else if (kind == 'a') c.val_accuracy.emplace_back(x, y);
    else return false;
  }
  try {
    out.mlp = load_mlp(cache_path(key, ".mlp"));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "demo: ignoring the cached model (%s); training again\n", e.what());
    return false;
  }
  out.key = key;
  out.curve = std::move(c);
  if (epochs_done_ != nullptr) *epochs_done_ += epochs;
  ++cached_;
  return true;
}

void Trainer::store(const TrainedModel& m) const {
  ++trained_;
  save_mlp(m.mlp, cache_path(m.key, ".mlp"));
  // Written after the model: a curve file is the mark of a complete cache entry.
  std::ostringstream curve;
  curve.precision(17);
  curve << m.key << "\n";
  for (const auto& [x, y] : m.curve.sparsity) curve << "s " << x << " " << y << "\n";
  for (const auto& [x, y] : m.curve.val_accuracy) curve << "a " << x << " " << y << "\n";
  write_file_atomically(cache_path(m.key, ".curve"), curve.str());
}

TrainedModel Trainer::dense(const std::vector<int>& sizes, std::uint64_t init_seed,
                            const TrainRecipe& recipe) const {
  TrainedModel m;
  m.key = "v" + std::to_string(kTrainingCodeVersion) + " dense " + sizes_name(sizes) + " init" +
          std::to_string(init_seed) + " train" + std::to_string(data_->train.images.rows()) +
          " [" + recipe.key() + "]";
  if (load_cached(m.key, m, recipe.epochs)) return m;
  m.mlp = make_mlp(sizes, init_seed);
  m.curve.name = "dense " + sizes_name(sizes);
  m.curve.sparsity.emplace_back(0.0, 0.0);
  m.curve.val_accuracy.emplace_back(0.0, val_accuracy(m.mlp));
  TrainOptions o = recipe.options();
  o.after_epoch = [&](const Mlp& model, int epoch) {
    m.curve.val_accuracy.emplace_back(epoch, val_accuracy(model));
    if (epochs_done_ != nullptr) ++*epochs_done_;
  };
  train(m.mlp, data_->train.images, data_->train.labels, o);
  store(m);
  return m;
}

TrainedModel Trainer::sparse(const TrainedModel& dense, const SparseRecipe& recipe) const {
  TrainedModel m;
  m.key = recipe.key() + " of {" + dense.key + "}";
  const int epochs = recipe.schedule == Schedule::kPruneOnly ? 0 : recipe.finetune.epochs;
  if (load_cached(m.key, m, epochs)) return m;
  m.mlp = dense.mlp;
  m.curve.name = recipe.name();
  const Data& d = *data_;
  TrainOptions o = recipe.finetune.options();
  o.after_epoch = [&](const Mlp& model, int epoch) {
    m.curve.val_accuracy.emplace_back(epoch, val_accuracy(model));
    if (epochs_done_ != nullptr) ++*epochs_done_;
  };
  switch (recipe.schedule) {
    case Schedule::kDense:
      throw std::invalid_argument("Trainer::sparse: a dense schedule prunes nothing");
    case Schedule::kPruneOnly:
    case Schedule::kOneShot:
      apply_nm_masks(m.mlp, pattern_, recipe.permute, {}, recipe.selected);
      m.curve.sparsity.emplace_back(0.0, weight_sparsity(m.mlp, recipe.selected));
      m.curve.val_accuracy.emplace_back(0.0, val_accuracy(m.mlp));
      if (recipe.schedule == Schedule::kOneShot) {
        train(m.mlp, d.train.images, d.train.labels, o);
      }
      break;
    case Schedule::kGradual: {
      if (recipe.permute) permute_for_nm(m.mlp, pattern_, {}, recipe.selected);
      m.curve.sparsity.emplace_back(0.0, 0.0);
      m.curve.val_accuracy.emplace_back(0.0, val_accuracy(m.mlp));
      GradualPruningOptions g;
      const double steps_per_epoch = std::ceil(static_cast<double>(d.train.images.rows()) /
                                               recipe.finetune.batch_size);
      g.on_prune = [&](long step, long, double sparsity) {
        m.curve.sparsity.emplace_back(static_cast<double>(step) / steps_per_epoch, sparsity);
      };
      train_with_gradual_pruning(m.mlp, d.train.images, d.train.labels, pattern_, o, g,
                                 recipe.selected);
      m.curve.sparsity.emplace_back(recipe.finetune.epochs,
                                    weight_sparsity(m.mlp, recipe.selected));
      break;
    }
  }
  store(m);
  return m;
}

}  // namespace nmsa::demo
