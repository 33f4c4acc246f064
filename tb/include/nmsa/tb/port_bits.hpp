// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// Bit-field access to Verilated ports. Verilator maps a port of up to 64 bits to an integer
// (CData/SData/IData/QData) and a wider one to VlWide<words> of 32-bit words; the same calls work
// on both so that harness code does not depend on a configuration's port widths.
#pragma once

#include <cstdint>
#include <type_traits>

#include "verilated.h"

namespace nmsa::tb {

template <typename Port, typename = std::enable_if_t<std::is_integral_v<Port>>>
inline void put_bits(Port& port, unsigned lsb, unsigned width, std::uint64_t value) {
  const std::uint64_t mask = width >= 64 ? ~0ull : ((1ull << width) - 1);
  std::uint64_t word = static_cast<std::uint64_t>(port);
  word = (word & ~(mask << lsb)) | ((value & mask) << lsb);
  port = static_cast<Port>(word);
}

template <typename Port, typename = std::enable_if_t<std::is_integral_v<Port>>>
inline std::uint64_t get_bits(const Port& port, unsigned lsb, unsigned width) {
  const std::uint64_t mask = width >= 64 ? ~0ull : ((1ull << width) - 1);
  return (static_cast<std::uint64_t>(port) >> lsb) & mask;
}

// Fields of at most 32 bits; a field may straddle two words.
template <std::size_t Words>
inline void put_bits(VlWide<Words>& port, unsigned lsb, unsigned width, std::uint64_t value) {
  for (unsigned i = 0; i < width; ++i) {
    const unsigned bit = lsb + i;
    const EData mask = EData{1} << (bit % 32);
    if ((value >> i) & 1u) {
      port[bit / 32] |= mask;
    } else {
      port[bit / 32] &= ~mask;
    }
  }
}

template <std::size_t Words>
inline std::uint64_t get_bits(const VlWide<Words>& port, unsigned lsb, unsigned width) {
  std::uint64_t value = 0;
  unsigned done = 0;
  while (done < width) {
    const unsigned bit = lsb + done;
    const unsigned offset = bit % 32;
    const unsigned take = std::min(32 - offset, width - done);
    const std::uint64_t chunk = (static_cast<std::uint64_t>(port[bit / 32]) >> offset) &
                                ((take >= 64 ? ~0ull : (1ull << take) - 1));
    value |= chunk << done;
    done += take;
  }
  return value;
}

// Sign-extends the low `width` bits of v.
inline std::int64_t sign_extend(std::uint64_t v, unsigned width) {
  const std::uint64_t sign = 1ull << (width - 1);
  v &= (width >= 64 ? ~0ull : (1ull << width) - 1);
  return static_cast<std::int64_t>((v ^ sign) - sign);
}

}  // namespace nmsa::tb
