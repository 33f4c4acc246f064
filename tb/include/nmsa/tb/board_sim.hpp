// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// The Verilated board core (nmsa_board_core, the `small` accelerator) behind a pseudo-terminal,
// so that the UART device backend reaches it exactly as it reaches a board: through a serial
// port, termios included (make_uart_device("uart:" + tty_path())). A thread clocks the model and
// carries bytes between the pseudo-terminal and the UART pins at the simulated bit rate.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

namespace nmsa::tb {

// The parameters the model is built with (set once, in CMakeLists.txt).
struct BoardSimParams {
  const char* config;         // the accelerator's configuration (rtl/configs.json)
  unsigned clk_hz;            // nominal, as PING reports it
  unsigned clks_per_bit;
  unsigned timeout_clks;      // the bridge's byte timeout
  unsigned mem_base;
  unsigned mem_bytes;
  unsigned max_payload;
};
const BoardSimParams& board_sim_params();

class BoardSim {
 public:
  // Creates the pseudo-terminal, resets the model (registers randomized from `seed`) and starts
  // clocking it. Throws std::runtime_error if no pseudo-terminal can be had.
  explicit BoardSim(std::uint64_t seed);
  ~BoardSim();  // stops the thread
  BoardSim(const BoardSim&) = delete;
  BoardSim& operator=(const BoardSim&) = delete;

  // The serial port to open: the pseudo-terminal's slave side.
  const std::string& tty_path() const { return tty_path_; }
  // "uart:<tty_path>"
  std::string spec() const { return "uart:" + tty_path_; }
  std::uint64_t cycles() const { return cycles_.load(); }
  // Bytes the core sent with a low stop bit (its transmitter is broken if this is not 0).
  std::uint64_t line_errors() const { return line_errors_.load(); }

 private:
  struct Model;
  void loop();

  std::unique_ptr<Model> model_;
  int master_fd_ = -1;
  int slave_fd_ = -1;  // held open so the line never hangs up between two users
  std::string tty_path_;
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> cycles_{0};
  std::atomic<std::uint64_t> line_errors_{0};
  std::thread thread_;
};

}  // namespace nmsa::tb
