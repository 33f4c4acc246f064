// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// The test set through a device, batch by batch, the way a user deploys the network: the
// quantized MLP in ONNX's QDQ form (serialize_int8_mlp_onnx, the demo's model.onnx) on the
// runtime (nmsa/runtime.hpp), each layer one device GEMM with its epilogue; with the golden
// model's logits beside it, and a small pool that runs such jobs on the machine's cores while the
// main thread shows one progress bar for all of them.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "nmsa/cycle_model.hpp"
#include "nmsa/device.hpp"
#include "nmsa/int8_mlp.hpp"
#include "nmsa/report.hpp"
#include "nmsa/runtime.hpp"

namespace nmsa::demo {

struct TestSetRun {
  std::string device;                      // Device::name()
  int batch_size = 0;
  std::vector<std::uint64_t> batch_cycles;  // device cycles of every batch (0 on the model)
  std::vector<double> batch_host_us;        // wall-clock us of every batch's host layers
  std::vector<DeviceStats> layers;          // per layer of the model, summed over the batches
  MatrixF logits;                           // every test row
  std::uint64_t batches_matching_golden = 0;
  std::uint64_t batches() const { return batch_cycles.size(); }
  std::uint64_t total_cycles() const;
};

// The golden model's logits of the float inputs x: what every device must return, bit for bit.
MatrixF golden_logits(const Int8Mlp& model, const MatrixF& x);

// Runs x (float test images) through `model` exported in QDQ form and run by a Runtime on
// `device`, in batches of batch_size (the last may be shorter), the compiler ranking its plans
// for `memory`. `golden` holds golden_logits(model, x); each batch is compared with it bit for
// bit. `batches_done` is incremented after every batch.
TestSetRun run_test_set(Device& device, const Int8Mlp& model, const MatrixF& x,
                        const MatrixF& golden, int batch_size, const PerfModelParams& memory,
                        std::atomic<long>* batches_done = nullptr);

// Consecutive parts of one test set (each run on its own device, e.g. on another core) as one
// run: batches and accumulators in order, per-layer counters summed. The parts must share a
// batch size and every part but the last must end on a batch boundary.
TestSetRun concatenate(const std::vector<TestSetRun>& parts);

// Per-batch latency of a run over `rows` test rows, of full batches only: a shorter last batch
// would be a latency of another shape.
LatencySummary full_batch_latency(const std::string& label, const TestSetRun& run,
                                  Eigen::Index rows);

// Whether every batch of every run equals the golden model bit for bit.
bool all_match_golden(const std::vector<TestSetRun>& runs);

// Batches of `a` and `b` whose logits are equal bit for bit.
std::uint64_t matching_batches(const TestSetRun& a, const TestSetRun& b);

// Runs the jobs on `workers` threads; the calling thread draws a ProgressBar labelled `label`
// of `*done` out of `total`. Rethrows the first exception of a job after all have ended.
void run_parallel(const std::vector<std::function<void()>>& jobs, int workers,
                  const std::string& label, const std::atomic<long>* done, long total);

}  // namespace nmsa::demo
