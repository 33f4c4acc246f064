// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// fuzz_rtl: coverage-guided fuzzing of the Verilated nmsa_top (docs/fuzzing.md, "The RTL
// fuzzer"). Each input (rtl_fuzz_input.hpp) becomes host memory contents, raw commands, error
// ranges and back-pressure of the AXI memory, and a sequence of CSR accesses; the model's C++
// carries libFuzzer's coverage counters, so an input that drives the RTL into new states is kept.
// Every rule below that breaks prints "fuzz_rtl: FINDING: ..." and aborts, which libFuzzer
// records as a crash with its input:
//   - an RTL assertion fails (Verilator aborts on it);
//   - a CSR access gets no response within 1000 cycles;
//   - after the input's last op, STATUS.BUSY does not drop within work_bound() cycles;
//   - the AXI4 or AXI4-Lite monitor saw a protocol violation;
//   - STATUS.ERROR with an ERR_CODE outside 1..8 or with DONE, or an ERR_CODE without ERROR;
//   - irq_o other than CTRL.IRQ_EN and a pending IRQ_STATUS bit, once the device is idle;
//   - CTRL.SOFT_RESET does not leave STATUS, ERR_INFO and IRQ_STATUS at 0;
//   - the known-good program then run does not end DONE with the golden result (on every
//     NMSA_FUZZ_RTL_GOLDEN_EVERY-th input, default every input).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <string>

#include "Vnmsa_top_fuzz.h"
#include "nmsa/regs.hpp"
#include "nmsa/tb/verilated_top_sim.hpp"
#include "rtl_fuzz_input.hpp"

namespace {

using namespace nmsa;
using nmsa::fuzz::Geometry;

const Geometry kGeometry{NMSA_FUZZ_ROWS, NMSA_FUZZ_COLS, NmPattern{NMSA_FUZZ_N, NMSA_FUZZ_M}};
constexpr unsigned kAxiBytes = NMSA_FUZZ_AXI_DATA_W / 8;

struct Finding {
  std::string what;
};

class Reader {
 public:
  Reader(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
  bool done() const { return pos_ >= size_; }
  std::uint8_t byte() { return pos_ < size_ ? data_[pos_++] : (++pos_, 0); }
  std::uint16_t u16() {
    const std::uint16_t lo = byte();
    return static_cast<std::uint16_t>(lo | byte() << 8);
  }
  std::uint32_t u32() {
    const std::uint32_t lo = u16();
    return lo | std::uint32_t{u16()} << 16;
  }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t pos_ = 0;
};

// The host memory's timing from header bytes 1 (read latency) and 3 (back-pressure), and the
// write latency and outstanding bursts from bytes 2 and 4.
void apply_timing(tb::AxiMemoryConfig& c, std::uint8_t read_lat, std::uint8_t write_lat,
                  std::uint8_t stalls, std::uint8_t outstanding) {
  c.data_bytes = kAxiBytes;
  c.read_latency = 1 + read_lat % fuzz::kMaxLatency;
  c.write_latency = 1 + write_lat % fuzz::kMaxLatency;
  c.p_ar_stall = c.p_aw_stall = fuzz::kStall[stalls & 3];
  c.p_w_stall = fuzz::kStall[(stalls >> 2) & 3];
  c.p_r_gap = fuzz::kStall[(stalls >> 4) & 3];
  c.p_b_gap = fuzz::kStall[(stalls >> 6) & 3];
  c.max_reads = 1 + (outstanding & 7);
  c.max_writes = 1 + ((outstanding >> 3) & 7);
}

// Cycles the device may stay busy after the input's last op. A command stream is read from host
// memory, where unwritten bytes are zero (opcode 0, BAD_OPCODE), so at most one legal command per
// 32 bytes written (by the input's MEM and CMD ops or by the device's own STOREs) can run. A
// command of `small` moves at most 512 AXI beats in at most 256 bursts (the largest buffer is
// 4 KiB; a STORE writes at most 256 rows of 16 bytes), each burst waiting at most one latency;
// the factor 4 covers back-pressure of up to 0.3 on two channels of a beat's path. So:
//   bound = 2000 + commands * (256 + 4 * (512 + 256 * (latency + 4)))
// with latency the largest the input set. (Only a bound: a hang is a device that never drops
// BUSY; a correct run of the longest possible stream ends well inside it.)
std::uint64_t work_bound(std::uint64_t bytes_written, unsigned max_latency) {
  const std::uint64_t commands = 1 + bytes_written / 32;
  return 2000 + commands * (256 + 4 * (512 + 256 * (std::uint64_t{max_latency} + 4)));
}

class Session {
 public:
  Session(const std::uint8_t* data, std::size_t size) : in_(data, size) {
    std::uint8_t h[fuzz::kHeaderBytes];
    for (auto& b : h) b = in_.byte();
    apply_timing(memory_, h[1], h[2], h[3], h[4]);
    max_latency_ = std::max(memory_.read_latency, memory_.write_latency);
    sim_ = std::make_unique<tb::VerilatedTopSim<Vnmsa_top_fuzz>>(kAxiBytes, memory_, 1 + h[0]);
    tb::trace_if_requested(*sim_, "fuzz_rtl");  // NMSA_TRACE=1: waves of a replayed input
  }

  void run_ops() {
    while (!in_.done()) {
      const auto op = static_cast<fuzz::Op>(in_.byte() % fuzz::kNumOps);
      switch (op) {
        case fuzz::kCsrWrite: {
          const std::uint32_t offset = fuzz::csr_offset(in_.byte());
          const std::uint32_t value = in_.u32();
          std::uint8_t strb = in_.byte() & 0xf;
          if (strb == 0) strb = 0xf;
          csr_write(offset, value, strb);
          break;
        }
        case fuzz::kCsrRead:
          csr_read(fuzz::csr_offset(in_.byte()));
          break;
        case fuzz::kCmd: {
          const std::uint64_t slot = in_.byte();
          std::uint8_t cmd[isa::COMMAND_BYTES];
          for (auto& b : cmd) b = in_.byte();
          write_memory(fuzz::kCmdBase + 32 * slot, cmd, sizeof cmd);
          break;
        }
        case fuzz::kMem: {
          const std::uint64_t base = fuzz::kRegions[in_.byte() % fuzz::kRegions.size()];
          const std::uint16_t offset = in_.u16();
          const std::size_t n = in_.byte();
          std::vector<std::uint8_t> bytes(n);
          for (auto& b : bytes) b = in_.byte();
          write_memory(base + offset, bytes.data(), bytes.size());
          break;
        }
        case fuzz::kWait:
          step(in_.u16() & 0x3ff);
          break;
        case fuzz::kRun: {
          const std::uint8_t count = in_.byte();
          csr_write(regs::CMD_BASE_LO_OFFSET, static_cast<std::uint32_t>(fuzz::kCmdBase));
          csr_write(regs::CMD_BASE_HI_OFFSET, 0);
          csr_write(regs::CMD_COUNT_OFFSET, count);
          csr_write(regs::CTRL_OFFSET, regs::CTRL_START_MASK | regs::CTRL_IRQ_EN_MASK);
          break;
        }
        case fuzz::kErrorRange: {
          const std::uint64_t base = fuzz::kRegions[in_.byte() % fuzz::kRegions.size()];
          const std::uint16_t offset = in_.u16();
          const std::uint16_t bytes = in_.u16();
          const std::uint8_t kind = in_.byte();
          const tb::AxiResp resp = (kind & 1) ? tb::AxiResp::kDecErr : tb::AxiResp::kSlvErr;
          const tb::AxiAccess on = (kind >> 1) % 3 == 0   ? tb::AxiAccess::kRead
                                   : (kind >> 1) % 3 == 1 ? tb::AxiAccess::kWrite
                                                          : tb::AxiAccess::kReadWrite;
          sim_->memory().inject_error(base + offset, 1 + bytes, resp, on);
          break;
        }
        case fuzz::kBackPressure: {
          const std::uint8_t stalls = in_.byte();
          const std::uint8_t lat = in_.byte();
          apply_timing(memory_, lat, lat >> 4, stalls, 0xff);
          max_latency_ = std::max({max_latency_, memory_.read_latency, memory_.write_latency});
          sim_->memory().set_config(memory_);
          break;
        }
        case fuzz::kWaitIdle:
          wait_idle("a WAIT_IDLE op");
          break;
        case fuzz::kSoftReset:
          csr_write(regs::CTRL_OFFSET, regs::CTRL_SOFT_RESET_MASK | regs::CTRL_IRQ_EN_MASK);
          break;
        case fuzz::kNumOps:
          break;
      }
      check_protocol();
    }
  }

  // The checks after the last op: idle within the bound, a documented end state, recovery.
  void check_end(bool golden) {
    wait_idle("the input's last op");
    check_protocol();
    const std::uint32_t status = csr_read(regs::STATUS_OFFSET);
    end_status_ = status;
    const unsigned code = (status & regs::STATUS_ERR_CODE_MASK) >> regs::STATUS_ERR_CODE_SHIFT;
    const bool error = (status & regs::STATUS_ERROR_MASK) != 0;
    const bool done = (status & regs::STATUS_DONE_MASK) != 0;
    if (error && (code < 1 || code > 8)) fail("STATUS.ERROR with undocumented ERR_CODE " + hex(status));
    if (error && done) fail("STATUS.ERROR together with STATUS.DONE: " + hex(status));
    if (!error && code != 0) fail("ERR_CODE without STATUS.ERROR: " + hex(status));
    const std::uint32_t ctrl = csr_read(regs::CTRL_OFFSET);
    const std::uint32_t pending = csr_read(regs::IRQ_STATUS_OFFSET);
    const bool irq_want = (ctrl & regs::CTRL_IRQ_EN_MASK) != 0 &&
                          (pending & (regs::IRQ_STATUS_DONE_MASK | regs::IRQ_STATUS_ERROR_MASK)) != 0;
    if (sim_->irq() != irq_want) {
      fail(std::string("irq_o is ") + (sim_->irq() ? "1" : "0") + " with CTRL " + hex(ctrl) +
           " and IRQ_STATUS " + hex(pending));
    }

    csr_write(regs::CTRL_OFFSET, regs::CTRL_SOFT_RESET_MASK);
    wait_idle("CTRL.SOFT_RESET");
    const std::uint32_t after = csr_read(regs::STATUS_OFFSET);
    const std::uint32_t info = csr_read(regs::ERR_INFO_OFFSET);
    const std::uint32_t irq = csr_read(regs::IRQ_STATUS_OFFSET);
    if (after != 0 || info != 0 || irq != 0) {
      fail("after CTRL.SOFT_RESET: STATUS " + hex(after) + ", ERR_INFO " + hex(info) +
           ", IRQ_STATUS " + hex(irq) + " (want all 0)");
    }
    if (golden) run_golden();
    check_protocol();
  }

  std::uint64_t cycles() const { return sim_->cycles(); }
  std::uint32_t end_status() const { return end_status_; }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw Finding{what + " (cycle " + std::to_string(sim_->cycles()) + ")"};
  }

  static std::string hex(std::uint32_t v) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "0x%08x", v);
    return buf;
  }

  void step(unsigned cycles) {
    for (unsigned i = 0; i < cycles; ++i) sim_->step();
  }

  void write_memory(std::uint64_t addr, const std::uint8_t* data, std::size_t n) {
    sim_->memory().write_bytes(addr, data, n);
    bytes_written_ += n;
  }

  void csr_write(std::uint32_t offset, std::uint32_t value, std::uint8_t strb = 0xf) {
    try {
      sim_->try_write_reg(offset, value, strb);
    } catch (const std::runtime_error& e) {
      fail(std::string("CSR write hangs: ") + e.what());
    }
  }

  std::uint32_t csr_read(std::uint32_t offset) {
    std::uint32_t value = 0;
    try {
      sim_->try_read_reg(offset, value);
    } catch (const std::runtime_error& e) {
      fail(std::string("CSR read hangs: ") + e.what());
    }
    return value;
  }

  std::uint64_t bound() const {
    // The watchdog's self-test (CTest fuzz.rtl_hang_can_fail): no time at all must be a hang.
    static const bool broken = std::getenv("NMSA_FUZZ_RTL_BREAK_BOUND") != nullptr;
    if (broken) return 0;
    return work_bound(bytes_written_ + sim_->memory().stats().bytes_written, max_latency_);
  }

  void wait_idle(const char* after) {
    const std::uint64_t limit = bound();
    const std::uint64_t start = sim_->cycles();
    for (;;) {
      const std::uint32_t status = csr_read(regs::STATUS_OFFSET);
      if ((status & regs::STATUS_BUSY_MASK) == 0) return;
      if (sim_->cycles() - start > limit) {
        fail("hang: STATUS.BUSY still 1 " + std::to_string(sim_->cycles() - start) +
             " cycles after " + after + " (bound " + std::to_string(limit) + ", STATUS " +
             hex(status) + ")");
      }
      step(16);
    }
  }

  void check_protocol() const {
    const std::string report = sim_->protocol_report();
    if (!report.empty()) fail("AXI protocol violation:\n" + report);
  }

  // A one-tile sparse GEMM with INT32 output, from memory the input never wrote, under the
  // input's memory timing but without its error ranges.
  void run_golden() {
    static const fuzz::TileProgram program = [] {
      fuzz::TileProgram p = fuzz::make_tile_program(kGeometry, fuzz::kGoldenBase, 8, true, true, 7);
      // The check's self-test (CTest fuzz.rtl_can_fail): a wrong golden result must be a finding.
      if (std::getenv("NMSA_FUZZ_RTL_BREAK_GOLDEN") != nullptr) p.expected[5] ^= 1;
      return p;
    }();
    tb::AxiMemory& mem = sim_->memory();
    mem.clear_errors();
    for (const auto& block : program.data) mem.write_bytes(block.address, block.bytes);
    const std::uint64_t cmd = fuzz::kGoldenBase + 0x8000;
    for (std::size_t i = 0; i < program.commands.size(); ++i) {
      const EncodedCommand e = encode(program.commands[i]);
      mem.write_bytes(cmd + 32 * i, e.data(), e.size());
    }
    mem.write_bytes(program.out_address, std::vector<std::uint8_t>(program.expected.size(), 0xee));
    bytes_written_ += 32 * program.commands.size();
    csr_write(regs::CMD_BASE_LO_OFFSET, static_cast<std::uint32_t>(cmd));
    csr_write(regs::CMD_BASE_HI_OFFSET, static_cast<std::uint32_t>(cmd >> 32));
    csr_write(regs::CMD_COUNT_OFFSET, static_cast<std::uint32_t>(program.commands.size()));
    csr_write(regs::CTRL_OFFSET, regs::CTRL_START_MASK);
    wait_idle("the golden program's START");
    const std::uint32_t status = csr_read(regs::STATUS_OFFSET);
    if (status != regs::STATUS_DONE_MASK) {
      fail("golden program after CTRL.SOFT_RESET: STATUS " + hex(status) + ", ERR_INFO " +
           hex(csr_read(regs::ERR_INFO_OFFSET)) + " (want DONE only)");
    }
    const auto got = mem.read_bytes(program.out_address, program.expected.size());
    if (got != program.expected) {
      const auto at = std::mismatch(got.begin(), got.end(), program.expected.begin()).first - got.begin();
      fail("golden program after CTRL.SOFT_RESET: output byte " + std::to_string(at) + " is " +
           std::to_string(got[at]) + ", want " + std::to_string(program.expected[at]));
    }
  }

  Reader in_;
  tb::AxiMemoryConfig memory_;
  unsigned max_latency_ = 1;
  std::uint64_t bytes_written_ = 0;
  std::uint32_t end_status_ = 0;  // STATUS after the input, before the soft reset
  std::unique_ptr<tb::TopSim> sim_;
};

unsigned golden_every() {
  const char* env = std::getenv("NMSA_FUZZ_RTL_GOLDEN_EVERY");
  const long v = env != nullptr ? std::strtol(env, nullptr, 10) : 1;
  return v < 1 ? 1u : static_cast<unsigned>(v);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const unsigned every = golden_every();
  static std::uint64_t inputs = 0;
  try {
    Session session(data, size);
    session.run_ops();
    session.check_end(inputs++ % every == 0);
    static const bool verbose = std::getenv("NMSA_FUZZ_RTL_VERBOSE") != nullptr;
    if (verbose) {
      std::fprintf(stderr, "fuzz_rtl: %zu bytes, %llu cycles, STATUS 0x%x at the end\n", size,
                   static_cast<unsigned long long>(session.cycles()), session.end_status());
    }
  } catch (const Finding& f) {
    std::fprintf(stderr, "fuzz_rtl: FINDING: %s\n", f.what.c_str());
    std::abort();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz_rtl: FINDING: harness exception: %s\n", e.what());
    std::abort();
  }
  return 0;
}
