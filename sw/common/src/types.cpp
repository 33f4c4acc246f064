// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
#include "nmsa/types.hpp"

#include <stdexcept>

namespace nmsa {

int NmPattern::index_bits() const {
  int bits = 0;
  while ((1 << bits) < m) ++bits;
  return bits;
}

int NmPattern::meta_bits() const { return n * index_bits(); }

std::string NmPattern::name() const { return std::to_string(n) + ":" + std::to_string(m); }

void NmPattern::validate() const {
  if (m < 2 || (m & (m - 1)) != 0) {
    throw std::invalid_argument("N:M pattern " + name() + ": M must be a power of two >= 2");
  }
  if (n < 1 || n > m) {
    throw std::invalid_argument("N:M pattern " + name() + ": N must be in [1, M]");
  }
  if (meta_bits() > 8) {
    throw std::invalid_argument("N:M pattern " + name() +
                                ": metadata wider than 8 bits per group is not supported");
  }
}

NmPattern parse_nm_pattern(const std::string& text) {
  const auto colon = text.find(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size()) {
    throw std::invalid_argument("sparsity '" + text + "': expected N:M, for example 2:4");
  }
  NmPattern p;
  try {
    std::size_t used_n = 0;
    std::size_t used_m = 0;
    p.n = std::stoi(text.substr(0, colon), &used_n);
    p.m = std::stoi(text.substr(colon + 1), &used_m);
    if (used_n != colon || used_m != text.size() - colon - 1) throw std::invalid_argument("");
  } catch (const std::exception&) {
    throw std::invalid_argument("sparsity '" + text + "': expected N:M, for example 2:4");
  }
  p.validate();
  return p;
}

const std::vector<NmPattern>& hardware_patterns() {
  static const std::vector<NmPattern> patterns{{1, 4}, {2, 4}, {2, 8}};
  return patterns;
}

void require_hardware_pattern(NmPattern p) {
  std::string supported;
  for (const NmPattern& h : hardware_patterns()) {
    if (h == p) return;
    supported += (supported.empty() ? "" : ", ") + h.name();
  }
  throw std::invalid_argument("N:M pattern " + p.name() +
                              " is not one the hardware runs (supported: " + supported + ")");
}

}  // namespace nmsa
