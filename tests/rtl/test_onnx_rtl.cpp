// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// The integer ONNX backend node tests of libonnx-testdata on the Verilated accelerator: the
// GEMM runs on the RTL through nmsa::Device and the result must equal ONNX's reference bit for
// bit (the software suite runs the same tests on the functional model). And a quantized MLP in
// QDQ form, its three layers one command stream: the RTL's logits are the functional model's,
// and each layer's share of the RTL's cycles is the functional model's predicted share.
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "nmsa/int8_mlp.hpp"
#include "nmsa/mlp.hpp"
#include "nmsa/onnx_export.hpp"
#include "nmsa/onnx_model.hpp"
#include "nmsa/runtime.hpp"
#include "nmsa/tb/rtl_device.hpp"
#include "nmsa/tb/sim_context.hpp"

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

TEST(QdqNetworkOnRtlTest, ChainedLayersTakeTheFunctionalModelsCycles) {
  const std::uint64_t seed = tb::test_seed(47);
  SCOPED_TRACE(tb::seed_note(seed));
  std::mt19937_64 rng(seed);
  const std::vector<int> sizes{32, 16, 8, 4};
  Mlp m = make_mlp(sizes, seed);
  apply_nm_masks(m, NmPattern{2, 4}, false, {}, {true, true, false});
  MatrixF x(11, sizes.front());
  std::uniform_real_distribution<float> d(0.0f, 1.0f);
  for (Eigen::Index i = 0; i < x.size(); ++i) x.data()[i] = d(rng);
  const Int8Mlp q = quantize_mlp(m, calibrate_input_scales(m, x, 99.0),
                                 {GemmMode::SPARSE, GemmMode::SPARSE, GemmMode::DENSE}, {2, 4});
  const std::string model = serialize_int8_mlp_onnx(q);
  // A memory the cycle model predicts to the cycle: a beat per cycle each way.
  tb::AxiMemoryConfig axi;
  axi.read_latency = 24;
  axi.write_latency = 16;
  axi.bytes_per_cycle = 16;
  axi.max_reads = 64;
  axi.max_writes = 64;
  RuntimeOptions options;
  options.memory = PerfModelParams{};
  options.memory->dma_bytes_per_cycle = 16;
  options.memory->dma_read_latency = 24;
  options.memory->dma_write_latency = 16;
  options.check_golden = true;
  const std::unique_ptr<Device> rtl = tb::make_rtl_device("small", axi, seed);
  const std::unique_ptr<Device> fm = make_model_device("small");
  Runtime on_rtl(parse_onnx_model(model, "qdq.onnx"), *rtl, options);
  Runtime on_model(parse_onnx_model(model, "qdq.onnx"), *fm, options);
  const std::map<std::string, Tensor> feed{
      {"input", Tensor::make_float({x.rows(), x.cols()},
                                   std::vector<float>(x.data(), x.data() + x.size()))}};
  EXPECT_EQ(on_rtl.run(feed).at("logits").floats, on_model.run(feed).at("logits").floats);
  for (const Int8MlpLayer& l : q.layers) {
    SCOPED_TRACE(l.name);
    const DeviceStats& r = on_rtl.layer(l.name).device;
    const DeviceStats& f = on_model.layer(l.name).device;
    EXPECT_EQ(on_rtl.layer(l.name).stream, "fc1 -> fc2 -> fc3");
    EXPECT_GT(r.cycles, 0u);
    EXPECT_EQ(r.cycles, f.predicted_cycles);
    EXPECT_EQ(r.macs, f.macs);
    EXPECT_EQ(r.dma_rd_bytes, f.dma_rd_bytes);
    EXPECT_EQ(r.golden_checked, 1u);
  }
}

INSTANTIATE_TEST_SUITE_P(Backend, OnnxOnRtlTest,
                         ::testing::Values("test_matmulinteger", "test_qlinearmatmul_2D",
                                           "test_qlinearmatmul_3D"));

}  // namespace
}  // namespace nmsa
