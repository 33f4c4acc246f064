// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
#include "tile_planner.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace nmsa {

namespace compiler_detail {

namespace {

// How many candidate plans are compiled (dry run) after the analytic pre-selection.
constexpr std::size_t PLANS_BUILT = 6;

// Empty when the plan fits the device, else what does not fit.
std::string plan_problem(const DeviceCaps& caps, const Geometry& g, const TilingPlan& p) {
  const Capacity cap = capacity(caps);
  const std::int64_t r = p.beats_per_tile;
  if (r < 1 || r > 65535) return "beats per tile must be in [1, 65535]";
  if (r > cap.acc_entries)
    return "R = " + std::to_string(r) + " accumulator rows exceed ACC_ENTRIES";
  if (p.chunks_per_act_block < 1 || p.chunks_per_act_block > g.k_chunks) {
    return "chunks per activation block must be in [1, " + std::to_string(g.k_chunks) + "]";
  }
  if (static_cast<std::int64_t>(p.chunks_per_act_block) * caps.act_entry_bytes() > 65535) {
    return "an activation block row of " + std::to_string(p.chunks_per_act_block) +
           " entries exceeds 65535 bytes";
  }
  if (r * p.chunks_per_act_block > cap.act_entries) {
    return "an activation slot of R*c = " + std::to_string(r * p.chunks_per_act_block) +
           " entries exceeds ACT_ENTRIES";
  }
  if (p.blocks_per_group < 1 || p.blocks_per_group > g.blocks) {
    return "blocks per group must be in [1, " + std::to_string(g.blocks) + "]";
  }
  if (p.blocks_per_group > cap.acc_entries / r) {
    return "B * R = " + std::to_string(p.blocks_per_group * r) +
           " accumulator rows exceed ACC_ENTRIES";
  }
  if (!epilogue_cached(g, cap)) {
    if (cap.epi_entries < 2) {
      return "the GEMM has " + std::to_string(g.blocks) +
             " output blocks but the epilogue buffer holds 1 entry (at least 2 are needed to "
             "reload it)";
    }
    if (p.blocks_per_group > cap.epi_entries / 2) {
      return "B = " + std::to_string(p.blocks_per_group) + " blocks need more than half of the " +
             std::to_string(cap.epi_entries) + " epilogue entries";
    }
  }
  if (p.weight_batch_tiles < 1 || p.weight_batch_tiles > cap.half_tiles) {
    return "weight batch must be in [1, " + std::to_string(cap.half_tiles) + "] tiles";
  }
  return "";
}

// --- plan ranking without a memory ---------------------------------------------------------------
//
// When the caller does not say which memory the program will run with (GemmOptions::memory),
// plans are ranked by this estimate, as they always were, so that such callers keep their
// command streams. Ranking by the cycle model for a guessed memory (the PerfModelParams defaults)
// instead picks plans that are faster on memories like the guess but can be much slower on
// others: e.g. activation LOADs of one entry per row make 4-beat bursts, which 16 bursts in
// flight cannot stream at a read latency of 100. The program runs as a sequence of
// windows, one per weight batch: while the array computes the tiles of batch j, the DMA brings in
// what batch j+1 needs and writes back finished blocks. A window takes max(compute, DMA) cycles:
//   compute = its beats (one per cycle) plus a bubble per tile in the spirit of
//             docs/architecture.md section 8: a tile of T < L + Rows beats is taken not to hide
//             the next tile's weight load, and to cost on average (L + Rows - T) / 2 idle cycles
//             (a rough bound: the array's own limit is W + Rows, the engine's 2*Rows + Cols + 5);
//   DMA     = (bytes of the LOADs and STOREs issued in it + 32 per command fetched) / bandwidth.
// Before the first beat: the read latency, the commands and data the first tile needs, and the
// Rows cycles of its weight load into the array. After the last beat: the array latency L, the
// STOREs that follow, and the write latency. (It ignores the command fetch, the store engine's
// per-row cost and the DMA's burst limits, so its cycles are no prediction.)
std::uint64_t window_estimate(const DeviceCaps& caps, const Emitted& prog,
                              const PerfModelParams& params) {
  const double bw = params.dma_bytes_per_cycle > 0 ? params.dma_bytes_per_cycle : caps.axi_bytes();
  const int lat = caps.latency();
  std::size_t last_compute = 0;
  for (std::size_t i = 0; i < prog.cmds.size(); ++i) {
    if (prog.cmds[i].opcode == Opcode::COMPUTE) last_compute = i;
  }
  double startup_bytes = 0, tail_bytes = 0;
  std::vector<double> w_compute, w_dma;
  for (std::size_t i = 0; i < prog.cmds.size(); ++i) {
    const Command& c = prog.cmds[i];
    const double bytes = static_cast<double>(payload_bytes(caps, c) + isa::COMMAND_BYTES);
    const int w = prog.window[i];
    if (w < 0) {
      startup_bytes += bytes;
      continue;
    }
    if (i > last_compute) {
      tail_bytes += bytes;
      continue;
    }
    if (static_cast<std::size_t>(w) >= w_compute.size()) {
      w_compute.resize(static_cast<std::size_t>(w) + 1, 0.0);
      w_dma.resize(static_cast<std::size_t>(w) + 1, 0.0);
    }
    w_dma[static_cast<std::size_t>(w)] += bytes;
    if (c.opcode == Opcode::COMPUTE) {
      const double t = c.beats;
      const double bubble = t < lat + caps.rows ? (lat + caps.rows - t) / 2.0 : 0.0;
      w_compute[static_cast<std::size_t>(w)] += t + bubble;
    }
  }
  double steady = 0;
  for (std::size_t w = 0; w < w_compute.size(); ++w)
    steady += std::max(w_compute[w], w_dma[w] / bw);
  return static_cast<std::uint64_t>(
             std::llround(params.dma_read_latency + startup_bytes / bw + caps.rows)) +
         static_cast<std::uint64_t>(std::llround(steady)) +
         static_cast<std::uint64_t>(
             std::llround(lat + tail_bytes / bw + params.dma_write_latency));
}

// --- planning ----------------------------------------------------------------------------------

// A quick estimate of a plan's DMA bytes and cycles, used to pick the few plans worth compiling.
double quick_estimate(const DeviceCaps& caps, const Geometry& g, const TilingPlan& p,
                      double* bytes_out) {
  const Capacity cap = capacity(caps);
  const std::int64_t r = p.beats_per_tile;
  const std::int64_t n_rt = ceil_div(g.rows, r);
  const std::int64_t n_kb = ceil_div(g.k_chunks, p.chunks_per_act_block);
  const std::int64_t slots = cap.act_entries / (r * p.chunks_per_act_block);
  const std::int64_t groups = ceil_div(g.blocks, p.blocks_per_group);
  const std::int64_t kept = std::min(n_kb, std::max<std::int64_t>(0, slots - 1));
  const double act_loads = slots >= n_kb ? 1.0
                                         : 1.0 + static_cast<double>(groups - 1) *
                                                     static_cast<double>(n_kb - kept) /
                                                     static_cast<double>(n_kb);
  const double act = act_loads * static_cast<double>(g.rows) * static_cast<double>(g.k_pad);
  const double tiles = static_cast<double>(n_rt) * g.blocks * g.k_tiles;
  const double wgt = tiles * caps.rows * caps.weight_record_bytes();
  const double out = static_cast<double>(g.rows) * static_cast<double>(g.blocks) *
                     static_cast<double>(g.out_row_bytes);
  const double cmds = tiles * (1.0 + 1.0 / p.weight_batch_tiles) +
                      static_cast<double>(n_rt) * g.blocks + act / ACT_PIECE_BYTES + 4;
  const double bytes =
      act + wgt + out + cmds * isa::COMMAND_BYTES + g.epi_needed * caps.epi_entry_bytes();
  double compute = 0;
  const int lat = caps.latency();
  for (std::int64_t rt = 0; rt < n_rt; ++rt) {
    const double t = static_cast<double>(std::min<std::int64_t>(r, g.rows - rt * r));
    compute +=
        g.blocks * g.k_tiles * (t + (t < lat + caps.rows ? (lat + caps.rows - t) / 2.0 : 0.0));
  }
  *bytes_out = bytes;
  return std::max(compute, bytes / caps.axi_bytes());
}

std::vector<TilingPlan> candidate_plans(const DeviceCaps& caps, const Geometry& g) {
  const Capacity cap = capacity(caps);
  std::vector<TilingPlan> out;
  const std::int64_t r_max =
      std::min<std::int64_t>({g.rows, 65535, cap.acc_entries, cap.act_entries});
  const std::int64_t n_rt_min = ceil_div(g.rows, r_max);
  std::vector<std::int64_t> rs;
  for (std::int64_t n_rt = n_rt_min; n_rt < n_rt_min + 16; ++n_rt) {
    const std::int64_t r = ceil_div(g.rows, n_rt);
    if (rs.empty() || rs.back() != r) rs.push_back(r);
    if (r == 1) break;
  }
  std::vector<int> cs;
  for (int c = 1; c <= g.k_chunks && c <= 64; c *= 2) cs.push_back(c);
  if (g.k_chunks <= 64 && cs.back() != g.k_chunks) cs.push_back(g.k_chunks);
  std::vector<int> bs;
  for (int n_g = 1; n_g <= g.blocks; ++n_g) {
    const int b = static_cast<int>(ceil_div(g.blocks, n_g));
    if (bs.empty() || bs.back() != b) bs.push_back(b);
  }
  for (const std::int64_t r : rs) {
    for (const int c : cs) {
      for (const int b : bs) {
        TilingPlan p;
        p.beats_per_tile = static_cast<int>(r);
        p.chunks_per_act_block = c;
        p.blocks_per_group = b;
        p.weight_batch_tiles = static_cast<int>(cap.half_tiles);
        if (plan_problem(caps, g, p).empty()) out.push_back(p);
      }
    }
  }
  return out;
}

Addresses dummy_addresses() {
  return Addresses{0x1000'0000, 0x2000'0000, 0x3000'0000, 0x4000'0000};
}

}  // namespace

Chosen choose_plan(const DeviceCaps& caps, const Geometry& g, const GemmOptions& options,
                   const PerfModelParams& params, bool want_cycles) {
  if (options.plan) {
    const std::string problem = plan_problem(caps, g, *options.plan);
    if (!problem.empty()) {
      throw std::invalid_argument("tiling plan " + options.plan->describe() + " does not fit " +
                                  caps.describe() + ": " + problem);
    }
    Chosen c;
    c.plan = *options.plan;
    c.program = emit_commands(caps, g, c.plan, dummy_addresses());
    if (want_cycles) {
      c.cycles = *predict_stream_cycles(caps, {gemm_shape(g)}, c.program.cmds, 0, params);
    }
    return c;
  }
  std::vector<TilingPlan> plans = candidate_plans(caps, g);
  if (plans.empty()) {
    TilingPlan minimal{1, 1, 1, 1};
    throw std::invalid_argument("GEMM " + std::to_string(g.rows) + " x " + std::to_string(g.k) +
                                " x " + std::to_string(g.n_out) + " cannot run on " +
                                caps.describe() + ": even a minimal tile does not fit (" +
                                plan_problem(caps, g, minimal) + ")");
  }
  std::vector<std::pair<std::pair<double, double>, std::size_t>> ranked;
  for (std::size_t i = 0; i < plans.size(); ++i) {
    double bytes = 0;
    const double cycles = quick_estimate(caps, g, plans[i], &bytes);
    ranked.push_back({{cycles, bytes}, i});
  }
  // Rank by cycles rounded to 0.5 %, then bytes: among plans that run equally fast, move less.
  std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    const double qa = std::floor(std::log(a.first.first) / std::log(1.005));
    const double qb = std::floor(std::log(b.first.first) / std::log(1.005));
    if (qa != qb) return qa < qb;
    return a.first.second < b.first.second;
  });
  // Build the most promising plans; the best score wins: cycles plus a tenth of the DMA time, so
  // that among plans about as fast the one that moves fewer bytes wins (the bus is shared and
  // bytes cost energy) without giving up real speed. A simulation stops as soon as its plan can
  // no longer beat the best score so far.
  const PerfModelParams& rank_params = options.memory ? *options.memory : params;
  const double bw = rank_params.dma_bytes_per_cycle > 0 ? rank_params.dma_bytes_per_cycle
                                                        : caps.axi_bytes();
  Chosen best;
  double best_score = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < ranked.size() && i < PLANS_BUILT; ++i) {
    Chosen c;
    c.plan = plans[ranked[i].second];
    c.program = emit_commands(caps, g, c.plan, dummy_addresses());
    const double bytes_term = 0.1 * static_cast<double>(c.program.stats.dma_bytes()) / bw;
    double cycles = 0;
    if (options.memory) {
      const std::optional<CyclePrediction> p =
          predict_stream_cycles(caps, {gemm_shape(g)}, c.program.cmds, 0, rank_params,
                                best_score - bytes_term);
      if (!p) continue;
      cycles = static_cast<double>(p->total);
    } else {
      cycles = static_cast<double>(window_estimate(caps, c.program, rank_params));
    }
    if (cycles + bytes_term < best_score) {
      best_score = cycles + bytes_term;
      best = std::move(c);
    }
  }
  if (want_cycles) {
    best.cycles = *predict_stream_cycles(caps, {gemm_shape(g)}, best.program.cmds, 0, params);
  }
  return best;
}


}  // namespace compiler_detail

std::string TilingPlan::describe() const {
  std::ostringstream s;
  s << "R=" << beats_per_tile << " B=" << blocks_per_group << " c=" << chunks_per_act_block
    << " wbatch=" << weight_batch_tiles;
  return s.str();
}

bool TilingPlan::operator==(const TilingPlan& o) const {
  return beats_per_tile == o.beats_per_tile && blocks_per_group == o.blocks_per_group &&
         chunks_per_act_block == o.chunks_per_act_block &&
         weight_batch_tiles == o.weight_batch_tiles;
}

GemmEstimate estimate_gemm(const DeviceCaps& caps, Eigen::Index rows, Eigen::Index k,
                           Eigen::Index n_out, const GemmOptions& options,
                           const PerfModelParams& params) {
  caps.validate();
  const compiler_detail::Geometry g = compiler_detail::make_geometry(caps, rows, k, n_out, options);
  compiler_detail::Chosen c = compiler_detail::choose_plan(caps, g, options, params, true);
  return GemmEstimate{c.plan, c.program.stats, c.cycles};
}

}  // namespace nmsa
