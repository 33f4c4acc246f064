// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
//
// Loader errors: missing, empty, garbage, truncated, mistyped and unsupported ONNX files are
// std::runtime_error naming the file; randomly corrupted models never crash.
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

#include "../common/seed.hpp"
#include "nmsa/device.hpp"
#include "nmsa/onnx_model.hpp"
#include "nmsa/runtime.hpp"
#include "onnx_test_models.hpp"

namespace nmsa {
namespace {

constexpr const char* DEVICE_CONFIG = "small";

using testing::ModelBuilder;
using testing::error_of;
using testing::random_float;
using testing::seed_note;
using testing::tensor_proto;
using testing::test_seed;
using testing::write_temp;

std::string gemm_model_bytes() {
  ModelBuilder b;
  b.input("a", onnx::TensorProto::FLOAT, {2, 3}).output("y");
  Tensor w = Tensor::zeros(ElementType::FLOAT, {3, 4});
  b.constant("w", w);
  b.node("MatMul", {"a", "w"}, {"y"}, "mm");
  return b.bytes();
}

TEST(OnnxLoader, ReadsNodesInitializersAndAttributes) {
  ModelBuilder b;
  b.input("a", onnx::TensorProto::FLOAT, {2, 3}).output("y");
  b.constant("w", Tensor::make_float({4, 3}, std::vector<float>(12, 0.5f)));
  ModelBuilder::attr_int(b.node("Gemm", {"a", "w"}, {"y"}, "fc"), "transB", 1);
  const Graph g = parse_onnx_model(b.bytes(), "fc.onnx");
  EXPECT_EQ(g.opset, 13);
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].op_type, "Gemm");
  EXPECT_EQ(g.nodes[0].attr_int("transB", 0), 1);
  EXPECT_EQ(g.nodes[0].attr_float("alpha", 1.0f), 1.0f);
  ASSERT_EQ(g.inputs.size(), 1u);
  EXPECT_EQ(g.inputs[0].type, ElementType::FLOAT);
  EXPECT_EQ(*g.inputs[0].shape, (std::vector<std::int64_t>{2, 3}));
  ASSERT_TRUE(g.is_constant("w"));
  EXPECT_EQ(g.initializers.at("w").describe(), "float[4x3]");
  {
    const std::string e = error_of([&] { g.nodes[0].attr_ints("transB"); });
    EXPECT_NE(e.find("Gemm node 'fc'"), std::string::npos) << e;
  }
}

TEST(OnnxLoader, CorruptOrUnreadableFilesAreErrorsNamingTheFile) {
  const std::string good = gemm_model_bytes();
  struct Bad {
    std::string name;
    std::string bytes;
    std::string expect;
  };
  std::vector<Bad> bad{
      {"empty.onnx", "", "empty"},
      {"garbage.onnx", "this is not a protobuf \xff\xff\xff\xff\xff\xff\xff", "not an ONNX model"},
      {"truncated.onnx", good.substr(0, good.size() / 2), "not an ONNX model"},
      {"tensor.onnx", tensor_proto("t", Tensor::make_float({2}, {1, 2})).SerializeAsString(),
       "not an ONNX model"},
  };
  for (const Bad& b : bad) {
    const std::string path = write_temp(b.name, b.bytes);
    const std::string e = error_of([&] { load_onnx_model(path); });
    EXPECT_NE(e.find(path), std::string::npos) << b.name << ": " << e;
    EXPECT_NE(e.find(b.expect), std::string::npos) << b.name << ": " << e;
  }
  const std::string missing = error_of([] { load_onnx_model("/nonexistent/model.onnx"); });
  EXPECT_NE(missing.find("/nonexistent/model.onnx: cannot read"), std::string::npos) << missing;
  const std::string dir = error_of([] { load_onnx_model(::testing::TempDir()); });
  EXPECT_NE(dir.find("cannot read: a directory"), std::string::npos) << dir;
  const std::string device = error_of([] { load_onnx_model("/dev/zero"); });
  EXPECT_NE(device.find("/dev/zero: cannot read: not a regular file"), std::string::npos) << device;
  const std::string tensor = error_of([] { load_onnx_tensor("/nonexistent/input_0.pb"); });
  EXPECT_NE(tensor.find("/nonexistent/input_0.pb"), std::string::npos) << tensor;
}

// Models a loader must not run as if nothing were wrong: IR versions and opsets the ONNX library
// does not know, no opset for the default domain its nodes use, a non-finite weight, a negative
// dimension. Each is an error naming the model and what is wrong.
TEST(OnnxLoader, VersionsWeightsAndShapesOutsideWhatItSupportsAreErrors) {
  const auto message = [](ModelBuilder& b) {
    return error_of([&] { b.graph("m.onnx"); });
  };
  const auto base = [] {
    auto b = std::make_unique<ModelBuilder>();
    b->input("a", onnx::TensorProto::FLOAT, {2, 3}).output("y");
    b->constant("w", Tensor::make_float({3, 2}, {1, 2, 3, 4, 5, 6}));
    b->node("MatMul", {"a", "w"}, {"y"}, "mm");
    return b;
  };
  auto ok = base();
  EXPECT_NO_THROW(ok->graph());

  auto opset = base();
  opset->proto().mutable_opset_import(0)->set_version(99);
  EXPECT_NE(message(*opset).find("m.onnx: opset 99 of the default domain is not supported "
                                 "(supported: 1 to 18)"),
            std::string::npos)
      << message(*opset);
  auto no_opset = base();
  no_opset->proto().clear_opset_import();
  EXPECT_NE(message(*no_opset).find("no opset_import for the default ONNX domain"),
            std::string::npos)
      << message(*no_opset);
  auto ir = base();
  ir->proto().set_ir_version(99);
  EXPECT_NE(message(*ir).find("IR version 99 is not supported (supported: 3 to 8)"),
            std::string::npos)
      << message(*ir);
  auto nan = base();
  nan->constant("bad", Tensor::make_float({2}, {1.0f, std::numeric_limits<float>::infinity()}));
  EXPECT_NE(message(*nan).find("initializer 'bad' holds inf at element 1: weights must be finite"),
            std::string::npos)
      << message(*nan);
  ModelBuilder negative;
  negative.input("a", onnx::TensorProto::FLOAT, {2, -1}).output("a");
  EXPECT_NE(message(negative).find("graph input 'a' has dimension -1"), std::string::npos)
      << message(negative);
}

TEST(OnnxLoader, TensorsWhoseDataDoesNotMatchAreErrors) {
  // raw_data too short for the shape, in a .pb file and as an initializer.
  onnx::TensorProto t;
  t.set_name("x");
  t.set_data_type(onnx::TensorProto::FLOAT);
  t.add_dims(2);
  t.add_dims(3);
  t.set_raw_data(std::string(5 * 4, '\0'));
  const std::string path = write_temp("short.pb", t.SerializeAsString());
  std::string e = error_of([&] { load_onnx_tensor(path); });
  EXPECT_NE(e.find(path), std::string::npos) << e;
  EXPECT_NE(e.find("needs 6 elements"), std::string::npos) << e;

  ModelBuilder b;
  b.input("a", onnx::TensorProto::FLOAT, {2, 2}).output("y");
  *b.proto().mutable_graph()->add_initializer() = t;
  b.node("MatMul", {"a", "x"}, {"y"}, "mm");
  e = error_of([&] { b.graph("short_init.onnx"); });
  EXPECT_NE(e.find("short_init.onnx: initializer 'x'"), std::string::npos) << e;

  // Unsupported element type, external data, values out of range, negative dimension.
  onnx::TensorProto d;
  d.set_data_type(onnx::TensorProto::DOUBLE);
  d.add_dims(1);
  d.add_double_data(1.0);
  e = error_of([&] { parse_onnx_tensor(d.SerializeAsString(), "double.pb"); });
  EXPECT_NE(e.find("double.pb: element type DOUBLE is not supported"), std::string::npos) << e;

  onnx::TensorProto x;
  x.set_data_type(onnx::TensorProto::FLOAT);
  x.add_dims(1);
  x.set_data_location(onnx::TensorProto::EXTERNAL);
  e = error_of([&] { parse_onnx_tensor(x.SerializeAsString(), "external.pb"); });
  EXPECT_NE(e.find("external tensor data is not supported"), std::string::npos) << e;

  onnx::TensorProto u;
  u.set_data_type(onnx::TensorProto::UINT8);
  u.add_dims(1);
  u.add_int32_data(300);
  e = error_of([&] { parse_onnx_tensor(u.SerializeAsString(), "range.pb"); });
  EXPECT_NE(e.find("outside the range of uint8"), std::string::npos) << e;

  onnx::TensorProto n;
  n.set_data_type(onnx::TensorProto::FLOAT);
  n.add_dims(-2);
  e = error_of([&] { parse_onnx_tensor(n.SerializeAsString(), "negative.pb"); });
  EXPECT_NE(e.find("negative dimension"), std::string::npos) << e;
}

TEST(OnnxLoader, RandomlyCorruptedModelsNeverCrash) {
  const std::uint64_t seed = test_seed(11);
  SCOPED_TRACE(seed_note(seed));
  std::mt19937_64 rng(seed);
  const std::string good = gemm_model_bytes();
  int loaded = 0, rejected = 0;
  for (int trial = 0; trial < 300; ++trial) {
    std::string bytes = good;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f) {
      bytes[rng() % bytes.size()] = static_cast<char>(rng());
    }
    if (rng() % 4 == 0) bytes.resize(rng() % bytes.size());
    try {
      const Graph g = parse_onnx_model(bytes, "corrupt.onnx");
      const std::unique_ptr<Device> dev = make_model_device(DEVICE_CONFIG);
      Runtime rt(g, *dev);
      ++loaded;
    } catch (const std::runtime_error& e) {
      EXPECT_EQ(std::string(e.what()).rfind("corrupt.onnx", 0), 0u) << e.what();
      ++rejected;
    }
  }
  EXPECT_EQ(loaded + rejected, 300);
  EXPECT_GT(rejected, 0);
}

}  // namespace
}  // namespace nmsa
