// spmd::DType — element types of arrays and collectives, named as NumPy names them.
//
// Header-only vocabulary shared by every layer (the collectives engine and the arrays both speak
// it). float16 and bfloat16 are stored as their 16-bit patterns; conversions from float32 round
// to nearest, ties to even, as IEEE 754 and NumPy/ml_dtypes do. All functions are pure.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "spmd/error.h"

namespace spmd {

enum class DType : uint8_t {
  kBool,
  kInt8,
  kInt16,
  kInt32,
  kInt64,
  kUInt8,
  kUInt16,
  kUInt32,
  kUInt64,
  kFloat16,
  kBFloat16,
  kFloat32,
  kFloat64,
};

// IEEE 754 binary16, as its bits.
struct float16 {
  uint16_t bits = 0;
  bool operator==(const float16&) const = default;
};

// bfloat16 (the upper half of a float32), as its bits.
struct bfloat16 {
  uint16_t bits = 0;
  bool operator==(const bfloat16&) const = default;
};

// "bool", "int8", …, "float16", "bfloat16", "float32", "float64".
constexpr std::string_view dtype_name(DType t) {
  constexpr std::string_view names[] = {"bool",     "int8",    "int16",  "int32",  "int64",
                                        "uint8",    "uint16",  "uint32", "uint64", "float16",
                                        "bfloat16", "float32", "float64"};
  return names[static_cast<int>(t)];
}

// Bytes per element.
constexpr size_t dtype_size(DType t) {
  constexpr size_t sizes[] = {1, 1, 2, 4, 8, 1, 2, 4, 8, 2, 2, 4, 8};
  return sizes[static_cast<int>(t)];
}

// The dtype as NumPy's array-interface type string, little-endian: "|b1", "<i4", "<f2", …, and
// "bfloat16" for bfloat16, which NumPy lacks (TensorStore's Zarr name). .npy and Zarr use these.
constexpr std::string_view dtype_typestr(DType t) {
  constexpr std::string_view names[] = {"|b1", "|i1", "<i2", "<i4",      "<i8", "|u1", "<u2",
                                        "<u4", "<u8", "<f2", "bfloat16", "<f4", "<f8"};
  return names[static_cast<int>(t)];
}

constexpr bool is_floating(DType t) {
  return t == DType::kFloat16 || t == DType::kBFloat16 || t == DType::kFloat32 ||
         t == DType::kFloat64;
}

// float16 and bfloat16: stored in 16 bits, computed in float32 (kernels), summed and averaged in
// float32 (spmd::numpy, as jnp's upcast).
constexpr bool is_half_dtype(DType t) { return t == DType::kFloat16 || t == DType::kBFloat16; }

// The DType named `name` (NumPy's names). Throws InvalidArgument listing the names.
inline DType dtype_from_name(std::string_view name) {
  for (int i = 0; i <= static_cast<int>(DType::kFloat64); ++i) {
    if (dtype_name(static_cast<DType>(i)) == name) return static_cast<DType>(i);
  }
  throw InvalidArgument(std::string("unknown dtype '") + std::string(name) +
                        "'; expected one of bool, int8, int16, int32, int64, uint8, uint16, "
                        "uint32, uint64, float16, bfloat16, float32, float64");
}

// The DType of a C++ element type: dtype_of<float>() == DType::kFloat32.
template <typename T>
constexpr DType dtype_of();
template <>
constexpr DType dtype_of<bool>() {
  return DType::kBool;
}
template <>
constexpr DType dtype_of<int8_t>() {
  return DType::kInt8;
}
template <>
constexpr DType dtype_of<int16_t>() {
  return DType::kInt16;
}
template <>
constexpr DType dtype_of<int32_t>() {
  return DType::kInt32;
}
template <>
constexpr DType dtype_of<int64_t>() {
  return DType::kInt64;
}
template <>
constexpr DType dtype_of<uint8_t>() {
  return DType::kUInt8;
}
template <>
constexpr DType dtype_of<uint16_t>() {
  return DType::kUInt16;
}
template <>
constexpr DType dtype_of<uint32_t>() {
  return DType::kUInt32;
}
template <>
constexpr DType dtype_of<uint64_t>() {
  return DType::kUInt64;
}
template <>
constexpr DType dtype_of<float16>() {
  return DType::kFloat16;
}
template <>
constexpr DType dtype_of<bfloat16>() {
  return DType::kBFloat16;
}
template <>
constexpr DType dtype_of<float>() {
  return DType::kFloat32;
}
template <>
constexpr DType dtype_of<double>() {
  return DType::kFloat64;
}

// float32 -> bfloat16, round to nearest even; NaN stays a (quiet) NaN.
constexpr bfloat16 to_bfloat16(float f) {
  const uint32_t u = std::bit_cast<uint32_t>(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return bfloat16{static_cast<uint16_t>((u >> 16) | 0x40)};
  const uint32_t rounding = 0x7fffu + ((u >> 16) & 1u);
  return bfloat16{static_cast<uint16_t>((u + rounding) >> 16)};
}

constexpr float to_float(bfloat16 b) { return std::bit_cast<float>(uint32_t{b.bits} << 16); }

// float32 -> float16, round to nearest even, overflow to infinity, subnormals kept.
constexpr float16 to_float16(float f) {
  const uint32_t u = std::bit_cast<uint32_t>(f);
  const uint32_t sign = (u >> 16) & 0x8000u;
  const uint32_t abs = u & 0x7fffffffu;
  if (abs > 0x7f800000u) return float16{static_cast<uint16_t>(sign | 0x7e00u)};   // NaN
  if (abs >= 0x477ff000u) return float16{static_cast<uint16_t>(sign | 0x7c00u)};  // >= 65520: inf
  if (abs < 0x38800000u) {  // below the smallest normal half (2^-14): subnormal or zero
    if (abs < 0x33000000u) return float16{static_cast<uint16_t>(sign)};  // < 2^-25: zero
    const uint32_t exp = abs >> 23;
    const uint32_t mant = (abs & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126 - exp;  // 14 + (127 - 1 - exp) - 13 + 13
    const uint32_t half = mant >> shift;
    const uint32_t rest = mant & ((1u << shift) - 1);
    const uint32_t mid = 1u << (shift - 1);
    const uint32_t rounded = half + ((rest > mid || (rest == mid && (half & 1u))) ? 1u : 0u);
    return float16{static_cast<uint16_t>(sign | rounded)};
  }
  const uint32_t rebased = abs - 0x38000000u;  // exponent 127 -> 15
  const uint32_t half = rebased >> 13;
  const uint32_t rest = rebased & 0x1fffu;
  const uint32_t rounded = half + ((rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ? 1u : 0u);
  return float16{static_cast<uint16_t>(sign | rounded)};
}

constexpr float to_float(float16 h) {
  const uint32_t sign = uint32_t{h.bits & 0x8000u} << 16;
  const uint32_t exp = (h.bits >> 10) & 0x1fu;
  const uint32_t mant = h.bits & 0x3ffu;
  if (exp == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));
  if (exp == 0) {
    if (mant == 0) return std::bit_cast<float>(sign);
    // Subnormal: value = mant * 2^-24.
    const float v = static_cast<float>(mant) * (1.0f / 16777216.0f);
    return sign ? -v : v;
  }
  return std::bit_cast<float>(sign | ((exp + 112) << 23) | (mant << 13));
}

}  // namespace spmd
