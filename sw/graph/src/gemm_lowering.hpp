// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// A GEMM node of the graph lowered onto the device (the quantization policy and the zero-point
// arithmetic: nmsa/runtime.hpp). When the Runtime is built, its constant weights are put in the
// form the device receives (INT8 [N x K] per matrix, with their scales or zero-point sums); in a
// run, its activations are quantized (float) or shifted by their zero point (integer), each
// weight matrix becomes one GemmProgram, and the accumulators are dequantized or corrected.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "host_kernels.hpp"
#include "nmsa/device.hpp"
#include "nmsa/device_caps.hpp"
#include "nmsa/gemm_program.hpp"
#include "nmsa/onnx_model.hpp"
#include "nmsa/runtime.hpp"
#include "nmsa/stream_counters.hpp"
#include "nmsa/types.hpp"
#include "qdq_pattern.hpp"

namespace nmsa::graph_detail {

// CONV: a 1-D or 2-D Conv with groups = 1, its weight W [M, C, KH, KW] as [M x C*KH*KW], its
// input lowered by im2col on the host (host_conv.cpp). QDQ_GEMM, QDQ_CONV: a Gemm or Conv in QDQ
// form (qdq_pattern.hpp).
enum class GemmKind {
  FLOAT_GEMM,
  FLOAT_MATMUL,
  MATMUL_INTEGER,
  QLINEAR_MATMUL,
  QDQ_GEMM,
  QDQ_CONV,
  CONV
};

struct FusedStep {
  std::size_t node = 0;
  bool relu = false;  // else an Add of `bias`
  std::string bias;   // the constant operand of the Add
};

// A GEMM node placed on the device, with its weights in device form.
struct DeviceGemm {
  GemmKind kind = GemmKind::FLOAT_GEMM;
  GemmMode mode = GemmMode::DENSE;
  Shape b_shape;  // the constant B as the model holds it
  std::int64_t k = 0, n = 0;
  std::vector<MatrixI8> weights;  // per B matrix: [N x K] INT8, as the device receives it
  // Float: per-channel weight scales (quant.hpp), per matrix.
  std::vector<std::vector<float>> w_scale;
  GemmAttributes gemm;
  // Integer: per matrix and column, cb = oB - zb (0 when B' = B - zb) and colsum(B').
  std::vector<std::vector<std::int64_t>> cb, colsum;
  bool cb_zero = true;
  bool epilogue_on_device = false;  // QLinearMatMul requantized by the STORE epilogue
  std::optional<QdqGemm> qdq;  // QDQ_GEMM, QDQ_CONV: the fused pattern (its weights in `weights`)
  std::vector<FusedStep> fused;
  std::string output;  // the value this layer writes (the last fused node's output)
};

// Float weights: B constant [..., K, N] (or [K], or [N, K] with transB) as per-channel INT8.
// Returns an empty string and fills g, or the reason the device cannot take B.
std::string prepare_float_weights(DeviceGemm& g, const Tensor& b, bool b_is_nk);

// Integer weights: B' per matrix with cb and colsum (see runtime.hpp).
std::string prepare_integer_weights(DeviceGemm& g, const Node& node, const Tensor& b,
                                    const Tensor* b_zp);

// Tiling plans chosen for a host memory, per (node, weight matrix, batch rows): choosing runs
// the cycle model, so runs with the same shapes reuse the choice.
using PlanCache = std::map<std::tuple<const Node*, std::size_t, Eigen::Index>, TilingPlan>;

// The device a run sends its GEMMs to.
struct DeviceContext {
  Device& device;
  const DeviceCaps& caps;
  // The host memory the compiler ranks plans for (RuntimeOptions::memory), and the plans chosen.
  const std::optional<PerfModelParams>& memory;
  PlanCache& plans;
  bool check_golden;  // RuntimeOptions::check_golden
};

// Adds the device's work and traffic counters (stream_counters.hpp) to a layer's statistics.
void add_counters(DeviceStats& stats, const StreamCounters& c);

// y with the layer's fused Adds and Relus applied, in order.
Tensor apply_fused_steps(const Graph& graph, const DeviceGemm& g, Tensor y);

// The compiler options of weight matrix `matrix` of `node` times `rows` activation rows: the
// mode, the epilogue and ReLU, and the tiling plan ranked for the context's memory (cached).
GemmOptions device_gemm_options(const DeviceContext& dev, const Node& node, std::size_t matrix,
                                Eigen::Index rows, const MatrixI8& w, GemmMode mode,
                                const std::optional<EpilogueParams>& epi, bool relu);

// The device's output of x * w^T (with the epilogue and ReLU it ran) against the golden model's,
// element by element: an error naming the node and the first element that differs.
void check_against_golden(const DeviceContext& dev, const Node& node, const MatrixI8& x,
                          const MatrixI8& w, const std::optional<EpilogueParams>& epi, bool relu,
                          const MatrixI32& out);

// A QDQ layer's ReLU runs in the epilogue when it has one; otherwise on the host (qdq_rows).
inline bool qdq_relu_on_device(const QdqGemm& q) {
  return q.relu.has_value() && q.epilogue.has_value();
}

// The int8 activations a QDQ layer reads (its DequantizeLinear's input), checked.
const Tensor& qdq_input(const Node& node, const QdqGemm& q, const Values& values);

// A QDQ Gemm's input as the device's INT8 [M x K] rows, its shape checked.
MatrixI8 qdq_gemm_rows(const Node& node, const DeviceGemm& g, const Values& values);

// The device's [rows x N] result as the QDQ pattern's output: int8 when the epilogue
// requantized, else the accumulators to float as Int8Mlp's logits are computed
// (logits_from_accumulators), with the bias and the ReLU.
Tensor qdq_rows(const QdqGemm& q, const MatrixI32& out);

// A float Gemm or MatMul on the device: its output tensor, before any fused Add or Relu. The
// device's counters go into `stats`.
Tensor run_float_gemm(const DeviceContext& dev, const Node& node, const DeviceGemm& g,
                      const Values& values, DeviceStats& stats);

// A Conv on the device: im2col of X on the host, one device GEMM against the [M x K] weight,
// dequantized with the bias into [N, M, OH, OW]; before any fused Relu.
Tensor run_conv(const DeviceContext& dev, const Node& node, const DeviceGemm& g,
                const Values& values, DeviceStats& stats);

// A Gemm in QDQ form (qdq_pattern.hpp) on the device: int8 output when the pattern ends in a
// QuantizeLinear (requantized by the epilogue), else float (and the fused Relu).
Tensor run_qdq_gemm(const DeviceContext& dev, const Node& node, const DeviceGemm& g,
                    const Values& values, DeviceStats& stats);

// A Conv in QDQ form on the device: its int8 input lowered by im2col, one device GEMM, the
// output as run_qdq_gemm's in [N, M, (OH,) OW].
Tensor run_qdq_conv(const DeviceContext& dev, const Node& node, const DeviceGemm& g,
                    const Values& values, DeviceStats& stats);

// A MatMulInteger or QLinearMatMul on the device, exactly: its output tensor.
Tensor run_integer_gemm(const DeviceContext& dev, const Node& node, const DeviceGemm& g,
                        const Values& values, DeviceStats& stats);

}  // namespace nmsa::graph_detail
