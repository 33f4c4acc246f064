// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// The integer ONNX backend node tests of libonnx-testdata on the Verilated accelerator: the
// GEMM runs on the RTL through nmsa::Device and the result must equal ONNX's reference bit for
// bit (the software suite runs the same tests on the functional model).
#include <cstdlib>
#include <filesystem>

#include <gtest/gtest.h>

#include "nmsa/onnx_model.hpp"
#include "nmsa/runtime.hpp"
#include "nmsa/tb/rtl_device.hpp"

namespace nmsa {
namespace {

namespace fs = std::filesystem;

std::string node_dir(const std::string& name) {
  const char* env = std::getenv("NMSA_ONNX_NODE_DIR");
  const std::string root =
      env != nullptr && *env != '\0' ? env : "/usr/share/libonnx-testdata/data/node";
  return root + "/" + name;
}

class OnnxOnRtlTest : public ::testing::TestWithParam<std::string> {};

TEST_P(OnnxOnRtlTest, IntegerNodeTestIsBitExactOnTheRtl) {
  const std::string dir = node_dir(GetParam());
  ASSERT_TRUE(fs::is_directory(dir))
      << dir << " is missing: install Debian's libonnx-testdata (make deps does)";
  const Graph shipped = load_onnx_model(dir + "/model.onnx");
  int sets = 0;
  for (int s = 0; fs::is_directory(dir + "/test_data_set_" + std::to_string(s)); ++s, ++sets) {
    const std::string set_dir = dir + "/test_data_set_" + std::to_string(s);
    SCOPED_TRACE(set_dir);
    // Every input but the first becomes a constant, as an exporter's weights are.
    Graph g = shipped;
    std::map<std::string, Tensor> feed;
    for (std::size_t i = 0; i < shipped.inputs.size(); ++i) {
      Tensor t = load_onnx_tensor(set_dir + "/input_" + std::to_string(i) + ".pb").tensor;
      if (i == 0) {
        feed[shipped.inputs[i].name] = t;
      } else {
        g.freeze_input(shipped.inputs[i].name, t);
      }
    }
    const std::unique_ptr<Device> rtl = tb::make_rtl_device("small");
    Runtime runtime(g, *rtl);
    const std::map<std::string, Tensor> out = runtime.run(feed);
    std::uint64_t device_cycles = 0;
    for (const LayerReport& layer : runtime.layers()) device_cycles += layer.device.cycles;
    EXPECT_GT(device_cycles, 0u) << "nothing ran on the RTL:\n" << runtime.describe();
    for (std::size_t o = 0; o < shipped.outputs.size(); ++o) {
      const Tensor ref = load_onnx_tensor(set_dir + "/output_" + std::to_string(o) + ".pb").tensor;
      const Tensor& got = out.at(shipped.outputs[o].name);
      ASSERT_FALSE(ref.is_float());
      EXPECT_EQ(got.shape, ref.shape);
      EXPECT_EQ(got.ints, ref.ints) << shipped.outputs[o].name << " must be bit-exact";
    }
  }
  EXPECT_GT(sets, 0) << dir << " has no test_data_set_*";
}

INSTANTIATE_TEST_SUITE_P(Backend, OnnxOnRtlTest,
                         ::testing::Values("test_matmulinteger", "test_qlinearmatmul_2D",
                                           "test_qlinearmatmul_3D"));

}  // namespace
}  // namespace nmsa
