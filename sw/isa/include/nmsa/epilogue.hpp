// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// The STORE epilogue of docs/isa.md: bias, per-output-channel requantization INT32 -> INT8 with
// an integer multiplier and a right shift (round half up, saturating), optional ReLU. The device,
// the functional model and the golden model all compute exactly this.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "nmsa/types.hpp"

namespace nmsa {

// Per output channel: bias (added to the INT32 accumulator), multiplier and shift (0..63).
struct EpilogueParams {
  std::vector<std::int32_t> bias;
  std::vector<std::int32_t> multiplier;
  std::vector<std::uint8_t> shift;

  std::size_t channels() const { return bias.size(); }
  // Throws std::invalid_argument unless the three vectors have `channels` elements each and every
  // shift is at most 63.
  void validate(std::size_t channels) const;
  // bias 0, multiplier 2^30, shift 30 (the identity, saturated to INT8) for every channel.
  static EpilogueParams identity(std::size_t channels);
};

// INT8 output: v = acc + bias, p = v * mult, q = (p + 2^(s-1)) >> s (arithmetic; no rounding term
// for s = 0), saturated to [-128, 127], then max(q, 0) with relu. Computed exactly: the product
// of the 33-bit v and the 32-bit multiplier, plus the rounding term, needs 65 bits in the
// corner acc = bias = mult = INT32_MIN, so the arithmetic is done in 128 bits. `shift` must be
// at most 63 (the device uses the low 6 bits of the stored shift).
std::int8_t requantize(std::int32_t acc, std::int32_t bias, std::int32_t multiplier, unsigned shift,
                       bool relu);

// INT32 output: acc + bias with 32-bit wrap-around, then max(., 0) with relu.
std::int32_t requantize_int32(std::int32_t acc, std::int32_t bias, bool relu);

// The multiplier and shift that best represent a positive real scale: real ~ multiplier / 2^shift
// with multiplier in [2^30, 2^31) (TFLite's QuantizeMultiplier with nmsa's shift convention).
// Scales below 2^-32 lose precision (the shift saturates at 63 and the multiplier falls below
// 2^30, to 0 for scales under 2^-64). Throws std::invalid_argument for a scale that is not
// positive and finite or is 2^31 or more (it would need a negative shift).
struct QuantizedMultiplier {
  std::int32_t multiplier = 0;
  unsigned shift = 0;
};
QuantizedMultiplier quantize_multiplier(double real_scale);

// The epilogue over a whole accumulator matrix [rows x channels] (the golden model of STORE):
// INT8 results (as int32 values) when int32_output is false, else acc + bias (+ ReLU).
MatrixI32 apply_epilogue(const MatrixI32& acc, const EpilogueParams& params, bool relu,
                         bool int32_output);

}  // namespace nmsa
