// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// The layer-by-layer runtime: executes a Graph (nmsa/onnx_model.hpp) in topological order on host
// tensors and sends the GEMMs it can to the device. A *supported layer matrix* places each node,
// once, when the Runtime is built:
//
//   operator                 placement                     condition
//   ------------------------ ----------------------------- ---------------------------------------
//   Gemm (float)             DEVICE_SPARSE / DEVICE_DENSE  B constant, 2-D; A 2-D (transA on host)
//   MatMul (float)           DEVICE_SPARSE / DEVICE_DENSE  B constant ([K,N], 1-D [K], or batched
//                                                          [..., K, N]: one GEMM per matrix)
//   MatMulInteger            DEVICE_SPARSE / DEVICE_DENSE  A, B uint8/int8; B and b_zero_point
//                                                          constant
//   QLinearMatMul            DEVICE_SPARSE / DEVICE_DENSE  as MatMulInteger; scales float
//   Gemm in QDQ form         DEVICE_SPARSE / DEVICE_DENSE  DequantizeLinear of int8 A and of a
//   (+ Relu, QuantizeLinear)  (one layer, bit-exact)       constant int8 B, symmetric (docs/
//                                                          runtime.md, "Deploying a quantized
//                                                          network")
//   Conv (1-D, 2-D, float)   DEVICE_SPARSE / DEVICE_DENSE  W constant, group = 1: one im2col GEMM
//                                                          (grouped, depthwise: on the host)
//   Conv in QDQ form         DEVICE_SPARSE / DEVICE_DENSE  as the QDQ Gemm, int8 input lowered by
//                             (one layer, bit-exact)       im2col, weight scales on axis 0, group 1
//   QuantizeLinear,          HOST_UNSUPPORTED_OP           when not part of a QDQ layer (e.g. the
//   DequantizeLinear                                       network's float input)
//   Add (constant bias)      fused into the GEMM before it (float GEMMs; see below)
//   Relu                     fused into the float GEMM (or GEMM + Add) before it
//   Flatten, Reshape,        shape ops: no data moves, no fallback
//   Identity, Constant
//   Add/Sub/Mul/Div, Relu,   HOST: fallbacks, counted (unfused Add/Relu: HOST_UNFUSED; the
//   Exp, Softmax,            others HOST_UNSUPPORTED_OP); Gemm/MatMul/... that miss a device
//   ReduceMax, ReduceSum,    condition run on the host as HOST_UNSUPPORTED_CASE
//   Transpose, Cast,
//   pooling, Concat,         (a BatchNormalization right after a Conv is folded into it; the
//   Batch/LayerNormalization  full table with every condition is in docs/runtime.md)
//   anything else            the Runtime refuses the model (no host kernel), naming the node
//
// A device GEMM is sparse when every weight matrix, in the form the device receives it, is N:M
// sparse along K for the device's pattern and the device has a sparse mode; otherwise it runs in
// dense mode, counted as a DENSE_WEIGHT fallback with the first offending group as the reason.
//
// Quantization policy of the float device path (Gemm, MatMul), with nmsa/quant.hpp:
//   * weights: symmetric per output channel (quantize_weights_per_channel), s_w[n] =
//     max_k |W[k][n]| / 127 (0 for an all-zero channel, whose values are all 0),
//     q = round_half_even(W / s_w[n]) in [-127, 127], computed once when the Runtime is built; the
//     N:M test runs on these INT8 values, so a weight pruned in float stays sparse;
//   * activations: symmetric per tensor (activation_scale, quantize_activations), calibrated on
//     the actual input of every run: s_x = max |A| / 127 (1 when A is all zero), same rounding;
//     a non-finite activation is an error (no scale represents it);
//   * the device accumulates in INT32 (no epilogue, INT32 output); the host dequantizes
//     y = alpha * acc * s_x * s_w[n] in double, adds beta * C, then the fused Add and ReLU, and
//     stores float. Per element |y - y_float| <= |alpha| * sum_k (|a_k| s_w/2 + |w_k| s_x/2 +
//     s_x s_w / 4), the bound tests check against.
//   The fused Add/ReLU thus run in the dequantization pass of the layer, not as separate host
//   layers; the device's INT32-output STORE has no bias and no ReLU to carry them.
//
// Integer device path (MatMulInteger, QLinearMatMul), bit-exact: with zero points za (per tensor
// or per row of A) and zb (per tensor or per column of B), each operand is sent as INT8
// A' = A - za when every such value fits INT8 (ca = 0), else A' = A - oA with oA = 128 for uint8,
// 0 for int8 and ca = oA - za (likewise B', cb, for B at build time, so that B' keeps the zeros of
// B - zb and with them its N:M sparsity). Then exactly, per row i and column n,
//   sum_k (A - za)(B - zb) = acc + cb[n] * rowsum(A'_i) + ca[i] * colsum(B'_n) + K ca[i] cb[n],
// where acc = A' * B' is the device's INT32 result and the corrections are host int64
// arithmetic; MatMulInteger's int32 output wraps as INT32 arithmetic does. QLinearMatMul then
// requantizes with the device epilogue's arithmetic (quantize_multiplier of
// a_scale * b_scale[n] / y_scale computed in double, round half up), adds y_zero_point and
// saturates to the output type. When cb = 0, ca is one value, and the output range is the
// device's (int8 with y_zero_point 0, or uint8 with y_zero_point 128) the requantization runs in
// the device's STORE epilogue, with ca * colsum(B'_n) as its per-channel bias; otherwise on the
// host (the reason says which). Exact while no INT32 partial sum of A' * B' overflows
// (K <= 2^31 / 128^2 = 131072).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nmsa/cycle_model.hpp"
#include "nmsa/device.hpp"
#include "nmsa/device_caps.hpp"
#include "nmsa/onnx_model.hpp"

namespace nmsa {

enum class Placement { DEVICE_SPARSE, DEVICE_DENSE, HOST };
std::string_view to_string(Placement p);

// Why a node does not run where it would in the ideal case (sparse on the device, or a shape op).
enum class Fallback {
  NONE,
  DENSE_WEIGHT,           // on the device in dense mode: a weight is not N:M (or no sparse mode)
  HOST_UNSUPPORTED_OP,    // the device has no such operator (Softmax, Exp, ...)
  HOST_UNSUPPORTED_CASE,  // a device operator whose instance the device cannot take
  HOST_UNFUSED,           // an Add or Relu with no device GEMM to fuse into
};
std::string_view to_string(Fallback f);

// What the device did for one layer, summed over runs (from its performance counters).
struct DeviceStats {
  std::uint64_t programs = 0;  // GemmPrograms executed (one per weight matrix per run)
  std::uint64_t commands = 0;
  // START to done; 0 on the functional model, which has no clock. A chained layer's share of
  // its stream's: the cycle model's split at the layers' last STOREs, scaled to the measured.
  std::uint64_t cycles = 0;
  std::uint64_t predicted_cycles = 0;  // the cycle model's, on a device without a clock
  std::uint64_t compute_cycles = 0;    // cycles the array issued beats
  std::uint64_t tiles_sparse = 0;
  std::uint64_t tiles_dense = 0;
  std::uint64_t macs = 0;  // dense-equivalent MACs
  std::uint64_t dma_rd_bytes = 0;
  std::uint64_t dma_wr_bytes = 0;
  std::uint64_t meta_bytes = 0;  // of dma_rd_bytes, N:M metadata
  // Programs whose output was compared with the golden model and equalled it
  // (RuntimeOptions::check_golden); a difference is an error, so it never counts.
  std::uint64_t golden_checked = 0;
  DeviceStats& operator+=(const DeviceStats& o);
  // The counts since `earlier` (a copy taken before a run): the run's own.
  DeviceStats operator-(const DeviceStats& earlier) const;
};

// What the host did for one host layer (placed on the host, or a shape op), summed over runs:
// wall-clock time on the machine running the runtime, which no device figure includes. Host work
// inside a device layer (a Conv's im2col, the logits' dequantization) is that layer's, not here.
struct HostStats {
  std::uint64_t runs = 0;
  double seconds = 0;
};

struct LayerReport {
  std::size_t node = 0;  // index into Graph::nodes
  std::string name;
  std::string op_type;
  Placement placement = Placement::HOST;
  Fallback fallback = Fallback::NONE;
  std::string reason;
  bool folded = false;                   // a constant computed when the model is loaded
  std::string fused_into;                // the layer this node runs in, if it was fused
  std::vector<std::string> fused_nodes;  // nodes fused into this layer
  // The layers sharing this layer's command stream ("fc1 -> fc2 -> fc3"), when it is chained
  // (RuntimeOptions::chain_layers); empty when it runs alone.
  std::string stream;
  DeviceStats device;
  HostStats host;
};

struct PlacementCounts {
  std::size_t device_sparse = 0;  // layers (fused nodes not counted)
  std::size_t device_dense = 0;
  std::size_t host = 0;   // host layers: fallbacks and shape ops (not folded constants)
  std::size_t fused = 0;  // nodes that run inside another layer
  std::size_t folded = 0;  // constants computed when the model is loaded: they never run
  std::size_t shape_ops = 0;
  std::size_t dense_fallbacks = 0;
  std::size_t host_unsupported_op = 0;
  std::size_t host_unsupported_case = 0;
  std::size_t host_unfused = 0;
  std::size_t host_fallbacks() const {
    return host_unsupported_op + host_unsupported_case + host_unfused;
  }
  std::size_t fallbacks() const { return dense_fallbacks + host_fallbacks(); }
};

struct RuntimeOptions {
  bool allow_sparse = true;  // false: every device GEMM dense (for sparse/dense comparisons)
  bool fuse = true;          // fuse a constant bias Add and a Relu into the GEMM before them
  // false: every GEMM on the host in float (with fuse = false, the ONNX reference semantics;
  // the conformance run compares operators so)
  bool device_layers = true;
  // The host memory the compiler ranks tiling plans for (GemmOptions::memory); unset: the
  // compiler's coarse ranking.
  std::optional<PerfModelParams> memory;
  // Every device GEMM's output is also computed by the golden model (nmsa/golden.hpp, with the
  // epilogue's arithmetic when the program has one) and must equal it bit for bit; a difference
  // is an error naming the node and the first element that differs. Costs one host GEMM per
  // device GEMM.
  bool check_golden = false;
  // Consecutive QDQ Gemm layers, each reading the int8 output of the one before, run as one
  // command stream with one START (nmsa/program_chain.hpp): no host round trip between them.
  // A chained layer's counters are its share of the stream's (docs/runtime.md, "Chained
  // layers"). false: every device layer its own program and START.
  bool chain_layers = true;
};

class Runtime {
 public:
  // Reads the device's capability registers, validates the graph (every value produced once,
  // before it is read; no cycle), sorts it topologically and plans every node. Throws
  // std::runtime_error naming the model and the node for a malformed graph or a node that neither
  // the device nor the host can run. `device` must outlive the Runtime; while run() executes the
  // runtime is the device's only user (it lays programs out in device.memory() and clears that
  // memory after each GEMM).
  Runtime(Graph graph, Device& device, RuntimeOptions options = {});

  // Whether the runtime places the ONNX operator `op_type` (default domain) at all: on the device,
  // on the host, or as a shape operation. Anything else is refused with an error naming the node.
  static bool supports_operator(const std::string& op_type);

  // Runs the graph on `inputs` (every runtime input, by name) and returns the graph's outputs.
  // Throws std::runtime_error naming the node for inputs of the wrong type or shape, kernels that
  // reject their operands, or a device error.
  std::map<std::string, Tensor> run(const std::map<std::string, Tensor>& inputs);

  const Graph& graph() const { return graph_; }
  const DeviceCaps& caps() const { return caps_; }
  const std::vector<LayerReport>& layers() const { return layers_; }  // one per node, graph order
  const LayerReport& layer(const std::string& node_name) const;       // throws std::out_of_range
  PlacementCounts counts() const;
  // Every host layer's runs and wall-clock seconds, summed over the layers (and over all runs so
  // far: the difference of two calls is what happened between them).
  HostStats host_total() const;
  // The supported-layer matrix of this model as a text table plus the counts.
  std::string describe() const;

 private:
  struct Plan;
  Graph graph_;
  Device* device_;
  DeviceCaps caps_;
  RuntimeOptions options_;
  std::vector<LayerReport> layers_;
  std::vector<std::size_t> order_;  // topological order of node indices
  std::shared_ptr<Plan> plan_;
};

}  // namespace nmsa
