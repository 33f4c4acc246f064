// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
#include "nmsa/cnn.hpp"

#include <algorithm>
#include <random>
#include <stdexcept>

#include "dense_stack.hpp"
#include "model_file.hpp"
#include "nmsa/file_io.hpp"
#include "nmsa/int8_mlp.hpp"

namespace nmsa {

namespace {

constexpr char kCnnMagic[8] = {'N', 'M', 'S', 'A', 'C', 'N', 'N', '\0'};
constexpr std::uint32_t kCnnVersion = 1;
constexpr int kMaxSide = 4096;
// The largest K or N_out of a layer, as the model files allow.
constexpr std::int64_t kMaxDim = 1 << 20;

void validate_shape(const CnnShape& s) {
  auto bad = [](const std::string& why) { throw std::invalid_argument("cnn: " + why); };
  if (s.channels <= 0 || s.height <= 0 || s.width <= 0 || s.height > kMaxSide ||
      s.width > kMaxSide) {
    bad("the input is " + std::to_string(s.channels) + " x " + std::to_string(s.height) + " x " +
        std::to_string(s.width) + ", every size must be positive (and a side at most " +
        std::to_string(kMaxSide) + ")");
  }
  if (s.classes < 2 || s.classes > kMaxDim) {
    bad("a classifier needs 2 to " + std::to_string(kMaxDim) + " classes, not " +
        std::to_string(s.classes));
  }
  int h = s.height;
  int w = s.width;
  std::int64_t channels = s.channels;
  for (std::size_t i = 0; i < s.convs.size(); ++i) {
    const CnnConv& c = s.convs[i];
    const std::string name = "conv" + std::to_string(i + 1);
    if (c.out_channels <= 0 || c.out_channels > kMaxDim) {
      bad(name + " has " + std::to_string(c.out_channels) + " channels");
    }
    if (c.kernel <= 0 || c.kernel % 2 == 0 || c.kernel > kMaxSide) {
      bad(name + "'s kernel " + std::to_string(c.kernel) + " is not odd and at most " +
          std::to_string(kMaxSide) + " (\"same\" padding)");
    }
    if (channels * c.kernel * c.kernel > kMaxDim) {
      bad(name + "'s K = " + std::to_string(channels * c.kernel * c.kernel) + " exceeds " +
          std::to_string(kMaxDim));
    }
    channels = c.out_channels;
    if (c.pool) {
      if (h % 2 != 0 || w % 2 != 0) {
        bad(name + " pools a " + std::to_string(h) + " x " + std::to_string(w) +
            " map; a 2x2 pool needs even sides");
      }
      h /= 2;
      w /= 2;
    }
  }
  if (channels * h * w > kMaxDim) {
    bad("the flattened features " + std::to_string(channels * h * w) + " exceed " +
        std::to_string(kMaxDim));
  }
  for (const int width : s.hidden) {
    if (width <= 0 || width > kMaxDim) bad("a hidden layer has width " + std::to_string(width));
  }
}

// The trainable layers' shapes: [N_out x K] per convolution, then per Linear layer.
std::vector<std::pair<int, int>> layer_shapes(const CnnShape& s) {
  std::vector<std::pair<int, int>> shapes;
  for (std::size_t i = 0; i < s.convs.size(); ++i) {
    const FeatureMap in = conv_input_map(s, i);
    shapes.emplace_back(s.convs[i].out_channels, in.channels * s.convs[i].kernel * s.convs[i].kernel);
  }
  int k = flattened_features(s);
  for (const int width : s.hidden) {
    shapes.emplace_back(width, k);
    k = width;
  }
  shapes.emplace_back(s.classes, k);
  return shapes;
}

void check_input(const Cnn& model, const MatrixF& x) {
  const int features = model.shape.channels * model.shape.height * model.shape.width;
  if (x.cols() != features) {
    throw std::invalid_argument("cnn: input has " + std::to_string(x.cols()) +
                                " features, the network reads " + std::to_string(features));
  }
}

void check_batch(const Cnn& model, const MatrixF& x, const std::vector<std::uint8_t>& labels) {
  check_input(model, x);
  if (static_cast<std::size_t>(x.rows()) != labels.size()) {
    throw std::invalid_argument("cnn: " + std::to_string(x.rows()) + " rows but " +
                                std::to_string(labels.size()) + " labels");
  }
  for (std::size_t i = 0; i < labels.size(); ++i) {
    if (labels[i] >= model.shape.classes) {
      throw std::invalid_argument("cnn: label " + std::to_string(labels[i]) + " of row " +
                                  std::to_string(i) + " is not below the " +
                                  std::to_string(model.shape.classes) + " classes");
    }
  }
}

// Feature maps are held as [batch*H*W x C] (NHWC: one row per pixel), the layout a convolution's
// GEMM produces.

Eigen::Index pixel_row(Eigen::Index b, int y, int x, const FeatureMap& m) {
  return (b * m.height + y) * m.width + x;
}

MatrixF nchw_to_rows(const MatrixF& x, const FeatureMap& m) {
  MatrixF a(x.rows() * m.height * m.width, m.channels);
  for (Eigen::Index b = 0; b < x.rows(); ++b) {
    for (int c = 0; c < m.channels; ++c) {
      for (int y = 0; y < m.height; ++y) {
        for (int xx = 0; xx < m.width; ++xx) {
          a(pixel_row(b, y, xx, m), c) = x(b, (c * m.height + y) * m.width + xx);
        }
      }
    }
  }
  return a;
}

// The inverse of nchw_to_rows: ONNX's Flatten of an NCHW tensor.
MatrixF rows_to_nchw(const MatrixF& a, Eigen::Index batch, const FeatureMap& m) {
  MatrixF x(batch, m.size());
  for (Eigen::Index b = 0; b < batch; ++b) {
    for (int c = 0; c < m.channels; ++c) {
      for (int y = 0; y < m.height; ++y) {
        for (int xx = 0; xx < m.width; ++xx) {
          x(b, (c * m.height + y) * m.width + xx) = a(pixel_row(b, y, xx, m), c);
        }
      }
    }
  }
  return x;
}

// Calls visit(r, src, col0) for every output pixel r of a k x k "same" window over map m and every
// tap of its window inside the map: src is the pixel the tap reads, col0 the im2col column of
// channel 0 at that tap (channel c is col0 + c * k * k: ONNX's weight order (c, ky, kx)).
template <typename Visit>
void for_each_tap(Eigen::Index batch, const FeatureMap& m, int k, Visit&& visit) {
  const int pad = k / 2;
  for (Eigen::Index b = 0; b < batch; ++b) {
    for (int y = 0; y < m.height; ++y) {
      for (int x = 0; x < m.width; ++x) {
        for (int ky = 0; ky < k; ++ky) {
          const int yy = y + ky - pad;
          if (yy < 0 || yy >= m.height) continue;
          for (int kx = 0; kx < k; ++kx) {
            const int xx = x + kx - pad;
            if (xx < 0 || xx >= m.width) continue;
            visit(pixel_row(b, y, x, m), pixel_row(b, yy, xx, m), ky * k + kx);
          }
        }
      }
    }
  }
}

// One row per output pixel, K = C*k*k columns; zeros where the window leaves the map.
MatrixF im2col(const MatrixF& a, Eigen::Index batch, const FeatureMap& m, int k) {
  MatrixF col = MatrixF::Zero(a.rows(), m.channels * k * k);
  for_each_tap(batch, m, k, [&](Eigen::Index r, Eigen::Index src, int col0) {
    for (int c = 0; c < m.channels; ++c) col(r, col0 + c * k * k) = a(src, c);
  });
  return col;
}

// The adjoint of im2col: every column entry's gradient added back to the pixel it was read from.
MatrixF col2im(const MatrixF& dcol, Eigen::Index batch, const FeatureMap& m, int k) {
  MatrixF da = MatrixF::Zero(dcol.rows(), m.channels);
  for_each_tap(batch, m, k, [&](Eigen::Index r, Eigen::Index src, int col0) {
    for (int c = 0; c < m.channels; ++c) da(src, c) += dcol(r, col0 + c * k * k);
  });
  return da;
}

// 2x2 max pool, stride 2; argmax[i] is the input row of pooled element i (row-major over
// [batch*h*w x C]); the first of equal values wins.
MatrixF max_pool(const MatrixF& a, Eigen::Index batch, const FeatureMap& m,
                 std::vector<Eigen::Index>* argmax) {
  const FeatureMap out{m.channels, m.height / 2, m.width / 2};
  MatrixF p(batch * out.height * out.width, m.channels);
  if (argmax != nullptr) argmax->resize(static_cast<std::size_t>(p.size()));
  for (Eigen::Index b = 0; b < batch; ++b) {
    for (int y = 0; y < out.height; ++y) {
      for (int x = 0; x < out.width; ++x) {
        const Eigen::Index r = pixel_row(b, y, x, out);
        for (int c = 0; c < m.channels; ++c) {
          Eigen::Index best = pixel_row(b, 2 * y, 2 * x, m);
          for (const auto& [dy, dx] : {std::pair{0, 1}, std::pair{1, 0}, std::pair{1, 1}}) {
            const Eigen::Index cand = pixel_row(b, 2 * y + dy, 2 * x + dx, m);
            if (a(cand, c) > a(best, c)) best = cand;
          }
          p(r, c) = a(best, c);
          if (argmax != nullptr) (*argmax)[static_cast<std::size_t>(r * m.channels + c)] = best;
        }
      }
    }
  }
  return p;
}

// What a convolution block keeps for the backward pass.
struct BlockTrace {
  MatrixF col;                        // im2col of the block's input
  MatrixF act;                        // after the ReLU, [batch*H*W x C_out]
  std::vector<Eigen::Index> argmax;   // of the pool, if it pools
};

// The features the classifier reads, [batch x C*h*w] in NCHW order; with traces, what the
// backward pass needs of every block; with block_inputs, the map every block reads.
MatrixF conv_features(const Cnn& model, const MatrixF& x, std::vector<BlockTrace>* traces,
                      std::vector<MatrixF>* block_inputs = nullptr) {
  const CnnShape& s = model.shape;
  const Eigen::Index batch = x.rows();
  MatrixF a = nchw_to_rows(x, conv_input_map(s, 0));
  if (traces != nullptr) traces->resize(s.convs.size());
  for (std::size_t i = 0; i < s.convs.size(); ++i) {
    const FeatureMap in = conv_input_map(s, i);
    const MlpLayer& l = model.params.layers[i];
    if (block_inputs != nullptr) block_inputs->push_back(a);
    MatrixF col = im2col(a, batch, in, s.convs[i].kernel);
    MatrixF act = col * l.w.transpose();
    act.rowwise() += l.b.transpose();
    act = act.cwiseMax(0.0f);
    const FeatureMap out_map{s.convs[i].out_channels, in.height, in.width};
    std::vector<Eigen::Index>* argmax = traces != nullptr ? &(*traces)[i].argmax : nullptr;
    a = s.convs[i].pool ? max_pool(act, batch, out_map, argmax) : act;
    if (traces != nullptr) {
      (*traces)[i].col = std::move(col);
      (*traces)[i].act = std::move(act);
    }
  }
  return rows_to_nchw(a, batch, conv_input_map(s, s.convs.size()));
}

}  // namespace

FeatureMap conv_input_map(const CnnShape& s, std::size_t conv) {
  FeatureMap m{s.channels, s.height, s.width};
  for (std::size_t i = 0; i < conv && i < s.convs.size(); ++i) {
    m.channels = s.convs[i].out_channels;
    if (s.convs[i].pool) {
      m.height /= 2;
      m.width /= 2;
    }
  }
  return m;
}

int flattened_features(const CnnShape& s) { return conv_input_map(s, s.convs.size()).size(); }

Cnn make_cnn(const CnnShape& shape, std::uint64_t seed) {
  validate_shape(shape);
  Cnn m;
  m.shape = shape;
  std::mt19937_64 rng(seed);
  for (const auto& [n_out, k] : layer_shapes(shape)) {
    m.params.layers.push_back(make_he_uniform_layer(n_out, k, rng));
  }
  return m;
}

std::string cnn_layer_name(const Cnn& model, std::size_t i) {
  if (i < model.conv_count()) return "conv" + std::to_string(i + 1);
  return "fc" + std::to_string(i - model.conv_count() + 1);
}

MatrixF cnn_forward(const Cnn& model, const MatrixF& x) {
  check_input(model, x);
  std::vector<MatrixF> acts;
  dense_stack_forward(model.params, model.conv_count(), conv_features(model, x, nullptr), acts);
  return std::move(acts.back());
}

std::vector<float> calibrate_cnn_input_scales(const Cnn& model, const MatrixF& calibration,
                                              double percentile) {
  check_input(model, calibration);
  if (calibration.rows() == 0) throw std::invalid_argument("calibration: no calibration rows");
  std::vector<MatrixF> inputs;
  const MatrixF features = conv_features(model, calibration, nullptr, &inputs);
  std::vector<MatrixF> acts;
  dense_stack_forward(model.params, model.conv_count(), features, acts);
  acts.pop_back();  // the logits: no layer reads them
  std::vector<float> scales;
  for (const MatrixF& a : inputs) scales.push_back(calibrated_scale(a, percentile));
  for (const MatrixF& a : acts) scales.push_back(calibrated_scale(a, percentile));
  return scales;
}

double cnn_loss(const Cnn& model, const MatrixF& x, const std::vector<std::uint8_t>& labels,
                MlpGradients* grads) {
  check_batch(model, x, labels);
  const CnnShape& s = model.shape;
  std::vector<BlockTrace> traces;
  std::vector<MatrixF> acts;
  dense_stack_forward(model.params, model.conv_count(),
                      conv_features(model, x, grads != nullptr ? &traces : nullptr), acts);
  const double loss = softmax_cross_entropy(acts.back(), labels, grads != nullptr);
  if (grads == nullptr) return loss;

  grads->dw.resize(model.params.layers.size());
  grads->db.resize(model.params.layers.size());
  MatrixF dz = std::move(acts.back());
  const bool has_convs = model.conv_count() > 0;
  const MatrixF dfeatures =
      dense_stack_backward(model.params, model.conv_count(), acts, std::move(dz), *grads, has_convs);
  if (!has_convs) return loss;

  const Eigen::Index batch = x.rows();
  // The gradient with respect to the last block's output, back in rows.
  MatrixF dout = nchw_to_rows(dfeatures, conv_input_map(s, model.conv_count()));
  for (std::size_t i = model.conv_count(); i-- > 0;) {
    const FeatureMap in = conv_input_map(s, i);
    BlockTrace& t = traces[i];
    MatrixF dact;
    if (s.convs[i].pool) {
      dact = MatrixF::Zero(t.act.rows(), t.act.cols());
      for (Eigen::Index j = 0; j < dout.size(); ++j) {
        const Eigen::Index c = j % dout.cols();
        dact(t.argmax[static_cast<std::size_t>(j)], c) += dout.data()[j];
      }
    } else {
      dact = std::move(dout);
    }
    // ReLU: act > 0 exactly where the pre-activation was positive.
    const MatrixF dpre = (t.act.array() > 0.0f).select(dact, 0.0f);
    grads->dw[i].noalias() = dpre.transpose() * t.col;
    grads->db[i] = dpre.colwise().sum().transpose();
    if (i == 0) break;
    const MatrixF dcol = dpre * model.params.layers[i].w;
    dout = col2im(dcol, batch, in, s.convs[i].kernel);
  }
  return loss;
}

std::vector<std::uint8_t> cnn_predict(const Cnn& model, const MatrixF& x, int batch_size) {
  check_input(model, x);
  return predict_in_batches(x, batch_size,
                            [&](const MatrixF& rows) { return cnn_forward(model, rows); });
}

double evaluate_cnn_accuracy(const Cnn& model, const MatrixF& x,
                             const std::vector<std::uint8_t>& labels, int batch_size) {
  check_batch(model, x, labels);
  return fraction_correct(cnn_predict(model, x, batch_size), labels);
}

TrainOptions cnn_train_options(const Cnn& model, TrainOptions options) {
  const Cnn* m = &model;
  options.loss = [m](const Mlp& params, const MatrixF& x, const std::vector<std::uint8_t>& labels,
                     MlpGradients* grads) {
    if (&params != &m->params) {
      throw std::invalid_argument("cnn_train_options: trained layers are not the CNN's params");
    }
    return cnn_loss(*m, x, labels, grads);
  };
  return options;
}

std::vector<bool> prunable_layers(const Cnn& model, NmPattern pattern) {
  pattern.validate();
  std::vector<bool> selected;
  for (const MlpLayer& l : model.params.layers) selected.push_back(l.w.cols() % pattern.m == 0);
  return selected;
}

void save_cnn(const Cnn& model, const std::string& path) {
  const CnnShape& s = model.shape;
  std::vector<std::uint32_t> header{static_cast<std::uint32_t>(s.channels),
                                    static_cast<std::uint32_t>(s.height),
                                    static_cast<std::uint32_t>(s.width),
                                    static_cast<std::uint32_t>(s.classes),
                                    static_cast<std::uint32_t>(s.convs.size())};
  for (const CnnConv& c : s.convs) {
    header.push_back(static_cast<std::uint32_t>(c.out_channels));
    header.push_back(static_cast<std::uint32_t>(c.kernel));
    header.push_back(c.pool ? 1u : 0u);
  }
  header.push_back(static_cast<std::uint32_t>(s.hidden.size()));
  for (const int width : s.hidden) header.push_back(static_cast<std::uint32_t>(width));
  write_file_atomically(path, model_file_bytes(kCnnMagic, kCnnVersion, header, model.params));
}

Cnn load_cnn(const std::string& path) {
  ModelFileReader r(path, kCnnMagic, kCnnVersion, "CNN");
  constexpr std::uint32_t kMaxCount = 64;
  auto small = [&r](std::uint32_t v, const char* what) {
    if (v > static_cast<std::uint32_t>(kMaxSide) * kMaxSide) {
      r.fail(std::string("implausible ") + what + " " + std::to_string(v));
    }
    return static_cast<int>(v);
  };
  Cnn m;
  CnnShape& s = m.shape;
  s.channels = small(r.u32("the shape"), "channel count");
  s.height = small(r.u32("the shape"), "height");
  s.width = small(r.u32("the shape"), "width");
  s.classes = small(r.u32("the shape"), "class count");
  const std::uint32_t convs = r.u32("the shape");
  if (convs > kMaxCount) r.fail("implausible convolution count " + std::to_string(convs));
  for (std::uint32_t i = 0; i < convs; ++i) {
    CnnConv c;
    c.out_channels = small(r.u32("a convolution"), "channel count");
    c.kernel = small(r.u32("a convolution"), "kernel");
    const std::uint32_t pool = r.u32("a convolution");
    if (pool > 1) r.fail("pool flag " + std::to_string(pool) + " is not 0 or 1");
    c.pool = pool == 1;
    s.convs.push_back(c);
  }
  const std::uint32_t hidden = r.u32("the shape");
  if (hidden > kMaxCount) r.fail("implausible hidden layer count " + std::to_string(hidden));
  for (std::uint32_t i = 0; i < hidden; ++i) s.hidden.push_back(small(r.u32("the shape"), "width"));
  try {
    validate_shape(s);
  } catch (const std::invalid_argument& e) {
    r.fail(e.what());
  }
  m.params = r.layers(/*chained=*/false);
  r.expect_end();
  const auto shapes = layer_shapes(s);
  if (shapes.size() != m.params.layers.size()) {
    r.fail("the shape has " + std::to_string(shapes.size()) + " layers, the file " +
           std::to_string(m.params.layers.size()));
  }
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    const MlpLayer& l = m.params.layers[i];
    if (l.w.rows() != shapes[i].first || l.w.cols() != shapes[i].second) {
      r.fail(cnn_layer_name(m, i) + " is " + std::to_string(l.w.rows()) + " x " +
             std::to_string(l.w.cols()) + ", the shape needs " + std::to_string(shapes[i].first) +
             " x " + std::to_string(shapes[i].second));
    }
  }
  return m;
}

}  // namespace nmsa
