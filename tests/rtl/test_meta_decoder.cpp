// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// nmsa_meta_decoder, exhaustively: every metadata code of 2:4, 1:4 and 2:8, in sparse and dense
// mode, against the software definition of docs/format.md: legality, and each slot's K-position.
#include <memory>

#include <gtest/gtest.h>

#include "Vnmsa_meta_decoder_1of4.h"
#include "Vnmsa_meta_decoder_2of4.h"
#include "Vnmsa_meta_decoder_2of8.h"
#include "nmsa/sparse_format.hpp"
#include "nmsa/tb/sim_context.hpp"

namespace nmsa {
namespace {

struct DecoderCounts {
  int legal = 0;
  int illegal = 0;
};

template <typename Model>
DecoderCounts check_every_code(NmPattern p) {
  auto context = tb::make_context(1);
  auto dut = std::make_unique<Model>(context.get(), "decoder");
  DecoderCounts counts;
  const unsigned codes = 1u << p.meta_bits();
  for (unsigned dense = 0; dense < 2; ++dense) {
    for (unsigned code = 0; code < codes; ++code) {
      dut->meta_i = code;
      dut->dense_i = dense;
      dut->eval();
      const auto meta = static_cast<std::uint8_t>(code);
      const bool legal = dense != 0 || is_legal_group_meta(meta, p);
      EXPECT_EQ(dut->legal_o != 0, legal) << p.name() << " code " << code << " dense " << dense;
      if (dense == 0) (legal ? counts.legal : counts.illegal)++;

      // The K-position of each slot: j in dense mode, the metadata's index otherwise. An
      // illegal code's positions do not matter (everything computed with it is poisoned).
      if (dense == 0 && !legal) continue;
      const auto idx = decode_group_meta(meta, p);
      const unsigned idx_w = static_cast<unsigned>(p.meta_bits() / p.n);
      for (int j = 0; j < p.n; ++j) {
        const unsigned slot = (static_cast<unsigned>(dut->idx_o) >> (static_cast<unsigned>(j) * idx_w)) &
                              ((1u << idx_w) - 1);
        const unsigned expected =
            dense != 0 ? static_cast<unsigned>(j) : static_cast<unsigned>(idx[static_cast<std::size_t>(j)]);
        EXPECT_EQ(slot, expected) << p.name() << " code " << code << " dense " << dense
                                  << " slot " << j;
      }
    }
  }
  dut->final();
  tb::record_coverage(*context);
  return counts;
}

TEST(MetaDecoder, EveryTwoFourCode) {
  const DecoderCounts c = check_every_code<Vnmsa_meta_decoder_2of4>({2, 4});
  EXPECT_EQ(c.legal, 6);     // C(4,2)
  EXPECT_EQ(c.illegal, 10);  // incl. 0b0000, 0b0101, 0b1010, 0b1111
}

TEST(MetaDecoder, EveryOneFourCode) {
  const DecoderCounts c = check_every_code<Vnmsa_meta_decoder_1of4>({1, 4});
  EXPECT_EQ(c.legal, 4);
  EXPECT_EQ(c.illegal, 0);
}

TEST(MetaDecoder, EveryTwoEightCode) {
  const DecoderCounts c = check_every_code<Vnmsa_meta_decoder_2of8>({2, 8});
  EXPECT_EQ(c.legal, 28);    // C(8,2)
  EXPECT_EQ(c.illegal, 36);
}

}  // namespace
}  // namespace nmsa
