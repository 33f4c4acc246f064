// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// The ONNX backend test data Debian ships (libonnx-testdata: node, simple, real,
// pytorch-converted, pytorch-operator) through the runtime. Every test whose model nmsa can load
// and whose operators the runtime supports runs:
//  - on the host, every GEMM in float and nothing fused (RuntimeOptions device_layers = false,
//    fuse = false), against ONNX's tolerance (|y - ref| <= 1e-7 + 1e-3 |ref|, as ONNX's own
//    backend tests compare): the operators' semantics;
//  - and, when the runtime places layers on the device (the functional model of the `small`
//    configuration), again as deployed, against the INT8 tolerance of docs/runtime.md.
// Each test ends passed, failed (a wrong result: the run fails), refused (the runtime stopped with
// an error naming the node: an operator variant it does not implement) or skipped (a model nmsa
// cannot load, or an operator the runtime does not support), with its reason.
//
// Usage: nmsa_onnx_conformance DATA_DIR [--doc FILE.md | --check-doc FILE.md]
// Prints the summary by suite and reason. --doc writes the page docs/onnx_conformance.md (the
// summary and every test with its outcome); --check-doc fails when that page differs from what
// this run would write. Exit status 1 when a test failed or the page is out of date.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "../common/onnx_data_sets.hpp"
#include "nmsa/device.hpp"
#include "nmsa/onnx_model.hpp"
#include "nmsa/runtime.hpp"

namespace fs = std::filesystem;

namespace {

constexpr double kOnnxRtol = 1e-3;
constexpr double kOnnxAtol = 1e-7;
// INT8 tolerance of a deployed run, relative to the output's largest magnitude, per device layer
// on the way (docs/runtime.md, "ONNX conformance").
constexpr double kInt8StepsPerLayer = 4.0 / 127.0;
const char* const kSuites[] = {"node", "simple", "real", "pytorch-converted", "pytorch-operator"};

using DataSet = nmsa::testing::OnnxDataSet;

// The message of a loader or runtime error without the file name in front, for grouping.
std::string reason_of(const std::string& what, const std::string& path) {
  std::string r = what;
  if (r.rfind(path, 0) == 0) r = r.substr(path.size());
  while (!r.empty() && (r[0] == ':' || r[0] == ' ')) r.erase(0, 1);
  return r.size() > 160 ? r.substr(0, 157) + "..." : r;
}

// Empty when `y` matches `ref`; else what differs. `int8_tol` > 0 adds the INT8 tolerance, a
// fraction of the output's largest magnitude.
std::string compare(const nmsa::Tensor& y, const nmsa::Tensor& ref, double int8_tol,
                    double& worst_rel) {
  if (y.type != ref.type || y.shape != ref.shape) return y.describe() + " vs " + ref.describe();
  if (!ref.is_float()) return y.ints == ref.ints ? "" : "integer values differ";
  double max_ref = 0;
  for (const float e : ref.floats) {
    if (std::isfinite(e)) max_ref = std::max(max_ref, double{std::abs(e)});
  }
  for (std::size_t i = 0; i < ref.floats.size(); ++i) {
    const double e = ref.floats[i], v = y.floats[i];
    if ((std::isnan(e) && std::isnan(v)) || e == v) continue;
    const double err = std::abs(v - e);
    const double tol = kOnnxAtol + kOnnxRtol * std::abs(e) + int8_tol * max_ref;
    if (max_ref > 0) worst_rel = std::max(worst_rel, err / max_ref);
    if (!(err <= tol)) {
      std::ostringstream s;
      s << "element " << i << " = " << v << ", expected " << e << " (error " << err
        << ", tolerance " << tol << ")";
      return s.str();
    }
  }
  return "";
}

struct Outcome {
  std::string suite, test, result, detail;  // result: passed, failed, refused, skipped
};

Outcome run_test(const std::string& suite, const fs::path& dir) {
  Outcome o{suite, dir.filename().string(), "", ""};
  const std::string model_path = (dir / "model.onnx").string();
  nmsa::Graph graph;
  std::vector<DataSet> sets;
  try {
    graph = nmsa::load_onnx_model(model_path);
    sets = nmsa::testing::load_onnx_data_sets(dir.string());
  } catch (const std::exception& e) {
    o.result = "skipped";
    o.detail = "not loadable: " + reason_of(e.what(), model_path);
    return o;
  }
  std::set<std::string> unsupported;
  for (const nmsa::Node& n : graph.nodes) {
    const bool default_domain = n.domain.empty() || n.domain == "ai.onnx";
    if (!default_domain || !nmsa::Runtime::supports_operator(n.op_type)) {
      unsupported.insert(default_domain ? n.op_type : n.domain + "." + n.op_type);
    }
  }
  if (!unsupported.empty()) {
    o.result = "skipped";
    for (const std::string& op : unsupported) o.detail += (o.detail.empty() ? "" : ", ") + op;
    o.detail = "operator not supported: " + o.detail;
    return o;
  }
  if (sets.empty()) {
    o.result = "skipped";
    o.detail = "no test data set";
    return o;
  }

  const std::unique_ptr<nmsa::Device> dev = nmsa::make_model_device("small");
  nmsa::RuntimeOptions host;
  host.device_layers = false;
  host.fuse = false;
  std::string step = "host";
  try {
    const nmsa::Runtime reference(graph, *dev, host);
    const nmsa::Runtime deployed(graph, *dev);
    const nmsa::PlacementCounts c = deployed.counts();
    const std::size_t device_layers = c.device_sparse + c.device_dense;
    double worst_rel = 0;
    for (std::size_t s = 0; s < sets.size(); ++s) {
      const DataSet& d = sets[s];
      if (d.inputs.size() != graph.inputs.size() || d.outputs.size() != graph.outputs.size()) {
        o.result = "skipped";
        o.detail = "the data set's tensors do not match the graph's inputs and outputs";
        return o;
      }
      std::map<std::string, nmsa::Tensor> feed;
      for (std::size_t i = 0; i < d.inputs.size(); ++i) feed[graph.inputs[i].name] = d.inputs[i];
      for (const bool on_device : {false, true}) {
        if (on_device && device_layers == 0) continue;
        step = on_device ? "device" : "host";
        const nmsa::Runtime& rt = on_device ? deployed : reference;
        const auto out = const_cast<nmsa::Runtime&>(rt).run(feed);
        for (std::size_t i = 0; i < d.outputs.size(); ++i) {
          const std::string& name = graph.outputs[i].name;
          const std::string diff =
              compare(out.at(name), d.outputs[i],
                      on_device ? kInt8StepsPerLayer * static_cast<double>(device_layers) : 0.0,
                      worst_rel);
          if (!diff.empty()) {
            o.result = "failed";
            o.detail = step + ", data set " + std::to_string(s) + ", output '" + name + "': " + diff;
            return o;
          }
        }
      }
    }
    o.result = "passed";
    if (device_layers > 0) {
      std::ostringstream s;
      s << "host; device (" << device_layers << " layer" << (device_layers > 1 ? "s" : "")
        << "), max error " << worst_rel * 100 << "% of max |ref|";
      o.detail = s.str();
    } else {
      o.detail = "host";
    }
  } catch (const std::exception& e) {
    o.result = "refused";
    o.detail = step + ": " + reason_of(e.what(), model_path);
  }
  return o;
}

std::string summary_table(const std::vector<Outcome>& outcomes) {
  std::map<std::string, std::map<std::string, int>> by_suite;  // suite -> result -> count
  for (const Outcome& o : outcomes) ++by_suite[o.suite][o.result];
  std::ostringstream s;
  s << "| suite | passed | failed | refused | skipped |\n|---|---|---|---|---|\n";
  for (auto& [suite, r] : by_suite) {
    s << "| " << suite << " | " << r["passed"] << " | " << r["failed"] << " | " << r["refused"]
      << " | " << r["skipped"] << " |\n";
  }
  return s.str();
}

std::string doc_page(const std::vector<Outcome>& outcomes) {
  std::ostringstream md;
  md << "# ONNX conformance\n\n"
        "Every model of the ONNX backend test data Debian ships (`libonnx-testdata`) through the\n"
        "runtime, by `build/nmsa_onnx_conformance` (`tests/onnx/onnx_conformance.cpp`; CTest\n"
        "`onnx.conformance` checks that this page is what the current code gives). How each test\n"
        "is run and the tolerances: [runtime.md](runtime.md), section \"ONNX conformance\". The\n"
        "`real` suite holds no models (only links to download them) and does not appear.\n\n"
     << summary_table(outcomes) << "\n| suite | test | result | detail |\n|---|---|---|---|\n";
  for (const Outcome& o : outcomes) {
    std::string detail = o.detail;
    for (char& ch : detail) {
      if (ch == '|') ch = '/';
      if (ch == '\n') ch = ' ';
    }
    md << "| " << o.suite << " | `" << o.test << "` | " << o.result << " | " << detail << " |\n";
  }
  return md.str();
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc == 4 ? argv[2] : "";
  if (argc != 2 && !(argc == 4 && (mode == "--doc" || mode == "--check-doc"))) {
    std::cerr << "usage: nmsa_onnx_conformance DATA_DIR [--doc FILE.md | --check-doc FILE.md]\n";
    return 2;
  }
  const fs::path root = argv[1];
  if (!fs::is_directory(root / "node")) {
    std::cerr << "nmsa_onnx_conformance: " << root.string()
              << " holds no ONNX backend test data (install libonnx-testdata)\n";
    return 2;
  }
  std::vector<Outcome> outcomes;
  for (const char* suite : kSuites) {
    std::vector<fs::path> tests;
    if (!fs::is_directory(root / suite)) continue;
    for (const auto& e : fs::directory_iterator(root / suite)) {
      if (fs::exists(e.path() / "model.onnx")) tests.push_back(e.path());
    }
    std::sort(tests.begin(), tests.end());
    for (const fs::path& t : tests) outcomes.push_back(run_test(suite, t));
  }

  std::map<std::string, int> totals, skip_reasons;
  for (const Outcome& o : outcomes) {
    ++totals[o.result];
    if (o.result == "skipped") ++skip_reasons[o.detail.substr(0, o.detail.find(','))];
  }
  std::cout << summary_table(outcomes) << "\nmost frequent reasons to skip:\n";
  std::vector<std::pair<int, std::string>> reasons;
  for (const auto& [reason, n] : skip_reasons) reasons.push_back({n, reason});
  std::sort(reasons.rbegin(), reasons.rend());
  for (std::size_t i = 0; i < reasons.size() && i < 12; ++i) {
    std::printf("  %4d  %s\n", reasons[i].first, reasons[i].second.c_str());
  }
  for (const Outcome& o : outcomes) {
    if (o.result == "failed" || o.result == "refused") {
      std::printf("%s %s/%s: %s\n", o.result.c_str(), o.suite.c_str(), o.test.c_str(),
                  o.detail.c_str());
    }
  }
  int status = totals["failed"] == 0 ? 0 : 1;
  const std::string page = doc_page(outcomes);
  if (mode == "--doc") {
    std::ofstream(argv[3]) << page;
  } else if (mode == "--check-doc") {
    std::ifstream in(argv[3]);
    const std::string current((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (current != page) {
      std::printf("%s is out of date: run build/nmsa_onnx_conformance %s --doc %s\n", argv[3],
                  argv[1], argv[3]);
      status = 1;
    }
  }
  std::printf("\n%d passed, %d failed, %d refused, %d skipped\n", totals["passed"],
              totals["failed"], totals["refused"], totals["skipped"]);
  return status;
}
