// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
#include "nmsa/tb/array_gemm.hpp"

#include <deque>
#include <random>
#include <stdexcept>

#include "nmsa/sparse_format.hpp"

namespace nmsa::tb {

const char* to_string(ArrayMode mode) { return mode == ArrayMode::kSparse ? "sparse" : "dense"; }

double ArrayGemmResult::utilization(const ArrayGeometry& g) const {
  if (cycles == 0) return 0.0;
  return static_cast<double>(useful_macs) /
         (static_cast<double>(cycles) * static_cast<double>(g.peak_macs_per_cycle()));
}

namespace {

Eigen::Index round_up(Eigen::Index value, Eigen::Index multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

MatrixI8 zero_padded(const MatrixI8& m, Eigen::Index rows, Eigen::Index cols) {
  MatrixI8 out = MatrixI8::Zero(rows, cols);
  out.topLeftCorner(m.rows(), m.cols()) = m;
  return out;
}

// The weights and activation packing of one tile: output-channel block `block`, K-chunk `chunk`.
class TileData {
 public:
  TileData(const ArrayGeometry& g, ArrayMode mode, const MatrixI8& x_pad, const MatrixI8& w_pad,
           const CompressedWeights* compressed)
      : g_(g), dense_(mode == ArrayMode::kDense), x_(x_pad), w_(w_pad), c_(compressed) {}

  void fill_weight_row(std::size_t block, std::size_t chunk, unsigned row, ArrayInputs& in) const {
    const int n = g_.pattern.n;
    for (unsigned c = 0; c < g_.cols; ++c) {
      const Eigen::Index ch = static_cast<Eigen::Index>(block * g_.cols + c);
      if (dense_) {
        const Eigen::Index base =
            static_cast<Eigen::Index>(chunk * g_.chunk_k(true) + row * static_cast<unsigned>(n));
        for (int j = 0; j < n; ++j) in.wload_val[c * n + j] = w_(ch, base + j);
        // The array ignores metadata in dense mode; 0 is an illegal 2:4 code, which proves it.
        in.wload_meta[c] = 0;
      } else {
        const Eigen::Index group = static_cast<Eigen::Index>(chunk * g_.rows + row);
        for (int j = 0; j < n; ++j) in.wload_val[c * n + j] = c_->values(ch, group * n + j);
        in.wload_meta[c] = c_->meta(ch, group);
      }
    }
    in.wload_dense = dense_;
  }

  void fill_beat(std::size_t chunk, Eigen::Index x_row, ArrayInputs& in) const {
    const unsigned lanes = g_.lanes();
    const unsigned per_pe = dense_ ? static_cast<unsigned>(g_.pattern.n) : lanes;
    const std::int8_t* src = x_.data() + x_row * x_.cols() + chunk * g_.chunk_k(dense_);
    for (unsigned r = 0; r < g_.rows; ++r) {
      for (unsigned lane = 0; lane < lanes; ++lane) {
        in.in_act[r * lanes + lane] = lane < per_pe ? src[r * per_pe + lane] : 0;
      }
    }
  }

 private:
  const ArrayGeometry& g_;
  bool dense_;
  const MatrixI8& x_;
  const MatrixI8& w_;
  const CompressedWeights* c_;
};

struct InflightBeat {
  std::size_t tile;
  Eigen::Index x_row;
};

}  // namespace

ArrayGemmResult run_array_gemm(ArraySim& sim, const MatrixI8& x, const MatrixI8& w,
                               ArrayMode mode, const ArrayGemmOptions& options) {
  const ArrayGeometry& g = sim.geometry();
  if (x.cols() != w.cols()) {
    throw std::invalid_argument("array gemm: activations have K = " + std::to_string(x.cols()) +
                                " but weights have K = " + std::to_string(w.cols()));
  }
  if (x.rows() == 0 || w.rows() == 0 || x.cols() == 0) {
    throw std::invalid_argument("array gemm: empty operand");
  }
  const bool dense = mode == ArrayMode::kDense;
  if (!dense && !g.sparse) {
    throw std::invalid_argument("array gemm: the dense-only array runs dense mode only");
  }
  const Eigen::Index chunk_k = g.chunk_k(dense);
  const Eigen::Index k_pad = round_up(x.cols(), chunk_k);
  const Eigen::Index n_pad = round_up(w.rows(), g.cols);
  const MatrixI8 x_pad = zero_padded(x, x.rows(), k_pad);
  const MatrixI8 w_pad = zero_padded(w, n_pad, k_pad);

  std::optional<CompressedWeights> compressed;
  if (!dense) compressed = compress(w_pad, g.pattern);  // throws on a non-N:M group

  const TileData tiles_data(g, mode, x_pad, w_pad, compressed ? &*compressed : nullptr);
  const std::size_t chunks = static_cast<std::size_t>(k_pad / chunk_k);
  const std::size_t blocks = static_cast<std::size_t>(n_pad / g.cols);
  const std::size_t tiles = chunks * blocks;
  const Eigen::Index beats_per_tile = x.rows();

  ArrayGemmResult result;
  result.y = MatrixI32::Zero(x.rows(), w.rows());
  result.tiles = tiles;
  result.useful_macs = static_cast<std::uint64_t>(x.rows()) * static_cast<std::uint64_t>(x.cols()) *
                       static_cast<std::uint64_t>(w.rows());

  std::mt19937_64 rng(options.seed);
  std::bernoulli_distribution gap(options.gap_probability);
  std::deque<InflightBeat> inflight;
  ArrayInputs in = sim.idle_inputs();

  std::size_t next_load = 0;   // tile whose weights are loading (or next to load)
  unsigned load_row = 0;
  std::size_t stream_tile = 0; // tile whose beats are streaming
  Eigen::Index stream_row = 0;
  const std::uint64_t timeout =
      64 * (tiles * (static_cast<std::uint64_t>(beats_per_tile) + g.rows) + g.latency()) + 1000;

  while (stream_tile < tiles || !inflight.empty()) {
    if (options.stop_after_cycles != 0 && result.cycles >= options.stop_after_cycles) {
      return result;
    }
    if (result.cycles > timeout) {
      throw std::runtime_error("array gemm: no progress after " + std::to_string(result.cycles) +
                               " cycles (" + std::to_string(inflight.size()) +
                               " results outstanding)");
    }

    // A tile streams only once all its weight rows were written in earlier cycles.
    const bool stream_tile_loaded = stream_tile < next_load;

    // Weight load into the idle bank, at most one tile ahead of the stream.
    in.wload_valid = false;
    if (next_load < tiles && next_load <= stream_tile + 1 && !sim.bank_busy(next_load & 1u)) {
      in.wload_valid = true;
      in.wload_row = load_row;
      in.wload_bank = (next_load & 1u) != 0;
      tiles_data.fill_weight_row(next_load / chunks, next_load % chunks, load_row, in);
      if (options.corrupt_meta && options.corrupt_meta->tile == next_load &&
          options.corrupt_meta->row == load_row) {
        in.wload_meta[options.corrupt_meta->col] = options.corrupt_meta->code;
      }
      if (++load_row == g.rows) {
        load_row = 0;
        ++next_load;
      }
    }

    // One activation beat of the current tile, once its weights are in.
    in.in_valid = false;
    if (stream_tile < tiles) {
      if (!stream_tile_loaded) {
        ++result.stall_cycles;
      } else if (!gap(rng)) {
        in.in_valid = true;
        in.in_bank = (stream_tile & 1u) != 0;
        tiles_data.fill_beat(stream_tile % chunks, stream_row, in);
        inflight.push_back({stream_tile, stream_row});
        ++result.beats;
        if (++stream_row == beats_per_tile) {
          stream_row = 0;
          ++stream_tile;
        }
      }
    }

    const ArrayOutputs& out = sim.step(in);
    ++result.cycles;
    if (out.wload_illegal) ++result.illegal_loads;
    if (out.out_valid && out.out_err) {
      throw std::runtime_error("array gemm: out_valid_o and out_err_o both high");
    }
    if (out.out_valid || out.out_err) {
      if (inflight.empty()) {
        throw std::runtime_error("array gemm: result at cycle " + std::to_string(result.cycles) +
                                 " for a beat that was never sent");
      }
      const InflightBeat beat = inflight.front();
      inflight.pop_front();
      if (out.out_err) {
        ++result.error_beats;
        continue;
      }
      const std::size_t block = beat.tile / chunks;
      for (unsigned c = 0; c < g.cols; ++c) {
        const Eigen::Index ch = static_cast<Eigen::Index>(block * g.cols + c);
        if (ch >= w.rows()) break;
        // Wrapping INT32 accumulation, as the accumulator SRAM does.
        result.y(beat.x_row, ch) = static_cast<std::int32_t>(
            static_cast<std::uint32_t>(result.y(beat.x_row, ch)) +
            static_cast<std::uint32_t>(out.out_psum[c]));
      }
    }
  }
  result.completed = true;
  return result;
}

}  // namespace nmsa::tb
