// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
#include "nmsa/int8_mlp.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "nmsa/golden.hpp"
#include "nmsa/quant.hpp"
#include "nmsa/sparse_format.hpp"

namespace nmsa {

std::vector<int> Int8Mlp::sizes() const {
  std::vector<int> s;
  if (layers.empty()) return s;
  s.push_back(static_cast<int>(layers.front().weights.cols()));
  for (const auto& l : layers) s.push_back(static_cast<int>(l.weights.rows()));
  return s;
}

namespace {

// The p-th percentile of |values| (nearest rank), p in (0, 100].
float magnitude_percentile(const MatrixF& a, double p) {
  std::vector<float> mags(static_cast<std::size_t>(a.size()));
  for (Eigen::Index i = 0; i < a.size(); ++i) {
    const float v = a.data()[i];
    if (!std::isfinite(v)) {
      throw std::invalid_argument("calibration: non-finite activation at position " +
                                  std::to_string(i));
    }
    mags[static_cast<std::size_t>(i)] = std::abs(v);
  }
  const auto n = mags.size();
  auto rank = static_cast<std::size_t>(std::ceil(p / 100.0 * static_cast<double>(n)));
  rank = std::clamp<std::size_t>(rank, 1, n);
  std::nth_element(mags.begin(), mags.begin() + static_cast<long>(rank - 1), mags.end());
  return mags[rank - 1];
}

}  // namespace

float calibrated_scale(const MatrixF& activations, double percentile) {
  if (activations.size() == 0) throw std::invalid_argument("calibration: no calibration rows");
  if (!(percentile > 0.0 && percentile <= 100.0)) {
    throw std::invalid_argument("calibration: percentile " + std::to_string(percentile) +
                                " is outside (0, 100]");
  }
  const float top = magnitude_percentile(activations, percentile);
  return top > 0.0f ? top / 127.0f : 1.0f;
}

std::vector<float> calibrate_input_scales(const Mlp& model, const MatrixF& calibration,
                                          double percentile) {
  if (calibration.rows() == 0) throw std::invalid_argument("calibration: no calibration rows");
  if (model.layers.empty() || calibration.cols() != model.layers.front().w.cols()) {
    throw std::invalid_argument("calibration: " + std::to_string(calibration.cols()) +
                                " features do not match the model");
  }
  std::vector<float> scales;
  MatrixF a = calibration;
  for (std::size_t i = 0; i < model.layers.size(); ++i) {
    scales.push_back(calibrated_scale(a, percentile));
    MatrixF z = a * model.layers[i].w.transpose();
    z.rowwise() += model.layers[i].b.transpose();
    a = z.cwiseMax(0.0f);
  }
  return scales;
}

Int8Mlp quantize_mlp(const Mlp& model, const std::vector<float>& input_scales,
                     const std::vector<GemmMode>& modes, NmPattern pattern) {
  const std::size_t n = model.layers.size();
  if (n == 0) throw std::invalid_argument("quantize_mlp: the model has no layers");
  if (input_scales.size() != n || modes.size() != n) {
    throw std::invalid_argument("quantize_mlp: " + std::to_string(n) + " layers but " +
                                std::to_string(input_scales.size()) + " input scales and " +
                                std::to_string(modes.size()) + " modes");
  }
  Int8Mlp q;
  for (std::size_t i = 0; i < n; ++i) {
    const MlpLayer& l = model.layers[i];
    Int8MlpLayer out;
    out.name = mlp_layer_name(i);
    QuantizedWeights qw = quantize_weights_per_channel(l.w);
    out.weights = std::move(qw.values);
    out.weight_scales = std::move(qw.scales);
    out.input_scale = input_scales[i];
    out.mode = modes[i];
    out.last = i + 1 == n;
    out.bias.assign(l.b.data(), l.b.data() + l.b.size());
    if (out.mode == GemmMode::SPARSE) {
      if (const auto v = find_nm_violation(out.weights, pattern)) {
        throw std::invalid_argument("quantize_mlp: layer " + out.name + " is to run sparse but " +
                                    v->describe(pattern));
      }
    }
    if (!out.last) {
      out.epilogue = requant_params(input_scales[i], out.weight_scales, input_scales[i + 1],
                                    out.bias);
    }
    q.layers.push_back(std::move(out));
  }
  return q;
}

MatrixI8 quantize_input(const Int8Mlp& model, const MatrixF& x) {
  if (model.layers.empty()) throw std::invalid_argument("quantize_input: the model has no layers");
  return quantize_activations(x, model.layers.front().input_scale);
}

MatrixI32 golden_layer(const Int8MlpLayer& layer, const MatrixI8& x) {
  const MatrixI32 acc = golden::gemm_i8(x, layer.weights);
  if (layer.last) return acc;
  return apply_epilogue(acc, layer.epilogue, /*relu=*/true, /*int32_output=*/false);
}

MatrixI8 to_int8(const MatrixI32& values) {
  for (Eigen::Index i = 0; i < values.size(); ++i) {
    const std::int32_t v = values.data()[i];
    if (v < -128 || v > 127) {
      throw std::invalid_argument("to_int8: value " + std::to_string(v) + " at position " +
                                  std::to_string(i) + " is outside INT8");
    }
  }
  return values.cast<std::int8_t>();
}

MatrixI32 golden_forward(const Int8Mlp& model, const MatrixI8& x) {
  MatrixI8 a = x;
  for (const auto& l : model.layers) {
    MatrixI32 y = golden_layer(l, a);
    if (l.last) return y;
    a = to_int8(y);
  }
  throw std::invalid_argument("golden_forward: the model has no last layer");
}

MatrixF logits_from_accumulators(const Int8MlpLayer& last, const MatrixI32& acc) {
  if (acc.cols() != static_cast<Eigen::Index>(last.weight_scales.size())) {
    throw std::invalid_argument("logits: " + std::to_string(acc.cols()) + " accumulators for " +
                                std::to_string(last.weight_scales.size()) + " channels");
  }
  MatrixF logits(acc.rows(), acc.cols());
  for (Eigen::Index c = 0; c < acc.cols(); ++c) {
    const double scale = static_cast<double>(last.input_scale) * last.weight_scales[c];
    const double bias = last.bias[static_cast<std::size_t>(c)];
    for (Eigen::Index r = 0; r < acc.rows(); ++r) {
      logits(r, c) = static_cast<float>(scale * acc(r, c) + bias);
    }
  }
  return logits;
}

std::vector<std::uint8_t> predict_classes(const MatrixF& logits) {
  std::vector<std::uint8_t> out(static_cast<std::size_t>(logits.rows()));
  for (Eigen::Index r = 0; r < logits.rows(); ++r) {
    Eigen::Index arg = 0;
    logits.row(r).maxCoeff(&arg);
    out[static_cast<std::size_t>(r)] = static_cast<std::uint8_t>(arg);
  }
  return out;
}

double top1_accuracy(const Int8Mlp& model, const MatrixI32& accumulators,
                     const std::vector<std::uint8_t>& labels) {
  if (static_cast<std::size_t>(accumulators.rows()) != labels.size()) {
    throw std::invalid_argument("top1_accuracy: " + std::to_string(accumulators.rows()) +
                                " rows but " + std::to_string(labels.size()) + " labels");
  }
  if (labels.empty()) return 0.0;
  const auto pred = predict_classes(logits_from_accumulators(model.layers.back(), accumulators));
  long correct = 0;
  for (std::size_t i = 0; i < labels.size(); ++i) correct += pred[i] == labels[i] ? 1 : 0;
  return static_cast<double>(correct) / static_cast<double>(labels.size());
}

double evaluate_int8_accuracy(const Int8Mlp& model, const MatrixF& x,
                              const std::vector<std::uint8_t>& labels, int batch_size) {
  if (static_cast<std::size_t>(x.rows()) != labels.size()) {
    throw std::invalid_argument("evaluate_int8_accuracy: " + std::to_string(x.rows()) +
                                " rows but " + std::to_string(labels.size()) + " labels");
  }
  if (x.rows() == 0) return 0.0;
  batch_size = std::max(batch_size, 1);
  MatrixI32 acc(x.rows(), static_cast<Eigen::Index>(model.layers.back().weight_scales.size()));
  for (Eigen::Index start = 0; start < x.rows(); start += batch_size) {
    const Eigen::Index n = std::min<Eigen::Index>(batch_size, x.rows() - start);
    acc.middleRows(start, n) = golden_forward(model, quantize_input(model, x.middleRows(start, n)));
  }
  return top1_accuracy(model, acc, labels);
}

}  // namespace nmsa
