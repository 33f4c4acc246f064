// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
#include "nmsa/host_memory.hpp"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

namespace nmsa {

namespace {
constexpr std::uint64_t MAX_ADDR = std::numeric_limits<std::uint64_t>::max();

std::string hex(std::uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}
}  // namespace

HostMemory::HostMemory(std::uint64_t alloc_base)
    : base_(alloc_base), next_(alloc_base), limit_(MAX_ADDR) {}

const HostMemory::Page* HostMemory::find_page(std::uint64_t page_index) const {
  const auto it = pages_.find(page_index);
  return it == pages_.end() ? nullptr : it->second.get();
}

HostMemory::Page& HostMemory::page(std::uint64_t page_index) {
  auto& slot = pages_[page_index];
  if (!slot) {
    slot = std::make_unique<Page>();
    slot->fill(0);
  }
  return *slot;
}

void HostMemory::read(std::uint64_t address, void* dst, std::size_t bytes) const {
  auto* out = static_cast<std::uint8_t*>(dst);
  std::size_t done = 0;
  while (done < bytes) {
    if (address > MAX_ADDR - done) {  // past the end of the space: zeros
      std::fill(out + done, out + bytes, std::uint8_t{0});
      return;
    }
    const std::uint64_t a = address + done;
    const std::uint64_t offset = a % PAGE_BYTES;
    const std::size_t n =
        static_cast<std::size_t>(std::min<std::uint64_t>(PAGE_BYTES - offset, bytes - done));
    if (const Page* p = find_page(a / PAGE_BYTES)) {
      std::memcpy(out + done, p->data() + offset, n);
    } else {
      std::memset(out + done, 0, n);
    }
    done += n;
  }
}

void HostMemory::write(std::uint64_t address, const void* src, std::size_t bytes) {
  if (bytes == 0) return;
  if (address > MAX_ADDR - (bytes - 1)) {
    throw std::out_of_range("host memory: write of " + std::to_string(bytes) + " bytes at " +
                            hex(address) + " runs past 2^64");
  }
  const auto* in = static_cast<const std::uint8_t*>(src);
  std::size_t done = 0;
  while (done < bytes) {
    const std::uint64_t a = address + done;
    const std::uint64_t offset = a % PAGE_BYTES;
    const std::size_t n =
        static_cast<std::size_t>(std::min<std::uint64_t>(PAGE_BYTES - offset, bytes - done));
    std::memcpy(page(a / PAGE_BYTES).data() + offset, in + done, n);
    done += n;
  }
}

void HostMemory::fill(std::uint64_t address, std::uint8_t value, std::size_t bytes) {
  const std::vector<std::uint8_t> buf(std::min<std::size_t>(bytes, PAGE_BYTES), value);
  std::size_t done = 0;
  while (done < bytes) {
    const std::size_t n = std::min(buf.size(), bytes - done);
    write(address + done, buf.data(), n);
    done += n;
  }
}

std::vector<std::uint8_t> HostMemory::read_bytes(std::uint64_t address, std::size_t bytes) const {
  std::vector<std::uint8_t> out(bytes);
  read(address, out.data(), bytes);
  return out;
}

std::uint64_t HostMemory::alloc(std::uint64_t bytes, std::uint64_t align) {
  if (align == 0 || (align & (align - 1)) != 0) {
    throw std::invalid_argument("host memory: alignment " + std::to_string(align) +
                                " is not a power of two");
  }
  bytes = std::max<std::uint64_t>(bytes, 1);
  if (next_ > MAX_ADDR - (align - 1))
    throw std::length_error("host memory: address space exhausted");
  const std::uint64_t start = (next_ + align - 1) & ~(align - 1);
  if (start > MAX_ADDR - bytes) throw std::length_error("host memory: address space exhausted");
  if (start + bytes > limit_) {
    const std::uint64_t left = limit_ > next_ ? limit_ - next_ : 0;
    throw std::length_error(limit_what_ + ": a buffer of " + std::to_string(bytes) +
                            " bytes (alignment " + std::to_string(align) +
                            ") does not fit the window [" + hex(base_) + ", " + hex(limit_) +
                            "): " + std::to_string(left) + " of " +
                            std::to_string(limit_ - base_) + " bytes are left");
  }
  next_ = start + bytes;
  return start;
}

void HostMemory::set_alloc_limit(std::uint64_t limit, std::string what) {
  if (limit < next_) {
    throw std::invalid_argument("host memory: limit " + hex(limit) +
                                " is below existing allocations (up to " + hex(next_) + ")");
  }
  limit_ = limit;
  limit_what_ = std::move(what);
}

void HostMemory::clear() {
  pages_.clear();
}

}  // namespace nmsa
