#include "spmd/dtype.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace spmd {
namespace {

TEST(DType, NamesAndSizesAreNumpys) {
  EXPECT_EQ(dtype_name(DType::kBFloat16), "bfloat16");
  EXPECT_EQ(dtype_name(DType::kUInt64), "uint64");
  EXPECT_EQ(dtype_size(DType::kFloat16), 2u);
  EXPECT_EQ(dtype_size(DType::kInt64), 8u);
  for (int i = 0; i <= static_cast<int>(DType::kFloat64); ++i) {
    const auto t = static_cast<DType>(i);
    EXPECT_EQ(dtype_from_name(dtype_name(t)), t);
  }
  EXPECT_THROW(dtype_from_name("float8"), InvalidArgument);
  static_assert(dtype_of<float>() == DType::kFloat32);
  static_assert(dtype_of<bfloat16>() == DType::kBFloat16);
}

TEST(BFloat16, RoundsToNearestEven) {
  EXPECT_EQ(to_bfloat16(1.0f).bits, 0x3f80);
  // 1 + 2^-8 is exactly halfway between 1 and 1 + 2^-7: ties go to the even pattern (1.0).
  EXPECT_EQ(to_bfloat16(1.0f + 1.0f / 256).bits, 0x3f80);
  // 1 + 3 * 2^-8 is halfway between 1 + 2^-7 (odd) and 1 + 2^-6 (even): rounds up.
  EXPECT_EQ(to_bfloat16(1.0f + 3.0f / 256).bits, 0x3f82);
  // Just above halfway rounds up.
  EXPECT_EQ(to_bfloat16(std::nextafter(1.0f + 1.0f / 256, 2.0f)).bits, 0x3f81);
  EXPECT_TRUE(std::isnan(to_float(to_bfloat16(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_EQ(to_float(to_bfloat16(-2.5f)), -2.5f);
  EXPECT_TRUE(std::isinf(to_float(to_bfloat16(std::numeric_limits<float>::max()))));
}

TEST(Float16, RoundsToNearestEvenAndKeepsSubnormals) {
  EXPECT_EQ(to_float16(1.0f).bits, 0x3c00);
  EXPECT_EQ(to_float16(-2.0f).bits, 0xc000);
  EXPECT_EQ(to_float16(65504.0f).bits, 0x7bff);               // the largest half
  EXPECT_EQ(to_float16(65520.0f).bits, 0x7c00);               // rounds to infinity
  EXPECT_EQ(to_float16(1.0f + 1.0f / 2048).bits, 0x3c00);     // tie -> even
  EXPECT_EQ(to_float16(1.0f + 3.0f / 2048).bits, 0x3c02);     // tie -> even (up)
  EXPECT_EQ(to_float16(std::ldexp(1.0f, -24)).bits, 0x0001);  // smallest subnormal
  EXPECT_EQ(to_float16(std::ldexp(1.0f, -25)).bits, 0x0000);  // tie with zero -> even (0)
  EXPECT_EQ(to_float16(std::ldexp(3.0f, -25)).bits, 0x0002);  // 1.5 ulp: tie -> even (2)
  EXPECT_TRUE(std::isnan(to_float(to_float16(std::numeric_limits<float>::quiet_NaN()))));
  // Every half converts to float and back unchanged.
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    const float16 h{static_cast<uint16_t>(bits)};
    const float f = to_float(h);
    if (std::isnan(f)) continue;
    ASSERT_EQ(to_float16(f).bits, h.bits) << std::hex << bits;
  }
}

TEST(BFloat16, EveryValueRoundTripsThroughFloat) {
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    const bfloat16 b{static_cast<uint16_t>(bits)};
    const float f = to_float(b);
    if (std::isnan(f)) continue;
    ASSERT_EQ(to_bfloat16(f).bits, b.bits) << std::hex << bits;
  }
}

}  // namespace
}  // namespace spmd
