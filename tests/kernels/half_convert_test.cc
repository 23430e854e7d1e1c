// kernels::widen_half and narrow_half (kernels/half_convert.h), and their portable forms, against
// spmd/dtype.h's element-by-element conversions, bit for bit: every float16 and bfloat16
// widened, and float32s rounded to each: every combination of the top 16 bits with low bits at
// and around each rounding boundary, the float16 subnormal range densely, and NaNs with
// payloads; under the thread's default floating-point mode and with subnormals flushed.
#include "kernels/half_convert.h"

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/float_environment.h"

namespace {

namespace k = spmd::kernels;
using spmd::DType;

uint16_t reference_narrow(DType t, float f) {
  return t == DType::kFloat16 ? spmd::to_float16(f).bits : spmd::to_bfloat16(f).bits;
}

float reference_widen(DType t, uint16_t h) {
  return t == DType::kFloat16 ? spmd::to_float(spmd::float16{h})
                              : spmd::to_float(spmd::bfloat16{h});
}

// Float32 bit patterns: every top half with low halves at the boundaries of bfloat16's rounding
// (0x8000) and float16's (0x1000 within 13 bits), then the float16 subnormal range (|f| in
// [2^-25, 2^-14), shifts of 14 to 24 bits) every 5th value.
std::vector<uint32_t> float_patterns() {
  std::vector<uint32_t> bits;
  const uint32_t lows[] = {0x0000, 0x0001, 0x0fff, 0x1000, 0x1001, 0x1fff, 0x2000, 0x3000,
                           0x7fff, 0x8000, 0x8001, 0x9000, 0xefff, 0xf000, 0xf001, 0xffff};
  for (uint32_t top = 0; top < 0x10000u; ++top) {
    for (uint32_t low : lows) bits.push_back(top << 16 | low);
  }
  for (uint32_t u = 0x33000000u - 64; u < 0x38800000u + 64; u += 5) {
    bits.push_back(u);
    bits.push_back(u | 0x80000000u);
  }
  return bits;
}

using Widen = bool (*)(DType, const std::byte*, float*, int64_t);
using Narrow = bool (*)(DType, const float*, std::byte*, int64_t);

void expect_conversions_match(Widen widen_half, Narrow narrow_half) {
  for (DType t : {DType::kFloat16, DType::kBFloat16}) {
    std::vector<uint16_t> halves(0x10000);
    for (uint32_t h = 0; h < 0x10000u; ++h) halves[h] = static_cast<uint16_t>(h);
    std::vector<float> wide(halves.size() + 1, 7.0f);
    ASSERT_TRUE(widen_half(t, reinterpret_cast<const std::byte*>(halves.data()), wide.data(),
                           static_cast<int64_t>(halves.size())));
    for (uint32_t h = 0; h < 0x10000u; ++h) {
      ASSERT_EQ(std::bit_cast<uint32_t>(wide[h]),
                std::bit_cast<uint32_t>(reference_widen(t, static_cast<uint16_t>(h))))
          << spmd::dtype_name(t) << " bits " << std::hex << h;
    }
    EXPECT_EQ(wide.back(), 7.0f) << "written past n";

    const std::vector<uint32_t> patterns = float_patterns();
    std::vector<float> floats(patterns.size());
    std::memcpy(floats.data(), patterns.data(), patterns.size() * sizeof(float));
    std::vector<uint16_t> narrow(floats.size() + 1, 0x1234);
    ASSERT_TRUE(narrow_half(t, floats.data(), reinterpret_cast<std::byte*>(narrow.data()),
                            static_cast<int64_t>(floats.size())));
    for (size_t i = 0; i < floats.size(); ++i) {
      ASSERT_EQ(narrow[i], reference_narrow(t, floats[i]))
          << spmd::dtype_name(t) << " from float32 bits " << std::hex << patterns[i];
    }
    EXPECT_EQ(narrow.back(), 0x1234) << "written past n";
  }
}

// Both paths: the one this CPU runs (F16C's instructions for float16 where it has them) and the
// one CPUs without F16C run.
TEST(HalfConvert, EveryHalfWidensAndEveryBoundaryRoundsAsDtypeHDoes) {
  expect_conversions_match(&k::widen_half, &k::narrow_half);
  expect_conversions_match(&k::widen_half_portable, &k::narrow_half_portable);
}

TEST(HalfConvert, FlushingSubnormalsChangesNoConversion) {
  const k::FlushSubnormalsScope flush;
  expect_conversions_match(&k::widen_half, &k::narrow_half);
  expect_conversions_match(&k::widen_half_portable, &k::narrow_half_portable);
}

TEST(HalfConvert, OtherDtypesAreDeclined) {
  std::vector<float> f(1, 5.0f);
  std::vector<uint16_t> h(1, 3);
  EXPECT_FALSE(
      k::widen_half(DType::kFloat32, reinterpret_cast<const std::byte*>(h.data()), f.data(), 1));
  EXPECT_FALSE(k::narrow_half(DType::kInt16, f.data(), reinterpret_cast<std::byte*>(h.data()), 1));
  EXPECT_EQ(f[0], 5.0f);
  EXPECT_EQ(h[0], 3);
}

}  // namespace
