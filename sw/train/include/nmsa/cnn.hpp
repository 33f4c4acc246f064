// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// A small convolutional network for 1-channel images (the demo's second model, docs/demo.md):
//
//   input [batch x C*H*W], NCHW pixels in a row (ONNX's input [batch, C, H, W] flattened)
//   per convolution block: Conv KxK, stride 1, "same" zero padding, bias -> ReLU -> MaxPool 2x2
//     (stride 2) if the block pools
//   Flatten (NCHW order, as ONNX's Flatten of [batch, C, h, w]) -> Linear -> ReLU -> ... -> Linear
//
// trained in FP32 with the MLP's optimizer, schedules and pruning (mlp.hpp): the trainable layers
// are the `params` of an Mlp, a convolution's weight [C_out x C_in*K*K] in ONNX's order
// (c_in, ky, kx) along K, so that N:M groups run along input channels x kernel window as the
// device prunes them (docs/runtime.md). Conv weights and Linear weights are pruned, masked and
// updated alike; only the forward and backward passes differ.
//
// The convolutions run as GEMMs over im2col matrices (one row per output pixel), with Eigen.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nmsa/mlp.hpp"
#include "nmsa/types.hpp"

namespace nmsa {

struct CnnConv {
  int out_channels = 0;
  int kernel = 3;     // odd: "same" padding of kernel / 2 keeps H x W
  bool pool = true;   // a 2x2 max pool (stride 2) after the ReLU
};

struct CnnShape {
  int channels = 1;
  int height = 28;
  int width = 28;
  std::vector<CnnConv> convs;
  std::vector<int> hidden;  // widths of the hidden Linear layers after the flatten
  int classes = 10;
};

struct Cnn {
  CnnShape shape;
  // Every trainable layer in order: one per convolution, then the Linear layers. An Mlp only as a
  // container: its layers do not chain as an MLP's do (mlp_forward does not apply).
  Mlp params;

  std::size_t conv_count() const { return shape.convs.size(); }
};

// Validates the shape (positive sizes, odd kernels, an even H and W before every pool) and returns
// the network with He-uniform weights and zero biases drawn from `seed`. Throws
// std::invalid_argument naming what is wrong.
Cnn make_cnn(const CnnShape& shape, std::uint64_t seed);

// The name of trainable layer i: "conv1", "conv2", ... then "fc1", "fc2", ...
std::string cnn_layer_name(const Cnn& model, std::size_t i);

// The feature map a convolution reads: {channels, height, width} of layer i < conv_count(), and the
// features the first Linear layer reads (C*h*w after the last block).
struct FeatureMap {
  int channels = 0;
  int height = 0;
  int width = 0;
  int size() const { return channels * height * width; }
};
FeatureMap conv_input_map(const CnnShape& shape, std::size_t conv);
int flattened_features(const CnnShape& shape);

// Logits [rows x classes] of x [rows x C*H*W].
MatrixF cnn_forward(const Cnn& model, const MatrixF& x);

// The scale of every trainable layer's INT8 input, in layer order: calibrated_scale (int8_mlp.hpp)
// of the FP32 activations the layer reads over the calibration rows. conv1 reads the pixels, a
// later convolution and the first Linear layer the previous block's pooled map, a later Linear
// layer the previous one's ReLU output. Deployed, a block's output is quantized to the next
// layer's scale before its max pool: rounding and saturation are monotone, so pooling the INT8
// values equals quantizing the pooled ones. Throws std::invalid_argument as calibrated_scale does,
// or on rows of the wrong width.
std::vector<float> calibrate_cnn_input_scales(const Cnn& model, const MatrixF& calibration,
                                              double percentile = 100.0);

// Mean softmax cross-entropy of the batch and, if grads is not null, its gradient with respect to
// every weight and bias of model.params (same layout as mlp_loss). Throws std::invalid_argument on
// a shape mismatch or a label out of range.
double cnn_loss(const Cnn& model, const MatrixF& x, const std::vector<std::uint8_t>& labels,
                MlpGradients* grads = nullptr);

// The predicted class of every row (predict_classes of the logits), batch_size rows at a time.
std::vector<std::uint8_t> cnn_predict(const Cnn& model, const MatrixF& x, int batch_size = 500);

// Fraction of rows predicted as labelled (0 for none).
double evaluate_cnn_accuracy(const Cnn& model, const MatrixF& x,
                             const std::vector<std::uint8_t>& labels, int batch_size = 500);

// `options` with its loss set to the CNN's, for train() and train_with_gradual_pruning() on
// model.params. The options keep a reference to `model`: it must outlive the training.
TrainOptions cnn_train_options(const Cnn& model, TrainOptions options);

// A layer selection for apply_nm_masks / prune_toward_nm that leaves out the layers whose K is not
// a multiple of M (the first convolution of a 1-channel 3x3 network has K = 9): those cannot be
// N:M and stay dense, a dense fallback by rule.
std::vector<bool> prunable_layers(const Cnn& model, NmPattern pattern);

// A small binary file as save_mlp's (magic "NMSACNN\0"): the shape, then the layers. load_cnn
// throws std::runtime_error naming the file on a wrong magic or version, an implausible or
// inconsistent shape, or layers that do not match it.
void save_cnn(const Cnn& model, const std::string& path);
Cnn load_cnn(const std::string& path);

}  // namespace nmsa
