// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
#include "test_set.hpp"

#include <chrono>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "nmsa/onnx_export.hpp"
#include "nmsa/onnx_model.hpp"
#include "nmsa/progress.hpp"

namespace nmsa::demo {

std::uint64_t TestSetRun::total_cycles() const {
  std::uint64_t t = 0;
  for (auto c : batch_cycles) t += c;
  return t;
}

MatrixF golden_logits(const Int8Mlp& model, const MatrixF& x) {
  return logits_from_accumulators(model.layers.back(),
                                  golden_forward(model, quantize_input(model, x)));
}

TestSetRun run_test_set(Device& device, const Int8Mlp& model, const MatrixF& x,
                        const MatrixF& golden, int batch_size, const PerfModelParams& memory,
                        std::atomic<long>* batches_done) {
  if (batch_size <= 0) throw std::invalid_argument("run_test_set: batch size must be positive");
  if (golden.rows() != x.rows()) {
    throw std::invalid_argument("run_test_set: golden results for " +
                                std::to_string(golden.rows()) + " rows, input has " +
                                std::to_string(x.rows()));
  }
  RuntimeOptions options;
  options.memory = memory;
  Runtime runtime(parse_onnx_model(serialize_int8_mlp_onnx(model), "model.onnx"), device, options);
  TestSetRun out;
  out.device = device.name();
  out.batch_size = batch_size;
  out.layers.resize(model.layers.size());
  out.logits.resize(x.rows(), golden.cols());
  for (Eigen::Index start = 0; start < x.rows(); start += batch_size) {
    const Eigen::Index n = std::min<Eigen::Index>(batch_size, x.rows() - start);
    // The runtime's counters run over all batches: a batch is the difference.
    std::vector<DeviceStats> before;
    for (const Int8MlpLayer& l : model.layers) before.push_back(runtime.layer(l.name).device);
    const double host_before = runtime.host_total().seconds;
    Tensor logits;
    try {
      const MatrixF rows = x.middleRows(start, n);
      logits = runtime
                   .run({{"input", Tensor::make_float({n, x.cols()},
                                                      std::vector<float>(rows.data(),
                                                                         rows.data() + rows.size()))}})
                   .at("logits");
    } catch (const std::exception& e) {
      throw std::runtime_error("batch " + std::to_string(start / batch_size) + " (test rows " +
                               std::to_string(start) + ".." + std::to_string(start + n - 1) +
                               "): " + e.what());
    }
    std::uint64_t cycles = 0;
    for (std::size_t i = 0; i < model.layers.size(); ++i) {
      const DeviceStats d = runtime.layer(model.layers[i].name).device - before[i];
      cycles += d.cycles;
      out.layers[i] += d;
    }
    out.batch_cycles.push_back(cycles);
    out.batch_host_us.push_back((runtime.host_total().seconds - host_before) * 1e6);
    out.logits.middleRows(start, n) =
        Eigen::Map<const MatrixF>(logits.floats.data(), n, golden.cols());
    if (out.logits.middleRows(start, n) == golden.middleRows(start, n)) {
      ++out.batches_matching_golden;
    }
    if (batches_done != nullptr) ++*batches_done;
  }
  return out;
}

LatencySummary full_batch_latency(const std::string& label, const TestSetRun& run,
                                  Eigen::Index rows) {
  LatencySummary l;
  l.label = label;
  l.batch_size = run.batch_size;
  l.batch_cycles = run.batch_cycles;
  l.batch_host_us = run.batch_host_us;
  if (rows % run.batch_size != 0 && l.batch_cycles.size() > 1) {
    l.batch_cycles.pop_back();
    if (!l.batch_host_us.empty()) l.batch_host_us.pop_back();
  }
  compute_percentiles(l);
  return l;
}

bool all_match_golden(const std::vector<TestSetRun>& runs) {
  for (const TestSetRun& r : runs) {
    if (r.batches_matching_golden != r.batches()) return false;
  }
  return true;
}

TestSetRun concatenate(const std::vector<TestSetRun>& parts) {
  if (parts.empty()) throw std::invalid_argument("concatenate: no parts");
  TestSetRun out;
  out.device = parts.front().device;
  out.batch_size = parts.front().batch_size;
  out.layers.resize(parts.front().layers.size());
  Eigen::Index rows = 0;
  for (const auto& p : parts) rows += p.logits.rows();
  out.logits.resize(rows, parts.front().logits.cols());
  Eigen::Index at = 0;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const TestSetRun& p = parts[i];
    const bool aligned = i + 1 == parts.size() || p.logits.rows() % p.batch_size == 0;
    if (p.batch_size != out.batch_size || p.layers.size() != out.layers.size() || !aligned) {
      throw std::invalid_argument("concatenate: part " + std::to_string(i) +
                                  " does not continue the run");
    }
    out.batch_cycles.insert(out.batch_cycles.end(), p.batch_cycles.begin(), p.batch_cycles.end());
    out.batch_host_us.insert(out.batch_host_us.end(), p.batch_host_us.begin(),
                             p.batch_host_us.end());
    for (std::size_t l = 0; l < p.layers.size(); ++l) out.layers[l] += p.layers[l];
    out.logits.middleRows(at, p.logits.rows()) = p.logits;
    at += p.logits.rows();
    out.batches_matching_golden += p.batches_matching_golden;
  }
  return out;
}

std::uint64_t matching_batches(const TestSetRun& a, const TestSetRun& b) {
  if (a.batch_size != b.batch_size || a.logits.rows() != b.logits.rows() ||
      a.logits.cols() != b.logits.cols()) {
    return 0;
  }
  std::uint64_t same = 0;
  const Eigen::Index rows = a.logits.rows();
  for (Eigen::Index start = 0; start < rows; start += a.batch_size) {
    const Eigen::Index n = std::min<Eigen::Index>(a.batch_size, rows - start);
    if (a.logits.middleRows(start, n) == b.logits.middleRows(start, n)) ++same;
  }
  return same;
}

void run_parallel(const std::vector<std::function<void()>>& jobs, int workers,
                  const std::string& label, const std::atomic<long>* done, long total) {
  std::atomic<std::size_t> next{0};
  const int n = std::max(1, std::min<int>(workers, static_cast<int>(jobs.size())));
  std::atomic<int> running{n};
  std::exception_ptr first_error;
  std::mutex error_mutex;
  std::vector<std::thread> threads;
  for (int t = 0; t < n; ++t) {
    threads.emplace_back([&] {
      for (std::size_t j = next++; j < jobs.size(); j = next++) {
        try {
          jobs[j]();
        } catch (...) {
          std::lock_guard<std::mutex> lock(error_mutex);
          if (!first_error) first_error = std::current_exception();
          next = jobs.size();  // start nothing new
        }
      }
      --running;
    });
  }
  {
    ProgressBar bar(label, static_cast<std::uint64_t>(std::max(total, 1L)));
    while (running > 0) {
      if (done != nullptr) bar.update(static_cast<std::uint64_t>(std::max(0L, done->load())));
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    if (!first_error) bar.finish();
  }
  for (auto& t : threads) t.join();
  if (first_error) std::rethrow_exception(first_error);
}

}  // namespace nmsa::demo
