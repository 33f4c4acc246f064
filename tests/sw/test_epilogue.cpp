// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// The STORE epilogue of docs/isa.md: golden requantization cases and the multiplier/shift
// computation.
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "../common/seed.hpp"

#include "nmsa/epilogue.hpp"

namespace nmsa {
namespace {

using testing::seed_note;
using testing::test_seed;

constexpr std::int32_t HALF = 1 << 30;  // with shift 31: x 0.5
constexpr std::int32_t ONE = 1 << 30;   // with shift 30: x 1

TEST(Requantize, RoundsHalfUpInBothSigns) {
  // (p + 2^(s-1)) >> s rounds .5 towards +infinity: 2.5 -> 3, -2.5 -> -2.
  EXPECT_EQ(requantize(5, 0, HALF, 31, false), 3);
  EXPECT_EQ(requantize(-5, 0, HALF, 31, false), -2);
  EXPECT_EQ(requantize(3, 0, HALF, 31, false), 2);    // 1.5
  EXPECT_EQ(requantize(-3, 0, HALF, 31, false), -1);  // -1.5
  EXPECT_EQ(requantize(1, 0, HALF, 31, false), 1);    // 0.5
  EXPECT_EQ(requantize(-1, 0, HALF, 31, false), 0);   // -0.5
  EXPECT_EQ(requantize(4, 0, HALF, 31, false), 2);
  EXPECT_EQ(requantize(-4, 0, HALF, 31, false), -2);
  // Just below and above one half (x 1/16).
  EXPECT_EQ(requantize(7, 0, 1 << 28, 32, false), 0);    // 0.4375
  EXPECT_EQ(requantize(9, 0, 1 << 28, 32, false), 1);    // 0.5625
  EXPECT_EQ(requantize(-7, 0, 1 << 28, 32, false), 0);   // -0.4375
  EXPECT_EQ(requantize(-9, 0, 1 << 28, 32, false), -1);  // -0.5625
}

TEST(Requantize, GoldenCases) {
  EXPECT_EQ(requantize(10, -20, ONE, 30, false), -10);  // bias before the scale
  EXPECT_EQ(requantize(1000, 0, ONE, 30, false), 127);  // saturation
  EXPECT_EQ(requantize(-1000, 0, ONE, 30, false), -128);
  EXPECT_EQ(requantize(-1000, 0, ONE, 30, true), 0);  // saturate, then ReLU
  EXPECT_EQ(requantize(-5, 0, HALF, 31, true), 0);
  EXPECT_EQ(requantize(77, 0, ONE, 30, true), 77);
  // s = 0: no rounding term, the multiplier alone.
  EXPECT_EQ(requantize(10, 2, 3, 0, false), 36);
  EXPECT_EQ(requantize(-50, 0, 1, 0, false), -50);
  EXPECT_EQ(requantize(-50, 0, 1, 0, true), 0);
  EXPECT_EQ(requantize(1, 0, 200, 0, false), 127);
  // s = 1: the rounding term is 1.
  EXPECT_EQ(requantize(3, 0, 1, 1, false), 2);    // 1.5 -> 2
  EXPECT_EQ(requantize(-3, 0, 1, 1, false), -1);  // -1.5 -> -1
  // Scale 0.3 from quantize_multiplier.
  const QuantizedMultiplier q = quantize_multiplier(0.3);
  EXPECT_EQ(requantize(100, 0, q.multiplier, q.shift, false), 30);
  // The multiplier is slightly above 0.3, so +-31.5 are not ties: they round away from zero.
  EXPECT_EQ(requantize(105, 0, q.multiplier, q.shift, false), 32);
  EXPECT_EQ(requantize(-105, 0, q.multiplier, q.shift, false), -32);
}

TEST(Requantize, ExtremeOperandsAreExact) {
  constexpr std::int32_t MIN = std::numeric_limits<std::int32_t>::min();
  constexpr std::int32_t MAX = std::numeric_limits<std::int32_t>::max();
  // v = -2^32, p = 2^63 (does not fit int64), q = (2^63 + 2^62) >> 63 = 1.
  EXPECT_EQ(requantize(MIN, MIN, MIN, 63, false), 1);
  // v = 2^32 - 2, p = (2^32 - 2)(2^31 - 1) just below 2^63: rounds to 1.
  EXPECT_EQ(requantize(MAX, MAX, MAX, 63, false), 1);
  EXPECT_EQ(requantize(MAX, MAX, MIN, 63, false), -1);
  EXPECT_EQ(requantize(MAX, MAX, MAX, 0, false), 127);
  EXPECT_EQ(requantize(MIN, MIN, MAX, 0, false), -128);
  EXPECT_THROW(requantize(0, 0, 1, 64, false), std::invalid_argument);
}

TEST(Requantize, MatchesAFloatingPointReferenceOnModerateValues) {
  const std::uint64_t seed = test_seed(55);
  SCOPED_TRACE(seed_note(seed));
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::int32_t> acc(-(1 << 19), 1 << 19);
  std::uniform_int_distribution<std::int32_t> mult(std::numeric_limits<std::int32_t>::min(),
                                                   std::numeric_limits<std::int32_t>::max());
  std::uniform_int_distribution<unsigned> shift(0, 40);
  for (int i = 0; i < 100000; ++i) {
    const std::int32_t a = acc(rng);
    const std::int32_t b = acc(rng);
    const std::int32_t m = mult(rng);
    const unsigned s = shift(rng);
    const bool relu = (rng() & 1) != 0;
    // |v * m| < 2^52: exact in long double, as are the division by 2^s and the + 0.5.
    const long double real =
        static_cast<long double>(std::int64_t{a} + b) * m / std::ldexp(1.0L, static_cast<int>(s));
    long double expect = s == 0 ? real : std::floor(real + 0.5L);
    expect = std::min<long double>(127, std::max<long double>(-128, expect));
    if (relu) expect = std::max<long double>(0, expect);
    ASSERT_EQ(requantize(a, b, m, s, relu), static_cast<int>(expect))
        << "acc " << a << " bias " << b << " mult " << m << " shift " << s << " relu " << relu;
  }
}

TEST(Requantize, Int32OutputWrapsAndClamps) {
  constexpr std::int32_t MIN = std::numeric_limits<std::int32_t>::min();
  constexpr std::int32_t MAX = std::numeric_limits<std::int32_t>::max();
  EXPECT_EQ(requantize_int32(100, -30, false), 70);
  EXPECT_EQ(requantize_int32(MAX, 1, false), MIN);  // wraps
  EXPECT_EQ(requantize_int32(MAX, 1, true), 0);     // wraps to negative, then ReLU
  EXPECT_EQ(requantize_int32(-7, 0, true), 0);
  EXPECT_EQ(requantize_int32(MIN, -1, false), MAX);
}

TEST(QuantizeMultiplier, KnownValues) {
  auto q = quantize_multiplier(0.5);
  EXPECT_EQ(q.multiplier, 1 << 30);
  EXPECT_EQ(q.shift, 31u);
  q = quantize_multiplier(1.0);
  EXPECT_EQ(q.multiplier, 1 << 30);
  EXPECT_EQ(q.shift, 30u);
  q = quantize_multiplier(0.75);
  EXPECT_EQ(q.multiplier, 1610612736);
  EXPECT_EQ(q.shift, 31u);
  q = quantize_multiplier(0.3);  // TFLite: 1288490189, exponent -1
  EXPECT_EQ(q.multiplier, 1288490189);
  EXPECT_EQ(q.shift, 32u);
  q = quantize_multiplier(std::ldexp(1.0, -10));  // 2^30 / 2^40
  EXPECT_EQ(q.multiplier, 1 << 30);
  EXPECT_EQ(q.shift, 40u);
  q = quantize_multiplier(1.5);
  EXPECT_EQ(q.multiplier, 3 << 29);
  EXPECT_EQ(q.shift, 30u);
  q = quantize_multiplier(1000.0);  // 1000 = 0.9765625 * 2^10
  EXPECT_EQ(q.multiplier, 2097152000);
  EXPECT_EQ(q.shift, 21u);
  // A fraction that rounds up to 2^31 moves to the next exponent.
  q = quantize_multiplier(1.0 - 1e-12);
  EXPECT_EQ(q.multiplier, 1 << 30);
  EXPECT_EQ(q.shift, 30u);
  // Below 2^-32 the shift saturates at 63 and the multiplier loses precision.
  q = quantize_multiplier(1e-12);
  EXPECT_EQ(q.shift, 63u);
  EXPECT_EQ(q.multiplier, 9223372);
}

TEST(QuantizeMultiplier, RandomScalesAreRepresentedToHalfAnUlp) {
  const std::uint64_t seed = test_seed(77);
  SCOPED_TRACE(seed_note(seed));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> log_scale(std::log(1e-9), std::log(1e6));
  for (int i = 0; i < 20000; ++i) {
    const double real = std::exp(log_scale(rng));
    const QuantizedMultiplier q = quantize_multiplier(real);
    ASSERT_GE(q.multiplier, 1 << 30) << real;
    ASSERT_LE(q.shift, 63u) << real;
    const double back = std::ldexp(static_cast<double>(q.multiplier), -static_cast<int>(q.shift));
    ASSERT_LE(std::abs(back - real) / real, std::ldexp(1.0, -31)) << real;
  }
}

TEST(QuantizeMultiplier, RejectsScalesItCannotRepresent) {
  EXPECT_THROW(quantize_multiplier(0.0), std::invalid_argument);
  EXPECT_THROW(quantize_multiplier(-0.5), std::invalid_argument);
  EXPECT_THROW(quantize_multiplier(std::numeric_limits<double>::infinity()), std::invalid_argument);
  EXPECT_THROW(quantize_multiplier(std::nan("")), std::invalid_argument);
  EXPECT_THROW(quantize_multiplier(std::ldexp(1.0, 31)), std::invalid_argument);
  EXPECT_NO_THROW(quantize_multiplier(std::ldexp(1.0, 31) - 1024));
}

TEST(Epilogue, MatrixEpilogueAppliesPerChannelParameters) {
  MatrixI32 acc(2, 3);
  acc << 10, -10, 300, -7, 7, -300;
  EpilogueParams p;
  p.bias = {0, 5, 0};
  p.multiplier = {HALF, ONE, ONE};
  p.shift = {31, 30, 31};
  const MatrixI32 y = apply_epilogue(acc, p, false, false);
  EXPECT_EQ(y(0, 0), 5);
  EXPECT_EQ(y(0, 1), -5);
  EXPECT_EQ(y(0, 2), 127);
  EXPECT_EQ(y(1, 0), -3);  // -3.5 -> -3
  EXPECT_EQ(y(1, 1), 12);
  EXPECT_EQ(y(1, 2), -128);
  const MatrixI32 r = apply_epilogue(acc, p, true, true);
  EXPECT_EQ(r(0, 1), 0);  // -10 + 5 < 0
  EXPECT_EQ(r(1, 1), 12);
  EXPECT_EQ(r(0, 2), 300);
  p.shift[1] = 64;
  EXPECT_THROW(apply_epilogue(acc, p, false, false), std::invalid_argument);
  p.shift.pop_back();
  EXPECT_THROW(p.validate(3), std::invalid_argument);
  EXPECT_NO_THROW(EpilogueParams::identity(3).validate(3));
}

}  // namespace
}  // namespace nmsa
