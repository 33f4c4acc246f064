// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// Symmetric INT8 quantization as the device computes with it: INT8 weights with one scale per
// output channel, INT8 activations with one scale per tensor, INT32 accumulation, and the STORE
// epilogue's multiplier/shift (epilogue.hpp) mapping the accumulator back to an INT8 output
// scale. Real values relate to integers as real = scale * q (no zero point).
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "nmsa/epilogue.hpp"
#include "nmsa/types.hpp"

namespace nmsa {

// v / scale rounded to the nearest integer (ties to even, like NumPy's rint and PyTorch's
// quantize_per_channel) and saturated to [-128, 127]. `scale` must be positive; the callers below
// check it, and that `v` is finite, once per tensor instead of once per value (a NaN would come out
// as +-127/-128, never as undefined behaviour).
//
// Written so that loops over it vectorize: the saturation clamps the magnitude as an integer
// (floating-point comparisons would stop GCC's vectorizer under the default -ftrapping-math), and
// adding and subtracting 1.5 * 2^23 rounds to the nearest integer in the default rounding mode
// without a libm call (exact for |q| < 2^22 under IEEE single precision, no -ffast-math).
inline std::int8_t quantize_to_int8(float v, float scale) {
  float q = v / scale;
  std::uint32_t bits;
  std::memcpy(&bits, &q, sizeof bits);
  constexpr std::uint32_t kMagnitude128 = 0x43000000u;  // the bits of 128.0f
  std::uint32_t magnitude = bits & 0x7fffffffu;
  magnitude = magnitude < kMagnitude128 ? magnitude : kMagnitude128;
  bits = (bits & 0x80000000u) | magnitude;
  std::memcpy(&q, &bits, sizeof q);
  constexpr float kRound = 12582912.0f;
  q = (q + kRound) - kRound;        // now an integer in [-128, 128]
  int i = static_cast<int>(q);
  i = i < 127 ? i : 127;
  return static_cast<std::int8_t>(i);
}

// INT8 weights [N_out x K] with one scale per output channel (row): w ~ values(c, k) * scales[c].
struct QuantizedWeights {
  MatrixI8 values;
  // scale_c = max_k |w(c, k)| / 127, so that the largest magnitude maps to +-127 and values stay
  // in [-127, 127]. An all-zero row gets scale 0 (its values are 0 whatever the scale); see
  // requant_params for how such a channel is requantized.
  std::vector<float> scales;
};

// Symmetric per-output-channel quantization. Throws std::invalid_argument naming the row and
// column of the first non-finite weight.
QuantizedWeights quantize_weights_per_channel(const MatrixF& w);

// values(c, k) * scales[c].
MatrixF dequantize(const QuantizedWeights& q);

// The per-tensor activation scale that maps max |x| to 127 (a calibration helper); 1 for an
// all-zero tensor. Throws std::invalid_argument on a non-finite value.
float activation_scale(const MatrixF& x);

// Per-tensor quantization with a given scale: quantize_to_int8(x, scale) for every value, so
// values beyond 127.5 * scale saturate. Throws std::invalid_argument unless scale is positive and
// finite and every value is finite (naming the first offending position).
MatrixI8 quantize_activations(const MatrixF& x, float scale);

// q * scale.
MatrixF dequantize_activations(const MatrixI8& q, float scale);

// The STORE epilogue that turns acc = X_q * W_q^T (INT32, X_q quantized with act_scale, row c of
// W_q with weight_scales[c]) into INT8 outputs with out_scale, adding a real-valued bias:
//   y_c = act_scale * weight_scales[c] * acc_c + bias[c] ~ out_scale * q_c.
// Per channel: multiplier/shift = quantize_multiplier(act_scale * weight_scales[c] / out_scale),
// bias_q[c] = round(bias[c] / (act_scale * weight_scales[c])) saturated to INT32 (the bias enters
// the accumulator in accumulator units). `bias` empty means zeros.
//
// A channel with weight scale 0 (an all-zero weight row) always accumulates 0, so any positive
// scale represents it exactly; it uses out_scale / 2^16, which gives the multiplier 2^-16 and
// carries its bias into the output with 2^-16 of an output step instead of dropping it.
//
// Throws std::invalid_argument naming the channel unless act_scale and out_scale are positive and
// finite, every weight scale is finite and >= 0, bias is empty or has one entry per channel, and
// every ratio act_scale * weight_scales[c] / out_scale is below 2^31 (quantize_multiplier's
// range).
EpilogueParams requant_params(double act_scale, const std::vector<float>& weight_scales,
                              double out_scale, const std::vector<float>& bias = {});

}  // namespace nmsa
