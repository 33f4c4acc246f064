// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
#include "test_set.hpp"

#include <chrono>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "nmsa/progress.hpp"

namespace nmsa::demo {

std::uint64_t TestSetRun::total_cycles() const {
  std::uint64_t t = 0;
  for (auto c : batch_cycles) t += c;
  return t;
}

TestSetRun run_test_set(Device& device, const Int8Mlp& model, const MatrixI8& x,
                        const MatrixI32& golden, int batch_size, const PerfModelParams& memory,
                        std::atomic<long>* batches_done) {
  if (batch_size <= 0) throw std::invalid_argument("run_test_set: batch size must be positive");
  if (golden.rows() != x.rows()) {
    throw std::invalid_argument("run_test_set: golden results for " +
                                std::to_string(golden.rows()) + " rows, input has " +
                                std::to_string(x.rows()));
  }
  MlpDeviceRunner runner(device, model, memory);
  TestSetRun out;
  out.device = device.name();
  out.batch_size = batch_size;
  out.layers.resize(model.layers.size());
  out.accumulators.resize(x.rows(), golden.cols());
  for (Eigen::Index start = 0; start < x.rows(); start += batch_size) {
    const Eigen::Index n = std::min<Eigen::Index>(batch_size, x.rows() - start);
    BatchResult r;
    try {
      r = runner.run(x.middleRows(start, n));
    } catch (const std::exception& e) {
      throw std::runtime_error("batch " + std::to_string(start / batch_size) + " (test rows " +
                               std::to_string(start) + ".." + std::to_string(start + n - 1) +
                               "): " + e.what());
    }
    out.batch_cycles.push_back(r.cycles());
    for (std::size_t i = 0; i < r.layers.size(); ++i) out.layers[i].add(r.layers[i]);
    out.accumulators.middleRows(start, n) = r.accumulators;
    if (r.accumulators == golden.middleRows(start, n)) ++out.batches_matching_golden;
    if (batches_done != nullptr) ++*batches_done;
  }
  return out;
}

TestSetRun concatenate(const std::vector<TestSetRun>& parts) {
  if (parts.empty()) throw std::invalid_argument("concatenate: no parts");
  TestSetRun out;
  out.device = parts.front().device;
  out.batch_size = parts.front().batch_size;
  out.layers.resize(parts.front().layers.size());
  Eigen::Index rows = 0;
  for (const auto& p : parts) rows += p.accumulators.rows();
  out.accumulators.resize(rows, parts.front().accumulators.cols());
  Eigen::Index at = 0;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const TestSetRun& p = parts[i];
    const bool aligned = i + 1 == parts.size() || p.accumulators.rows() % p.batch_size == 0;
    if (p.batch_size != out.batch_size || p.layers.size() != out.layers.size() || !aligned) {
      throw std::invalid_argument("concatenate: part " + std::to_string(i) +
                                  " does not continue the run");
    }
    out.batch_cycles.insert(out.batch_cycles.end(), p.batch_cycles.begin(), p.batch_cycles.end());
    for (std::size_t l = 0; l < p.layers.size(); ++l) out.layers[l].add(p.layers[l]);
    out.accumulators.middleRows(at, p.accumulators.rows()) = p.accumulators;
    at += p.accumulators.rows();
    out.batches_matching_golden += p.batches_matching_golden;
  }
  return out;
}

std::uint64_t matching_batches(const TestSetRun& a, const TestSetRun& b) {
  if (a.batch_size != b.batch_size || a.accumulators.rows() != b.accumulators.rows() ||
      a.accumulators.cols() != b.accumulators.cols()) {
    return 0;
  }
  std::uint64_t same = 0;
  const Eigen::Index rows = a.accumulators.rows();
  for (Eigen::Index start = 0; start < rows; start += a.batch_size) {
    const Eigen::Index n = std::min<Eigen::Index>(a.batch_size, rows - start);
    if (a.accumulators.middleRows(start, n) == b.accumulators.middleRows(start, n)) ++same;
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
