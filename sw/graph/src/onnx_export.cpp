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

// A float [batch x features] value: the graph's input and output.
void set_batch_value(onnx::ValueInfoProto& v, const std::string& name, std::int64_t features) {
  v.set_name(name);
  onnx::TypeProto_Tensor* tt = v.mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  tt->mutable_shape()->add_dim()->set_dim_param(BATCH_DIM);
  tt->mutable_shape()->add_dim()->set_dim_value(features);
}

std::string serialize(const Mlp& model, const std::string& graph_name, const std::string& doc,
                      const std::string& what) {
  validate(model, graph_name, what);
  onnx::ModelProto m;
  m.set_ir_version(IR_VERSION);
  m.set_producer_name(ONNX_PRODUCER_NAME);
  m.set_producer_version(ONNX_PRODUCER_VERSION);
  onnx::OperatorSetIdProto* op = m.add_opset_import();
  op->set_domain("");
  op->set_version(OPSET);

  onnx::GraphProto& g = *m.mutable_graph();
  g.set_name(graph_name);
  g.set_doc_string(doc.empty() ? default_doc(model) : doc);
  set_batch_value(*g.add_input(), INPUT_NAME, model.layers.front().w.cols());
  set_batch_value(*g.add_output(), OUTPUT_NAME, model.layers.back().w.rows());

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

    onnx::NodeProto* gemm = g.add_node();
    gemm->set_op_type("Gemm");
    gemm->set_name(name);
    gemm->add_input(x);
    gemm->add_input(name + ".weight");
    gemm->add_input(name + ".bias");
    const std::string y = last ? std::string(OUTPUT_NAME) : name + ".out";
    gemm->add_output(y);
    onnx::AttributeProto* trans_b = gemm->add_attribute();
    trans_b->set_name("transB");
    trans_b->set_type(onnx::AttributeProto::INT);
    trans_b->set_i(1);
    x = y;

    if (!last) {
      const std::string relu_name = "relu" + std::to_string(i + 1);
      onnx::NodeProto* relu = g.add_node();
      relu->set_op_type("Relu");
      relu->set_name(relu_name);
      relu->add_input(x);
      x = relu_name + ".out";
      relu->add_output(x);
    }
  }

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

}  // namespace

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
