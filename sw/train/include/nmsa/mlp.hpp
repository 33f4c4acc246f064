// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// A small fully connected network (ReLU between layers, softmax cross-entropy on the logits),
// trained in FP32 with minibatch SGD with momentum, and the N:M pruning of its weights: one-shot
// (apply_nm_masks, then fine-tune) or gradual (a cubic sparsity schedule, cubic_sparsity below,
// ending at exact N:M). It is the model of the demo (docs/demo.md).
//
// Weights are in PyTorch's Linear layout, W [N_out x K] plus a bias of N_out, so that N:M groups
// run along K as everywhere else in nmsa. Everything is single-threaded and seeded: the same
// seed and data give the same weights bit for bit on the same build.
#pragma once

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "nmsa/prune.hpp"
#include "nmsa/types.hpp"

namespace nmsa {

using VectorF = Eigen::VectorXf;

struct MlpLayer {
  MatrixF w;     // [N_out x K]
  VectorF b;     // [N_out]
  // Empty: dense. Otherwise [N_out x K] of 0/1; w is zero wherever mask is 0, kept so after every
  // update, so that pruned weights stay pruned during fine-tuning.
  MatrixF mask;
};

// The name of layer i (0-based) everywhere a layer is named: "fc1", "fc2", ... (PyTorch's
// convention for a stack of Linear layers; the ONNX export and the reports use it).
std::string mlp_layer_name(std::size_t i);

struct Mlp {
  std::vector<MlpLayer> layers;

  // {K of the first layer, N_out of every layer}, e.g. {784, 512, 256, 10}.
  std::vector<int> sizes() const;
};

// A network of the given sizes (at least two) with He-uniform weights, U(-sqrt(6/K), sqrt(6/K)),
// and zero biases, drawn from `seed`.
Mlp make_mlp(const std::vector<int>& sizes, std::uint64_t seed);

// One such layer [n_out x k], its weights drawn from `rng` (make_mlp draws layer after layer).
MlpLayer make_he_uniform_layer(int n_out, int k, std::mt19937_64& rng);

// Logits [rows x classes] of x [rows x K].
MatrixF mlp_forward(const Mlp& model, const MatrixF& x);

struct MlpGradients {
  std::vector<MatrixF> dw;
  std::vector<VectorF> db;
};

// Mean softmax cross-entropy of the batch and, if grads is not null, its gradient with respect to
// every weight and bias. Throws std::invalid_argument on a label out of range or a shape mismatch.
double mlp_loss(const Mlp& model, const MatrixF& x, const std::vector<std::uint8_t>& labels,
                MlpGradients* grads = nullptr);

// Fraction of rows whose largest logit is at the label (the lowest index wins ties).
double evaluate_accuracy(const Mlp& model, const MatrixF& x,
                         const std::vector<std::uint8_t>& labels, int batch_size = 1000);

// The loss of a batch and, with grads, its gradient: mlp_loss, or another network's loss over
// the same trainable layers (cnn_loss, cnn.hpp).
using LossFunction = std::function<double(const Mlp& model, const MatrixF& x,
                                          const std::vector<std::uint8_t>& labels,
                                          MlpGradients* grads)>;

struct TrainOptions {
  int epochs = 1;
  int batch_size = 128;
  float learning_rate = 0.05f;
  float momentum = 0.9f;
  float weight_decay = 0.0f;
  std::uint64_t seed = 1;      // the order of the examples in every epoch
  bool progress = false;       // a ProgressBar on stderr
  // Cosine decay of the learning rate over all steps of the run (Loshchilov & Hutter's SGDR
  // without restarts): lr_t = learning_rate * (1 + cos(pi * t / steps)) / 2. Off: constant.
  bool cosine_schedule = false;
  // Called after every epoch with the model and the epoch's number (1-based), e.g. to record a
  // validation curve or to drive a progress display.
  std::function<void(const Mlp& model, int epoch)> after_epoch;
  // Empty: mlp_loss. Otherwise the network's own loss, which checks its batches itself.
  LossFunction loss;
};

// SGD with momentum (PyTorch's form: v = momentum * v + g + wd * w; w -= lr * v). The velocity
// of a masked weight is held at zero like the weight. The state belongs to one model's shapes
// and channel order: make a new optimizer after apply_nm_masks with permute = true.
class SgdOptimizer {
 public:
  SgdOptimizer(const Mlp& model, const TrainOptions& options);
  // One update from the gradient of this batch; returns the batch loss.
  double step(Mlp& model, const MatrixF& x, const std::vector<std::uint8_t>& labels);
  void set_learning_rate(float lr) { options_.learning_rate = lr; }

 private:
  TrainOptions options_;
  MlpGradients velocity_;
  MlpGradients grads_;
};

// Called before every step with the global step index (0-based) and the total number of steps;
// the hook of the gradual pruning schedule.
using StepHook = std::function<void(Mlp& model, long step, long total_steps)>;

// options.epochs passes over (x, labels) in an order drawn from options.seed; the last partial
// batch of an epoch is used too. Returns the mean loss of the last epoch.
double train(Mlp& model, const MatrixF& x, const std::vector<std::uint8_t>& labels,
             const TrainOptions& options, const StepHook& before_step = nullptr);

// Multiplies every weight by its mask (a no-op for dense layers).
void apply_masks(Mlp& model);

// One-shot N:M pruning of every layer along K (prune_nm of the current, masked weights), setting
// the masks. With permute, the input channels of every layer but the first are first reordered
// with search_input_permutation, and the previous layer's output rows, bias and mask are
// reordered the same way, so the network computes the same function before pruning. The first
// layer's input (the pixels) is not permuted: that would need the data reordered too. Throws
// std::invalid_argument if a layer's K is not a multiple of M.
//
// `selected` restricts pruning (and the permutation search) to the layers i with selected[i]; the
// others stay dense (a dense fallback). Empty: every layer. Throws std::invalid_argument if it is
// neither empty nor one entry per layer.
void apply_nm_masks(Mlp& model, NmPattern pattern, bool permute = false,
                    const PermutationOptions& permutation = {},
                    const std::vector<bool>& selected = {});

// The permutation step of apply_nm_masks alone: for every selected layer i >= 1, reorders its
// input channels by search_input_permutation of its current weights (and layer i-1's outputs to
// match). The network function is unchanged; the later N:M pruning keeps more magnitude.
void permute_for_nm(Mlp& model, NmPattern pattern, const PermutationOptions& permutation = {},
                    const std::vector<bool>& selected = {});

// Reorders the input channels of layer `layer` (>= 1) by perm (perm[j] = old channel at j) and
// the output channels of layer `layer - 1` to match; the network function is unchanged.
void permute_hidden_channels(Mlp& model, std::size_t layer, const std::vector<int>& perm);

// True if every layer's weights satisfy the N:M pattern along K.
bool satisfies_nm(const Mlp& model, NmPattern pattern);

// The cubic sparsity schedule: s_f + (s_i - s_f) * (1 - (t - t0) / (t1 - t0))^3 for t in
// [t0, t1], s_i before, s_f after.
double cubic_sparsity(long step, long begin_step, long end_step, double final_sparsity,
                      double initial_sparsity = 0.0);

// Raises every layer's sparsity to `sparsity` (a fraction of its weights, at most 1 - N/M) without
// leaving the N:M-reachable set: only weights outside the N largest of their group are pruned,
// smallest magnitude first. At sparsity 1 - N/M the masks are exactly the N:M masks of the
// current weights. Never un-prunes a weight.
// `selected` as for apply_nm_masks (empty: every layer).
void prune_toward_nm(Mlp& model, NmPattern pattern, double sparsity,
                     const std::vector<bool>& selected = {});

struct GradualPruningOptions {
  double begin_fraction = 0.0;  // of the fine-tuning steps, where pruning starts
  double end_fraction = 0.75;   // where it reaches exact N:M (then training goes on, masks fixed)
  int frequency = 50;           // steps between two pruning events
  // Called after every pruning event with the step, the total steps and the target sparsity.
  std::function<void(long step, long total_steps, double sparsity)> on_prune;
};

// Fine-tunes with train() while pruning gradually to exact N:M. Returns train()'s loss.
double train_with_gradual_pruning(Mlp& model, const MatrixF& x,
                                  const std::vector<std::uint8_t>& labels, NmPattern pattern,
                                  const TrainOptions& options,
                                  const GradualPruningOptions& schedule = {},
                                  const std::vector<bool>& selected = {});

// A small binary file: magic "NMSAMLP\0", version, layer count, then per layer N_out, K, a mask
// flag, the weights, the bias and the mask, little-endian. load_mlp throws std::runtime_error
// naming the file on a wrong magic or version, implausible sizes, or a size that does not match
// the header. save_mlp writes a temporary file and renames it, so a cache is never half written.
void save_mlp(const Mlp& model, const std::string& path);
Mlp load_mlp(const std::string& path);

}  // namespace nmsa
