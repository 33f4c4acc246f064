// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// The forward and backward passes of a stack of Linear layers with ReLU between them (none after
// the last) and the softmax cross-entropy on top: the whole of an MLP (mlp_loss), the classifier
// of a CNN (cnn_loss). Layers [first, end) of `model.layers` form the stack.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "nmsa/mlp.hpp"

namespace nmsa {

// acts[0] = x, acts[j + 1] the output of layer first + j (after its ReLU); acts.back() the logits.
void dense_stack_forward(const Mlp& model, std::size_t first, const MatrixF& x,
                         std::vector<MatrixF>& acts);

// The mean softmax cross-entropy of the logits. With `gradient`, the logits are replaced by the
// loss's gradient with respect to them (softmax - onehot, over the batch size); without, by the
// softmax.
double softmax_cross_entropy(MatrixF& logits, const std::vector<std::uint8_t>& labels,
                             bool gradient);

// From dz, the gradient with respect to the logits, fills grads.dw[i] and grads.db[i] of the
// stack's layers (grads sized for all of model.layers) and, with `input_gradient`, returns the
// gradient with respect to the stack's input (acts[0]); otherwise an empty matrix.
MatrixF dense_stack_backward(const Mlp& model, std::size_t first,
                             const std::vector<MatrixF>& acts, MatrixF dz, MlpGradients& grads,
                             bool input_gradient);

// The class of every row of x (the argmax of its logits, the lowest index on ties: predict_classes),
// computed batch_size rows at a time by `logits_of`, so that a large input never becomes one
// activation matrix.
std::vector<std::uint8_t> predict_in_batches(
    const MatrixF& x, int batch_size, const std::function<MatrixF(const MatrixF&)>& logits_of);

// The fraction of the predictions equal to their labels (0 for none).
double fraction_correct(const std::vector<std::uint8_t>& predicted,
                        const std::vector<std::uint8_t>& labels);

}  // namespace nmsa
