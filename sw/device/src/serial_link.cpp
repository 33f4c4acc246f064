// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
#include <fcntl.h>
#include <poll.h>
#include <sys/file.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "nmsa/byte_link.hpp"

namespace nmsa {

namespace {

struct BaudRate {
  unsigned rate;
  speed_t code;
};

// The rates Linux termios names. A USB UART takes most of them; which ones it makes exactly
// depends on the chip (docs/fpga.md).
constexpr BaudRate kRates[] = {
    {9600, B9600},         {19200, B19200},       {38400, B38400},       {57600, B57600},
    {115200, B115200},     {230400, B230400},     {460800, B460800},     {500000, B500000},
    {576000, B576000},     {921600, B921600},     {1000000, B1000000},   {1152000, B1152000},
    {1500000, B1500000},   {2000000, B2000000},   {2500000, B2500000},   {3000000, B3000000},
    {3500000, B3500000},   {4000000, B4000000},
};

std::string errno_text() { return std::strerror(errno); }

class SerialLink final : public ByteLink {
 public:
  SerialLink(std::string path, unsigned baud) : path_(std::move(path)) {
    speed_t code = 0;
    for (const BaudRate& r : kRates) {
      if (r.rate == baud) code = r.code;
    }
    if (code == 0) {
      std::string known;
      for (const BaudRate& r : kRates) {
        known += (known.empty() ? "" : ", ") + std::to_string(r.rate);
      }
      throw LinkError(path_ + ": baud rate " + std::to_string(baud) +
                      " is not one termios knows (" + known + ")");
    }
    // Non-blocking open: a serial port whose modem lines are down would otherwise block here.
    fd_ = ::open(path_.c_str(), O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
    if (fd_ < 0) throw LinkError(path_ + ": cannot open: " + errno_text());
    try {
      configure(code);
    } catch (...) {
      ::close(fd_);
      throw;
    }
  }

  ~SerialLink() override { ::close(fd_); }

  std::string name() const override { return path_; }

  void write(const std::uint8_t* data, std::size_t bytes) override {
    std::size_t done = 0;
    while (done < bytes) {
      const ssize_t n = ::write(fd_, data + done, bytes - done);
      if (n > 0) {
        done += static_cast<std::size_t>(n);
        continue;
      }
      if (n < 0 && errno != EAGAIN && errno != EINTR) {
        throw LinkError(path_ + ": write failed: " + errno_text());
      }
      // The driver's buffer is full: wait until it drains, but not forever (a USB UART whose
      // cable was pulled stops draining).
      pollfd p{fd_, POLLOUT, 0};
      const int r = ::poll(&p, 1, 5000);
      if (r == 0) throw LinkError(path_ + ": write stalled for 5 s (is the device connected?)");
      if (r < 0 && errno != EINTR) throw LinkError(path_ + ": poll failed: " + errno_text());
    }
  }

  std::size_t read(std::uint8_t* data, std::size_t bytes,
                   std::chrono::milliseconds timeout) override {
    using Clock = std::chrono::steady_clock;
    const auto deadline = Clock::now() + timeout;
    std::size_t done = 0;
    while (done < bytes) {
      const ssize_t n = ::read(fd_, data + done, bytes - done);
      if (n > 0) {
        done += static_cast<std::size_t>(n);
        continue;
      }
      // In raw mode without VMIN/VTIME an empty line reads as 0 bytes (or EAGAIN); EIO means
      // the other side is gone (a pseudo-terminal closed, a USB UART unplugged).
      if (n < 0 && errno == EIO) throw LinkError(path_ + ": the device closed the line");
      if (n < 0 && errno != EAGAIN && errno != EINTR) {
        throw LinkError(path_ + ": read failed: " + errno_text());
      }
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) break;
      pollfd p{fd_, POLLIN, 0};
      const int r = ::poll(&p, 1, static_cast<int>(left));
      if (r < 0 && errno != EINTR) throw LinkError(path_ + ": poll failed: " + errno_text());
      if (r > 0 && !(p.revents & POLLIN) && (p.revents & (POLLHUP | POLLERR | POLLNVAL))) {
        throw LinkError(path_ + ": the device closed the line");
      }
    }
    return done;
  }

 private:
  void configure(speed_t code) {
    if (!::isatty(fd_)) throw LinkError(path_ + ": not a serial port (not a terminal)");
    // Another process on the same port would steal bytes of our responses.
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      throw LinkError(path_ + ": in use by another process (" + errno_text() + ")");
    }
    termios t{};
    if (::tcgetattr(fd_, &t) != 0) throw LinkError(path_ + ": tcgetattr failed: " + errno_text());
    ::cfmakeraw(&t);
    t.c_cflag |= CLOCAL | CREAD;
    t.c_cflag &= ~(CRTSCTS | CSTOPB | PARENB);
    t.c_iflag &= ~(IXON | IXOFF | IXANY);
    t.c_cc[VMIN] = 0;
    t.c_cc[VTIME] = 0;
    if (::cfsetispeed(&t, code) != 0 || ::cfsetospeed(&t, code) != 0 ||
        ::tcsetattr(fd_, TCSANOW, &t) != 0) {
      throw LinkError(path_ + ": cannot set raw 8N1 mode at the requested rate: " + errno_text());
    }
    ::tcflush(fd_, TCIOFLUSH);
  }

  std::string path_;
  int fd_ = -1;
};

}  // namespace

std::unique_ptr<ByteLink> open_serial_link(const std::string& path, unsigned baud) {
  return std::make_unique<SerialLink>(path, baud);
}

}  // namespace nmsa
