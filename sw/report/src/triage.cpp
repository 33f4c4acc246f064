// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
#include "nmsa/triage.hpp"

#include <cmath>
#include <map>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "nmsa/report.hpp"
#include "report_common.hpp"
#include "report_reader.hpp"

namespace nmsa {

using namespace report_detail;

namespace {

constexpr const char* kModelLead = "model optimization lead";
constexpr const char* kArchitectureOwner = "accelerator architecture owner";
constexpr const char* kCompilerOwner = "compiler sparsity pass owner";
constexpr const char* kServingOwner = "serving performance owner";

// The tags that make two runs incomparable when they differ: another split or batch measures
// other work, and counters of another register map are other figures.
constexpr const char* kLockedTags[] = {"data", "batch", "register map"};

struct Layer {
  std::string placement, reason;
  double sensitivity_pp = kNotMeasured;
  std::uint64_t cycles = 0, meta_bytes = 0, weight_bytes = 0;
  double utilization = kNotMeasured;
  // Metadata share of the weight records' bytes (benchmark files): fixed by the format, whatever
  // the schedule, since re-fetching a record moves its values and its metadata alike.
  double meta_share = kNotMeasured;
};

// What triage reads of one report.json, or of a benchmark file of build/bench.
struct Run {
  std::string file;
  std::string kind = "report";  // "report", or the benchmark: "workloads", "lens"

  std::uint64_t test_images = 0;
  double sparse_int8 = kNotMeasured, sparse_fp32 = kNotMeasured;
  double speedup = kNotMeasured;
  double memory_bytes_per_cycle = kNotMeasured;
  std::uint64_t p50 = 0, p99 = 0;
  std::uint64_t dma_read_bytes = 0, batches = 0, exact_golden = 0, exact_model = 0;
  std::vector<std::pair<std::string, Layer>> layers;  // in the report's order
  std::map<std::string, std::string> tags;
  const Layer* layer(const std::string& name) const {
    for (const auto& [n, l] : layers) {
      if (n == name) return &l;
    }
    return nullptr;
  }
};

std::string string_at(const ReadJson& j, const std::string& file, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return "";
  if (!it->is_string()) throw std::runtime_error(file + ": \"" + key + "\" must be a string");
  return it->get<std::string>();
}

// Calls `read(object, where)` for each element of the array j[key], every element an object;
// `where` names it in messages ("file: layers[2]").
template <typename Read>
void for_each_object(const ReadJson& j, const std::string& file, const char* key, Read read) {
  const ReadJson& array = require_key(j, file, key);
  if (!array.is_array()) {
    throw std::runtime_error(file + ": \"" + key + "\" must be an array");
  }
  for (std::size_t i = 0; i < array.size(); ++i) {
    const std::string where = file + ": " + key + "[" + std::to_string(i) + "]";
    if (!array[i].is_object()) throw std::runtime_error(where + " must be an object");
    read(array[i], where);
  }
}

// workloads.json (nmsa_bench_workloads): every production layer shape as one layer, placed
// sparse, its cycles, bytes and utilization the cycle model's; the speedup over all of them.
Run read_workloads(const std::string& file, const ReadJson& j) {
  Run r;
  r.file = file;
  r.kind = "workloads";
  double sparse_total = 0, dense_total = 0;
  for_each_object(j, file, "layers", [&](const ReadJson& l, const std::string& where) {
    Layer layer;
    layer.placement = "device sparse";
    layer.cycles = read_cycles(l, where, "sparse_cycles");
    const std::uint64_t dense = read_cycles(l, where, "dense_cycles");
    const double count = std::max<double>(1, static_cast<double>(read_cycles(l, where, "count")));
    const std::uint64_t bytes = read_cycles(l, where, "sparse_dma_bytes");
    const double meta = read_optional_number(l, where, "sparse_meta_bytes");
    const double weights = read_optional_number(l, where, "sparse_weight_bytes");
    if (measured(meta) && measured(weights) && weights > 0) layer.meta_share = meta / weights;
    layer.utilization = read_optional_number(l, where, "sparse_utilization");
    r.dma_read_bytes += static_cast<std::uint64_t>(count) * bytes;
    sparse_total += count * static_cast<double>(layer.cycles);
    dense_total += count * static_cast<double>(dense);
    const std::string name = string_at(l, where, "family") + "/" + string_at(l, where, "layer");
    r.layers.push_back({name, layer});
  });
  if (sparse_total > 0) r.speedup = dense_total / sparse_total;
  r.memory_bytes_per_cycle = read_optional_number(j, file, "bytes_per_cycle");
  // The buffers are part of the configuration: a what-if with other capacities is other hardware.
  std::string config = string_at(j, file, "config");
  for (const char* buffer : {"act_entries", "wgt_records"}) {
    const double entries = read_optional_number(j, file, buffer);
    if (measured(entries)) {
      config += std::string(config.find(':') == std::string::npos ? ": " : ", ") + buffer + " " +
                std::to_string(static_cast<std::uint64_t>(entries));
    }
  }
  r.tags["rtl configuration"] = config;
  r.tags["figures from"] = string_at(j, file, "figures_from");
  return r;
}

// lens.json (nmsa_bench_lens, nmsa_bench_contention): the latency tail at the highest
// background load, and the host memory it was measured on.
Run read_lens(const std::string& file, const ReadJson& j) {
  Run r;
  r.file = file;
  r.kind = "lens";
  r.tags["rtl configuration"] = string_at(j, file, "config");
  if (const auto c = j.find("contention"); c != j.end() && c->is_object()) {
    const std::string where = file + ": contention";
    const ReadJson& loads = require_key(*c, where, "loads");
    if (!loads.is_array() || loads.empty()) {
      throw std::runtime_error(where + ".loads must be a non-empty array");
    }
    const std::string last = where + ".loads[" + std::to_string(loads.size() - 1) + "].sparse";
    const ReadJson& sparse = require_key(loads.back(), last, "sparse");
    r.p50 = read_cycles(sparse, last, "p50");
    r.p99 = read_cycles(sparse, last, "p99");
    r.memory_bytes_per_cycle = read_optional_number(*c, where, "bytes_per_cycle");
  }
  return r;
}

Run read_run(const std::string& path) {
  const ReadReport report = read_report_json(path);
  const ReadJson& j = report.json;
  // A benchmark file has no report_format; anything else is read as a report, whose reading
  // names the key it lacks.
  if (!j.contains("report_format")) {
    if (j.contains("layers") && j.contains("figures_from")) return read_workloads(report.file, j);
    if (j.contains("knee_bytes_per_cycle_sparse") || j.contains("contention")) {
      return read_lens(report.file, j);
    }
  }
  Run r;
  r.file = report.file;
  const std::string& f = r.file;
  r.test_images = read_cycles(j, f, "test_images");
  r.sparse_int8 = read_accuracy(j, f, "sparse_int8_accuracy");
  r.sparse_fp32 = read_accuracy(j, f, "sparse_fp32_accuracy");
  r.speedup = read_speedup(j, f, "effective_speedup");
  r.memory_bytes_per_cycle = read_optional_number(j, f, "memory_bytes_per_cycle");
  r.p50 = read_cycles(j, f, "latency_cycles_p50");
  r.p99 = read_cycles(j, f, "latency_cycles_p99");
  r.dma_read_bytes = read_cycles(j, f, "dma_read_bytes");
  r.batches = read_cycles(j, f, "batches");
  r.exact_golden = read_cycles(j, f, "batches_bit_exact_golden");
  r.exact_model = read_cycles(j, f, "batches_bit_exact_model");
  for_each_object(j, f, "layers", [&](const ReadJson& l, const std::string& where) {
    Layer layer;
    layer.placement = string_at(l, where, "placement");
    layer.reason = string_at(l, where, "reason");
    layer.sensitivity_pp = read_optional_number(l, where, "sensitivity_pp");
    layer.cycles = read_cycles(l, where, "deployed_cycles");
    layer.meta_bytes = read_cycles(l, where, "meta_bytes");
    layer.weight_bytes = read_cycles(l, where, "deployed_weight_bytes");
    layer.utilization = read_optional_number(l, where, "utilization");
    const std::string name = string_at(l, where, "name");
    if (name.empty()) throw std::runtime_error(where + ": \"name\" is missing or empty");
    r.layers.push_back({name, layer});
  });
  if (const auto it = j.find("tags"); it != j.end() && it->is_object()) {
    for (const auto& [k, v] : it->items()) {
      if (v.is_string()) r.tags[k] = v.get<std::string>();
    }
  }
  return r;
}

bool grew(double base, double cand, double fraction) { return cand > base * (1.0 + fraction); }

std::string arrow(const std::string& a, const std::string& b) { return a + " -> " + b; }

std::string tag_or(const Run& r, const char* key, const std::string& fallback) {
  const auto it = r.tags.find(key);
  return it == r.tags.end() || it->second.empty() ? fallback : it->second;
}

// The configuration name of an "rtl configuration" tag ("default: 8x8 2:4, ...").
std::string config_name(const Run& r) {
  const std::string tag = tag_or(r, "rtl configuration", "default");
  return tag.substr(0, tag.find(':'));
}

std::string reproduce(const Run& r) {
  if (r.kind == "workloads") {
    // "large: act_entries 2048, wgt_records 128" -> --act-entries 2048 --wgt-records 128
    std::string options;
    std::istringstream buffers(tag_or(r, "rtl configuration", ""));
    for (std::string word, value; buffers >> word;) {
      if ((word == "act_entries" || word == "wgt_records") && buffers >> value) {
        if (value.back() == ',') value.pop_back();
        options += " --" + (word == "act_entries" ? std::string("act-entries") : "wgt-records") +
                   " " + value;
      }
    }
    if (measured(r.memory_bytes_per_cycle)) {
      std::ostringstream bytes;
      bytes << r.memory_bytes_per_cycle;  // as written, without rounding
      options += " --bytes-per-cycle " + bytes.str();
    }
    return "build/nmsa_bench_workloads --config " + config_name(r) + options + " --out " + r.file;
  }
  if (r.kind == "lens") {
    return "build/nmsa_bench_lens --config " + config_name(r) + " --out " + r.file +
           " && build/nmsa_bench_contention --config " + config_name(r) + " --out " + r.file;
  }
  const std::string rev = tag_or(r, "git revision", "");
  std::string cmd = rev.empty() || rev.find("dirty") != std::string::npos
                        ? ""
                        : "git checkout " + rev.substr(0, rev.find('-')) + " && ";
  cmd += "make demo DEMO_ARGS='--config " + config_name(r);
  const std::string seed = tag_or(r, "seed", "");
  if (!seed.empty()) cmd += " --seed " + seed;
  return cmd + "'";
}

class Triage {
 public:
  Triage(const Run& base, const Run& cand, const TriageLimits& limits)
      : b_(base), c_(cand), lim_(limits) {}

  std::vector<TriageFinding> run() {
    lowering();
    sparse_format();
    scheduling_and_memory();
    execution();
    quality();
    latency_tail();
    return std::move(findings_);
  }

 private:
  TriageFinding& finding(int order, const char* mechanism, const std::string& owner) {
    for (auto& f : findings_) {
      if (f.order == order) return f;
    }
    findings_.push_back({order, mechanism, owner, {}});
    return findings_.back();
  }

  void lowering() {
    for (const auto& [name, bl] : b_.layers) {
      const Layer* cl = c_.layer(name);
      if (cl == nullptr) {
        finding(1, "model and graph lowering", kCompilerOwner)
            .evidence.push_back(name + ": in the baseline, missing from the candidate");
        continue;
      }
      if (bl.placement != "device sparse" || cl->placement == "device sparse") continue;
      // Sent to the dense path by the quality gate: a pruning decision, not a compiler one.
      const bool gate = cl->reason.find("quality gate") != std::string::npos;
      TriageFinding& f = finding(1, "model and graph lowering", gate ? kModelLead : kCompilerOwner);
      f.evidence.push_back(name + ": placement " + arrow(bl.placement, cl->placement) + " (" +
                           (cl->reason.empty() ? "no reason given" : cl->reason) + "), cycles " +
                           arrow(grouped(bl.cycles), grouped(cl->cycles)));
    }
  }

  void sparse_format() {
    for (const auto& [name, bl] : b_.layers) {
      const Layer* cl = c_.layer(name);
      if (cl == nullptr || bl.placement != "device sparse" || cl->placement != "device sparse") {
        continue;
      }
      if (grew(bl.meta_share, cl->meta_share, lim_.bytes_growth)) {
        finding(2, "sparse-format conversion", kCompilerOwner)
            .evidence.push_back(name + ": metadata share of the weight bytes " +
                                arrow(percent(bl.meta_share, 1), percent(cl->meta_share, 1)));
      }
      if (grew(bl.meta_bytes, cl->meta_bytes, lim_.bytes_growth) ||
          grew(bl.weight_bytes, cl->weight_bytes, lim_.bytes_growth)) {
        finding(2, "sparse-format conversion", kCompilerOwner)
            .evidence.push_back(name + ": metadata bytes " +
                                arrow(grouped(bl.meta_bytes), grouped(cl->meta_bytes)) +
                                ", weight bytes " +
                                arrow(grouped(bl.weight_bytes), grouped(cl->weight_bytes)));
      }
    }
    // The device reproduces the functional model, so the hardware runs the program as written;
    // the golden model disagrees, so the program computes another GEMM than the model's.
    if (c_.exact_golden < c_.batches && c_.exact_model == c_.batches) {
      finding(2, "sparse-format conversion", kCompilerOwner)
          .evidence.push_back("batches bit-exact against the golden model " +
                              fraction_of(c_.exact_golden, c_.batches) +
                              ", against the functional model " +
                              fraction_of(c_.exact_model, c_.batches) +
                              ": the weights or metadata the program carries are not the model's");
    }
  }

  void scheduling_and_memory() {
    if (grew(static_cast<double>(b_.dma_read_bytes), static_cast<double>(c_.dma_read_bytes),
             lim_.bytes_growth)) {
      const std::string base_cfg = tag_or(b_, "rtl configuration", "");
      const std::string cand_cfg = tag_or(c_, "rtl configuration", "");
      // Other buffer capacities are the hardware's decision; the same ones and more bytes, the
      // tiling plan's.
      const bool hardware = base_cfg != cand_cfg;
      TriageFinding& f = finding(3, "scheduling and memory placement",
                                 hardware ? kArchitectureOwner : kCompilerOwner);
      f.evidence.push_back("DMA read bytes " +
                           arrow(grouped(b_.dma_read_bytes), grouped(c_.dma_read_bytes)) +
                           (hardware ? " with the configuration " + arrow(base_cfg, cand_cfg)
                                     : " on the same configuration: the tiling plan"));
    }
    if (measured(b_.memory_bytes_per_cycle) && measured(c_.memory_bytes_per_cycle) &&
        c_.memory_bytes_per_cycle < b_.memory_bytes_per_cycle) {
      finding(3, "scheduling and memory placement", kServingOwner)
          .evidence.push_back("host memory bytes per cycle " +
                              arrow(fixed(b_.memory_bytes_per_cycle, 1),
                                    fixed(c_.memory_bytes_per_cycle, 1)) +
                              ", effective speedup " + arrow(times(b_.speedup), times(c_.speedup)) +
                              " (docs/bandwidth.md: below the knee the speedup falls to the "
                              "bytes ratio)");
    }
  }

  void execution() {
    if (c_.exact_model < c_.batches) {
      finding(4, "execution", kArchitectureOwner)
          .evidence.push_back("batches bit-exact against the functional model " +
                              fraction_of(c_.exact_model, c_.batches) +
                              ": the RTL does not run the program as specified");
    }
    if (grew(1.0 / b_.speedup, 1.0 / c_.speedup, lim_.cycles_growth)) {
      TriageFinding& f = finding(4, "execution", kArchitectureOwner);
      f.evidence.push_back("effective speedup " + arrow(times(b_.speedup), times(c_.speedup)));
      for (const auto& [name, bl] : b_.layers) {
        const Layer* cl = c_.layer(name);
        if (cl != nullptr && grew(bl.cycles, cl->cycles, lim_.cycles_growth)) {
          f.evidence.push_back(name + ": cycles " + arrow(grouped(bl.cycles), grouped(cl->cycles)) +
                               ", utilization " +
                               arrow(percent(bl.utilization, 1), percent(cl->utilization, 1)));
        }
      }
    }
  }

  void quality() {
    const double drop = 100.0 * (b_.sparse_int8 - c_.sparse_int8);
    if (!(drop > lim_.quality_drop_pp)) return;
    TriageFinding& f = finding(5, "result assembly and quality", kModelLead);
    f.evidence.push_back("sparse INT8 top-1 " +
                         arrow(percent(b_.sparse_int8), percent(c_.sparse_int8)) + " (" +
                         signed_pp(-drop) + ", tolerance " + fixed(lim_.quality_drop_pp, 2) +
                         " pp)");
    const double b_gap = 100.0 * (b_.sparse_fp32 - b_.sparse_int8);
    const double c_gap = 100.0 * (c_.sparse_fp32 - c_.sparse_int8);
    if (measured(b_gap) && measured(c_gap) && c_gap - b_gap > lim_.quality_drop_pp) {
      f.evidence.push_back("quantization drift: FP32 - INT8 " +
                           arrow(signed_pp(b_gap), signed_pp(c_gap)));
    }
    // The most sensitive sparse layer: where pruning costs the most accuracy.
    const std::pair<std::string, Layer>* worst = nullptr;
    for (const auto& l : c_.layers) {
      if (l.second.placement != "device sparse" || !measured(l.second.sensitivity_pp)) continue;
      if (worst == nullptr || l.second.sensitivity_pp > worst->second.sensitivity_pp) worst = &l;
    }
    if (worst != nullptr) {
      const Layer* bl = b_.layer(worst->first);
      f.evidence.push_back(worst->first + ": placed sparse, pruning it alone costs " +
                           fixed(worst->second.sensitivity_pp, 2) + " pp" +
                           (bl != nullptr && measured(bl->sensitivity_pp)
                                ? " (baseline " + fixed(bl->sensitivity_pp, 2) + " pp, " +
                                      bl->placement + ")"
                                : ""));
    }
  }

  void latency_tail() {
    if (b_.p50 == 0 || c_.p50 == 0) return;
    const double b_ratio = static_cast<double>(b_.p99) / static_cast<double>(b_.p50);
    const double c_ratio = static_cast<double>(c_.p99) / static_cast<double>(c_.p50);
    if (grew(b_ratio, c_ratio, lim_.p99_over_p50_growth)) {
      finding(6, "latency tail", kServingOwner)
          .evidence.push_back("p99 / p50 " + arrow(fixed(b_ratio, 3), fixed(c_ratio, 3)) +
                              " (p99 " + arrow(grouped(b_.p99), grouped(c_.p99)) + " cycles)");
    }
  }

  const Run& b_;
  const Run& c_;
  const TriageLimits& lim_;
  std::vector<TriageFinding> findings_;
};

std::vector<std::string> rollback_criteria(const Run& b, const TriageResult& r,
                                           const TriageLimits& lim) {
  if (!r.regressed()) return {};
  const std::string rev = tag_or(b, "git revision", "the baseline's revision");
  std::vector<std::string> c;
  c.push_back("Roll back to " + rev + " unless a fix brings every check below back within its "
              "tolerance on the failing workload, and nmsa triage against the baseline reports "
              "no regression:");
  if (measured(b.sparse_int8)) {
    c.push_back("sparse INT8 top-1 >= " + percent(b.sparse_int8 - lim.quality_drop_pp / 100.0));
  }
  if (measured(b.speedup)) {
    c.push_back("effective speedup >= " + times(b.speedup / (1.0 + lim.cycles_growth)));
  }
  if (b.kind == "report") {
    c.push_back("every batch bit-exact against the golden and the functional model");
  }
  if (b.p50 > 0) {
    c.push_back("p99 / p50 <= " +
                fixed(static_cast<double>(b.p99) / static_cast<double>(b.p50) *
                          (1.0 + lim.p99_over_p50_growth),
                      3));
  }
  if (b.kind != "report") return c;
  c.push_back("nmsa gate --baseline " + r.baseline_file + " --candidate <fixed report> "
              "--max-quality-drop " + fixed(lim.quality_drop_pp, 2) + " --min-speedup " +
              fixed(b.speedup / (1.0 + lim.cycles_growth), 3) + " exits 0");
  return c;
}

}  // namespace

TriageResult triage_reports(const std::string& baseline, const std::string& candidate,
                            const TriageLimits& limits) {
  const Run b = read_run(baseline);
  const Run c = read_run(candidate);
  if (b.kind != c.kind) {
    throw std::runtime_error("the runs are not comparable: " + b.file + " is a " + b.kind +
                             " file, " + c.file + " a " + c.kind + " file");
  }
  if (b.test_images != c.test_images) {
    throw std::runtime_error("the runs are not comparable: test_images " +
                             std::to_string(b.test_images) + " (" + b.file + ") vs " +
                             std::to_string(c.test_images) + " (" + c.file + ")");
  }
  for (const char* tag : kLockedTags) {
    const std::string tb = tag_or(b, tag, ""), tc = tag_or(c, tag, "");
    if (tb != tc) {
      throw std::runtime_error("the runs are not comparable: tag \"" + std::string(tag) +
                               "\" is '" + tb + "' in " + b.file + " but '" + tc + "' in " +
                               c.file);
    }
  }
  TriageResult r;
  r.baseline_file = b.file;
  r.candidate_file = c.file;
  for (const auto& [k, v] : b.tags) {
    const auto it = c.tags.find(k);
    const std::string cv = it == c.tags.end() ? "(none)" : it->second;
    if (cv != v) r.tag_changes.push_back(k + ": " + arrow(v, cv));
  }
  r.findings = Triage(b, c, limits).run();
  r.reproduce_candidate = reproduce(c);
  r.reproduce_baseline = reproduce(b);
  r.rollback_criteria = rollback_criteria(b, r, limits);
  return r;
}

std::string triage_text(const TriageResult& r) {
  std::ostringstream out;
  out << "baseline  " << r.baseline_file << "\ncandidate " << r.candidate_file << "\n";
  for (const auto& t : r.tag_changes) out << "tag changed: " << t << "\n";
  if (!r.regressed()) {
    out << "triage: no regression (every mechanism within its tolerance)\n";
    return out.str();
  }
  const TriageFinding& first = r.findings.front();
  out << "first failing mechanism: " << first.order << ". " << first.mechanism
      << " (owner: " << first.owner << ")\n";
  for (const auto& f : r.findings) {
    out << "  " << f.order << ". " << f.mechanism << " [" << f.owner << "]\n";
    for (const auto& e : f.evidence) out << "     - " << e << "\n";
  }
  out << "reproduce the failing workload: " << r.reproduce_candidate << "\n";
  out << "run the stable comparator:      " << r.reproduce_baseline << "\n";
  for (const auto& c : r.rollback_criteria) out << "rollback: " << c << "\n";
  out << "triage: REGRESSION\n";
  return out.str();
}

std::string triage_json(const TriageResult& r) {
  using Json = nlohmann::ordered_json;
  Json j;
  j["baseline"] = r.baseline_file;
  j["candidate"] = r.candidate_file;
  j["regressed"] = r.regressed();
  j["tag_changes"] = r.tag_changes;
  j["first_failing_mechanism"] =
      r.regressed() ? Json(r.findings.front().mechanism) : Json(nullptr);
  j["owner"] = r.regressed() ? Json(r.findings.front().owner) : Json(nullptr);
  Json findings = Json::array();
  for (const auto& f : r.findings) {
    findings.push_back(Json{{"order", f.order},
                        {"mechanism", f.mechanism},
                        {"owner", f.owner},
                        {"evidence", f.evidence}});
  }
  j["findings"] = std::move(findings);
  j["reproduce_candidate"] = r.reproduce_candidate;
  j["reproduce_baseline"] = r.reproduce_baseline;
  j["rollback_criteria"] = r.rollback_criteria;
  return j.dump(2) + "\n";
}

std::string triage_memo(const TriageResult& r) {
  std::ostringstream out;
  out << "# Triage: " << (r.regressed() ? r.findings.front().mechanism : "no regression")
      << "\n\n";
  out << "- baseline: `" << r.baseline_file << "`\n- candidate: `" << r.candidate_file << "`\n";
  if (!r.regressed()) {
    out << "\nEvery mechanism is within its tolerance.\n";
    return out.str();
  }
  const TriageFinding& first = r.findings.front();
  out << "- first failing mechanism: **" << first.mechanism << "**, owner: **" << first.owner
      << "**\n\n## Evidence\n\n";
  for (const auto& f : r.findings) {
    out << "### " << f.order << ". " << f.mechanism << " (" << f.owner << ")"
        << (&f == &first ? ", the first to fail" : ", possibly a consequence") << "\n\n";
    for (const auto& e : f.evidence) out << "- " << e << "\n";
    out << "\n";
  }
  if (!r.tag_changes.empty()) {
    out << "## Conditions that changed\n\n";
    for (const auto& t : r.tag_changes) out << "- " << t << "\n";
    out << "\n";
  }
  out << "## Reproduce\n\n```sh\n" << r.reproduce_candidate << "   # the failing workload\n"
      << r.reproduce_baseline << "   # the stable comparator\n```\n\n## Rollback criteria\n\n";
  for (const auto& c : r.rollback_criteria) out << "- " << c << "\n";
  return out.str();
}

}  // namespace nmsa
