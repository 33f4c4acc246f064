// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// A byte link to a board: write bytes, read bytes with a timeout. The UART device backend
// (uart_device.hpp) speaks its protocol over this interface only; the serial port below is the
// implementation users run, and tests can put anything behind it.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

namespace nmsa {

// A failure of the link or of the protocol spoken over it (no answer, a damaged or unexpected
// answer, a port that cannot be opened). The message names the device and what went wrong.
struct LinkError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class ByteLink {
 public:
  virtual ~ByteLink() = default;
  // What the link leads to, for messages (e.g. "/dev/ttyUSB0").
  virtual std::string name() const = 0;
  // Writes all `bytes`; throws LinkError if the link fails.
  virtual void write(const std::uint8_t* data, std::size_t bytes) = 0;
  // Reads up to `bytes`, returning as soon as that many have arrived or `timeout` has passed
  // since the call; returns how many were read (0 on a timeout). Throws LinkError if the link
  // fails.
  virtual std::size_t read(std::uint8_t* data, std::size_t bytes,
                           std::chrono::milliseconds timeout) = 0;
};

// A serial port (a USB UART such as /dev/ttyUSB0, or a pseudo-terminal) in raw 8N1 mode without
// flow control, at `baud` (a rate termios knows, e.g. 115200, 1000000, 3000000). The port is
// locked (flock) against other processes while open, and bytes left from before are discarded.
// Throws LinkError naming the path when it cannot be opened, is not a terminal, is in use or
// does not take the rate.
std::unique_ptr<ByteLink> open_serial_link(const std::string& path, unsigned baud);

}  // namespace nmsa
