// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
#include "nmsa/quant.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>

namespace nmsa {

namespace {

// The sign-cleared bit pattern of v: ordered like |v| for finite values and infinity, and
// >= kInfinityKey exactly when v is not finite. An integer maximum over a row thus yields both
// max |v| and the finiteness check in one vectorizable pass.
constexpr std::uint32_t kInfinityKey = 0x7f800000u;

inline std::uint32_t magnitude_key(float v) {
  std::uint32_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return bits & 0x7fffffffu;
}

inline float key_to_float(std::uint32_t key) {
  float v;
  std::memcpy(&v, &key, sizeof v);
  return v;
}

std::uint32_t max_magnitude_key(const float* v, Eigen::Index count) {
  std::uint32_t m = 0;
  for (Eigen::Index i = 0; i < count; ++i) {
    const std::uint32_t k = magnitude_key(v[i]);
    m = k > m ? k : m;
  }
  return m;
}

[[noreturn]] void throw_non_finite(const char* what, const MatrixF& m, Eigen::Index row) {
  for (Eigen::Index c = 0; c < m.cols(); ++c) {
    if (!std::isfinite(m(row, c))) {
      throw std::invalid_argument(std::string(what) + ": value at row " + std::to_string(row) +
                                  ", column " + std::to_string(c) + " is " +
                                  std::to_string(m(row, c)) + ", not a finite number");
    }
  }
  throw std::logic_error(std::string(what) + ": non-finite value not found");
}

void require_positive_finite(const char* what, const char* name, double v) {
  if (!(v > 0.0) || !std::isfinite(v)) {
    throw std::invalid_argument(std::string(what) + ": " + name + " " + std::to_string(v) +
                                " is not a positive finite number");
  }
}

}  // namespace

QuantizedWeights quantize_weights_per_channel(const MatrixF& w) {
  QuantizedWeights q;
  q.values.resize(w.rows(), w.cols());
  q.scales.resize(static_cast<std::size_t>(w.rows()));
  // Loop bounds in locals: the int8 stores could alias the matrices' size fields as far as the
  // compiler knows, and re-reading them each iteration stops vectorization.
  const Eigen::Index k = w.cols();
  for (Eigen::Index r = 0; r < w.rows(); ++r) {
    const float* src = w.data() + r * k;
    std::int8_t* dst = q.values.data() + r * k;
    const std::uint32_t max_key = max_magnitude_key(src, k);
    if (max_key >= kInfinityKey) throw_non_finite("weight quantization", w, r);
    const float scale = key_to_float(max_key) / 127.0f;
    q.scales[static_cast<std::size_t>(r)] = scale;
    if (max_key == 0 || !(scale > 0.0f)) {
      // All zero, or magnitudes so small (denormal) that max / 127 underflows: store zeros.
      q.scales[static_cast<std::size_t>(r)] = 0.0f;
      std::fill(dst, dst + k, std::int8_t{0});
      continue;
    }
    for (Eigen::Index c = 0; c < k; ++c) dst[c] = quantize_to_int8(src[c], scale);
  }
  return q;
}

MatrixF dequantize(const QuantizedWeights& q) {
  if (static_cast<Eigen::Index>(q.scales.size()) != q.values.rows()) {
    throw std::invalid_argument("dequantize: " + std::to_string(q.scales.size()) +
                                " scales for " + std::to_string(q.values.rows()) + " rows");
  }
  MatrixF w(q.values.rows(), q.values.cols());
  for (Eigen::Index r = 0; r < w.rows(); ++r) {
    w.row(r) = q.values.row(r).cast<float>() * q.scales[static_cast<std::size_t>(r)];
  }
  return w;
}

float activation_scale(const MatrixF& x) {
  std::uint32_t max_key = 0;
  for (Eigen::Index r = 0; r < x.rows(); ++r) {
    const std::uint32_t k = max_magnitude_key(x.data() + r * x.cols(), x.cols());
    if (k >= kInfinityKey) throw_non_finite("activation scale", x, r);
    max_key = k > max_key ? k : max_key;
  }
  const float scale = key_to_float(max_key) / 127.0f;
  return scale > 0.0f ? scale : 1.0f;
}

MatrixI8 quantize_activations(const MatrixF& x, float scale) {
  require_positive_finite("activation quantization", "scale", scale);
  MatrixI8 q(x.rows(), x.cols());
  const Eigen::Index k = x.cols();
  for (Eigen::Index r = 0; r < x.rows(); ++r) {
    const float* src = x.data() + r * k;
    if (max_magnitude_key(src, k) >= kInfinityKey) {
      throw_non_finite("activation quantization", x, r);
    }
    std::int8_t* dst = q.data() + r * k;
    for (Eigen::Index c = 0; c < k; ++c) dst[c] = quantize_to_int8(src[c], scale);
  }
  return q;
}

MatrixF dequantize_activations(const MatrixI8& q, float scale) {
  return q.cast<float>() * scale;
}

EpilogueParams requant_params(double act_scale, const std::vector<float>& weight_scales,
                              double out_scale, const std::vector<float>& bias) {
  const char* what = "requantization parameters";
  require_positive_finite(what, "activation scale", act_scale);
  require_positive_finite(what, "output scale", out_scale);
  const std::size_t channels = weight_scales.size();
  if (!bias.empty() && bias.size() != channels) {
    throw std::invalid_argument(std::string(what) + ": " + std::to_string(bias.size()) +
                                " biases for " + std::to_string(channels) + " channels");
  }
  EpilogueParams params;
  params.bias.resize(channels);
  params.multiplier.resize(channels);
  params.shift.resize(channels);
  for (std::size_t c = 0; c < channels; ++c) {
    const double w_scale = weight_scales[c];
    if (!(w_scale >= 0.0) || !std::isfinite(w_scale)) {
      throw std::invalid_argument(std::string(what) + ": weight scale " + std::to_string(w_scale) +
                                  " of channel " + std::to_string(c) +
                                  " is not a finite number >= 0");
    }
    // The scale of one accumulator unit; a zero weight row may use any (see the header).
    double acc_scale = act_scale * w_scale;
    if (!(acc_scale > 0.0)) acc_scale = std::ldexp(out_scale, -16);
    const double ratio = acc_scale / out_scale;
    QuantizedMultiplier qm;
    try {
      qm = quantize_multiplier(ratio);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(std::string(what) + ": channel " + std::to_string(c) +
                                  " (activation scale " + std::to_string(act_scale) +
                                  " x weight scale " + std::to_string(w_scale) +
                                  " / output scale " + std::to_string(out_scale) + "): " +
                                  e.what());
    }
    params.multiplier[c] = qm.multiplier;
    params.shift[c] = static_cast<std::uint8_t>(qm.shift);
    const double b = bias.empty() ? 0.0 : static_cast<double>(bias[c]);
    if (!std::isfinite(b)) {
      throw std::invalid_argument(std::string(what) + ": bias " + std::to_string(b) +
                                  " of channel " + std::to_string(c) + " is not finite");
    }
    double b_q = std::nearbyint(b / acc_scale);
    constexpr double kMax = std::numeric_limits<std::int32_t>::max();
    constexpr double kMin = std::numeric_limits<std::int32_t>::min();
    b_q = b_q > kMax ? kMax : (b_q < kMin ? kMin : b_q);
    params.bias[c] = static_cast<std::int32_t>(b_q);
  }
  return params;
}

}  // namespace nmsa
