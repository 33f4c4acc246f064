// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
#include "nmsa/gemm_program.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "command_emitter.hpp"
#include "gemm_geometry.hpp"
#include "nmsa/sparse_format.hpp"
#include "tile_planner.hpp"

namespace nmsa {

using namespace compiler_detail;

namespace {

void check_inputs(const DeviceCaps& caps, const MatrixI8* x, const MatrixI8& w,
                  const GemmOptions& o) {
  caps.validate();
  if (x != nullptr && x->cols() != w.cols()) {
    throw std::invalid_argument("GEMM: activations have K = " + std::to_string(x->cols()) +
                                " but weights have K = " + std::to_string(w.cols()));
  }
  if (x != nullptr && o.input) {
    throw std::invalid_argument("GEMM: activations given both as a matrix and as an external "
                                "input");
  }
  if (x == nullptr) {
    if (!o.input) throw std::invalid_argument("GEMM: no activations and no external input");
    const auto word = static_cast<std::uint64_t>(caps.axi_bytes());
    const std::uint64_t k_pad = GemmProgram::padded_k(caps, w.cols());
    if (o.input->address % word != 0 || o.input->row_stride % word != 0 ||
        o.input->row_stride < k_pad) {
      throw std::invalid_argument(
          "GEMM: external input at " + std::to_string(o.input->address) + " with row stride " +
          std::to_string(o.input->row_stride) + ": both must be multiples of the " +
          std::to_string(word) + "-byte AXI word and the stride at least the padded K = " +
          std::to_string(k_pad));
    }
  }
  if (o.mode == GemmMode::SPARSE && !caps.sparse_supported) {
    throw std::invalid_argument(
        "GEMM: sparse mode requested but the device reports CAP_ARRAY.SPARSE = 0");
  }
  if (o.epilogue) o.epilogue->validate(static_cast<std::size_t>(w.rows()));
}

}  // namespace

std::string_view to_string(GemmMode m) {
  return m == GemmMode::SPARSE ? "sparse" : "dense";
}

std::uint64_t GemmProgram::padded_k(const DeviceCaps& caps, Eigen::Index k) {
  const auto entry = static_cast<std::uint64_t>(caps.act_entry_bytes());
  return round_up(static_cast<std::uint64_t>(std::max<Eigen::Index>(k, 1)), entry);
}

GemmProgram::GemmProgram(const DeviceCaps& caps, const MatrixI8& x, const MatrixI8& w,
                         const GemmOptions& options, HostMemory& mem)
    : caps_(caps), mem_(&mem) {
  build(&x, x.rows(), w, options, mem);
}

GemmProgram::GemmProgram(const DeviceCaps& caps, Eigen::Index rows, const MatrixI8& w,
                         const GemmOptions& options, HostMemory& mem)
    : caps_(caps), mem_(&mem) {
  build(nullptr, rows, w, options, mem);
}

void GemmProgram::build(const MatrixI8* x, Eigen::Index rows, const MatrixI8& w,
                        const GemmOptions& options, HostMemory& mem) {
  const DeviceCaps& caps = caps_;
  check_inputs(caps, x, w, options);
  const Geometry g = make_geometry(caps, rows, w.cols(), w.rows(), options);
  rows_ = rows;
  k_ = w.cols();
  n_out_ = w.rows();
  blocks_ = g.blocks;
  k_tiles_ = g.k_tiles;
  k_pad_ = g.k_pad;
  x_stride_ = g.x_stride;
  dense_ = g.dense;
  int32_output_ = g.int32_out;
  out_stride_ = g.out_stride;
  out_block_pitch_ = g.out_pitch;

  const int rws = caps.rows;
  const int cols = caps.cols;
  const int n = caps.pattern.n;
  const auto rb = static_cast<std::size_t>(caps.weight_record_bytes());
  const auto vb = static_cast<std::size_t>(caps.weight_value_bytes());
  const int meta_w = caps.pattern.meta_bits();

  // Weights padded to whole output blocks and K-chunks (padding is zero; in sparse mode its groups
  // get the canonical all-zero code, never an illegal one).
  MatrixI8 w_pad =
      MatrixI8::Zero(static_cast<Eigen::Index>(blocks_) * cols, static_cast<Eigen::Index>(k_pad_));
  w_pad.topLeftCorner(w.rows(), w.cols()) = w;
  std::vector<std::uint8_t> records(static_cast<std::size_t>(k_tiles_) *
                                        static_cast<std::size_t>(blocks_) *
                                        static_cast<std::size_t>(rws) * rb,
                                    0);
  if (dense_) {
    for (int kt = 0; kt < k_tiles_; ++kt) {
      for (int b = 0; b < blocks_; ++b) {
        for (int r = 0; r < rws; ++r) {
          std::uint8_t* rec =
              records.data() + ((static_cast<std::size_t>(kt) * blocks_ + b) * rws + r) * rb;
          for (int c = 0; c < cols; ++c) {
            for (int j = 0; j < n; ++j) {
              rec[c * n + j] = static_cast<std::uint8_t>(
                  w_pad(b * cols + c, (static_cast<Eigen::Index>(kt) * rws + r) * n + j));
            }
          }
        }
      }
    }
  } else {
    const CompressedWeights cw = compress(w_pad, caps.pattern);
    for (int kt = 0; kt < k_tiles_; ++kt) {
      for (int b = 0; b < blocks_; ++b) {
        for (int r = 0; r < rws; ++r) {
          std::uint8_t* rec =
              records.data() + ((static_cast<std::size_t>(kt) * blocks_ + b) * rws + r) * rb;
          const Eigen::Index group = static_cast<Eigen::Index>(kt) * rws + r;
          for (int c = 0; c < cols; ++c) {
            const Eigen::Index ch = static_cast<Eigen::Index>(b) * cols + c;
            for (int j = 0; j < n; ++j)
              rec[c * n + j] = static_cast<std::uint8_t>(cw.values(ch, group * n + j));
            const unsigned field = cw.meta(ch, group);
            const int bit = c * meta_w;
            for (int i = 0; i < meta_w; ++i) {
              if ((field >> i) & 1u)
                rec[vb + static_cast<std::size_t>((bit + i) / 8)] |=
                    static_cast<std::uint8_t>(1u << ((bit + i) % 8));
            }
          }
        }
      }
    }
  }

  // Epilogue entries: bias, multiplier, shift per column; zero for padding channels. INT32 output
  // uses one all-zero entry (bias 0).
  const std::size_t eb = static_cast<std::size_t>(caps.epi_entry_bytes());
  std::vector<std::uint8_t> epi(static_cast<std::size_t>(g.int32_out ? 1 : blocks_) * eb, 0);
  if (options.epilogue) {
    const EpilogueParams& ep = *options.epilogue;
    auto put32 = [&epi](std::size_t at, std::uint32_t v) {
      for (int i = 0; i < 4; ++i)
        epi[at + static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(v >> (8 * i));
    };
    for (Eigen::Index ch = 0; ch < n_out_; ++ch) {
      const std::size_t at =
          static_cast<std::size_t>(ch / cols) * eb + static_cast<std::size_t>(ch % cols) * 12;
      const auto c = static_cast<std::size_t>(ch);
      put32(at, static_cast<std::uint32_t>(ep.bias[c]));
      put32(at + 4, static_cast<std::uint32_t>(ep.multiplier[c]));
      put32(at + 8, ep.shift[c]);
    }
  }

  // Plan with dummy addresses, then lay out memory and emit for real (the program does not depend
  // on the addresses except through them).
  Chosen chosen = choose_plan(caps, g, options, PerfModelParams{}, false);
  plan_ = chosen.plan;
  const std::uint64_t align = 64;
  Addresses addr;
  addr.x = x != nullptr ? mem.alloc(static_cast<std::uint64_t>(rows_) * k_pad_, align)
                        : options.input->address;
  addr.w = mem.alloc(records.size(), align);
  addr.e = mem.alloc(epi.size(), align);
  addr.o = mem.alloc(static_cast<std::uint64_t>(rows_) * out_stride_, align);
  x_addr_ = addr.x;
  w_addr_ = addr.w;
  e_addr_ = addr.e;
  o_addr_ = addr.o;

  if (x != nullptr) {
    std::vector<std::uint8_t> row(static_cast<std::size_t>(k_pad_), 0);
    for (Eigen::Index r = 0; r < rows_; ++r) {
      for (Eigen::Index k = 0; k < k_; ++k)
        row[static_cast<std::size_t>(k)] = static_cast<std::uint8_t>((*x)(r, k));
      mem.write(addr.x + static_cast<std::uint64_t>(r) * k_pad_, row.data(), row.size());
    }
  }
  mem.write(addr.w, records.data(), records.size());
  mem.write(addr.e, epi.data(), epi.size());
  // A pattern, not zeros, in the output: a row the program forgets to store shows up.
  mem.fill(addr.o, 0xA5, static_cast<std::size_t>(static_cast<std::uint64_t>(rows_) * out_stride_));

  Emitted prog = emit_commands(caps, g, plan_, addr);
  commands_ = std::move(prog.cmds);
  tiles_ = std::move(prog.tiles);
  stats_ = prog.stats;
  cmd_addr_ = mem.alloc(commands_.size() * isa::COMMAND_BYTES, align);
  for (std::size_t i = 0; i < commands_.size(); ++i) {
    const EncodedCommand bytes = encode(commands_[i]);
    mem.write(cmd_addr_ + i * isa::COMMAND_BYTES, bytes.data(), bytes.size());
  }
}

CyclePrediction GemmProgram::predict_cycles(const PerfModelParams& params) const {
  return *predict_stream_cycles(caps_, {shape()}, commands_, cmd_addr_, params);
}

std::uint64_t GemmProgram::weight_record_address(int block, int k_tile, int pe_row) const {
  if (block < 0 || block >= blocks_ || k_tile < 0 || k_tile >= k_tiles_ || pe_row < 0 ||
      pe_row >= caps_.rows) {
    throw std::out_of_range("weight_record_address: no tile (" + std::to_string(block) + ", " +
                            std::to_string(k_tile) + ") row " + std::to_string(pe_row));
  }
  return w_addr_ + ((static_cast<std::uint64_t>(k_tile) * static_cast<std::uint64_t>(blocks_) +
                     static_cast<std::uint64_t>(block)) *
                        static_cast<std::uint64_t>(caps_.rows) +
                    static_cast<std::uint64_t>(pe_row)) *
                       static_cast<std::uint64_t>(caps_.weight_record_bytes());
}

MatrixI32 GemmProgram::read_output() const {
  MatrixI32 y(rows_, n_out_);
  const int cols = caps_.cols;
  const std::uint64_t elem = int32_output_ ? 4 : 1;
  std::vector<std::uint8_t> row(static_cast<std::size_t>(out_stride_));
  for (Eigen::Index r = 0; r < rows_; ++r) {
    mem_->read(o_addr_ + static_cast<std::uint64_t>(r) * out_stride_, row.data(), row.size());
    for (Eigen::Index ch = 0; ch < n_out_; ++ch) {
      const std::size_t at =
          static_cast<std::size_t>(static_cast<std::uint64_t>(ch / cols) * out_block_pitch_ +
                                   static_cast<std::uint64_t>(ch % cols) * elem);
      if (int32_output_) {
        const std::uint32_t v = std::uint32_t{row[at]} | std::uint32_t{row[at + 1]} << 8 |
                                std::uint32_t{row[at + 2]} << 16 | std::uint32_t{row[at + 3]} << 24;
        y(r, ch) = static_cast<std::int32_t>(v);
      } else {
        y(r, ch) = static_cast<std::int8_t>(row[at]);
      }
    }
  }
  return y;
}

}  // namespace nmsa
