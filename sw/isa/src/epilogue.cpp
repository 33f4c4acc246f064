// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
#include "nmsa/epilogue.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace nmsa {

namespace {
__extension__ typedef __int128 int128;
}  // namespace

void EpilogueParams::validate(std::size_t channels) const {
  if (bias.size() != channels || multiplier.size() != channels || shift.size() != channels) {
    throw std::invalid_argument("epilogue parameters: expected " + std::to_string(channels) +
                                " channels, got bias " + std::to_string(bias.size()) +
                                ", multiplier " + std::to_string(multiplier.size()) + ", shift " +
                                std::to_string(shift.size()));
  }
  for (std::size_t c = 0; c < channels; ++c) {
    if (shift[c] > 63) {
      throw std::invalid_argument("epilogue parameters: shift " + std::to_string(shift[c]) +
                                  " of channel " + std::to_string(c) + " is above 63");
    }
  }
}

EpilogueParams EpilogueParams::identity(std::size_t channels) {
  EpilogueParams p;
  p.bias.assign(channels, 0);
  p.multiplier.assign(channels, 1 << 30);
  p.shift.assign(channels, 30);
  return p;
}

std::int8_t requantize(std::int32_t acc, std::int32_t bias, std::int32_t multiplier, unsigned shift,
                       bool relu) {
  if (shift > 63) {
    throw std::invalid_argument("requantize: shift " + std::to_string(shift) + " is above 63");
  }
  const std::int64_t v = std::int64_t{acc} + std::int64_t{bias};
  const int128 p = static_cast<int128>(v) * multiplier;
  const int128 rounded = shift == 0 ? p : p + (static_cast<int128>(1) << (shift - 1));
  int128 q = rounded >> shift;  // arithmetic: GCC and Clang shift signed values arithmetically
  if (q > 127) q = 127;
  if (q < -128) q = -128;
  if (relu && q < 0) q = 0;
  return static_cast<std::int8_t>(q);
}

std::int32_t requantize_int32(std::int32_t acc, std::int32_t bias, bool relu) {
  const auto sum =
      static_cast<std::int32_t>(static_cast<std::uint32_t>(acc) + static_cast<std::uint32_t>(bias));
  return relu && sum < 0 ? 0 : sum;
}

QuantizedMultiplier quantize_multiplier(double real_scale) {
  if (!std::isfinite(real_scale) || real_scale <= 0.0) {
    throw std::invalid_argument("quantize_multiplier: scale " + std::to_string(real_scale) +
                                " is not a positive finite number");
  }
  int exponent = 0;
  const double fraction = std::frexp(real_scale, &exponent);  // real = fraction * 2^exponent
  auto mult = static_cast<std::int64_t>(std::llround(fraction * 2147483648.0));  // * 2^31
  if (mult == (std::int64_t{1} << 31)) {
    mult /= 2;
    ++exponent;
  }
  int shift = 31 - exponent;  // real ~ mult * 2^(exponent - 31) = mult / 2^shift
  if (shift < 0) {
    throw std::invalid_argument("quantize_multiplier: scale " + std::to_string(real_scale) +
                                " is 2^31 or more and cannot be represented with a shift >= 0");
  }
  if (shift > 63) {
    // Keep the largest shift and round the scale at that resolution instead.
    shift = 63;
    mult = std::llround(std::ldexp(real_scale, 63));
  }
  return QuantizedMultiplier{static_cast<std::int32_t>(mult), static_cast<unsigned>(shift)};
}

MatrixI32 apply_epilogue(const MatrixI32& acc, const EpilogueParams& params, bool relu,
                         bool int32_output) {
  const auto channels = static_cast<std::size_t>(acc.cols());
  if (int32_output) {
    if (params.bias.size() != channels) {
      throw std::invalid_argument("apply_epilogue: " + std::to_string(params.bias.size()) +
                                  " biases for " + std::to_string(channels) + " channels");
    }
  } else {
    params.validate(channels);
  }
  MatrixI32 out(acc.rows(), acc.cols());
  for (Eigen::Index r = 0; r < acc.rows(); ++r) {
    for (Eigen::Index c = 0; c < acc.cols(); ++c) {
      const auto ch = static_cast<std::size_t>(c);
      out(r, c) = int32_output ? requantize_int32(acc(r, c), params.bias[ch], relu)
                               : requantize(acc(r, c), params.bias[ch], params.multiplier[ch],
                                            params.shift[ch], relu);
    }
  }
  return out;
}

}  // namespace nmsa
