// kernels::saturating_convert (saturating_convert.h): float32 and float64 values as every
// integer type, against a reference written from the rule (NaN 0, beyond the range the type's
// extremes, else truncation toward zero) over the values where a conversion goes wrong: NaN,
// infinities, signed zeros, fractions on both sides of zero, each type's extremes and the
// floats just inside and outside them, and random values of every magnitude; other pairs are
// declined with nothing written. That the rule is XLA's is tested against JAX
// (tests/python/jax_parity).
#include "kernels/saturating_convert.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

namespace {

namespace k = spmd::kernels;

template <class F, class U>
U reference(F v) {
  if (std::isnan(v)) return U{0};
  const long double x = v;
  if (x >= static_cast<long double>(std::numeric_limits<U>::max()) + 1) {
    return std::numeric_limits<U>::max();
  }
  if (x <= static_cast<long double>(std::numeric_limits<U>::lowest())) {
    return std::numeric_limits<U>::lowest();
  }
  return static_cast<U>(std::trunc(x));
}

template <class F, class U>
std::vector<F> edge_values() {
  constexpr F inf = std::numeric_limits<F>::infinity();
  const auto top = static_cast<F>(std::numeric_limits<U>::max());
  const auto bottom = static_cast<F>(std::numeric_limits<U>::lowest());
  std::vector<F> v = {std::numeric_limits<F>::quiet_NaN(),
                      -std::numeric_limits<F>::quiet_NaN(),
                      inf,
                      -inf,
                      F(0),
                      -F(0),
                      F(0.5),
                      F(-0.5),
                      F(0.99),
                      F(-0.99),
                      F(1.5),
                      F(-1.5),
                      F(-1),
                      std::numeric_limits<F>::denorm_min(),
                      std::numeric_limits<F>::max(),
                      std::numeric_limits<F>::lowest()};
  for (const F edge : {top, bottom, top + 1, bottom - 1}) {
    F x = edge;
    for (int step = 0; step < 3; ++step) x = std::nextafter(x, -inf);
    for (int step = 0; step < 7; ++step, x = std::nextafter(x, inf)) v.push_back(x);
  }
  std::mt19937_64 bits(sizeof(F) * 16 + sizeof(U));
  std::uniform_real_distribution<double> unit(-1, 1);
  for (int i = 0; i < 2000; ++i) {
    v.push_back(static_cast<F>(std::ldexp(unit(bits), static_cast<int>(bits() % 70))));
  }
  return v;
}

template <class F, class U>
void expect_reference() {
  const std::vector<F> in = edge_values<F, U>();
  std::vector<U> out(in.size(), U{42});
  ASSERT_TRUE(k::saturating_convert(
      spmd::dtype_of<F>(), spmd::dtype_of<U>(), reinterpret_cast<const std::byte*>(in.data()),
      reinterpret_cast<std::byte*>(out.data()), static_cast<int64_t>(in.size())));
  for (size_t i = 0; i < in.size(); ++i) {
    ASSERT_EQ(out[i], (reference<F, U>(in[i])))
        << spmd::dtype_name(spmd::dtype_of<F>()) << " " << in[i] << " as "
        << spmd::dtype_name(spmd::dtype_of<U>());
  }
}

template <class F>
void expect_every_integer_type() {
  expect_reference<F, int8_t>();
  expect_reference<F, int16_t>();
  expect_reference<F, int32_t>();
  expect_reference<F, int64_t>();
  expect_reference<F, uint8_t>();
  expect_reference<F, uint16_t>();
  expect_reference<F, uint32_t>();
  expect_reference<F, uint64_t>();
}

TEST(SaturatingConvert, EachValueIsTheRulesOnEveryIntegerType) {
  expect_every_integer_type<float>();
  expect_every_integer_type<double>();
}

TEST(SaturatingConvert, OtherPairsAreDeclinedWithNothingWritten) {
  const float in[2] = {1.5f, 2.5f};
  float out[2] = {7, 7};
  const auto* from = reinterpret_cast<const std::byte*>(in);
  auto* to = reinterpret_cast<std::byte*>(out);
  EXPECT_FALSE(k::saturating_convert(spmd::DType::kFloat32, spmd::DType::kFloat32, from, to, 2));
  EXPECT_FALSE(k::saturating_convert(spmd::DType::kFloat32, spmd::DType::kBool, from, to, 2));
  EXPECT_FALSE(k::saturating_convert(spmd::DType::kInt32, spmd::DType::kInt64, from, to, 2));
  EXPECT_FALSE(k::saturating_convert(spmd::DType::kFloat16, spmd::DType::kInt32, from, to, 2));
  EXPECT_EQ(out[0], 7.0f);
  EXPECT_EQ(out[1], 7.0f);
}

}  // namespace
