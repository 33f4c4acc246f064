// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
#include "nmsa/onnx_export.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <sstream>
#include <stdexcept>

// Debian's libonnx-dev ships only the ONNX_ML flavour of the generated classes (onnx-ml.pb.h);
// its CMake targets define ONNX_ML and ONNX_NAMESPACE=onnx for us.
#include <onnx/onnx_pb.h>

#include "nmsa/file_io.hpp"
#include "nmsa/quant.hpp"

namespace nmsa {

namespace {

// IR version 7 is the one of ONNX 1.8, which introduced opset 13: the oldest runtime that knows
// the operators also reads the file.
constexpr std::int64_t IR_VERSION = 7;
constexpr std::int64_t OPSET = 13;
constexpr const char* INPUT_NAME = "input";
constexpr const char* OUTPUT_NAME = "logits";
constexpr const char* BATCH_DIM = "batch";

std::string shape_str(Eigen::Index rows, Eigen::Index cols) {
  return "[" + std::to_string(rows) + " x " + std::to_string(cols) + "]";
}

// The first non-finite value of a row-major [rows x cols] block, as "[r][c] is nan" ("[r] is nan"
// for a vector), or "" when all are finite.
std::string first_non_finite(const float* v, Eigen::Index rows, Eigen::Index cols, bool vector) {
  for (Eigen::Index r = 0; r < rows; ++r) {
    for (Eigen::Index c = 0; c < cols; ++c) {
      const float x = v[r * cols + c];
      if (!std::isfinite(x)) {
        std::ostringstream s;
        s << "[" << r << "]";
        if (!vector) s << "[" << c << "]";
        s << " is " << x;
        return s.str();
      }
    }
  }
  return "";
}

// Everything an ONNX runtime (and nmsa's) would otherwise reject later, or worse, run: a NaN
// weight gives NaN logits with no hint of where it came from.
void validate(const Mlp& model, const std::string& graph_name, const std::string& what) {
  auto bad = [&](const std::string& why) { throw std::invalid_argument(what + ": " + why); };
  if (model.layers.empty()) bad("the model has no layers");
  if (graph_name.empty()) bad("the graph name is empty (ONNX requires one)");
  for (std::size_t i = 0; i < model.layers.size(); ++i) {
    const MlpLayer& l = model.layers[i];
    const std::string name = mlp_layer_name(i);
    if (l.w.rows() == 0 || l.w.cols() == 0) {
      bad(name + ".weight is empty, " + shape_str(l.w.rows(), l.w.cols()));
    }
    if (i > 0 && l.w.cols() != model.layers[i - 1].w.rows()) {
      bad(name + ".weight is " + shape_str(l.w.rows(), l.w.cols()) +
          ": its K = " + std::to_string(l.w.cols()) + " is not " + mlp_layer_name(i - 1) +
          "'s N_out = " + std::to_string(model.layers[i - 1].w.rows()));
    }
    if (l.b.size() != l.w.rows()) {
      bad(name + ".bias has " + std::to_string(l.b.size()) + " values, " + name + ".weight " +
          shape_str(l.w.rows(), l.w.cols()) + " needs N_out = " + std::to_string(l.w.rows()));
    }
    const std::string where =
        " (layer " + std::to_string(i + 1) + " of " + std::to_string(model.layers.size()) + ")";
    const std::string w_bad = first_non_finite(l.w.data(), l.w.rows(), l.w.cols(), false);
    if (!w_bad.empty()) bad(name + ".weight" + w_bad + where);
    const std::string b_bad = first_non_finite(l.b.data(), l.b.size(), 1, true);
    if (!b_bad.empty()) bad(name + ".bias" + b_bad + where);
  }
}

std::string default_doc(const Mlp& model) {
  std::ostringstream s;
  s << "nmsa MLP";
  const std::vector<int> sizes = model.sizes();
  for (std::size_t i = 0; i < sizes.size(); ++i) s << (i == 0 ? " " : "-") << sizes[i];
  Eigen::Index weights = 0, zeros = 0;
  for (const MlpLayer& l : model.layers) {
    weights += l.w.size();
    zeros += (l.w.array() == 0.0f).count();
  }
  s << ": " << model.layers.size() << " fully connected layers (Gemm with transB = 1, weights "
    << "[N_out x K]) with ReLU between them, logits out; " << zeros << " of " << weights
    << " weights are zero";
  return s.str();
}

// Little-endian whatever the host's byte order: onnx.proto fixes raw_data's byte order.
void put_floats_le(std::string& out, const float* v, std::size_t n) {
  out.reserve(out.size() + 4 * n);
  for (std::size_t i = 0; i < n; ++i) {
    std::uint32_t bits = 0;
    std::memcpy(&bits, &v[i], 4);
    for (int b = 0; b < 4; ++b) out.push_back(static_cast<char>((bits >> (8 * b)) & 0xff));
  }
}

void add_initializer(onnx::GraphProto& g, const std::string& name,
                     const std::vector<std::int64_t>& dims, const float* v, std::size_t n) {
  onnx::TensorProto* t = g.add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  for (const std::int64_t d : dims) t->add_dims(d);
  put_floats_le(*t->mutable_raw_data(), v, n);
}

void add_int8_initializer(onnx::GraphProto& g, const std::string& name,
                          const std::vector<std::int64_t>& dims, const std::int8_t* v,
                          std::size_t n) {
  onnx::TensorProto* t = g.add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT8);
  for (const std::int64_t d : dims) t->add_dims(d);
  t->mutable_raw_data()->assign(reinterpret_cast<const char*>(v), n);
}

onnx::NodeProto* add_node(onnx::GraphProto& g, const std::string& op, const std::string& name,
                          const std::vector<std::string>& inputs, const std::string& output) {
  onnx::NodeProto* node = g.add_node();
  node->set_op_type(op);
  node->set_name(name);
  for (const std::string& in : inputs) node->add_input(in);
  node->add_output(output);
  return node;
}

void add_int_attribute(onnx::NodeProto& node, const std::string& name, std::int64_t value) {
  onnx::AttributeProto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(value);
}

void add_ints_attribute(onnx::NodeProto& node, const std::string& name,
                        const std::vector<std::int64_t>& values) {
  onnx::AttributeProto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (const std::int64_t v : values) a->add_ints(v);
}

// A float [batch x features] value: the graph's input and output.
void set_batch_value(onnx::ValueInfoProto& v, const std::string& name, std::int64_t features) {
  v.set_name(name);
  onnx::TypeProto_Tensor* tt = v.mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  tt->mutable_shape()->add_dim()->set_dim_param(BATCH_DIM);
  tt->mutable_shape()->add_dim()->set_dim_value(features);
}

onnx::ModelProto new_model(const std::string& graph_name, const std::string& doc,
                           std::int64_t inputs, std::int64_t outputs) {
  onnx::ModelProto m;
  m.set_ir_version(IR_VERSION);
  m.set_producer_name(ONNX_PRODUCER_NAME);
  m.set_producer_version(ONNX_PRODUCER_VERSION);
  onnx::OperatorSetIdProto* op = m.add_opset_import();
  op->set_domain("");
  op->set_version(OPSET);
  onnx::GraphProto& g = *m.mutable_graph();
  g.set_name(graph_name);
  g.set_doc_string(doc);
  set_batch_value(*g.add_input(), INPUT_NAME, inputs);
  set_batch_value(*g.add_output(), OUTPUT_NAME, outputs);
  return m;
}

std::string to_bytes(const onnx::ModelProto& m, const std::string& what) {
  // protobuf refuses to write or read a message of 2 GiB or more.
  if (m.ByteSizeLong() > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
    throw std::invalid_argument(what + ": the model needs " + std::to_string(m.ByteSizeLong()) +
                                " bytes, more than a protobuf can hold (2 GiB)");
  }
  std::string bytes;
  if (!m.SerializeToString(&bytes)) {
    throw std::runtime_error(what + ": protobuf could not serialize the ModelProto");
  }
  return bytes;
}

std::string serialize(const Mlp& model, const std::string& graph_name, const std::string& doc,
                      const std::string& what) {
  validate(model, graph_name, what);
  onnx::ModelProto m = new_model(graph_name, doc.empty() ? default_doc(model) : doc,
                                 model.layers.front().w.cols(), model.layers.back().w.rows());
  onnx::GraphProto& g = *m.mutable_graph();

  std::string x = INPUT_NAME;
  for (std::size_t i = 0; i < model.layers.size(); ++i) {
    const MlpLayer& l = model.layers[i];
    const std::string name = mlp_layer_name(i);
    const bool last = i + 1 == model.layers.size();
    // Row-major [N_out x K] is the order ONNX stores a [N_out x K] tensor in.
    add_initializer(g, name + ".weight", {l.w.rows(), l.w.cols()}, l.w.data(),
                    static_cast<std::size_t>(l.w.size()));
    add_initializer(g, name + ".bias", {l.b.size()}, l.b.data(),
                    static_cast<std::size_t>(l.b.size()));

    const std::string y = last ? std::string(OUTPUT_NAME) : name + ".out";
    add_int_attribute(*add_node(g, "Gemm", name, {x, name + ".weight", name + ".bias"}, y),
                      "transB", 1);
    x = y;

    if (!last) {
      const std::string relu_name = "relu" + std::to_string(i + 1);
      add_node(g, "Relu", relu_name, {x}, relu_name + ".out");
      x = relu_name + ".out";
    }
  }
  return to_bytes(m, what);
}

// The checks of serialize(), for the quantized model: consistent shapes, finite values, scales
// an ONNX runtime accepts.
void validate(const Int8Mlp& model, const std::string& graph_name, const std::string& what) {
  auto bad = [&](const std::string& why) { throw std::invalid_argument(what + ": " + why); };
  if (model.layers.empty()) bad("the model has no layers");
  if (graph_name.empty()) bad("the graph name is empty (ONNX requires one)");
  for (std::size_t i = 0; i < model.layers.size(); ++i) {
    const Int8MlpLayer& l = model.layers[i];
    const auto n = static_cast<std::size_t>(l.weights.rows());
    if (l.weights.rows() == 0 || l.weights.cols() == 0) {
      bad(l.name + ": the weights are empty, " + shape_str(l.weights.rows(), l.weights.cols()));
    }
    if (i > 0 && l.weights.cols() != model.layers[i - 1].weights.rows()) {
      bad(l.name + ": K = " + std::to_string(l.weights.cols()) + " is not " +
          model.layers[i - 1].name + "'s N_out = " + std::to_string(model.layers[i - 1].weights.rows()));
    }
    if (l.weight_scales.size() != n || l.bias.size() != n) {
      bad(l.name + ": " + std::to_string(l.weight_scales.size()) + " weight scales and " +
          std::to_string(l.bias.size()) + " biases for " + std::to_string(n) + " channels");
    }
    if (!(l.input_scale > 0.0f) || !std::isfinite(l.input_scale)) {
      bad(l.name + ": input scale " + std::to_string(l.input_scale) + " is not finite and > 0");
    }
    for (std::size_t c = 0; c < n; ++c) {
      if (!(l.weight_scales[c] >= 0.0f) || !std::isfinite(l.weight_scales[c])) {
        bad(l.name + ": weight scale [" + std::to_string(c) + "] is not finite and >= 0");
      }
      if (!std::isfinite(l.bias[c])) bad(l.name + ": bias [" + std::to_string(c) + "] is not finite");
    }
    if (l.last != (i + 1 == model.layers.size())) bad(l.name + ": only the last layer is last");
  }
}

std::string serialize(const Int8Mlp& model, const std::string& graph_name, const std::string& doc,
                      const std::string& what) {
  validate(model, graph_name, what);
  const std::string description =
      doc.empty() ? "nmsa INT8 MLP in QDQ form: per layer DequantizeLinear of the int8 "
                    "activations and of the int8 weights (per output channel), Gemm with the "
                    "float bias, Relu and QuantizeLinear to the next layer's scale; float logits"
                  : doc;
  onnx::ModelProto m = new_model(graph_name, description, model.layers.front().weights.cols(),
                                 model.layers.back().weights.rows());
  onnx::GraphProto& g = *m.mutable_graph();

  // The float input, quantized with the first layer's scale.
  const std::string& first = model.layers.front().name;
  add_node(g, "QuantizeLinear", first + ".quantize_input",
           {INPUT_NAME, first + ".input_scale", first + ".input_zero_point"}, first + ".input_q");
  for (std::size_t i = 0; i < model.layers.size(); ++i) {
    const Int8MlpLayer& l = model.layers[i];
    const std::string& name = l.name;
    const std::int64_t n = l.weights.rows(), k = l.weights.cols();
    const std::int8_t zero = 0;
    const std::vector<std::int8_t> zeros(static_cast<std::size_t>(n), 0);
    add_initializer(g, name + ".input_scale", {}, &l.input_scale, 1);
    add_int8_initializer(g, name + ".input_zero_point", {}, &zero, 1);
    add_int8_initializer(g, name + ".weight_q", {n, k}, l.weights.data(),
                         static_cast<std::size_t>(l.weights.size()));
    add_initializer(g, name + ".weight_scale", {n}, l.weight_scales.data(), l.weight_scales.size());
    add_int8_initializer(g, name + ".weight_zero_point", {n}, zeros.data(), zeros.size());
    add_initializer(g, name + ".bias", {n}, l.bias.data(), l.bias.size());

    add_node(g, "DequantizeLinear", name + ".dequantize_input",
             {name + ".input_q", name + ".input_scale", name + ".input_zero_point"},
             name + ".input");
    add_int_attribute(*add_node(g, "DequantizeLinear", name + ".dequantize_weight",
                                {name + ".weight_q", name + ".weight_scale",
                                 name + ".weight_zero_point"},
                                name + ".weight"),
                      "axis", 0);
    const std::string y = l.last ? std::string(OUTPUT_NAME) : name + ".out";
    add_int_attribute(*add_node(g, "Gemm", name, {name + ".input", name + ".weight", name + ".bias"},
                                y),
                      "transB", 1);
    if (!l.last) {
      const std::string relu = "relu" + std::to_string(i + 1);
      const std::string& next = model.layers[i + 1].name;
      add_node(g, "Relu", relu, {y}, relu + ".out");
      add_node(g, "QuantizeLinear", next + ".quantize_input",
               {relu + ".out", next + ".input_scale", next + ".input_zero_point"},
               next + ".input_q");
    }
  }
  return to_bytes(m, what);
}

// The checks of serialize(Mlp) for a CNN: its layers' shapes follow from its shape, every value
// is finite.
void validate(const Cnn& model, const std::string& graph_name, const std::string& what) {
  auto bad = [&](const std::string& why) { throw std::invalid_argument(what + ": " + why); };
  if (graph_name.empty()) bad("the graph name is empty (ONNX requires one)");
  const CnnShape& s = model.shape;
  const std::size_t expected = s.convs.size() + s.hidden.size() + 1;
  if (model.params.layers.size() != expected) {
    bad("the shape has " + std::to_string(expected) + " trainable layers, the model " +
        std::to_string(model.params.layers.size()));
  }
  std::int64_t k = flattened_features(s);
  for (std::size_t i = 0; i < model.params.layers.size(); ++i) {
    const MlpLayer& l = model.params.layers[i];
    const std::string name = cnn_layer_name(model, i);
    std::int64_t want_rows = 0, want_cols = 0;
    if (i < s.convs.size()) {
      want_rows = s.convs[i].out_channels;
      want_cols = std::int64_t{conv_input_map(s, i).channels} * s.convs[i].kernel * s.convs[i].kernel;
    } else {
      const std::size_t fc = i - s.convs.size();
      want_rows = fc < s.hidden.size() ? s.hidden[fc] : s.classes;
      want_cols = k;
      k = want_rows;
    }
    if (l.w.rows() != want_rows || l.w.cols() != want_cols || l.b.size() != want_rows) {
      bad(name + ".weight is " + shape_str(l.w.rows(), l.w.cols()) + " with " +
          std::to_string(l.b.size()) + " biases, the shape needs " +
          shape_str(want_rows, want_cols));
    }
    const std::string w_bad = first_non_finite(l.w.data(), l.w.rows(), l.w.cols(), false);
    if (!w_bad.empty()) bad(name + ".weight" + w_bad);
    const std::string b_bad = first_non_finite(l.b.data(), l.b.size(), 1, true);
    if (!b_bad.empty()) bad(name + ".bias" + b_bad);
  }
}

// The input scales of a CNN in QDQ form: one per trainable layer, finite and positive.
void validate_scales(const Cnn& model, const std::vector<float>& scales, const std::string& what) {
  const std::size_t n = model.params.layers.size();
  if (scales.size() != n) {
    throw std::invalid_argument(what + ": " + std::to_string(scales.size()) + " input scales for " +
                                std::to_string(n) + " layers");
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (!(scales[i] > 0.0f) || !std::isfinite(scales[i])) {
      throw std::invalid_argument(what + ": " + cnn_layer_name(model, i) + "'s input scale " +
                                  std::to_string(scales[i]) + " is not finite and > 0");
    }
  }
}

// QuantizeLinear of x to layer `name`'s input scale (symmetric int8), with the initializers
// the layer's DequantizeLinear reads too. Returns the int8 tensor's name.
std::string add_quantize(onnx::GraphProto& g, const std::string& x, const std::string& name,
                         float scale) {
  const std::int8_t zero = 0;
  add_initializer(g, name + ".input_scale", {}, &scale, 1);
  add_int8_initializer(g, name + ".input_zero_point", {}, &zero, 1);
  add_node(g, "QuantizeLinear", name + ".quantize_input",
           {x, name + ".input_scale", name + ".input_zero_point"}, name + ".input_q");
  return name + ".input_q";
}

// Trainable layer i of a CNN as `op` (Conv or Gemm) reading x, writing y, its weight stored with
// `dims`. In FP32 form the weight is a float initializer; in QDQ form (quantized) x is the int8
// input at the layer's scale, dequantized first, and the weight int8 per output channel behind a
// DequantizeLinear (axis 0). The bias stays float, as ONNX's QDQ form keeps it.
onnx::NodeProto* add_cnn_layer(onnx::GraphProto& g, const Cnn& model, std::size_t i,
                               const std::string& op, const std::string& x,
                               const std::vector<std::int64_t>& dims, bool quantized,
                               const std::string& y) {
  const MlpLayer& l = model.params.layers[i];
  const std::string name = cnn_layer_name(model, i);
  add_initializer(g, name + ".bias", {l.b.size()}, l.b.data(), static_cast<std::size_t>(l.b.size()));
  if (!quantized) {
    add_initializer(g, name + ".weight", dims, l.w.data(), static_cast<std::size_t>(l.w.size()));
    return add_node(g, op, name, {x, name + ".weight", name + ".bias"}, y);
  }
  const QuantizedWeights q = quantize_weights_per_channel(l.w);
  const std::vector<std::int8_t> zeros(q.scales.size(), 0);
  add_int8_initializer(g, name + ".weight_q", dims, q.values.data(),
                       static_cast<std::size_t>(q.values.size()));
  add_initializer(g, name + ".weight_scale", {l.w.rows()}, q.scales.data(), q.scales.size());
  add_int8_initializer(g, name + ".weight_zero_point", {l.w.rows()}, zeros.data(), zeros.size());
  add_node(g, "DequantizeLinear", name + ".dequantize_input",
           {x, name + ".input_scale", name + ".input_zero_point"}, name + ".input");
  add_int_attribute(*add_node(g, "DequantizeLinear", name + ".dequantize_weight",
                              {name + ".weight_q", name + ".weight_scale",
                               name + ".weight_zero_point"},
                              name + ".weight"),
                    "axis", 0);
  return add_node(g, op, name, {name + ".input", name + ".weight", name + ".bias"}, y);
}

// The CNN in FP32 (scales null) or in QDQ form with these input scales.
std::string serialize(const Cnn& model, const std::vector<float>* scales,
                      const std::string& graph_name, const std::string& doc,
                      const std::string& what) {
  validate(model, graph_name, what);
  if (scales != nullptr) validate_scales(model, *scales, what);
  const bool quantized = scales != nullptr;
  const CnnShape& s = model.shape;
  const std::string description =
      !doc.empty() ? doc
      : quantized
          ? "nmsa INT8 CNN in QDQ form: the [batch x C*H*W] input reshaped to NCHW and quantized; "
            "per block DequantizeLinear of the int8 map and of the int8 weights [M, C, KH, KW] "
            "(per output channel), Conv (\"same\" padding) with the float bias, Relu, "
            "QuantizeLinear to the next layer's scale and a 2x2 MaxPool of the int8 map; Flatten; "
            "Gemm layers (transB = 1) alike; float logits"
          : "nmsa CNN: the [batch x C*H*W] input reshaped to NCHW; per block Conv (\"same\" "
            "padding, weights [M, C, KH, KW]), Relu and a 2x2 MaxPool; Flatten; Gemm "
            "layers (transB = 1) with Relu between them; logits out";
  onnx::ModelProto m = new_model(graph_name, description, std::int64_t{s.channels} * s.height * s.width,
                                 s.classes);
  onnx::GraphProto& g = *m.mutable_graph();
  const std::size_t layers = model.params.layers.size();
  // After layer i's Relu: in QDQ form, the quantizer of the next layer's input.
  auto after_relu = [&](std::size_t i, const std::string& relu_out) {
    return quantized ? add_quantize(g, relu_out, cnn_layer_name(model, i + 1), (*scales)[i + 1])
                     : relu_out;
  };

  // The images arrive as rows of pixels, as the MLP's do (the same .npy feeds both models).
  const std::vector<std::int64_t> nchw{-1, s.channels, s.height, s.width};
  {
    onnx::TensorProto* t = g.add_initializer();
    t->set_name("input_shape");
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_dims(4);
    for (const std::int64_t d : nchw) t->add_int64_data(d);
  }
  std::string x = "input_nchw";
  add_node(g, "Reshape", "reshape_input", {INPUT_NAME, "input_shape"}, x);
  if (quantized) x = add_quantize(g, x, cnn_layer_name(model, 0), scales->front());
  for (std::size_t i = 0; i < s.convs.size(); ++i) {
    const MlpLayer& l = model.params.layers[i];
    const std::string name = cnn_layer_name(model, i);
    const std::int64_t kernel = s.convs[i].kernel;
    const std::int64_t c_in = conv_input_map(s, i).channels;
    // [M x C*KH*KW] row-major is [M, C, KH, KW] in ONNX's order.
    onnx::NodeProto* conv = add_cnn_layer(g, model, i, "Conv", x, {l.w.rows(), c_in, kernel, kernel},
                                          quantized, name + ".out");
    add_ints_attribute(*conv, "kernel_shape", {kernel, kernel});
    const std::int64_t pad = kernel / 2;
    add_ints_attribute(*conv, "pads", {pad, pad, pad, pad});
    add_node(g, "Relu", name + ".relu", {name + ".out"}, name + ".relu.out");
    x = after_relu(i, name + ".relu.out");
    if (s.convs[i].pool) {
      onnx::NodeProto* pool = add_node(g, "MaxPool", name + ".pool", {x}, name + ".pool.out");
      add_ints_attribute(*pool, "kernel_shape", {2, 2});
      add_ints_attribute(*pool, "strides", {2, 2});
      x = name + ".pool.out";
    }
  }
  add_int_attribute(*add_node(g, "Flatten", "flatten", {x}, "flatten.out"), "axis", 1);
  x = "flatten.out";
  for (std::size_t i = s.convs.size(); i < layers; ++i) {
    const MlpLayer& l = model.params.layers[i];
    const std::string name = cnn_layer_name(model, i);
    const bool last = i + 1 == layers;
    const std::string y = last ? std::string(OUTPUT_NAME) : name + ".out";
    add_int_attribute(
        *add_cnn_layer(g, model, i, "Gemm", x, {l.w.rows(), l.w.cols()}, quantized, y), "transB",
        1);
    x = y;
    if (!last) {
      add_node(g, "Relu", name + ".relu", {x}, name + ".relu.out");
      x = after_relu(i, name + ".relu.out");
    }
  }
  return to_bytes(m, what);
}

}  // namespace

std::string serialize_int8_mlp_onnx(const Int8Mlp& model, const std::string& graph_name,
                                    const std::string& doc) {
  return serialize(model, graph_name, doc, "serialize_int8_mlp_onnx");
}

void export_int8_mlp_onnx(const Int8Mlp& model, const std::string& path,
                          const std::string& graph_name, const std::string& doc) {
  write_file_atomically(path,
                        serialize(model, graph_name, doc, path + ": cannot export the INT8 MLP"));
}

std::string serialize_cnn_onnx(const Cnn& model, const std::string& graph_name,
                               const std::string& doc) {
  return serialize(model, nullptr, graph_name, doc, "serialize_cnn_onnx");
}

void export_cnn_onnx(const Cnn& model, const std::string& path, const std::string& graph_name,
                     const std::string& doc) {
  write_file_atomically(path,
                        serialize(model, nullptr, graph_name, doc, path + ": cannot export the CNN"));
}

std::string serialize_int8_cnn_onnx(const Cnn& model, const std::vector<float>& input_scales,
                                    const std::string& graph_name, const std::string& doc) {
  return serialize(model, &input_scales, graph_name, doc, "serialize_int8_cnn_onnx");
}

void export_int8_cnn_onnx(const Cnn& model, const std::vector<float>& input_scales,
                          const std::string& path, const std::string& graph_name,
                          const std::string& doc) {
  write_file_atomically(path, serialize(model, &input_scales, graph_name, doc,
                                        path + ": cannot export the INT8 CNN"));
}

std::string serialize_mlp_onnx(const Mlp& model, const std::string& graph_name,
                               const std::string& doc) {
  return serialize(model, graph_name, doc, "serialize_mlp_onnx");
}

void export_mlp_onnx(const Mlp& model, const std::string& path, const std::string& graph_name,
                     const std::string& doc) {
  const std::string bytes = serialize(model, graph_name, doc, path + ": cannot export the MLP");
  write_file_atomically(path, bytes);
}

}  // namespace nmsa
