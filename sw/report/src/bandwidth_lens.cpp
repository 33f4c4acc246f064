// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
#include "nmsa/bandwidth_lens.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <utility>

#include <nlohmann/json.hpp>

#include "nmsa/gemm_program.hpp"
#include "report_document.hpp"
#include "svg_chart.hpp"

namespace nmsa {

using namespace report_detail;

std::vector<LensLayer> lens_workloads() {
  // The demo's MLP and CNN (sw/demo/cnn_demo.cpp) run batches of 100 images; BERT-base is one sequence of 128 tokens;
  // ResNet-50 one 224 x 224 image. Convolutions are im2col GEMMs as the runtime lowers them:
  // rows = output pixels (x batch), K = input channels x kernel window, N = output channels.
  return {
      {"mlp", "fc1", 100, 784, 512, 1},
      {"mlp", "fc2", 100, 512, 256, 1},
      {"mlp", "fc3", 100, 256, 10, 1, false},
      {"cnn", "conv1_3x3", 100 * 28 * 28, 1 * 9, 24, 1},
      {"cnn", "conv2_3x3", 100 * 14 * 14, 24 * 9, 48, 1},
      {"cnn", "fc1", 100, 48 * 7 * 7, 128, 1},
      {"cnn", "fc2", 100, 128, 10, 1, false},
      {"bert", "qkv", 128, 768, 2304, 12},
      {"bert", "attention_output", 128, 768, 768, 12},
      {"bert", "ffn_up", 128, 768, 3072, 12},
      {"bert", "ffn_down", 128, 3072, 768, 12},
      {"resnet50", "conv1_7x7_s2", 112 * 112, 3 * 49, 64, 1},
      {"resnet50", "layer1_1x1_reduce", 56 * 56, 256, 64, 3},
      {"resnet50", "layer1_3x3", 56 * 56, 64 * 9, 64, 3},
      {"resnet50", "layer1_1x1_expand", 56 * 56, 64, 256, 3},
      {"resnet50", "layer2_3x3", 28 * 28, 128 * 9, 128, 4},
      {"resnet50", "layer3_3x3", 14 * 14, 256 * 9, 256, 6},
      {"resnet50", "layer4_3x3", 7 * 7, 512 * 9, 512, 3},
      {"resnet50", "fc", 1, 2048, 1000, 1, false},
  };
}

double LensPoint::speedup() const {
  return sparse_cycles == 0 ? 0.0
                            : static_cast<double>(dense_cycles) /
                                  static_cast<double>(sparse_cycles);
}

namespace {

// A family's predicted totals in one mode.
struct ModeTotals {
  std::uint64_t cycles = 0, bytes = 0, compute = 0, dma = 0;
  double ideal = 0;
  double utilization() const { return cycles == 0 ? 0.0 : ideal / static_cast<double>(cycles); }
  // What the cycles go to: compute or memory when that one's busy time fills 80% of them.
  std::string bound() const {
    const double busy = static_cast<double>(std::max(compute, dma));
    if (busy < 0.8 * static_cast<double>(cycles)) return "overhead";
    return dma > compute ? "memory" : "compute";
  }
};

ModeTotals predict_family(const DeviceCaps& caps, const std::vector<LensLayer>& layers,
                          GemmMode mode, const PerfModelParams& memory) {
  ModeTotals t;
  for (const LensLayer& l : layers) {
    GemmOptions o;
    o.mode = mode;
    o.memory = memory;  // plans ranked on this memory, as a runtime that knows it would
    if (l.int8_out) {
      o.epilogue = EpilogueParams::identity(static_cast<std::size_t>(l.n));
      o.relu = true;
    }
    const GemmEstimate e = estimate_gemm(caps, l.rows, l.k, l.n, o, memory);
    const auto c = static_cast<std::uint64_t>(l.count);
    t.cycles += c * e.cycles.total;
    t.bytes += c * e.stats.dma_bytes();
    t.compute += c * e.cycles.compute_cycles;
    t.dma += c * e.cycles.dma_cycles;
    t.ideal += static_cast<double>(c * e.cycles.ideal_cycles);
  }
  return t;
}

LensPoint predict_point(const DeviceCaps& device, const std::string& family,
                        const std::vector<LensLayer>& layers, double bytes_per_cycle,
                        int read_latency, int axi_data_w) {
  DeviceCaps caps = device;
  caps.axi_data_w = axi_data_w;
  PerfModelParams memory;
  memory.dma_bytes_per_cycle = bytes_per_cycle;
  memory.dma_read_latency = read_latency;
  const ModeTotals s = predict_family(caps, layers, GemmMode::SPARSE, memory);
  const ModeTotals d = predict_family(caps, layers, GemmMode::DENSE, memory);
  LensPoint p;
  p.family = family;
  p.bytes_per_cycle = bytes_per_cycle;
  p.read_latency = read_latency;
  p.axi_data_w = axi_data_w;
  p.sparse_cycles = s.cycles;
  p.dense_cycles = d.cycles;
  p.sparse_bytes = s.bytes;
  p.dense_bytes = d.bytes;
  p.sparse_utilization = s.utilization();
  p.dense_utilization = d.utilization();
  p.sparse_bound = s.bound();
  p.dense_bound = d.bound();
  return p;
}

// The lowest bandwidth from which the cycles stay within 5% of those at the highest one.
double knee(const std::vector<const LensPoint*>& by_bandwidth, bool sparse) {
  const auto cycles = [&](const LensPoint* p) {
    return static_cast<double>(sparse ? p->sparse_cycles : p->dense_cycles);
  };
  const double floor = cycles(by_bandwidth.back());
  double k = by_bandwidth.back()->bytes_per_cycle;
  for (auto it = by_bandwidth.rbegin(); it != by_bandwidth.rend(); ++it) {
    if (cycles(*it) > 1.05 * floor) break;
    k = (*it)->bytes_per_cycle;
  }
  return k;
}

LensFamily summarize(const std::string& family, const std::vector<const LensPoint*>& by_bw) {
  LensFamily f;
  f.family = family;
  const LensPoint& low = *by_bw.front();
  const LensPoint& high = *by_bw.back();
  f.bytes_ratio = static_cast<double>(high.dense_bytes) / static_cast<double>(high.sparse_bytes);
  f.knee_sparse = knee(by_bw, true);
  f.knee_dense = knee(by_bw, false);
  for (const LensPoint* p : by_bw) {
    if (p->bytes_per_cycle == f.knee_sparse) f.speedup_at_knee = p->speedup();
  }
  for (const LensPoint* p : by_bw) {  // from the lowest bandwidth up, while the gain is gone
    if (p->speedup() >= 1.1) break;
    f.vanishes_below = p->bytes_per_cycle;
  }
  f.speedup_compute_bound = high.speedup();
  f.speedup_memory_bound = low.speedup();
  return f;
}

void check_settings(const LensSettings& s) {
  const auto positive = [](const auto& v) {
    return !v.empty() && std::all_of(v.begin(), v.end(), [](auto x) { return x > 0; });
  };
  if (!positive(s.bytes_per_cycle) || !positive(s.read_latency) || !positive(s.axi_data_w) ||
      s.base_latency <= 0 || s.base_bytes_per_cycle <= 0) {
    throw std::invalid_argument(
        "sweep: every bandwidth, latency and AXI width must be positive, and none may be empty");
  }
  for (int w : s.axi_data_w) {
    if (w != 32 && w != 64) {
      throw std::invalid_argument("sweep: AXI data width " + std::to_string(w) +
                                  " bits; the RTL builds 32 and 64");
    }
  }
}

}  // namespace

LensResult run_bandwidth_lens(const DeviceCaps& caps, const LensSettings& settings) {
  check_settings(settings);
  LensResult r;
  r.device = caps.describe();
  r.settings = settings;
  std::sort(r.settings.bytes_per_cycle.begin(), r.settings.bytes_per_cycle.end());
  std::sort(r.settings.read_latency.begin(), r.settings.read_latency.end());
  std::sort(r.settings.axi_data_w.begin(), r.settings.axi_data_w.end());

  std::vector<std::pair<std::string, std::vector<LensLayer>>> families;
  for (const LensLayer& l : lens_workloads()) {
    if (families.empty() || families.back().first != l.family) families.push_back({l.family, {}});
    families.back().second.push_back(l);
  }
  for (const std::string& wanted : settings.families) {
    const bool known = std::any_of(families.begin(), families.end(),
                                   [&](const auto& f) { return f.first == wanted; });
    if (!known) throw std::invalid_argument("sweep: unknown workload family '" + wanted + "'");
  }
  for (const auto& [family, layers] : families) {
    if (!settings.families.empty() &&
        std::find(settings.families.begin(), settings.families.end(), family) ==
            settings.families.end()) {
      continue;
    }
    std::vector<const LensPoint*> own_width;
    for (int w : r.settings.axi_data_w) {
      for (double bw : r.settings.bytes_per_cycle) {
        r.bandwidth.push_back(
            predict_point(caps, family, layers, bw, r.settings.base_latency, w));
      }
    }
    for (int lat : r.settings.read_latency) {
      r.latency.push_back(predict_point(caps, family, layers, r.settings.base_bytes_per_cycle, lat,
                                        caps.axi_data_w));
    }
    for (const LensPoint& p : r.bandwidth) {
      if (p.family == family && p.axi_data_w == caps.axi_data_w) own_width.push_back(&p);
    }
    if (!own_width.empty()) r.families.push_back(summarize(family, own_width));
  }
  return r;
}

namespace {

using Json = nlohmann::ordered_json;

Json point_json(const LensPoint& p) {
  return Json{{"family", p.family},
              {"bytes_per_cycle", p.bytes_per_cycle},
              {"read_latency", p.read_latency},
              {"axi_data_w", p.axi_data_w},
              {"sparse_cycles", p.sparse_cycles},
              {"dense_cycles", p.dense_cycles},
              {"speedup", p.speedup()},
              {"sparse_utilization", p.sparse_utilization},
              {"dense_utilization", p.dense_utilization},
              {"sparse_bound", p.sparse_bound},
              {"dense_bound", p.dense_bound},
              {"sparse_bytes", p.sparse_bytes},
              {"dense_bytes", p.dense_bytes}};
}

}  // namespace

std::string lens_json(const LensResult& r) {
  Json j;
  j["device"] = r.device;
  j["figures_from"] = "cycle model (compiler estimate of each program), not RTL runs";
  j["base_latency"] = r.settings.base_latency;
  j["base_bytes_per_cycle"] = r.settings.base_bytes_per_cycle;
  Json fams = Json::array();
  for (const LensFamily& f : r.families) {
    fams.push_back(Json{{"family", f.family},
                        {"bytes_ratio", f.bytes_ratio},
                        {"knee_bytes_per_cycle_sparse", f.knee_sparse},
                        {"knee_bytes_per_cycle_dense", f.knee_dense},
                        {"speedup_at_knee", f.speedup_at_knee},
                        {"speedup_compute_bound", f.speedup_compute_bound},
                        {"speedup_memory_bound", f.speedup_memory_bound},
                        {"speedup_vanishes_at_or_below", f.vanishes_below}});
  }
  j["families"] = std::move(fams);
  Json bw = Json::array(), lat = Json::array();
  for (const LensPoint& p : r.bandwidth) bw.push_back(point_json(p));
  for (const LensPoint& p : r.latency) lat.push_back(point_json(p));
  j["bandwidth_sweep"] = std::move(bw);
  j["latency_sweep"] = std::move(lat);
  return j.dump(2) + "\n";
}

namespace {

// Bandwidths on a log2 axis, labelled in bytes per cycle.
Axis bandwidth_axis(const std::vector<double>& bws) {
  Axis a;
  a.lo = std::log2(bws.front());
  a.hi = std::log2(bws.back());
  if (a.hi <= a.lo) a.hi = a.lo + 1;
  for (double b : bws) a.ticks.push_back({std::log2(b), fixed(b, b < 1 ? 1 : 0)});
  a.title = "host memory bandwidth (bytes per cycle, log scale)";
  return a;
}

Axis latency_axis(const std::vector<int>& lats) {
  Axis a;
  a.lo = std::log2(static_cast<double>(lats.front()));
  a.hi = std::log2(static_cast<double>(lats.back()));
  if (a.hi <= a.lo) a.hi = a.lo + 1;
  for (int l : lats) a.ticks.push_back({std::log2(static_cast<double>(l)), std::to_string(l)});
  a.title = "read latency (cycles, log scale)";
  return a;
}

double max_speedup(const std::vector<LensPoint>& points) {
  double m = 2.0;
  for (const LensPoint& p : points) m = std::max(m, p.speedup());
  return m;
}

std::vector<Series> family_series(const std::vector<LensFamily>& families) {
  std::vector<Series> s;
  for (std::size_t i = 0; i < families.size(); ++i) {
    s.push_back({families[i].family, palette(i), false});
  }
  return s;
}

}  // namespace

std::string lens_speedup_svg(const LensResult& r) {
  if (r.families.empty()) return "";
  Plot p(640, 300, bandwidth_axis(r.settings.bytes_per_cycle),
         numeric_axis(0, max_speedup(r.bandwidth) * 1.08, Scale::kPlain,
                      "effective speedup (dense / sparse cycles)"),
         family_series(r.families));
  for (std::size_t i = 0; i < r.families.size(); ++i) {
    const LensFamily& f = r.families[i];
    for (int w : r.settings.axi_data_w) {
      std::vector<std::pair<double, double>> line;
      for (const LensPoint& pt : r.bandwidth) {
        if (pt.family != f.family || pt.axi_data_w != w) continue;
        line.push_back({std::log2(pt.bytes_per_cycle), pt.speedup()});
      }
      const bool other_width = w != r.settings.axi_data_w.back();
      p.line(line, palette(i), f.family + ", AXI " + std::to_string(w) + " bits", other_width);
      for (const auto& [x, y] : line) {
        p.dot(x, y, palette(i), f.family + ", AXI " + std::to_string(w) + ": " + times(y));
      }
    }
  }
  p.text(p.x_lo(), 1.0, "1x: sparse gains nothing", "start", 4, -4);
  return figure(p.svg("Effective speedup against host-memory bandwidth"),
                "Dense / sparse cycles of each workload family against host-memory bandwidth, "
                "predicted by the cycle model at a read latency of " +
                    std::to_string(r.settings.base_latency) +
                    " cycles; solid: the widest AXI data width, dashed: the narrower one.");
}

namespace {

std::string utilization_svg(const LensResult& r, int axi_w) {
  Plot p(640, 300, bandwidth_axis(r.settings.bytes_per_cycle),
         numeric_axis(0, 1.0, Scale::kPercent, "PE utilization"), family_series(r.families));
  for (std::size_t i = 0; i < r.families.size(); ++i) {
    for (bool sparse : {true, false}) {
      std::vector<std::pair<double, double>> line;
      for (const LensPoint& pt : r.bandwidth) {
        if (pt.family != r.families[i].family || pt.axi_data_w != axi_w) continue;
        line.push_back({std::log2(pt.bytes_per_cycle),
                        sparse ? pt.sparse_utilization : pt.dense_utilization});
      }
      p.line(line, palette(i), r.families[i].family + (sparse ? " sparse" : " dense"), !sparse);
    }
  }
  return figure(p.svg("PE utilization against host-memory bandwidth"),
                "Useful MACs over the peak of each mode, sparse (solid) and dense (dashed), AXI " +
                    std::to_string(axi_w) + " bits.");
}

std::string latency_svg(const LensResult& r) {
  Plot p(640, 300, latency_axis(r.settings.read_latency),
         numeric_axis(0, max_speedup(r.latency) * 1.08, Scale::kPlain, "effective speedup"),
         family_series(r.families));
  for (std::size_t i = 0; i < r.families.size(); ++i) {
    std::vector<std::pair<double, double>> line;
    for (const LensPoint& pt : r.latency) {
      if (pt.family == r.families[i].family) {
        line.push_back({std::log2(static_cast<double>(pt.read_latency)), pt.speedup()});
      }
    }
    p.line(line, palette(i), r.families[i].family, false);
  }
  return figure(p.svg("Effective speedup against read latency"),
                "Dense / sparse cycles against the host memory's read latency at " +
                    fixed(r.settings.base_bytes_per_cycle, 0) + " bytes per cycle.");
}

std::string bandwidth_text(double b) { return fixed(b, b < 1 ? 1 : 0) + " B/cycle"; }

}  // namespace

std::string lens_html(const LensResult& r) {
  Document doc;
  doc.title = "nmsa bandwidth lens";
  doc.subtitle = {r.device, "cycle-model predictions, not RTL runs"};
  doc.footer = "written by libnmsa (sweep.json holds every figure)";

  Section summary{"summary", "Where sparse gains hold", {}, false, ""};
  summary.blocks.push_back(paragraph(
      "Effective speedup (dense / sparse cycles) per workload family at the device's AXI width. "
      "The knee is the lowest swept bandwidth from which cycles stay within 5% of the "
      "compute-bound ones. Below it the layers wait for host memory and the speedup falls "
      "towards the ratio of bytes moved (dense / sparse, values and metadata); where it drops "
      "under 1.1x the gain has vanished."));
  Table t{{"family", "knee sparse", "knee dense", "at the sparse knee", "compute-bound",
           "memory-bound", "bytes ratio", "gain < 1.1x up to"},
          {},
          "lrrrrrrr",
          false,
          false};
  for (const LensFamily& f : r.families) {
    t.rows.push_back({f.family, bandwidth_text(f.knee_sparse), bandwidth_text(f.knee_dense),
                      times(f.speedup_at_knee), times(f.speedup_compute_bound),
                      times(f.speedup_memory_bound), times(f.bytes_ratio),
                      f.vanishes_below > 0 ? bandwidth_text(f.vanishes_below) : "never"});
  }
  summary.blocks.push_back(table_block(std::move(t)));

  Section bandwidth{"bandwidth", "Bandwidth", {}, false, ""};
  bandwidth.blocks.push_back(figure(lens_speedup_svg(r)));
  bandwidth.blocks.push_back(figure(utilization_svg(r, r.settings.axi_data_w.back())));
  Table b{{"family", "AXI bits", "B/cycle", "sparse cycles", "dense cycles", "speedup",
           "sparse util.", "dense util.", "sparse bound", "dense bound"},
          {},
          "lrrrrrrrll",
          false,
          false};
  for (const LensPoint& p : r.bandwidth) {
    b.rows.push_back({p.family, std::to_string(p.axi_data_w), fixed(p.bytes_per_cycle, 0),
                      grouped(p.sparse_cycles), grouped(p.dense_cycles), times(p.speedup()),
                      percent(p.sparse_utilization, 1), percent(p.dense_utilization, 1),
                      p.sparse_bound, p.dense_bound});
  }
  bandwidth.blocks.push_back(details("every point: " + std::to_string(b.rows.size()), b));

  Section latency{"latency", "Read latency", {}, false, ""};
  latency.blocks.push_back(figure(latency_svg(r)));
  Table l{{"family", "latency", "sparse cycles", "dense cycles", "speedup", "sparse bound"},
          {},
          "lrrrrl",
          false,
          false};
  for (const LensPoint& p : r.latency) {
    l.rows.push_back({p.family, std::to_string(p.read_latency), grouped(p.sparse_cycles),
                      grouped(p.dense_cycles), times(p.speedup()), p.sparse_bound});
  }
  latency.blocks.push_back(table_block(std::move(l)));
  doc.sections = {summary, bandwidth, latency};
  return render_html(doc);
}

}  // namespace nmsa
