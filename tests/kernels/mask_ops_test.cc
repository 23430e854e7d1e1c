// kernels::select_bits, convert_from_bool and ieee_max_min (kernels/mask_ops.h) against plain
// element-by-element definitions: every element width, every operand a buffer or one element
// repeated, every length through the vector bodies' tails, special values (NaN payloads, signed
// zeros, infinities, subnormals) with subnormals read as zero and not.
#include "kernels/mask_ops.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kernels/float_environment.h"
#include "kernels/half_convert.h"

namespace {

namespace k = spmd::kernels;
using spmd::DType;

template <class T>
k::Input input(const std::vector<T>& v, int64_t elements) {
  return {reinterpret_cast<const std::byte*>(v.data()), elements};
}

template <class U>
std::vector<U> random_bits(size_t n, uint32_t seed) {
  std::mt19937_64 bits(seed);
  std::vector<U> v(n);
  for (U& x : v) x = static_cast<U>(bits());
  return v;
}

// The lengths that reach every tail of 2-, 4-, 8-, 16- and 32-wide bodies, and a long one.
std::vector<int64_t> lengths() {
  std::vector<int64_t> n;
  for (int64_t i = 0; i <= 70; ++i) n.push_back(i);
  n.push_back(1000);
  return n;
}

template <class U>
void expect_select_moves_bits() {
  constexpr size_t kMost = 1000;
  const std::vector<U> a = random_bits<U>(kMost, 1), b = random_bits<U>(kMost, 2);
  std::vector<uint8_t> cond(kMost);
  std::mt19937 coin(3);
  for (uint8_t& c : cond) c = static_cast<uint8_t>(coin() & 1u);
  for (int64_t n : lengths()) {
    for (int scalars = 0; scalars < 8; ++scalars) {  // bit 0: cond, 1: a, 2: b is one element
      const bool c1 = (scalars & 1) != 0, a1 = (scalars & 2) != 0, b1 = (scalars & 4) != 0;
      std::vector<U> out(static_cast<size_t>(n) + 1, U{7});
      ASSERT_TRUE(k::select_bits(sizeof(U), input(cond, c1 ? 1 : n), input(a, a1 ? 1 : n),
                                 input(b, b1 ? 1 : n), reinterpret_cast<std::byte*>(out.data()),
                                 n));
      for (int64_t i = 0; i < n; ++i) {
        const auto at = [i](bool one) { return static_cast<size_t>(one ? 0 : i); };
        const U want = cond[at(c1)] != 0 ? a[at(a1)] : b[at(b1)];
        ASSERT_EQ(out[static_cast<size_t>(i)], want)
            << sizeof(U) << "-byte elements, n " << n << ", operands " << scalars << ", at " << i;
      }
      EXPECT_EQ(out.back(), U{7}) << "written past n " << n;
    }
  }
}

TEST(MaskOps, ASelectMovesEachWidthsBitsForEveryMixOfBuffersAndScalars) {
  expect_select_moves_bits<uint8_t>();
  expect_select_moves_bits<uint16_t>();
  expect_select_moves_bits<uint32_t>();
  expect_select_moves_bits<uint64_t>();
  const std::vector<uint8_t> none(1);
  std::vector<uint8_t> out(4);
  for (size_t size : {size_t{3}, size_t{16}}) {
    EXPECT_FALSE(k::select_bits(size, input(none, 1), input(none, 1), input(none, 1),
                                reinterpret_cast<std::byte*>(out.data()), 1));
  }
}

template <class T>
void expect_zero_or_one(DType to) {
  std::vector<uint8_t> cond(1000);
  std::mt19937 coin(4);
  for (uint8_t& c : cond) c = static_cast<uint8_t>(coin() & 1u);
  for (int64_t n : lengths()) {
    for (bool one : {false, true}) {
      std::vector<T> out(static_cast<size_t>(n) + 1, T(7));
      ASSERT_TRUE(k::convert_from_bool(to, input(cond, one ? 1 : n),
                                       reinterpret_cast<std::byte*>(out.data()), n));
      for (int64_t i = 0; i < n; ++i) {
        ASSERT_EQ(out[static_cast<size_t>(i)], T(cond[static_cast<size_t>(one ? 0 : i)]))
            << spmd::dtype_name(to) << ", n " << n << ", at " << i;
      }
      EXPECT_EQ(out.back(), T(7));
    }
  }
}

TEST(MaskOps, ABoolConvertsToZeroOrOneOfEveryNumericDtype) {
  expect_zero_or_one<int8_t>(DType::kInt8);
  expect_zero_or_one<int16_t>(DType::kInt16);
  expect_zero_or_one<int32_t>(DType::kInt32);
  expect_zero_or_one<int64_t>(DType::kInt64);
  expect_zero_or_one<uint8_t>(DType::kUInt8);
  expect_zero_or_one<uint16_t>(DType::kUInt16);
  expect_zero_or_one<uint32_t>(DType::kUInt32);
  expect_zero_or_one<uint64_t>(DType::kUInt64);
  expect_zero_or_one<float>(DType::kFloat32);
  expect_zero_or_one<double>(DType::kFloat64);
  const std::vector<uint8_t> one(1, 1);
  std::vector<uint8_t> out(4);
  for (DType to : {DType::kBool, DType::kFloat16, DType::kBFloat16}) {
    EXPECT_FALSE(
        k::convert_from_bool(to, input(one, 1), reinterpret_cast<std::byte*>(out.data()), 1));
  }
}

// A subnormal as the zero of its sign, where denormals are read as zero. Told by its bits (a zero
// exponent, a fraction not zero): a floating comparison would itself read the subnormal as zero
// when the thread does, as this test's thread does (-Og compiles `v != 0` to that comparison).
template <class F>
F as_read(F v, bool daz) {
  using U = std::conditional_t<sizeof(F) == 4, uint32_t, uint64_t>;
  constexpr int kFraction = std::numeric_limits<F>::digits - 1;
  const U bits = std::bit_cast<U>(v) & ~(U{1} << (sizeof(F) * 8 - 1));
  const bool subnormal = bits != 0 && (bits >> kFraction) == 0;
  return daz && subnormal ? std::copysign(F(0), v) : v;
}

// jnp.maximum and jnp.minimum element by element: a NaN operand (its bits, x's first); two
// zeros: +0 for max unless both are -0, -0 for min unless both are +0; else the larger
// (smaller) value, as read.
template <class F>
F reference(bool maximum, F x, F y, bool daz) {
  if (std::isnan(x)) return x;
  if (std::isnan(y)) return y;
  const F rx = as_read(x, daz), ry = as_read(y, daz);
  if (rx == 0 && ry == 0) {
    const bool negative =
        maximum ? std::signbit(rx) && std::signbit(ry) : std::signbit(rx) || std::signbit(ry);
    return negative ? F(-0.0) : F(0);
  }
  return maximum ? (rx > ry ? rx : ry) : (rx < ry ? rx : ry);
}

template <class F>
std::vector<F> special_values() {
  using U = std::conditional_t<sizeof(F) == 4, uint32_t, uint64_t>;
  using L = std::numeric_limits<F>;
  std::vector<F> v = {F(0),
                      F(-0.0),
                      F(1),
                      F(-1),
                      F(2.5),
                      F(-2.5),
                      L::infinity(),
                      -L::infinity(),
                      L::min(),
                      -L::min(),
                      L::denorm_min(),
                      -L::denorm_min(),
                      L::denorm_min() * 3,
                      L::max(),
                      L::lowest(),
                      L::quiet_NaN(),
                      -L::quiet_NaN(),
                      L::signaling_NaN()};
  v.push_back(std::bit_cast<F>(static_cast<U>(std::bit_cast<U>(L::quiet_NaN()) | 0x5u)));
  return v;
}

using MaxMin = bool (*)(bool, DType, k::Input, k::Input, std::byte*, int64_t);

template <class F>
void expect_ieee_max_min(DType dtype, bool daz, MaxMin ieee_max_min) {
  using U = std::conditional_t<sizeof(F) == 4, uint32_t, uint64_t>;
  const std::vector<F> special = special_values<F>();
  // Every pair of special values, in long and short arrays, and each as a scalar operand.
  std::vector<F> x, y;
  for (F a : special) {
    for (F b : special) {
      x.push_back(a);
      y.push_back(b);
    }
  }
  for (bool maximum : {true, false}) {
    for (int64_t n : {int64_t(x.size()), int64_t{1}, int64_t{3}, int64_t{5}, int64_t{9}}) {
      std::vector<F> out(static_cast<size_t>(n));
      ASSERT_TRUE(ieee_max_min(maximum, dtype, input(x, n), input(y, n),
                               reinterpret_cast<std::byte*>(out.data()), n));
      for (int64_t i = 0; i < n; ++i) {
        const auto at = static_cast<size_t>(i);
        const F want = reference(maximum, x[at], y[at], daz);
        ASSERT_EQ(std::bit_cast<U>(out[at]), std::bit_cast<U>(want))
            << (maximum ? "max(" : "min(") << x[at] << ", " << y[at] << "): " << out[at]
            << ", want " << want << (daz ? " (denormals read as zero)" : "");
      }
    }
    for (size_t s = 0; s < special.size(); ++s) {  // the second operand one element, repeated
      const std::vector<F> scalar = {special[s]};
      const auto n = static_cast<int64_t>(special.size());
      std::vector<F> out(special.size());
      ASSERT_TRUE(ieee_max_min(maximum, dtype, input(special, n), input(scalar, 1),
                               reinterpret_cast<std::byte*>(out.data()), n));
      for (size_t i = 0; i < special.size(); ++i) {
        ASSERT_EQ(std::bit_cast<U>(out[i]),
                  std::bit_cast<U>(reference(maximum, special[i], special[s], daz)))
            << (maximum ? "max(" : "min(") << special[i] << ", scalar " << special[s] << ")";
      }
    }
  }
}

// Both builds: AVX2's lanes where the CPU has them, and Eigen's four as CPUs without AVX2 run.
void expect_both_builds(bool daz) {
  for (MaxMin f : {&k::ieee_max_min, &k::ieee_max_min_portable}) {
    expect_ieee_max_min<float>(DType::kFloat32, daz, f);
    expect_ieee_max_min<double>(DType::kFloat64, daz, f);
  }
}

TEST(MaskOps, MaximumAndMinimumAreJaxsOnEveryPairOfSpecialValues) { expect_both_builds(false); }

TEST(MaskOps, MaximumAndMinimumReadSubnormalsAsZeroWhereTheThreadDoes) {
  const k::FlushSubnormalsScope flush;
  expect_both_builds(true);
  const std::vector<int32_t> ints(1);
  std::vector<int32_t> out(1);
  EXPECT_FALSE(k::ieee_max_min(true, DType::kInt32, input(ints, 1), input(ints, 1),
                               reinterpret_cast<std::byte*>(out.data()), 1));
}

// float16_max_min on the bits equals widening both operands to float32, ieee_max_min and
// rounding back, for every float16 `a` against special and random `b` (and the swap, and
// scalar operands), with subnormals read as zero by the thread and not.
// Every value of the 16-bit format against special and random ones, both operand orders and a
// scalar, max and min: the bits on the bits (mask_ops.h) against widening both, the float32
// maximum (ieee_max_min_portable) and rounding back.
void expect_half_max_min_is_the_widened_one(DType dtype) {
  const bool bf16 = dtype == DType::kBFloat16;
  std::vector<uint16_t> every(65536);
  for (size_t i = 0; i < every.size(); ++i) every[i] = static_cast<uint16_t>(i);
  std::vector<uint16_t> others =
      bf16 ? std::vector<uint16_t>{0x0000, 0x8000, 0x0001, 0x8001, 0x007f, 0x807f,
                                   0x0080, 0x3f80, 0xbf80, 0x7f7f, 0xff7f, 0x7f80,
                                   0xff80, 0x7fc0, 0xffc0, 0x7f81, 0xfd55}
           : std::vector<uint16_t>{0x0000, 0x8000, 0x0001, 0x8001, 0x03ff, 0x3c00, 0xbc00, 0x7bff,
                                   0xfbff, 0x7c00, 0xfc00, 0x7e00, 0xfe00, 0x7c01, 0xfd55};
  std::mt19937 bits(7);
  for (int i = 0; i < 16; ++i) others.push_back(static_cast<uint16_t>(bits()));
  const int64_t n = static_cast<int64_t>(every.size());
  auto as_bytes = [](const auto& v) { return reinterpret_cast<const std::byte*>(v.data()); };
  for (uint16_t other : others) {
    const std::vector<uint16_t> b(every.size(), other), one = {other};
    for (bool maximum : {true, false}) {
      for (int form = 0; form < 3; ++form) {  // b a buffer after a, before a, a scalar after a
        const k::Input x = form == 1 ? k::Input{as_bytes(b), n} : k::Input{as_bytes(every), n};
        const k::Input y = form == 1   ? k::Input{as_bytes(every), n}
                           : form == 0 ? k::Input{as_bytes(b), n}
                                       : k::Input{as_bytes(one), 1};
        std::vector<float> wx(every.size()), wy(every.size()), wide(every.size());
        k::widen_half(dtype, x.data, wx.data(), n);
        k::widen_half(dtype, y.elements == n ? y.data : as_bytes(b), wy.data(), n);
        k::ieee_max_min_portable(maximum, DType::kFloat32, {as_bytes(wx), n}, {as_bytes(wy), n},
                                 reinterpret_cast<std::byte*>(wide.data()), n);
        std::vector<uint16_t> want(every.size()), got(every.size());
        k::narrow_half(dtype, wide.data(), reinterpret_cast<std::byte*>(want.data()), n);
        (bf16 ? k::bfloat16_max_min : k::float16_max_min)(
            maximum, x, y, reinterpret_cast<std::byte*>(got.data()), n);
        int64_t wrong = 0, first = -1;
        for (int64_t i = 0; i < n; ++i) {
          if (got[i] != want[i] && wrong++ == 0) first = i;
        }
        EXPECT_EQ(wrong, 0) << spmd::dtype_name(dtype) << " " << (maximum ? "max" : "min")
                            << " against 0x" << std::hex << other << " (form " << form
                            << "), first at 0x" << first << ": got 0x" << got[first < 0 ? 0 : first]
                            << ", want 0x" << want[first < 0 ? 0 : first];
      }
    }
  }
}

TEST(MaskOps, Float16MaximumAndMinimumOnTheBitsAreTheWidenedOnes) {
  expect_half_max_min_is_the_widened_one(DType::kFloat16);
  const k::FlushSubnormalsScope flush;
  expect_half_max_min_is_the_widened_one(DType::kFloat16);
}

// bfloat16's subnormals are float32 subnormals: compared as values on a thread that keeps them,
// as zeros of their sign (and returned so) on one that reads them as zero, as jit's threads do.
TEST(MaskOps, BFloat16MaximumAndMinimumOnTheBitsAreTheWidenedOnesInEitherMode) {
  expect_half_max_min_is_the_widened_one(DType::kBFloat16);
  const k::FlushSubnormalsScope flush;
  expect_half_max_min_is_the_widened_one(DType::kBFloat16);
}

}  // namespace
