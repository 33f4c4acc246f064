// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
#include "nmsa/sparse_format.hpp"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <stdexcept>

namespace nmsa {

namespace {

void require_multiple_of_m(const MatrixI8& w, NmPattern p, const char* what) {
  p.validate();
  if (w.cols() % p.m != 0) {
    throw std::invalid_argument(std::string(what) + ": K = " + std::to_string(w.cols()) +
                                " is not a multiple of M = " + std::to_string(p.m));
  }
}

}  // namespace

MatrixI8 prune_nm(const MatrixI8& w, NmPattern p) {
  require_multiple_of_m(w, p, "prune");
  MatrixI8 out = MatrixI8::Zero(w.rows(), w.cols());
  std::vector<int> order(static_cast<std::size_t>(p.m));
  for (Eigen::Index r = 0; r < w.rows(); ++r) {
    for (Eigen::Index g = 0; g < w.cols() / p.m; ++g) {
      const std::int8_t* group = w.data() + r * w.cols() + g * p.m;
      for (int i = 0; i < p.m; ++i) order[static_cast<std::size_t>(i)] = i;
      // Stable sort by decreasing magnitude: equal magnitudes keep the lower index first.
      std::stable_sort(order.begin(), order.end(), [group](int a, int b) {
        return std::abs(int{group[a]}) > std::abs(int{group[b]});
      });
      for (int j = 0; j < p.n; ++j) {
        const int idx = order[static_cast<std::size_t>(j)];
        out(r, g * p.m + idx) = group[idx];
      }
    }
  }
  return out;
}

MatrixI8 pad_to_groups(const MatrixI8& w, NmPattern p) {
  p.validate();
  const Eigen::Index k_pad = (w.cols() + p.m - 1) / p.m * p.m;
  MatrixI8 padded = MatrixI8::Zero(w.rows(), k_pad);
  padded.leftCols(w.cols()) = w;
  return padded;
}

MatrixI8 prune_nm_any_k(const MatrixI8& w, NmPattern p) {
  return prune_nm(pad_to_groups(w, p), p).leftCols(w.cols());
}

std::string NmViolation::describe(NmPattern p) const {
  return "row " + std::to_string(row) + ", K-group " + std::to_string(group) + " (K " +
         std::to_string(group * p.m) + ".." + std::to_string(group * p.m + p.m - 1) + ") has " +
         std::to_string(nonzeros) + " nonzeros, more than N = " + std::to_string(p.n) +
         " allowed by " + p.name();
}

std::optional<NmViolation> find_nm_violation(const MatrixI8& w, NmPattern p) {
  require_multiple_of_m(w, p, "prune check");
  for (Eigen::Index r = 0; r < w.rows(); ++r) {
    for (Eigen::Index g = 0; g < w.cols() / p.m; ++g) {
      int nonzeros = 0;
      for (int i = 0; i < p.m; ++i) nonzeros += w(r, g * p.m + i) != 0;
      if (nonzeros > p.n) return NmViolation{r, g, nonzeros};
    }
  }
  return std::nullopt;
}

std::uint8_t encode_group_meta(const std::vector<int>& indices, NmPattern p) {
  if (static_cast<int>(indices.size()) != p.n) {
    throw std::invalid_argument("metadata: expected " + std::to_string(p.n) + " indices");
  }
  unsigned meta = 0;
  for (int j = 0; j < p.n; ++j) {
    const int idx = indices[static_cast<std::size_t>(j)];
    if (idx < 0 || idx >= p.m) throw std::invalid_argument("metadata: index out of range");
    meta |= static_cast<unsigned>(idx) << (j * p.index_bits());
  }
  return static_cast<std::uint8_t>(meta);
}

std::vector<int> decode_group_meta(std::uint8_t meta, NmPattern p) {
  std::vector<int> indices(static_cast<std::size_t>(p.n));
  const unsigned mask = (1u << p.index_bits()) - 1;
  for (int j = 0; j < p.n; ++j) {
    indices[static_cast<std::size_t>(j)] = static_cast<int>((meta >> (j * p.index_bits())) & mask);
  }
  return indices;
}

bool is_legal_group_meta(std::uint8_t meta, NmPattern p) {
  if (p.meta_bits() < 8 && (meta >> p.meta_bits()) != 0) return false;
  const auto idx = decode_group_meta(meta, p);
  for (std::size_t j = 1; j < idx.size(); ++j) {
    if (idx[j] <= idx[j - 1]) return false;
  }
  return true;
}

namespace {

// The slots of every nonzero mask of one group: which positions are kept (the nonzeros, then the
// canonical fill with the highest unused positions, PyTorch's choice for 2:4) and the resulting
// metadata. Masks with more than N nonzeros are marked illegal.
struct GroupCode {
  std::array<std::uint8_t, 16> slot{};
  std::uint8_t meta = 0;
  bool legal = false;
};

std::vector<GroupCode> group_codes(NmPattern p) {
  std::vector<GroupCode> codes(std::size_t{1} << p.m);
  std::vector<int> slots;
  for (unsigned mask = 0; mask < codes.size(); ++mask) {
    GroupCode& code = codes[mask];
    int free_slots = p.n - __builtin_popcount(mask);
    if (free_slots < 0) continue;
    unsigned used = mask;
    for (int i = p.m - 1; i >= 0 && free_slots > 0; --i) {
      if (!((used >> i) & 1u)) {
        used |= 1u << i;
        --free_slots;
      }
    }
    slots.clear();
    for (int i = 0; i < p.m; ++i) {
      if ((used >> i) & 1u) slots.push_back(i);
    }
    for (int j = 0; j < p.n; ++j) code.slot[static_cast<std::size_t>(j)] = static_cast<std::uint8_t>(slots[j]);
    code.meta = encode_group_meta(slots, p);
    code.legal = true;
  }
  return codes;
}

}  // namespace

CompressedWeights compress(const MatrixI8& w, NmPattern p) {
  require_multiple_of_m(w, p, "compress");
  const std::vector<GroupCode> codes = group_codes(p);
  const Eigen::Index groups = w.cols() / p.m;
  CompressedWeights c;
  c.pattern = p;
  c.rows = w.rows();
  c.k = w.cols();
  c.values.resize(w.rows(), groups * p.n);
  c.meta.resize(w.rows(), groups);
  for (Eigen::Index r = 0; r < w.rows(); ++r) {
    const std::int8_t* in = w.data() + r * w.cols();
    std::int8_t* values = c.values.data() + r * c.values.cols();
    std::uint8_t* meta = c.meta.data() + r * groups;
    for (Eigen::Index g = 0; g < groups; ++g, in += p.m, values += p.n) {
      unsigned mask = 0;
      for (int i = 0; i < p.m; ++i) mask |= static_cast<unsigned>(in[i] != 0) << i;
      const GroupCode& code = codes[mask];
      if (!code.legal) {
        const NmViolation bad{r, g, __builtin_popcount(mask)};
        throw std::invalid_argument("compress: weights are not " + p.name() + " sparse: " +
                                    bad.describe(p));
      }
      for (int j = 0; j < p.n; ++j) values[j] = in[code.slot[static_cast<std::size_t>(j)]];
      meta[g] = code.meta;
    }
  }
  return c;
}

MatrixI8 decompress(const CompressedWeights& c) {
  const NmPattern p = c.pattern;
  p.validate();
  const Eigen::Index groups = c.k / p.m;
  if (c.k % p.m != 0 || c.values.rows() != c.rows || c.values.cols() != groups * p.n ||
      c.meta.rows() != c.rows || c.meta.cols() != groups) {
    throw std::invalid_argument("decompress: values/metadata shapes do not match " +
                                std::to_string(c.rows) + " x " + std::to_string(c.k) + " " +
                                p.name());
  }
  MatrixI8 w = MatrixI8::Zero(c.rows, c.k);
  for (Eigen::Index r = 0; r < c.rows; ++r) {
    for (Eigen::Index g = 0; g < groups; ++g) {
      const std::uint8_t meta = c.meta(r, g);
      if (!is_legal_group_meta(meta, p)) {
        throw std::invalid_argument("decompress: illegal metadata code " + std::to_string(meta) +
                                    " at row " + std::to_string(r) + ", K-group " +
                                    std::to_string(g));
      }
      const auto idx = decode_group_meta(meta, p);
      for (int j = 0; j < p.n; ++j) {
        w(r, g * p.m + idx[static_cast<std::size_t>(j)]) = c.values(r, g * p.n + j);
      }
    }
  }
  return w;
}

int meta_field_stride_bits(NmPattern p) {
  int stride = 1;
  while (stride < p.meta_bits()) stride *= 2;
  return stride;
}

Eigen::Index packed_meta_row_bytes(Eigen::Index groups, NmPattern p) {
  return (groups * meta_field_stride_bits(p) + 7) / 8;
}

Matrix<std::uint8_t> pack_meta(const Matrix<std::uint8_t>& meta, NmPattern p) {
  const int stride = meta_field_stride_bits(p);
  Matrix<std::uint8_t> packed =
      Matrix<std::uint8_t>::Zero(meta.rows(), packed_meta_row_bytes(meta.cols(), p));
  for (Eigen::Index r = 0; r < meta.rows(); ++r) {
    for (Eigen::Index g = 0; g < meta.cols(); ++g) {
      if (meta(r, g) >> p.meta_bits() != 0) {
        throw std::invalid_argument("pack_meta: code " + std::to_string(meta(r, g)) + " at row " +
                                    std::to_string(r) + ", K-group " + std::to_string(g) +
                                    " is wider than " + p.name() + "'s " +
                                    std::to_string(p.meta_bits()) + " bits");
      }
      const Eigen::Index bit = g * stride;
      packed(r, bit / 8) |= static_cast<std::uint8_t>(meta(r, g) << (bit % 8));
    }
  }
  return packed;
}

Matrix<std::uint8_t> unpack_meta(const Matrix<std::uint8_t>& packed, Eigen::Index groups,
                                 NmPattern p) {
  const Eigen::Index row_bytes = packed_meta_row_bytes(groups, p);
  if (packed.cols() != row_bytes) {
    throw std::invalid_argument("metadata: " + std::to_string(packed.cols()) +
                                " bytes per row, expected " + std::to_string(row_bytes) + " for " +
                                std::to_string(groups) + " groups of " + p.name());
  }
  const int stride = meta_field_stride_bits(p);
  const unsigned field_mask = (1u << p.meta_bits()) - 1u;
  // The bits of a row that hold fields: everything else is padding and must be 0.
  std::vector<std::uint8_t> field_bits(static_cast<std::size_t>(row_bytes), 0);
  for (Eigen::Index g = 0; g < groups; ++g) {
    const Eigen::Index bit = g * stride;
    field_bits[static_cast<std::size_t>(bit / 8)] |= static_cast<std::uint8_t>(field_mask << (bit % 8));
  }
  Matrix<std::uint8_t> meta(packed.rows(), groups);
  for (Eigen::Index r = 0; r < packed.rows(); ++r) {
    for (Eigen::Index b = 0; b < row_bytes; ++b) {
      if ((packed(r, b) & ~field_bits[static_cast<std::size_t>(b)]) != 0) {
        throw std::invalid_argument("metadata: row " + std::to_string(r) + ", byte " +
                                    std::to_string(b) + " = " + std::to_string(packed(r, b)) +
                                    " has a padding bit set: not packed " + p.name() +
                                    " metadata");
      }
    }
    for (Eigen::Index g = 0; g < groups; ++g) {
      const Eigen::Index bit = g * stride;
      meta(r, g) = static_cast<std::uint8_t>((packed(r, bit / 8) >> (bit % 8)) & field_mask);
    }
  }
  return meta;
}

}  // namespace nmsa
