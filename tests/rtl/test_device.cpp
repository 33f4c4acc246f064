// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// The two backends of nmsa::Device run the same compiled programs: the Verilated accelerator and
// the functional model must give identical results and identical counters.
#include <random>

#include <gtest/gtest.h>

#include "../common/device_checks.hpp"
#include "../common/random_matrix.hpp"
#include "nmsa/device.hpp"
#include "nmsa/epilogue.hpp"
#include "nmsa/gemm_program.hpp"
#include "nmsa/sparse_format.hpp"
#include "nmsa/tb/rtl_device.hpp"
#include "nmsa/tb/sim_context.hpp"
#include "nmsa/tb/top_sim.hpp"

namespace nmsa {
namespace {

namespace r = regs;

class DeviceBackendsTest : public ::testing::TestWithParam<std::string> {};

TEST_P(DeviceBackendsTest, RtlAndModelAgreeOnRandomPrograms) {
  const std::uint64_t seed = tb::test_seed(77);
  SCOPED_TRACE(tb::seed_note(seed));
  std::mt19937_64 rng(seed);
  auto rtl = tb::make_rtl_device(GetParam(), tb::AxiMemoryConfig{}, seed);
  auto model = make_model_device(GetParam());
  const DeviceCaps caps = rtl->caps();
  ASSERT_EQ(caps.describe(), model->caps().describe());

  auto pick = [&rng](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int i = 0; i < 6; ++i) {
    const int rows = pick(1, 40), k = pick(1, 4 * caps.act_entry_bytes()), n = pick(1, 3 * caps.cols);
    const MatrixI8 x = testing::random_i8(rows, k, rng);
    MatrixI8 w = testing::random_i8(n, k, rng);
    GemmOptions options;
    options.mode = caps.sparse_supported && i % 2 == 0 ? GemmMode::SPARSE : GemmMode::DENSE;
    if (options.mode == GemmMode::SPARSE) {
      w = prune_nm_any_k(w, caps.pattern);
    }
    if (i % 3 == 1) {
      options.epilogue = testing::random_epilogue(n, rng);
      options.relu = true;
    }
    SCOPED_TRACE("program " + std::to_string(i) + ": " + std::to_string(rows) + "x" +
                 std::to_string(k) + "x" + std::to_string(n) + " " + std::string(to_string(options.mode)));
    const GemmProgram on_rtl(caps, x, w, options, rtl->memory());
    const GemmProgram on_model(caps, x, w, options, model->memory());
    const DeviceRun a = rtl->run(on_rtl.command_address(), on_rtl.command_count());
    const DeviceRun b = model->run(on_model.command_address(), on_model.command_count());
    ASSERT_TRUE(a.ok()) << a.describe();
    ASSERT_TRUE(b.ok()) << b.describe();
    EXPECT_GT(a.cycles, 0u);
    EXPECT_EQ(on_rtl.read_output(), on_model.read_output());
    testing::expect_same_work_counters(a, b);
  }
}

TEST_P(DeviceBackendsTest, BothReportTheSameError) {
  auto rtl = tb::make_rtl_device(GetParam());
  auto model = make_model_device(GetParam());
  // A STORE beyond the accumulators: BAD_RANGE at command 0 on both.
  const DeviceCaps caps = rtl->caps();
  for (Device* dev : {rtl.get(), model.get()}) {
    const auto out = dev->memory().alloc(64);
    const auto cmd_addr = dev->memory().alloc(32);
    const Command store = Command::store(static_cast<std::uint16_t>(caps.acc_entries - 1), 2, 0, out, 64,
                                         /*int32_output=*/true);
    const auto bytes = encode(store);
    dev->memory().write(cmd_addr, bytes.data(), bytes.size());
    const DeviceRun run = dev->run(cmd_addr, 1);
    EXPECT_FALSE(run.ok()) << dev->name();
    EXPECT_EQ(run.error, r::ErrCode::BAD_RANGE) << dev->name();
    EXPECT_EQ(run.error_index, 0u) << dev->name();
    EXPECT_EQ(dev->read_reg(r::ERR_INFO_OFFSET), 0u) << dev->name();
  }
}

INSTANTIATE_TEST_SUITE_P(Configs, DeviceBackendsTest, ::testing::ValuesIn(tb::top_config_names()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace nmsa
