// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// What the ONNX tests share (test_onnx_node.cpp, test_onnx_loader.cpp, test_runtime.cpp): small
// ONNX models built in code, random float tensors, a 2:4 float weight, a float reference GEMM,
// the float device path's worst-case error, and the message of the std::runtime_error a call
// throws.
#pragma once

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "nmsa/onnx_model.hpp"
#include "nmsa/types.hpp"

namespace nmsa::testing {

inline onnx::TensorProto tensor_proto(const std::string& name, const Tensor& t) {
  onnx::TensorProto p;
  p.set_name(name);
  for (const std::int64_t d : t.shape) p.add_dims(d);
  switch (t.type) {
    case ElementType::FLOAT:
      p.set_data_type(onnx::TensorProto::FLOAT);
      break;
    case ElementType::UINT8:
      p.set_data_type(onnx::TensorProto::UINT8);
      break;
    case ElementType::INT8:
      p.set_data_type(onnx::TensorProto::INT8);
      break;
    case ElementType::INT32:
      p.set_data_type(onnx::TensorProto::INT32);
      break;
    case ElementType::INT64:
      p.set_data_type(onnx::TensorProto::INT64);
      break;
    default:
      throw std::invalid_argument("tensor_proto: type not used by the tests");
  }
  if (t.is_float()) {
    for (const float v : t.floats) p.add_float_data(v);
  } else if (t.type == ElementType::INT64) {
    for (const std::int64_t v : t.ints) p.add_int64_data(v);
  } else {
    for (const std::int64_t v : t.ints) p.add_int32_data(static_cast<std::int32_t>(v));
  }
  return p;
}

class ModelBuilder {
 public:
  ModelBuilder() {
    model_.set_ir_version(8);
    auto* op = model_.add_opset_import();
    op->set_domain("");
    op->set_version(13);
    model_.mutable_graph()->set_name("test");
  }
  ModelBuilder& input(const std::string& name, int elem_type,
                      const std::vector<std::int64_t>& dims) {
    auto* v = model_.mutable_graph()->add_input();
    v->set_name(name);
    auto* tt = v->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(elem_type);
    for (const std::int64_t d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
    return *this;
  }
  ModelBuilder& output(const std::string& name) {
    model_.mutable_graph()->add_output()->set_name(name);
    return *this;
  }
  ModelBuilder& constant(const std::string& name, const Tensor& t) {
    *model_.mutable_graph()->add_initializer() = tensor_proto(name, t);
    return *this;
  }
  onnx::NodeProto* node(const std::string& op, const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs, const std::string& name) {
    auto* n = model_.mutable_graph()->add_node();
    n->set_op_type(op);
    n->set_name(name);
    for (const auto& i : inputs) n->add_input(i);
    for (const auto& o : outputs) n->add_output(o);
    return n;
  }
  static void attr_int(onnx::NodeProto* n, const std::string& name, std::int64_t v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  static void attr_ints(onnx::NodeProto* n, const std::string& name,
                        const std::vector<std::int64_t>& v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (const std::int64_t x : v) a->add_ints(x);
  }
  std::string bytes() const { return model_.SerializeAsString(); }
  Graph graph(const std::string& source = "test model") const {
    return parse_onnx_model(bytes(), source);
  }
  onnx::ModelProto& proto() { return model_; }

 private:
  onnx::ModelProto model_;
};

inline std::string write_temp(const std::string& name, const std::string& bytes) {
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "nmsa_onnx";
  std::filesystem::create_directories(dir);
  const std::string path = (dir / name).string();
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

template <typename F>
inline std::string error_of(F f) {
  try {
    f();
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "(no std::runtime_error)";
}

inline Tensor random_float(const std::vector<std::int64_t>& shape, std::mt19937_64& rng) {
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  Tensor t = Tensor::zeros(ElementType::FLOAT, shape);
  for (float& v : t.floats) v = d(rng);
  return t;
}

// A float weight [K x N] whose columns (output channels) are 2:4 along K.
inline Tensor sparse_weight_kn(std::int64_t k, std::int64_t n, std::mt19937_64& rng) {
  Tensor w = random_float({k, n}, rng);
  for (std::int64_t j = 0; j < n; ++j) {
    for (std::int64_t g = 0; g < k; g += 4) {
      // keep two positions of each group of four: zero the others
      std::vector<std::int64_t> pos{0, 1, 2, 3};
      std::shuffle(pos.begin(), pos.end(), rng);
      for (int z = 0; z < 2; ++z) {
        if (g + pos[static_cast<std::size_t>(z)] < k) {
          w.floats[static_cast<std::size_t>((g + pos[static_cast<std::size_t>(z)]) * n + j)] = 0.0f;
        }
      }
    }
  }
  return w;
}

inline float at(const Tensor& t, std::int64_t i) { return t.floats[static_cast<std::size_t>(i)]; }

inline std::vector<float> float_matmul(const Tensor& a, const Tensor& b) {
  const std::int64_t m = a.shape[0], k = a.shape[1], n = b.shape[1];
  std::vector<float> y(static_cast<std::size_t>(m * n));
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (std::int64_t kk = 0; kk < k; ++kk) s += double{at(a, i * k + kk)} * at(b, kk * n + j);
      y[static_cast<std::size_t>(i * n + j)] = static_cast<float>(s);
    }
  }
  return y;
}

// The quantization policy's worst-case error of every output element of alpha * A * B + beta * C
// (A [..., M, K], B [K, N] or with A's batch dimensions), plus float rounding slack.
inline std::vector<double> quantized_error_bound(const Tensor& a, const Tensor& b, double alpha,
                                                 const Tensor* c_broadcast, double beta) {
  const std::int64_t k = a.shape.back();
  const std::int64_t m = a.rank() >= 2 ? a.shape[a.shape.size() - 2] : 1;
  const std::int64_t n = b.shape.back();
  const std::int64_t batches = a.size() / (m * k);
  const std::int64_t b_batches = b.size() / (k * n);
  double max_a = 0;
  for (const float v : a.floats) max_a = std::max(max_a, std::abs(double{v}));
  const double sx = max_a > 0 ? max_a / 127 : 1;
  std::vector<double> bound(static_cast<std::size_t>(batches * m * n));
  for (std::int64_t t = 0; t < batches; ++t) {
    const std::int64_t bt = b_batches == 1 ? 0 : t;
    for (std::int64_t j = 0; j < n; ++j) {
      double max_w = 0;
      for (std::int64_t kk = 0; kk < k; ++kk) {
        max_w = std::max(max_w, std::abs(double{at(b, bt * k * n + kk * n + j)}));
      }
      const double sw = max_w > 0 ? max_w / 127 : 1;
      for (std::int64_t i = 0; i < m; ++i) {
        double q = 0, mag = 0;
        for (std::int64_t kk = 0; kk < k; ++kk) {
          const double x = std::abs(double{at(a, t * m * k + i * k + kk)});
          const double w = std::abs(double{at(b, bt * k * n + kk * n + j)});
          q += x * sw / 2 + w * sx / 2 + sx * sw / 4;
          mag += x * w;
        }
        const std::int64_t o = t * m * n + i * n + j;
        const double cval = c_broadcast ? std::abs(beta * at(*c_broadcast, o)) : 0.0;
        bound[static_cast<std::size_t>(o)] =
            std::abs(alpha) * q + 1e-5 * (std::abs(alpha) * mag + cval) + 1e-6;
      }
    }
  }
  return bound;
}

}  // namespace nmsa::testing
