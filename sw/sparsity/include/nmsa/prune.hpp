// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// Floating-point N:M pruning and the input-channel permutation search (reorder K so that large
// weights fall into different N:M groups). The INT8 pruning of already-quantized weights
// and the prune check live in sparse_format.hpp; this file works on the FP32 weights a model is
// trained in, before quantization (quant.hpp).
//
// Why a permutation helps: N:M pruning only compares weights inside a group of M consecutive
// input channels. Reordering the K input channels changes which weights compete with each other,
// and a good order keeps more of the large weights. The order is free at inference time as long
// as the activations are reordered the same way (see apply_column_permutation).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "nmsa/quant.hpp"
#include "nmsa/types.hpp"

namespace nmsa {

// Magnitude N:M pruning along K, the same rule as the INT8 prune_nm of sparse_format.hpp: in every
// group of M consecutive K-positions of a row keep the N values of largest magnitude (on ties the
// lower index wins) and zero the rest. K must be a multiple of M (std::invalid_argument
// otherwise). Magnitudes are ordered as |w| with +0 == -0; a NaN counts as larger than any number
// (so exactly N values of every group survive whatever the input holds).
MatrixF prune_nm(const MatrixF& w, NmPattern p);

// quantize_weights_per_channel(prune_nm(w, p)), bit for bit, in one pass over w: the deployment
// path from FP32 weights to the INT8 operand of compress(). It skips the FP32 pruned intermediate
// (a full extra write and read of the matrix) because the row maximum, and so the scale, does not
// change under pruning: the largest magnitude of every group survives. Throws
// std::invalid_argument on a K that is not a multiple of M or on a non-finite weight.
QuantizedWeights prune_and_quantize(const MatrixF& w, NmPattern p);

// Sum of |w| over the whole matrix, in double: the magnitude a pruned matrix retains.
double retained_magnitude(const MatrixF& pruned);

// The retained magnitude of unstructured pruning to the same density: in every row keep the
// K * N / M values of largest magnitude. No N:M mask of any column order can retain more, so it
// is the upper bound for plain N:M pruning and for the permutation search.
double unstructured_retained_magnitude(const MatrixF& w, NmPattern p);

// Bounds of the permutation search. The result depends only on the weights, the pattern and
// these options, unless time_budget_s is set (then a faster machine may search further).
struct PermutationOptions {
  std::uint64_t seed = 1;
  // After the first local optimum of the greedy swap descent: how many times to perturb the
  // best order found so far with random swaps and descend again (kept only if it improves).
  int escape_attempts = 100;
  // Random channel swaps per escape attempt (at least 1). Two or more keep the descent from
  // simply undoing a single swap.
  int swaps_per_escape = 3;
  // Wall-clock bound for the whole search in seconds; 0 means no bound.
  double time_budget_s = 0.0;
};

// Searches an order of the K input channels (columns of w [N_out x K]) that maximizes the
// magnitude N:M pruning retains: greedy channel swaps between groups, each time taking the swap
// that most increases the retained magnitude of the two groups involved, until no swap helps;
// then random escapes (a few random swaps followed by a new descent, kept if the total improves)
// within the bounds of `options`. Returns perm with perm[j] = the input column placed at position
// j; prune apply_column_permutation(w, perm). The identity is returned when no swap helps (for
// example K == M). Throws std::invalid_argument if K is not a multiple of M.
std::vector<int> search_input_permutation(const MatrixF& w, NmPattern p,
                                          const PermutationOptions& options = {});

// Throws std::invalid_argument naming the problem unless perm holds every index 0..k-1 once.
void validate_permutation(const std::vector<int>& perm, Eigen::Index k);

// inverse[perm[j]] == j.
std::vector<int> invert_permutation(const std::vector<int>& perm);

// Column j of the result is column perm[j] of m.
//
// Permuting the input channels of a layer's weights W [N_out x K] changes nothing about the
// layer's output only if its activations X [rows x K] are permuted the same way:
// apply_column_permutation(X, perm) * apply_column_permutation(W, perm)^T == X * W^T. At
// deployment the activation permutation is folded into the previous layer: permute the *rows*
// (output channels) of the previous layer's weights, and its bias and per-channel scales, by the
// same perm, so that it emits its outputs already in the new order. Elementwise operators between
// the two layers (ReLU, per-channel affine) must be permuted along with them.
template <typename T>
Matrix<T> apply_column_permutation(const Matrix<T>& m, const std::vector<int>& perm) {
  validate_permutation(perm, m.cols());
  Matrix<T> out(m.rows(), m.cols());
  for (Eigen::Index r = 0; r < m.rows(); ++r) {
    const T* src = m.data() + r * m.cols();
    T* dst = out.data() + r * m.cols();
    for (Eigen::Index j = 0; j < m.cols(); ++j) dst[j] = src[perm[static_cast<std::size_t>(j)]];
  }
  return out;
}

// What a permutation buys, all in retained magnitude (sum of |w| kept).
struct PermutationGain {
  double plain = 0.0;         // N:M pruning in the original column order
  double permuted = 0.0;      // N:M pruning after the permutation
  double unstructured = 0.0;  // unstructured pruning to the same density (the upper bound)

  // (permuted - plain) / (unstructured - plain): the fraction of the gap between plain N:M and
  // unstructured pruning that the permutation closes. 1 when there is no gap.
  double gap_closed() const;
};

PermutationGain evaluate_permutation(const MatrixF& w, NmPattern p, const std::vector<int>& perm);

}  // namespace nmsa
