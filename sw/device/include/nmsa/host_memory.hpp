// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// Host memory as the device sees it over AXI: a sparse, byte-addressed 64-bit space stored in
// 4 KiB pages, with a bump allocator for the buffers a program lays out. Bytes never written read
// as zero, so a model or a test bench can read any address.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

namespace nmsa {

class HostMemory {
 public:
  static constexpr std::uint64_t PAGE_BYTES = 4096;
  static constexpr std::uint64_t DEFAULT_BASE = 0x1000'0000;

  explicit HostMemory(std::uint64_t alloc_base = DEFAULT_BASE);

  // Byte access. Reads of bytes never written (or beyond 2^64) give 0. A write that would run past
  // 2^64 throws std::out_of_range.
  void read(std::uint64_t address, void* dst, std::size_t bytes) const;
  void write(std::uint64_t address, const void* src, std::size_t bytes);
  void fill(std::uint64_t address, std::uint8_t value, std::size_t bytes);
  std::vector<std::uint8_t> read_bytes(std::uint64_t address, std::size_t bytes) const;

  // Little-endian scalars, whatever the host's byte order.
  template <typename T>
  T read_le(std::uint64_t address) const {
    static_assert(std::is_integral_v<T>, "integral types only");
    std::array<std::uint8_t, sizeof(T)> b{};
    read(address, b.data(), sizeof(T));
    std::make_unsigned_t<T> v = 0;
    for (std::size_t i = sizeof(T); i-- > 0;) v = static_cast<decltype(v)>((v << 8) | b[i]);
    return static_cast<T>(v);
  }
  template <typename T>
  void write_le(std::uint64_t address, T value) {
    static_assert(std::is_integral_v<T>, "integral types only");
    std::array<std::uint8_t, sizeof(T)> b{};
    auto v = static_cast<std::make_unsigned_t<T>>(value);
    for (std::size_t i = 0; i < sizeof(T); ++i) b[i] = static_cast<std::uint8_t>(v >> (8 * i));
    write(address, b.data(), sizeof(T));
  }

  // Bump allocator: returns the next address aligned to `align` (a power of two) and reserves
  // `bytes` (at least 1) there. Allocations never overlap. Throws on a bad alignment, when the
  // 64-bit space is exhausted, or (std::length_error) when the allocation would end above the
  // limit set by set_alloc_limit.
  std::uint64_t alloc(std::uint64_t bytes, std::uint64_t align = 64);
  std::uint64_t alloc_base() const { return base_; }
  std::uint64_t alloc_end() const { return next_; }  // first address above every allocation

  // Confines allocations to [alloc_base(), limit), for a device that reaches only a window of
  // memory. `what` names the window in the error message of an allocation that does not fit,
  // e.g. "uart:/dev/ttyUSB0: board memory". Throws std::invalid_argument if earlier allocations
  // already reach above `limit`.
  void set_alloc_limit(std::uint64_t limit, std::string what);
  std::uint64_t alloc_limit() const { return limit_; }

  std::size_t resident_pages() const { return pages_.size(); }
  void clear();  // forget every byte (reads give 0 again); the allocator keeps its position

 private:
  using Page = std::array<std::uint8_t, PAGE_BYTES>;
  const Page* find_page(std::uint64_t page_index) const;
  Page& page(std::uint64_t page_index);

  std::uint64_t base_;
  std::uint64_t next_;
  std::uint64_t limit_;
  std::string limit_what_;
  std::unordered_map<std::uint64_t, std::unique_ptr<Page>> pages_;
};

}  // namespace nmsa
