// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// report.json: every figure of the report, machine-readable (its main keys: docs/demo.md); the
// release gate reads it back.
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "nmsa/release_gate.hpp"
#include "nmsa/report.hpp"
#include "report_common.hpp"

namespace nmsa {

using namespace report_detail;

namespace {

using Json = nlohmann::ordered_json;

Json number(double v) { return measured(v) ? Json(v) : Json(nullptr); }

Json cycles_if(bool known, std::uint64_t v) { return known ? Json(v) : Json(nullptr); }

Json us_if(const DeploymentReport& r, bool known, std::uint64_t cycles) {
  return known && has_clock(r) ? Json(static_cast<double>(cycles) / r.clock_mhz) : Json(nullptr);
}

// [lo, hi], or null when not measured.
Json interval(const Interval& i) {
  return measured(i.lo) && measured(i.hi) ? Json::array({i.lo, i.hi}) : Json(nullptr);
}

Json comparison_json(const PairedComparison& c) {
  return Json{{"name", c.name},
              {"a", c.a},
              {"b", c.b},
              {"measured_on", c.measured_on},
              {"delta_pp", number(c.delta_pp)},
              {"ci95_pp", interval(c.ci95_pp)},
              {"only_a", c.only_a},
              {"only_b", c.only_b},
              {"images", c.images},
              {"mcnemar_p", number(c.mcnemar_p)},
              {"verdict", c.verdict()}};
}

Json latency_json(const LatencySummary& l) {
  const bool known = has_latency(l);
  Json j;
  j["label"] = l.label;
  j["batch_size"] = l.batch_size;
  j["batches"] = l.batch_cycles.size();
  j["p50"] = cycles_if(known, l.p50);
  j["p95"] = cycles_if(known, l.p95);
  j["p99"] = cycles_if(known, l.p99);
  j["total_cycles"] = cycles_if(!l.batch_cycles.empty(), l.total_cycles());
  j["batch_cycles"] = l.batch_cycles;
  // Host time: wall clock on the machine that ran the batches, beside the device cycles.
  j["host_us_p50"] = l.batch_host_us.empty() ? Json(nullptr) : Json(l.host_us_p50());
  j["batch_host_us"] = l.batch_host_us;
  return j;
}

Json layer_json(const ReportLayer& l) {
  Json e;
  e["name"] = l.name;
  e["op"] = l.op;
  e["k"] = l.k;
  e["n_out"] = l.n_out;
  e["placement"] = l.placement;
  e["reason"] = l.reason;
  e["sensitivity_pp"] = number(l.sensitivity_pp);
  e["deployed_cycles"] = l.deployed_cycles;
  e["dense_cycles"] = l.dense_cycles;
  e["speedup"] = number(l.speedup());
  e["macs"] = l.macs;
  e["utilization"] = number(l.utilization);
  e["dense_weight_bytes"] = l.dense_weight_bytes;
  e["deployed_weight_bytes"] = l.deployed_weight_bytes;
  e["meta_bytes"] = l.meta_bytes;
  return e;
}

Json second_model_json(const std::optional<SecondModelReport>& m) {
  if (!m) return nullptr;
  Json layers = Json::array();
  for (const ReportLayer& l : m->layers) layers.push_back(layer_json(l));
  return Json{{"model", m->model},
              {"measured_on", m->measured_on},
              {"calibration", m->calibration},
              {"test_images", m->test_images},
              {"dense_fp32_accuracy", number(m->dense_fp32_accuracy)},
              {"control_fp32_accuracy", number(m->control_fp32_accuracy)},
              {"sparse_fp32_accuracy", number(m->sparse_fp32_accuracy)},
              {"control_int8_accuracy", number(m->control_int8_accuracy)},
              {"sparse_int8_accuracy", number(m->sparse_int8_accuracy)},
              {"quality_delta_pp", number(m->quality_delta_pp())},
              {"quality_comparison", m->quality_comparison
                                         ? comparison_json(*m->quality_comparison)
                                         : Json(nullptr)},
              {"effective_speedup", number(m->effective_speedup)},
              {"sparse_layers_speedup", number(m->sparse_layers_speedup)},
              {"fallback_cycle_share", number(m->fallback_cycle_share)},
              {"rtl_batches", m->rtl_batches},
              {"rtl_batches_bit_exact", m->rtl_batches_bit_exact},
              {"rtl_batches_cycle_exact", m->rtl_batches_cycle_exact},
              {"rtl_gemms", m->rtl_gemms},
              {"rtl_gemms_golden_exact", m->rtl_gemms_golden_exact},
              {"rtl_prediction_max_error", number(m->rtl_prediction_max_error)},
              {"layers", std::move(layers)}};
}

Json contention_json(const std::vector<ContentionRun>& runs) {
  if (runs.empty()) return nullptr;
  Json loads = Json::array();
  for (const ContentionRun& c : runs) {
    Json sparse = latency_json(c.sparse), dense = latency_json(c.dense);
    sparse["p99_9"] = percentile_cycles(c.sparse.batch_cycles, 99.9);
    dense["p99_9"] = percentile_cycles(c.dense.batch_cycles, 99.9);
    loads.push_back(
        Json{{"load", c.load}, {"sparse", std::move(sparse)}, {"dense", std::move(dense)}});
  }
  return Json{{"budget_cycles", percentile_cycles(runs.front().dense.batch_cycles, 50)},
              {"sparse_p99_leaves_budget_at_load", number(p99_leaves_budget_at(runs))},
              {"loads", std::move(loads)}};
}

}  // namespace

std::string report_json(const DeploymentReport& r) {
  const Derived d = derive(r);
  const bool lat = has_latency(d.deployed);
  const bool dense_lat = has_latency(d.dense);
  Json j;
  j["report_format"] = kReportFormatVersion;
  j["title"] = r.title;
  j["dataset"] = r.dataset;
  j["test_images"] = r.test_images;
  j["device"] = r.device;
  j["clock_mhz"] = has_clock(r) ? Json(r.clock_mhz) : Json(nullptr);  // 0: no clock stated
  j["clock_measured"] = r.clock_measured;
  j["clock_source"] = r.clock_source;
  if (r.hardware) {
    const HardwareCost& h = *r.hardware;
    j["hardware"] = {{"device", h.device},
                     {"sparse_source", h.sparse_source},
                     {"dense_only_source", h.dense_source},
                     {"sparse_luts", h.sparse_luts},
                     {"dense_only_luts", h.dense_luts},
                     {"sparse_dsps", h.sparse_dsps},
                     {"dense_only_dsps", h.dense_dsps},
                     {"sparse_brams", h.sparse_brams},
                     {"dense_only_brams", h.dense_brams},
                     {"sparse_fmax_mhz", h.sparse_fmax_mhz},
                     {"dense_only_fmax_mhz", h.dense_fmax_mhz},
                     {"cycles_ratio", number(h.cycles_ratio)},
                     {"throughput_ratio", number(h.throughput_ratio())},
                     {"throughput_per_lut_ratio", number(h.per_lut_ratio())},
                     {"throughput_per_dsp_ratio", number(h.per_dsp_ratio())}};
  } else {
    j["hardware"] = nullptr;
  }
  j["dense_fp32_accuracy"] = number(r.dense_fp32_accuracy);
  j["dense_int8_accuracy"] = number(r.dense_int8_accuracy);
  j["sparse_fp32_accuracy"] = number(r.sparse_fp32_accuracy);
  j["sparse_int8_accuracy"] = number(r.sparse_int8_accuracy);
  j["control_fp32_accuracy"] = number(r.control_fp32_accuracy);
  j["quality_baseline"] = r.quality_baseline;
  j["quality_delta_pp"] = number(r.quality_delta_pp);
  j["quality_delta_ci95_pp"] = interval(r.quality_delta_ci95_pp);
  j["effective_speedup"] = number(r.effective_speedup);
  j["all_sparse_speedup_predicted"] = number(r.all_sparse_speedup_predicted);
  j["latency_cycles_p50"] = cycles_if(lat, d.deployed.p50);
  j["latency_cycles_p95"] = cycles_if(lat, d.deployed.p95);
  j["latency_cycles_p99"] = cycles_if(lat, d.deployed.p99);
  j["latency_us_p50"] = us_if(r, lat, d.deployed.p50);
  j["latency_us_p95"] = us_if(r, lat, d.deployed.p95);
  j["latency_us_p99"] = us_if(r, lat, d.deployed.p99);
  j["dense_latency_cycles_p50"] = cycles_if(dense_lat, d.dense.p50);
  j["dense_latency_cycles_p95"] = cycles_if(dense_lat, d.dense.p95);
  j["dense_latency_cycles_p99"] = cycles_if(dense_lat, d.dense.p99);
  j["fallback_layers"] = r.fallback_layers;
  j["fallback_cycles"] = r.fallback_cycles;
  j["fallback_cycle_share"] = number(r.fallback_cycle_share);
  j["pe_utilization"] = number(r.pe_utilization);
  j["weight_bytes_dense"] = r.weight_bytes_dense;
  j["weight_bytes_deployed"] = r.weight_bytes_deployed;
  j["meta_bytes"] = r.meta_bytes;
  j["meta_share"] = number(d.meta_share);
  j["dma_read_bytes"] = r.dma_read_bytes;
  j["dma_meta_bytes"] = r.dma_meta_bytes;
  j["batches"] = r.batches;
  j["batches_bit_exact_golden"] = r.batches_bit_exact_golden;
  j["batches_bit_exact_model"] = r.batches_bit_exact_model;
  j["targets_met"] = d.targets_met;
  j["targets_total"] = r.targets.size();

  Json layers = Json::array();
  for (const auto& l : r.layers) layers.push_back(layer_json(l));
  j["layers"] = std::move(layers);

  Json quality = Json::array();
  for (const auto& q : r.quality) {
    Json e;
    e["model"] = q.model;
    e["schedule"] = q.schedule;
    e["permuted"] = q.permuted;
    e["fp32_accuracy"] = number(q.fp32_accuracy);
    e["int8_accuracy"] = number(q.int8_accuracy);
    e["fp32_ci95"] = interval(q.fp32_ci95);
    e["int8_ci95"] = interval(q.int8_ci95);
    e["int8_measured_on"] = q.int8_measured_on;
    e["deployed"] = q.deployed;
    e["note"] = q.note;
    quality.push_back(std::move(e));
  }
  j["quality"] = std::move(quality);
  Json comparisons = Json::array();
  for (const auto& c : r.comparisons) comparisons.push_back(comparison_json(c));
  j["quality_comparisons"] = std::move(comparisons);

  Json schedules = Json::array();
  for (const auto& c : r.schedules) {
    Json e;
    e["name"] = c.name;
    Json sparsity = Json::array(), acc = Json::array();
    for (const auto& [ep, s] : c.sparsity) {
      sparsity.push_back(Json{{"epoch", number(ep)}, {"sparsity", number(s)}});
    }
    for (const auto& [ep, a] : c.val_accuracy) {
      acc.push_back(Json{{"epoch", number(ep)}, {"val_accuracy", number(a)}});
    }
    e["sparsity"] = std::move(sparsity);
    e["val_accuracy"] = std::move(acc);
    schedules.push_back(std::move(e));
  }
  j["schedules"] = std::move(schedules);

  Json latency;
  latency["deployed"] = latency_json(d.deployed);
  latency["dense"] = latency_json(d.dense);
  latency["others"] = Json::array();
  for (const auto& l : d.others) latency["others"].push_back(latency_json(l));
  latency["contention"] = contention_json(d.contention);
  j["latency"] = std::move(latency);

  j["memory_bytes_per_cycle"] = number(r.memory_bytes_per_cycle);
  j["bandwidth_lens"] =
      r.bandwidth_lens ? Json::parse(lens_json(*r.bandwidth_lens)) : Json(nullptr);

  if (r.equal_budget) {
    const EqualBudget& b = *r.equal_budget;
    Json e;
    e["dense_model"] = b.dense_model;
    e["sparse_model"] = b.sparse_model;
    e["budget_cycles_p50"] = b.budget_cycles_p50;
    e["sparse_cycles_p50"] = b.sparse_cycles_p50;
    e["predicted_budget_cycles"] = b.predicted_budget_cycles;
    e["predicted_sparse_cycles"] = b.predicted_sparse_cycles;
    e["predicted_budget_use"] = number(b.predicted_budget_use());
    e["shapes_searched"] = b.shapes_searched;
    e["dense_int8_accuracy"] = number(b.dense_int8_accuracy);
    e["sparse_int8_accuracy"] = number(b.sparse_int8_accuracy);
    e["accuracy_measured_on"] = b.accuracy_measured_on;
    e["fits"] = b.fits();
    j["equal_budget"] = std::move(e);
  } else {
    j["equal_budget"] = nullptr;
  }
  j["second_model"] = second_model_json(r.second_model);

  Json targets = Json::array();
  for (const auto& t : r.targets) {
    targets.push_back(
        Json{{"name", t.name}, {"required", t.required}, {"measured", t.measured}, {"met", t.met}});
  }
  j["targets"] = std::move(targets);
  Json validation = Json::array();
  for (const auto& v : r.validation) {
    validation.push_back(Json{{"claim", v.claim},
                              {"evidence", v.evidence},
                              {"run", v.run},
                              {"owner", v.owner},
                              {"status", v.status}});
  }
  j["validation_matrix"] = std::move(validation);
  const GateLimits criteria = release_criteria(r);
  j["release_criteria"] = {
      {"max_quality_drop_pp", criteria.max_quality_drop_pp ? Json(*criteria.max_quality_drop_pp)
                                                            : Json(nullptr)},
      {"min_speedup", criteria.min_speedup ? Json(*criteria.min_speedup) : Json(nullptr)},
      {"max_p99_cycles",
       criteria.max_p99_cycles ? Json(*criteria.max_p99_cycles) : Json(nullptr)},
      {"bit_exact", criteria.bit_exact}};
  j["regressed_workload"] = r.regressed_workload;
  j["triage_memo"] = r.triage_memo;
  Json tags = Json::object();
  for (const auto& [k, v] : r.tags) tags[k] = v;
  j["tags"] = std::move(tags);
  j["notes"] = r.notes;
  // Names and tags come from models and tools: bytes that are not UTF-8 must not stop the report.
  return j.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

}  // namespace nmsa
