// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
#include "nmsa/tb/board_sim.hpp"

#include <fcntl.h>
#include <pty.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <deque>
#include <stdexcept>
#include <vector>

#include "Vnmsa_board_core_sim.h"
#include "nmsa/tb/sim_context.hpp"

namespace nmsa::tb {

const BoardSimParams& board_sim_params() {
  static const BoardSimParams params{NMSA_BOARD_SIM_CONFIG,       NMSA_BOARD_SIM_CLK_HZ,
                                     NMSA_BOARD_SIM_CLKS_PER_BIT, NMSA_BOARD_SIM_TIMEOUT_CLKS,
                                     NMSA_BOARD_SIM_MEM_BASE,     NMSA_BOARD_SIM_MEM_BYTES,
                                     NMSA_BOARD_SIM_MAX_PAYLOAD};
  return params;
}

struct BoardSim::Model {
  std::unique_ptr<VerilatedContext> context;
  std::unique_ptr<Vnmsa_board_core_sim> top;
};

namespace {

// The host's side of the UART pins, one clock cycle at a time, at `clks_per_bit`.
class PinTransmitter {  // bytes -> the core's RX pin
 public:
  explicit PinTransmitter(unsigned clks_per_bit) : clks_per_bit_(clks_per_bit) {}
  bool idle() const { return bits_left_ == 0; }
  void start(std::uint8_t byte) {
    frame_ = 0x200u | static_cast<unsigned>(byte) << 1;  // start 0, 8 data bits, stop 1
    bits_left_ = 10;
    count_ = 0;
  }
  // The line level during this cycle; advances one cycle.
  bool step() {
    if (bits_left_ == 0) return true;
    const bool level = (frame_ & 1u) != 0;
    if (++count_ == clks_per_bit_) {
      count_ = 0;
      frame_ >>= 1;
      --bits_left_;
    }
    return level;
  }

 private:
  unsigned clks_per_bit_;
  unsigned frame_ = 0;
  unsigned bits_left_ = 0;
  unsigned count_ = 0;
};

class PinReceiver {  // the core's TX pin -> bytes
 public:
  explicit PinReceiver(unsigned clks_per_bit) : clks_per_bit_(clks_per_bit) {}
  // Samples the line during one cycle; returns true with `byte` set when a byte completed.
  // A byte whose stop bit is low counts as a line error.
  bool step(bool level, std::uint8_t& byte, std::atomic<std::uint64_t>& line_errors) {
    if (!busy_) {
      if (!level) {  // start bit
        busy_ = true;
        count_ = 0;
        bit_ = 0;
        value_ = 0;
      }
      return false;
    }
    ++count_;
    // Sample in the middle of each bit: data bit i at (i + 1.5) bit times after the edge.
    if (count_ == clks_per_bit_ / 2 + (bit_ + 1) * clks_per_bit_) {
      if (bit_ < 8) {
        value_ |= static_cast<unsigned>(level) << bit_;
        ++bit_;
      } else {  // the stop bit
        busy_ = false;
        if (!level) ++line_errors;
        byte = static_cast<std::uint8_t>(value_);
        return true;
      }
    }
    return false;
  }

 private:
  unsigned clks_per_bit_;
  bool busy_ = false;
  unsigned count_ = 0;
  unsigned bit_ = 0;
  unsigned value_ = 0;
};

}  // namespace

BoardSim::BoardSim(std::uint64_t seed) : model_(std::make_unique<Model>()) {
  termios raw{};
  ::cfmakeraw(&raw);
  char name[128] = {};
  if (::openpty(&master_fd_, &slave_fd_, name, &raw, nullptr) != 0) {
    throw std::runtime_error(std::string("board sim: openpty failed: ") + std::strerror(errno));
  }
  tty_path_ = name;
  ::fcntl(master_fd_, F_SETFL, ::fcntl(master_fd_, F_GETFL) | O_NONBLOCK);
  ::fcntl(master_fd_, F_SETFD, FD_CLOEXEC);
  ::fcntl(slave_fd_, F_SETFD, FD_CLOEXEC);

  model_->context = make_context(seed);
  model_->top = std::make_unique<Vnmsa_board_core_sim>(model_->context.get(), "nmsa_board_core");
  Vnmsa_board_core_sim& top = *model_->top;
  top.uart_rx_i = 1;
  begin_reset(top);
  for (int i = 0; i < 4; ++i) {
    top.clk_i = 0;
    top.eval();
    top.clk_i = 1;
    top.eval();
  }
  top.rst_ni = 1;
  thread_ = std::thread([this] { loop(); });
}

BoardSim::~BoardSim() {
  stop_ = true;
  thread_.join();
  Verilated::threadContextp(model_->context.get());
  model_->top->final();
  record_coverage(*model_->context);
  model_->top.reset();
  ::close(master_fd_);
  ::close(slave_fd_);
}

void BoardSim::loop() {
  // Verilator 5.006 sends assertion failures to the thread's current context.
  Verilated::threadContextp(model_->context.get());
  Vnmsa_board_core_sim& top = *model_->top;
  const unsigned clks_per_bit = board_sim_params().clks_per_bit;
  PinTransmitter to_core(clks_per_bit);
  PinReceiver from_core(clks_per_bit);
  std::deque<std::uint8_t> to_core_bytes;
  std::vector<std::uint8_t> from_core_bytes;
  std::uint8_t buf[4096];

  while (!stop_) {
    // The pseudo-terminal is looked at every 64 cycles, a fraction of a byte's 10 bit times.
    for (int i = 0; i < 64; ++i) {
      if (to_core.idle() && !to_core_bytes.empty()) {
        to_core.start(to_core_bytes.front());
        to_core_bytes.pop_front();
      }
      top.uart_rx_i = to_core.step();
      top.clk_i = 0;
      top.eval();
      std::uint8_t byte = 0;
      if (from_core.step(top.uart_tx_o != 0, byte, line_errors_)) from_core_bytes.push_back(byte);
      top.clk_i = 1;
      top.eval();
    }
    cycles_ += 64;
    if (to_core_bytes.empty()) {
      const ssize_t n = ::read(master_fd_, buf, sizeof buf);
      if (n > 0) to_core_bytes.insert(to_core_bytes.end(), buf, buf + n);
    }
    if (!from_core_bytes.empty()) {
      // The slave's input queue may be full when nobody reads it; what does not fit waits.
      const ssize_t n = ::write(master_fd_, from_core_bytes.data(), from_core_bytes.size());
      if (n > 0) from_core_bytes.erase(from_core_bytes.begin(), from_core_bytes.begin() + n);
    }
  }
}

}  // namespace nmsa::tb
