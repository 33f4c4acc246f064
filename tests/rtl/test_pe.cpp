// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// nmsa_pe standalone, for 2:4, 1:4 and 2:8: directed and random beats in sparse and dense mode,
// extreme values over a long K, sparse groups, poison on illegal metadata, and bank switching,
// through the PE's five-stage pipeline. The metadata is decoded as nmsa_array decodes it.
#include <memory>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "../common/random_matrix.hpp"
#include "Vnmsa_pe_1of4.h"
#include "Vnmsa_pe_2of4.h"
#include "Vnmsa_pe_2of8.h"
#include "nmsa/sparse_format.hpp"
#include "nmsa/tb/port_bits.hpp"
#include "nmsa/tb/sim_context.hpp"

namespace nmsa {
namespace {

// The select of each slot as nmsa_array decodes it for its PEs: the slot's position minus j
// (slots can only hold positions j .. j + M - N), and whether the code is legal.
struct DecodedGroup {
  unsigned sel = 0;
  bool legal = true;
};

DecodedGroup decode_for_pe(NmPattern p, bool dense, std::uint8_t meta) {
  DecodedGroup d;
  if (dense) return d;  // slot j takes position j
  d.legal = is_legal_group_meta(meta, p);
  if (!d.legal) return d;
  unsigned choices = static_cast<unsigned>(p.m - p.n + 1);
  unsigned sel_w = 1;
  while ((1u << sel_w) < choices) ++sel_w;
  const auto idx = decode_group_meta(meta, p);
  for (int j = 0; j < p.n; ++j) {
    d.sel |= static_cast<unsigned>(idx[static_cast<std::size_t>(j)] - j) << (static_cast<unsigned>(j) * sel_w);
  }
  return d;
}

// Drives one PE cycle by cycle. A beat enters in one cycle and its partial sum from above is due
// PeLatency - 1 cycles later, when the PE adds its own products; the sum leaves one cycle after.
template <typename Model>
class PeDriver {
 public:
  static constexpr int kPeLatency = 5;  // nmsa_pkg::PeLatency

  PeDriver(NmPattern p, std::uint64_t seed)
      : p_(p), context_(tb::make_context(seed)), dut_(std::make_unique<Model>(context_.get(), "pe")) {
    idle();
    tb::begin_reset(*dut_);
    for (int i = 0; i < 3; ++i) tick();
    dut_->rst_ni = 1;
  }
  ~PeDriver() {
    dut_->final();
    tb::record_coverage(*context_);
  }

  // Loads one bank in one cycle.
  void load(unsigned bank, bool dense, const std::vector<std::int8_t>& values, std::uint8_t meta) {
    idle();
    set_load(bank, dense, values, meta);
    tick();
    idle();
  }

  struct Out {
    std::int32_t psum;
    bool poison;
    bool act_valid;
    bool act_bank;
    std::uint64_t act;
  };

  // Presents one beat (optionally also loading the other bank in the same cycle), its partial
  // sum from above when the PE adds it, and returns the activations passed right (one cycle
  // later) and the partial sum passed down (PeLatency cycles later).
  Out beat(bool valid, unsigned bank, const std::vector<std::int8_t>& acts, std::int32_t psum_in,
           bool poison_in) {
    dut_->act_valid_i = valid;
    dut_->act_bank_i = bank;
    for (int m = 0; m < p_.m; ++m) {
      tb::put_bits(dut_->act_i, 8u * static_cast<unsigned>(m), 8,
                   static_cast<std::uint8_t>(acts[static_cast<std::size_t>(m)]));
    }
    tick();
    Out out{};
    out.act_valid = dut_->act_valid_o != 0;
    out.act_bank = dut_->act_bank_o != 0;
    out.act = tb::get_bits(dut_->act_o, 0, 8u * static_cast<unsigned>(p_.m));
    idle();
    for (int c = 1; c < kPeLatency - 1; ++c) tick();
    dut_->psum_i = static_cast<std::uint32_t>(psum_in);
    dut_->psum_poison_i = poison_in;
    tick();
    out.psum = static_cast<std::int32_t>(dut_->psum_o);
    out.poison = dut_->psum_poison_o != 0;
    idle();
    return out;
  }

  // Sets up a load of `bank` to happen in the next beat's cycle.
  void load_during_next_beat(unsigned bank, const std::vector<std::int8_t>& values,
                             std::uint8_t meta) {
    set_load(bank, false, values, meta);
  }

 private:
  void set_load(unsigned bank, bool dense, const std::vector<std::int8_t>& values,
                std::uint8_t meta) {
    const DecodedGroup d = decode_for_pe(p_, dense, meta);
    dut_->wload_en_i = 1;
    dut_->wload_bank_i = bank;
    for (int j = 0; j < p_.n; ++j) {
      tb::put_bits(dut_->wload_val_i, 8u * static_cast<unsigned>(j), 8,
                   static_cast<std::uint8_t>(values[static_cast<std::size_t>(j)]));
    }
    dut_->wload_sel_i = d.sel;
    dut_->wload_legal_i = d.legal;
  }

  void idle() {
    dut_->wload_en_i = 0;
    dut_->wload_bank_i = 0;
    dut_->wload_val_i = 0;
    dut_->wload_sel_i = 0;
    dut_->wload_legal_i = 0;
    dut_->act_valid_i = 0;
    dut_->act_bank_i = 0;
    dut_->act_i = 0;
    dut_->psum_i = 0;
    dut_->psum_poison_i = 0;
  }
  void tick() {
    dut_->clk_i = 0;
    dut_->eval();
    dut_->clk_i = 1;
    dut_->eval();
  }

  NmPattern p_;
  std::unique_ptr<VerilatedContext> context_;
  std::unique_ptr<Model> dut_;
};

// Reference: sum over slots j of values[j] * acts[index of slot j] (+ psum_in), 32-bit wrap.
std::int32_t expected_psum(NmPattern p, bool dense, const std::vector<std::int8_t>& values,
                           std::uint8_t meta, const std::vector<std::int8_t>& acts,
                           std::int32_t psum_in) {
  const auto idx = decode_group_meta(meta, p);
  std::uint32_t acc = static_cast<std::uint32_t>(psum_in);
  for (int j = 0; j < p.n; ++j) {
    const int pos = dense ? j : idx[static_cast<std::size_t>(j)];
    acc += static_cast<std::uint32_t>(int{values[static_cast<std::size_t>(j)]} *
                                      int{acts[static_cast<std::size_t>(pos)]});
  }
  return static_cast<std::int32_t>(acc);
}

std::vector<std::int8_t> random_vec(int n, std::mt19937_64& rng) {
  std::uniform_int_distribution<int> d(-128, 127);
  std::vector<std::int8_t> v(static_cast<std::size_t>(n));
  for (auto& x : v) x = static_cast<std::int8_t>(d(rng));
  return v;
}

std::uint8_t random_legal_meta(NmPattern p, std::mt19937_64& rng) {
  std::uniform_int_distribution<unsigned> d(0, (1u << p.meta_bits()) - 1);
  for (;;) {
    const auto meta = static_cast<std::uint8_t>(d(rng));
    if (is_legal_group_meta(meta, p)) return meta;
  }
}

template <typename M, int N, int Mm>
struct Variant {
  using Model = M;
  static NmPattern pattern() { return NmPattern{N, Mm}; }
};

template <typename V>
class PeTest : public ::testing::Test {};

using Variants = ::testing::Types<Variant<Vnmsa_pe_2of4, 2, 4>, Variant<Vnmsa_pe_1of4, 1, 4>,
                                  Variant<Vnmsa_pe_2of8, 2, 8>>;
TYPED_TEST_SUITE(PeTest, Variants);

TYPED_TEST(PeTest, DirectedSparseBeat) {
  const NmPattern p = TypeParam::pattern();
  PeDriver<typename TypeParam::Model> pe(p, 11);
  // Slot j keeps position M-N+j (the highest positions), weight 3+j.
  std::vector<int> positions;
  std::vector<std::int8_t> values;
  for (int j = 0; j < p.n; ++j) {
    positions.push_back(p.m - p.n + j);
    values.push_back(static_cast<std::int8_t>(3 + j));
  }
  const std::uint8_t meta = encode_group_meta(positions, p);
  pe.load(0, false, values, meta);
  std::vector<std::int8_t> acts;
  for (int m = 0; m < p.m; ++m) acts.push_back(static_cast<std::int8_t>(10 * (m + 1)));
  const auto out = pe.beat(true, 0, acts, 1000, false);
  std::int32_t want = 1000;
  for (int j = 0; j < p.n; ++j) want += (3 + j) * 10 * (p.m - p.n + j + 1);
  EXPECT_EQ(out.psum, want);
  EXPECT_FALSE(out.poison);
  EXPECT_TRUE(out.act_valid);
}

TYPED_TEST(PeTest, RandomBeatsBothModes) {
  const NmPattern p = TypeParam::pattern();
  const std::uint64_t seed = tb::test_seed(21);
  SCOPED_TRACE(tb::seed_note(seed));
  std::mt19937_64 rng(seed);
  PeDriver<typename TypeParam::Model> pe(p, seed);
  for (int round = 0; round < 200; ++round) {
    const bool dense = (round % 2) == 1;
    const unsigned bank = static_cast<unsigned>(round / 2) % 2;
    const auto values = random_vec(p.n, rng);
    // Dense mode ignores metadata: feed an arbitrary (often illegal) code.
    const std::uint8_t meta = dense ? static_cast<std::uint8_t>(rng() & ((1u << p.meta_bits()) - 1))
                                    : random_legal_meta(p, rng);
    pe.load(bank, dense, values, meta);
    for (int b = 0; b < 8; ++b) {
      const auto acts = random_vec(p.m, rng);
      const auto psum_in = static_cast<std::int32_t>(rng());
      const auto out = pe.beat(true, bank, acts, psum_in, false);
      ASSERT_EQ(out.psum, expected_psum(p, dense, values, meta, acts, psum_in))
          << "round " << round << " beat " << b;
      ASSERT_FALSE(out.poison);
      std::uint64_t packed = 0;
      for (int m = 0; m < p.m; ++m) {
        packed |= std::uint64_t{static_cast<std::uint8_t>(acts[static_cast<std::size_t>(m)])}
                  << (8 * m);
      }
      ASSERT_EQ(out.act, packed);
      ASSERT_EQ(out.act_bank, bank != 0);
    }
  }
}

// -128 x -128 in every slot, accumulated through the PE's own output over 65535 beats (K of
// 65535 * M positions): the sum reaches 65535 * N * 16384, just inside INT32 for N = 2.
TYPED_TEST(PeTest, ExtremeValuesOverLongK) {
  const NmPattern p = TypeParam::pattern();
  PeDriver<typename TypeParam::Model> pe(p, 5);
  const std::vector<std::int8_t> values(static_cast<std::size_t>(p.n), -128);
  std::vector<int> positions;
  for (int j = 0; j < p.n; ++j) positions.push_back(j);
  pe.load(1, false, values, encode_group_meta(positions, p));
  const std::vector<std::int8_t> acts(static_cast<std::size_t>(p.m), -128);
  std::int32_t psum = 0;
  const int beats = 65535;
  for (int k = 0; k < beats; ++k) {
    const auto out = pe.beat(true, 1, acts, psum, false);
    ASSERT_EQ(std::int64_t{out.psum}, std::int64_t{psum} + std::int64_t{p.n} * 16384) << "beat " << k;
    psum = out.psum;
  }
  EXPECT_EQ(std::int64_t{psum}, std::int64_t{beats} * p.n * 16384);
}

TYPED_TEST(PeTest, GroupsWithFewerNonzerosAndAllZero) {
  const NmPattern p = TypeParam::pattern();
  const std::uint64_t seed = tb::test_seed(9);
  SCOPED_TRACE(tb::seed_note(seed));
  std::mt19937_64 rng(seed);
  PeDriver<typename TypeParam::Model> pe(p, seed);
  for (int nonzeros = 0; nonzeros < p.n; ++nonzeros) {
    for (int trial = 0; trial < 20; ++trial) {
      MatrixI8 w = MatrixI8::Zero(1, p.m);
      for (int i = 0; i < nonzeros; ++i) {
        w(0, static_cast<Eigen::Index>(rng() % static_cast<unsigned>(p.m))) =
            static_cast<std::int8_t>(1 + rng() % 127);
      }
      const CompressedWeights c = compress(w, p);
      std::vector<std::int8_t> values(c.values.data(), c.values.data() + p.n);
      pe.load(0, false, values, c.meta(0, 0));
      const auto acts = random_vec(p.m, rng);
      std::int32_t want = 0;
      for (int m = 0; m < p.m; ++m) want += int{w(0, m)} * int{acts[static_cast<std::size_t>(m)]};
      EXPECT_EQ(pe.beat(true, 0, acts, 0, false).psum, want) << nonzeros << " nonzeros";
    }
  }
}

TYPED_TEST(PeTest, IllegalMetadataPoisonsOnlyValidBeatsOfThatBank) {
  const NmPattern p = TypeParam::pattern();
  PeDriver<typename TypeParam::Model> pe(p, 17);
  const std::vector<std::int8_t> values(static_cast<std::size_t>(p.n), 1);
  const std::vector<std::int8_t> acts(static_cast<std::size_t>(p.m), 1);
  // Banks never loaded since reset poison.
  EXPECT_TRUE(pe.beat(true, 0, acts, 0, false).poison);
  EXPECT_TRUE(pe.beat(true, 1, acts, 0, false).poison);
  std::vector<int> positions;
  for (int j = 0; j < p.n; ++j) positions.push_back(j);
  pe.load(0, false, values, encode_group_meta(positions, p));
  EXPECT_FALSE(pe.beat(true, 0, acts, 0, false).poison);
  // Poison from above passes through.
  EXPECT_TRUE(pe.beat(true, 0, acts, 0, true).poison);
  // An invalid beat never raises poison.
  EXPECT_FALSE(pe.beat(false, 1, acts, 0, false).poison);

  std::uint8_t illegal = 0;
  bool found = false;
  for (unsigned code = 0; code < (1u << p.meta_bits()) && !found; ++code) {
    if (!is_legal_group_meta(static_cast<std::uint8_t>(code), p)) {
      illegal = static_cast<std::uint8_t>(code);
      found = true;
    }
  }
  if (!found) {
    // 1:4 has no illegal code (every single index is legal): nothing can be poisoned by a load.
    EXPECT_EQ(p.n, 1);
    return;
  }
  pe.load(1, false, values, illegal);
  EXPECT_TRUE(pe.beat(true, 1, acts, 0, false).poison);
  EXPECT_FALSE(pe.beat(true, 0, acts, 0, false).poison);
  // Reloading the bank legally clears its poison.
  pe.load(1, false, values, encode_group_meta(positions, p));
  EXPECT_FALSE(pe.beat(true, 1, acts, 0, false).poison);
}

TYPED_TEST(PeTest, LoadingOneBankDoesNotDisturbTheOther) {
  const NmPattern p = TypeParam::pattern();
  const std::uint64_t seed = tb::test_seed(33);
  SCOPED_TRACE(tb::seed_note(seed));
  std::mt19937_64 rng(seed);
  PeDriver<typename TypeParam::Model> pe(p, seed);
  std::vector<std::int8_t> values[2] = {random_vec(p.n, rng), random_vec(p.n, rng)};
  std::uint8_t meta[2] = {random_legal_meta(p, rng), random_legal_meta(p, rng)};
  pe.load(0, false, values[0], meta[0]);
  for (int k = 0; k < 50; ++k) {
    const unsigned busy = static_cast<unsigned>(k) % 2;
    const unsigned loading = 1 - busy;
    values[loading] = random_vec(p.n, rng);
    meta[loading] = random_legal_meta(p, rng);
    pe.load_during_next_beat(loading, values[loading], meta[loading]);
    const auto acts = random_vec(p.m, rng);
    const auto out = pe.beat(true, busy, acts, 0, false);
    ASSERT_EQ(out.psum, expected_psum(p, false, values[busy], meta[busy], acts, 0)) << "beat " << k;
  }
}

}  // namespace
}  // namespace nmsa
