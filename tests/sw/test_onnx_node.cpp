// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// The ONNX backend node tests of Debian's libonnx-testdata for every operator the runtime claims
// (test_gemm_*, test_matmul_*, test_relu, test_add*, test_flatten*, test_reshape*, test_softmax*,
// test_matmulinteger, test_qlinearmatmul_*, test_quantizelinear*, test_dequantizelinear*), one
// GoogleTest per test and mode:
// - "host": the model as shipped. Its weights are graph inputs, not constants, so every GEMM
//   runs on the host (HOST_UNSUPPORTED_CASE), as do Softmax and the rest. Float outputs must
//   meet the ONNX backend tests' own tolerance, |y - ref| <= 1e-7 + 1e-3 |ref|; integer
//   outputs must be equal.
// - "device" (Gemm, MatMul, MatMulInteger, QLinearMatMul): every input but the first frozen
//   into a constant, as an exporter stores weights, so the GEMM runs on the device ("small",
//   4x4 2:4). Integer outputs must be equal to ONNX's (bit-exact). Float outputs go through
//   the quantization policy of nmsa/runtime.hpp (INT8 per-tensor activations calibrated on the
//   input, INT8 per-channel weights, INT32 accumulation) and must lie within its worst-case
//   rounding error, |alpha| * sum_k (|a| s_w/2 + |b| s_x/2 + s_x s_w/4), plus 1e-5 of the
//   magnitudes for float rounding: a rtol/atol pair cannot express an error that scales with
//   sum |a||b| rather than with |y|, and this bound is what the policy guarantees.
// A missing data directory fails (never skips) and names the package to install.
#include <fnmatch.h>
#include <gtest/gtest.h>

#include "../common/onnx_data_sets.hpp"
#include "../common/seed.hpp"
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "nmsa/device.hpp"
#include "nmsa/epilogue.hpp"
#include "nmsa/onnx_model.hpp"
#include "nmsa/runtime.hpp"
#include "nmsa/sparse_format.hpp"
#include "onnx_test_models.hpp"
namespace nmsa {
namespace {

namespace fs = std::filesystem;

constexpr const char* DEVICE_CONFIG = "small";
constexpr double ONNX_RTOL = 1e-3;
constexpr double ONNX_ATOL = 1e-7;

using testing::at;
using testing::quantized_error_bound;
using testing::seed_note;
using testing::test_seed;

// --- The ONNX backend node tests --------------------------------------------------------------

std::string node_test_root() {
  const char* env = std::getenv("NMSA_ONNX_NODE_DIR");
  return env != nullptr && *env != '\0' ? env : "/usr/share/libonnx-testdata/data/node";
}

const std::vector<std::string>& claimed_patterns() {
  static const std::vector<std::string> p{
      "test_gemm_*",   "test_matmul_*",      "test_relu",
      "test_add*",     "test_flatten*",      "test_reshape*",
      "test_softmax*", "test_matmulinteger", "test_qlinearmatmul_*",
      "test_quantizelinear*", "test_dequantizelinear*", "test_transpose_*",
      "test_unsqueeze_*",     "test_squeeze*",         "test_conv_*",
      "test_basic_conv_*",    "test_maxpool_2d_*",     "test_maxpool_1d_*",
      "test_averagepool_2d_*", "test_averagepool_1d_*", "test_globalaveragepool*",
      "test_batchnorm_example", "test_batchnorm_epsilon", "test_concat_*",
      "test_layer_normalization_*d_axis*[0-9]", "test_layer_normalization_*_epsilon",
      "test_layer_normalization_default_axis"};
  return p;
}

struct NodeCase {
  std::string name;  // directory name; empty when the data is missing
  std::string dir;
  bool device = false;
};

std::string param_name(const ::testing::TestParamInfo<NodeCase>& info) {
  if (info.param.name.empty()) return "data_missing";
  return info.param.name + (info.param.device ? "_device" : "_host");
}

bool has_device_path(const std::string& name) {
  return name.rfind("test_gemm_", 0) == 0 || name.rfind("test_matmul", 0) == 0 ||
         name.rfind("test_qlinearmatmul_", 0) == 0;
}

std::vector<NodeCase> discover_node_tests() {
  std::vector<NodeCase> cases;
  std::error_code ec;
  const fs::path root = node_test_root();
  if (!fs::is_directory(root, ec)) return {NodeCase{}};
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(root, ec)) {
    const std::string name = entry.path().filename().string();
    for (const std::string& p : claimed_patterns()) {
      if (fnmatch(p.c_str(), name.c_str(), 0) == 0) {
        names.push_back(name);
        break;
      }
    }
  }
  std::sort(names.begin(), names.end());
  for (const std::string& name : names) {
    const std::string dir = (root / name).string();
    cases.push_back(NodeCase{name, dir, false});
    if (has_device_path(name)) cases.push_back(NodeCase{name, dir, true});
  }
  if (cases.empty()) return {NodeCase{}};
  return cases;
}

std::string missing_data_message() {
  return "the ONNX backend node tests are not at " + node_test_root() +
         ": install Debian's libonnx-testdata (apt-get install libonnx-testdata, or "
         "scripts/setup.sh), or point NMSA_ONNX_NODE_DIR at a copy of onnx/backend/test/data/node";
}

TEST(OnnxNodeData, IsInstalledWithEveryClaimedOperator) {
  const fs::path root = node_test_root();
  std::error_code ec;
  ASSERT_TRUE(fs::is_directory(root, ec)) << missing_data_message();
  for (const std::string& p : claimed_patterns()) {
    int found = 0;
    for (const auto& entry : fs::directory_iterator(root, ec)) {
      found += fnmatch(p.c_str(), entry.path().filename().c_str(), 0) == 0;
    }
    EXPECT_GT(found, 0) << "no node test matches " << p << " under " << root << "; "
                        << missing_data_message();
  }
}

using DataSet = testing::OnnxDataSet;

Tensor transpose(const Tensor& t) {
  Tensor out = t;
  const std::int64_t r = t.shape[0], c = t.shape[1];
  out.shape = {c, r};
  for (std::int64_t i = 0; i < r; ++i) {
    for (std::int64_t j = 0; j < c; ++j) {
      out.floats[static_cast<std::size_t>(j * r + i)] = at(t, i * c + j);
    }
  }
  return out;
}

// C broadcast to [M, N] the numpy way (Gemm's C is a scalar, [N], [1, N], [M, 1] or [M, N]).
Tensor broadcast_c(const Tensor& c, std::int64_t m, std::int64_t n) {
  Tensor out = Tensor::zeros(ElementType::FLOAT, {m, n});
  const std::int64_t cr = c.rank() >= 2 ? c.shape[c.shape.size() - 2] : 1;
  const std::int64_t cc = c.rank() >= 1 ? c.shape.back() : 1;
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      out.floats[static_cast<std::size_t>(i * n + j)] =
          at(c, (cr == 1 ? 0 : i) * cc + (cc == 1 ? 0 : j));
    }
  }
  return out;
}

// The error bound of a float node test's GEMM run on the device.
std::vector<double> device_bound(const Node& node, const std::vector<Tensor>& in) {
  if (node.op_type == "MatMul") return quantized_error_bound(in[0], in[1], 1.0, nullptr, 0.0);
  // Gemm
  const Tensor a = node.attr_int("transA", 0) != 0 ? transpose(in[0]) : in[0];
  const Tensor b = node.attr_int("transB", 0) != 0 ? transpose(in[1]) : in[1];
  const double alpha = node.attr_float("alpha", 1.0f), beta = node.attr_float("beta", 1.0f);
  if (in.size() > 2) {
    const Tensor c = broadcast_c(in[2], a.shape[0], b.shape[1]);
    return quantized_error_bound(a, b, alpha, &c, beta);
  }
  return quantized_error_bound(a, b, alpha, nullptr, 0.0);
}

class OnnxNodeTest : public ::testing::TestWithParam<NodeCase> {};

TEST_P(OnnxNodeTest, MatchesReference) {
  const NodeCase& c = GetParam();
  ASSERT_FALSE(c.name.empty()) << missing_data_message();
  const Graph shipped = load_onnx_model(c.dir + "/model.onnx");
  const std::vector<DataSet> sets = testing::load_onnx_data_sets(c.dir);
  ASSERT_FALSE(sets.empty()) << c.dir << " has no test_data_set_*";
  ASSERT_EQ(shipped.nodes.size() >= 1, true);
  const Node* gemm = nullptr;
  for (const Node& n : shipped.nodes) {
    if (n.op_type == "Gemm" || n.op_type == "MatMul" || n.op_type == "MatMulInteger" ||
        n.op_type == "QLinearMatMul") {
      gemm = &n;
    }
  }

  for (std::size_t s = 0; s < sets.size(); ++s) {
    SCOPED_TRACE(c.dir + " test_data_set_" + std::to_string(s) +
                 (c.device ? " on the device" : " on the host"));
    const DataSet& d = sets[s];
    ASSERT_EQ(d.inputs.size(), shipped.inputs.size());
    ASSERT_EQ(d.outputs.size(), shipped.outputs.size());
    Graph g = shipped;
    std::map<std::string, Tensor> feed;
    for (std::size_t i = 0; i < d.inputs.size(); ++i) {
      if (c.device && i > 0) {
        g.freeze_input(shipped.inputs[i].name, d.inputs[i]);
      } else {
        feed[shipped.inputs[i].name] = d.inputs[i];
      }
    }
    const std::unique_ptr<Device> dev = make_model_device(DEVICE_CONFIG);
    Runtime rt(g, *dev);
    const PlacementCounts counts = rt.counts();
    if (gemm != nullptr) {
      const LayerReport& l = rt.layer(gemm->name);
      if (c.device) {
        EXPECT_NE(l.placement, Placement::HOST) << rt.describe();
      } else {
        EXPECT_EQ(l.placement, Placement::HOST) << rt.describe();
        EXPECT_EQ(l.fallback, Fallback::HOST_UNSUPPORTED_CASE) << rt.describe();
        EXPECT_EQ(counts.host_unsupported_case, 1u);
      }
    }
    if (c.name.rfind("test_softmax", 0) == 0) {
      EXPECT_GE(counts.host_unsupported_op, 1u) << rt.describe();
    }

    std::map<std::string, Tensor> out;
    ASSERT_NO_THROW(out = rt.run(feed)) << rt.describe();
    for (std::size_t o = 0; o < d.outputs.size(); ++o) {
      const std::string& name = shipped.outputs[o].name;
      ASSERT_EQ(out.count(name), 1u) << name;
      const Tensor& y = out.at(name);
      const Tensor& ref = d.outputs[o];
      ASSERT_EQ(y.type, ref.type) << name << ": " << y.describe() << " vs " << ref.describe();
      ASSERT_EQ(y.shape, ref.shape) << name << ": " << y.describe() << " vs " << ref.describe();
      if (!ref.is_float()) {
        EXPECT_EQ(y.ints, ref.ints) << name << " must be bit-exact";
        continue;
      }
      const bool quantized = c.device && gemm != nullptr;
      const std::vector<double> bound =
          quantized ? device_bound(*gemm, d.inputs) : std::vector<double>{};
      double worst = 0, max_err = 0, max_ref = 0;
      int bad = 0;
      for (std::size_t i = 0; i < ref.floats.size(); ++i) {
        const double e = ref.floats[i], v = y.floats[i];
        if (std::isnan(e) && std::isnan(v)) continue;
        const double tol = quantized ? bound[i] : ONNX_ATOL + ONNX_RTOL * std::abs(e);
        const double err = std::abs(v - e);
        worst = std::max(worst, err / tol);
        max_err = std::max(max_err, err);
        max_ref = std::max(max_ref, std::abs(e));
        if (!(err <= tol) && bad++ < 5) {
          ADD_FAILURE() << name << "[" << i << "] = " << v << ", expected " << e << " (error "
                        << err << ", tolerance " << tol << ")";
        }
      }
      std::cout << "[  error   ] " << c.name << (c.device ? " device" : " host")
                << ": worst error / tolerance = " << worst
                << ", max error / max |ref| = " << (max_ref > 0 ? max_err / max_ref : 0.0) << "\n";
    }
    if (c.device && gemm != nullptr) {
      EXPECT_GE(rt.layer(gemm->name).device.programs, 1u) << "the GEMM never reached the device";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Backend, OnnxNodeTest, ::testing::ValuesIn(discover_node_tests()),
                         param_name);

}  // namespace
}  // namespace nmsa
