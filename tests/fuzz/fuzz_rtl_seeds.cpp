// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// Writes the seed inputs of fuzz_rtl (rtl_fuzz_input.hpp) into a directory: real one-tile GEMM
// programs hand-built from docs/isa.md (sparse and dense, INT32 and INT8 outputs) under several
// memory timings, and variants that the fuzzer would take long to find on its own: a soft reset
// and a second run, an AXI error on the weights, a START while busy, CSR accesses to every
// register and to undefined offsets.
//
// Usage: fuzz_rtl_seeds OUT_DIR
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>

#include "rtl_fuzz_input.hpp"

namespace {

using namespace nmsa;
using namespace nmsa::fuzz;

const Geometry kGeometry{NMSA_FUZZ_ROWS, NMSA_FUZZ_COLS, NmPattern{NMSA_FUZZ_N, NMSA_FUZZ_M}};
constexpr std::uint8_t kStatusSel = 5;  // kKnownRegs[5]
constexpr std::uint8_t kCtrlSel = 0;
constexpr std::uint64_t kProgramBase = 0x10000;  // region 1

void load_program(InputWriter& in, const TileProgram& p) {
  for (const auto& block : p.data) {
    in.memory(1, static_cast<std::uint16_t>(block.address - kProgramBase), block.bytes);
  }
  for (std::size_t i = 0; i < p.commands.size(); ++i) {
    in.command(static_cast<std::uint8_t>(i), p.commands[i]);
  }
}

void write(const std::filesystem::path& dir, const std::string& name, const InputWriter& in) {
  std::ofstream out(dir / name, std::ios::binary);
  out.write(reinterpret_cast<const char*>(in.bytes().data()),
            static_cast<std::streamsize>(in.bytes().size()));
  if (!out) throw std::runtime_error("cannot write " + (dir / name).string());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: fuzz_rtl_seeds OUT_DIR\n";
    return 2;
  }
  try {
    const std::filesystem::path dir = argv[1];
    std::filesystem::create_directories(dir);
    const TileProgram sparse32 = make_tile_program(kGeometry, kProgramBase, 8, true, true, 1);
    const TileProgram sparse8 = make_tile_program(kGeometry, kProgramBase, 12, true, false, 2);
    const TileProgram dense32 = make_tile_program(kGeometry, kProgramBase, 6, false, true, 3);
    const auto count = static_cast<std::uint8_t>(sparse32.commands.size());

    struct Timing {
      const char* name;
      std::uint8_t read_lat, write_lat, stalls, outstanding;
    };
    const Timing timings[] = {{"fast", 0, 0, 0x00, 0x3f}, {"slow", 7, 3, 0x55, 0x09},
                              {"stalled", 2, 9, 0xaa, 0x00}};
    for (const Timing& t : timings) {
      for (const auto& [name, program] :
           {std::pair<const char*, const TileProgram*>{"sparse_int32", &sparse32},
            {"sparse_int8", &sparse8}, {"dense_int32", &dense32}}) {
        InputWriter in(1, t.read_lat, t.write_lat, t.stalls, t.outstanding);
        load_program(in, *program);
        in.run(count);
        in.wait_idle();
        in.csr_read(kStatusSel);
        write(dir, std::string(name) + "_" + t.name, in);
      }
    }

    {  // a run, a soft reset, a second run
      InputWriter in(2, 1, 1, 0x05, 0x12);
      load_program(in, sparse32);
      in.run(count);
      in.wait_idle();
      in.soft_reset();
      in.run(count);
      in.wait_idle();
      write(dir, "rerun_after_soft_reset", in);
    }
    {  // SLVERR on the weight records, DECERR on the output
      InputWriter in(3, 2, 2, 0x00, 0x3f);
      load_program(in, sparse32);
      in.error_range(1, 0x1000, 8, 0x04);   // SLVERR, read and write
      in.error_range(1, 0x3000, 16, 0x03);  // DECERR, write
      in.run(count);
      in.wait_idle();
      write(dir, "axi_errors", in);
    }
    {  // a START while the stream runs
      InputWriter in(4, 4, 4, 0x00, 0x3f);
      load_program(in, sparse8);
      in.run(count);
      in.csr_write(kCtrlSel, regs::CTRL_START_MASK);
      in.wait_idle();
      write(dir, "start_while_busy", in);
    }
    // Variants of the sparse INT32 program, each reaching commands and fields the plain tile
    // does not use (legal all of them, docs/isa.md).
    const auto variant = [&](const char* name, std::vector<Command> cmds) {
      InputWriter in(6, 3, 2, 0x11, 0x1b);
      TileProgram p = sparse32;
      p.commands = std::move(cmds);
      load_program(in, p);
      in.run(static_cast<std::uint8_t>(p.commands.size()));
      in.wait_idle();
      for (std::uint8_t sel = 19; sel < 128; sel += 20) in.csr_read(sel);  // counters
      write(dir, name, in);
    };
    {  // two K-tiles into the same accumulators: weights in records 0-3 and 4-7, ACCUMULATE
      const auto& c = sparse32.commands;
      Command wgt1 = c[2];
      wgt1.first_entry = static_cast<std::uint16_t>(kGeometry.rows);
      Command tile0 = c[3];
      tile0.push_next = false;
      Command tile1 = c[3];
      tile1.first_weight_record = static_cast<std::uint16_t>(kGeometry.rows);
      tile1.accumulate = true;
      variant("two_tiles_accumulate", {c[0], c[1], c[2], wgt1, tile0, tile1, c[4]});
    }
    {  // tokens both ways: COMPUTE frees the weight buffer for the next LOAD, STORE frees the
       // accumulators for the next COMPUTE
      const auto& c = sparse32.commands;
      Command compute = c[3];
      compute.push_prev = true;
      Command reload = c[2];
      reload.pop_next = true;
      Command store = c[4];
      store.push_prev = true;
      Command compute2 = c[3];
      compute2.pop_next = true;
      Command store2 = c[4];
      variant("tokens_both_ways", {c[0], c[1], c[2], compute, store, reload, compute2, store2});
    }
    {  // narrow INT8 rows (Cols bytes) at a stride of 8, dense part 1, activation stride 2
      const auto& c = sparse32.commands;
      Command compute = c[3];
      compute.dense = true;
      compute.dense_part = 1;
      compute.act_stride = 2;
      compute.beats = 4;
      Command store = Command::store(0, 4, 0, c[4].host_address, 8, /*int32_output=*/false, true);
      store.pop_prev = true;
      variant("narrow_store_dense_part", {c[0], c[1], c[2], compute, store});
    }
    {  // activations in rows strided through host memory, loaded in two LOADs
      const auto& c = sparse32.commands;
      Command act0 = c[1];
      act0.rows = 4;
      act0.host_stride = 2 * act0.bytes_per_row;
      Command act1 = act0;
      act1.first_entry = 4;
      act1.host_address += act0.bytes_per_row;
      variant("strided_loads", {c[0], act0, act1, c[2], c[3], c[4]});
    }

    {  // every register, then undefined offsets
      InputWriter in(5, 0, 0, 0x00, 0x3f);
      for (std::uint8_t sel = 0; sel < kKnownRegs.size() + 1; ++sel) in.csr_read(sel);
      for (std::uint8_t sel = 128; sel < 255; sel += 7) in.csr_write(sel, 0xffffffffu);
      in.csr_write(1, 0x1004);  // CMD_BASE_LO not beat-aligned
      in.csr_write(3, 3);
      in.csr_write(kCtrlSel, regs::CTRL_START_MASK | regs::CTRL_IRQ_EN_MASK);
      write(dir, "csr_sweep", in);
    }
  } catch (const std::exception& e) {
    std::cerr << "fuzz_rtl_seeds: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
