// Dtype dispatch for the kernels: calls a generic function with the C++ element type of a DType.
// float16 and bfloat16 have no arithmetic of their own: kernels convert them to float32, compute,
// and round once (to_wide / from_wide), as JAX on CPU does.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include "spmd/dtype.h"
#include "spmd/error.h"

namespace spmd::kernels {

// Half-precision storage types, computed in float32.
template <class T>
inline constexpr bool is_half = std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>;

// Calls f(T{}) for the C++ type of `t`; with kWidenHalf, float for the half types (which f is
// then never instantiated with).
template <bool kWidenHalf, class F>
decltype(auto) visit(DType t, F&& f) {
  switch (t) {
    case DType::kBool:
      return f(bool{});
    case DType::kInt8:
      return f(int8_t{});
    case DType::kInt16:
      return f(int16_t{});
    case DType::kInt32:
      return f(int32_t{});
    case DType::kInt64:
      return f(int64_t{});
    case DType::kUInt8:
      return f(uint8_t{});
    case DType::kUInt16:
      return f(uint16_t{});
    case DType::kUInt32:
      return f(uint32_t{});
    case DType::kUInt64:
      return f(uint64_t{});
    case DType::kFloat16:
      if constexpr (kWidenHalf)
        return f(float{});
      else
        return f(float16{});
    case DType::kBFloat16:
      if constexpr (kWidenHalf)
        return f(float{});
      else
        return f(bfloat16{});
    case DType::kFloat32:
      return f(float{});
    case DType::kFloat64:
      return f(double{});
  }
  throw InvalidArgument("unknown dtype");
}

// f(T{}) for the element type of `t` (float16 and bfloat16 as their storage types).
template <class F>
decltype(auto) visit_dtype(DType t, F&& f) {
  return visit<false>(t, std::forward<F>(f));
}

// f(T{}) for the arithmetic type `t` computes in: float for the half types.
template <class F>
decltype(auto) visit_compute_type(DType t, F&& f) {
  return visit<true>(t, std::forward<F>(f));
}

// f(T{}) for the C++ type of an integer dtype (int8 to uint64, not bool), returning what f
// returns (a bool); false for another dtype, f not called.
template <class F>
bool visit_integer(DType t, F&& f) {
  return visit_dtype(t, [&](auto zero) -> bool {
    using T = decltype(zero);
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      return f(zero);
    } else {
      return false;
    }
  });
}

// f(std::integral_constant<int, K>{}) for the K among Ks equal to k, returning true; false for
// another k, f not called: a runtime length handed to a loop unrolled for it.
template <int... Ks, class F>
bool visit_length(int64_t k, F&& f) {
  return ((k == Ks && (f(std::integral_constant<int, Ks>{}), true)) || ...);
}

// visit_length for a row length k of 1, 2, 3, 4, 8 or 16: the lengths whose loops over many
// short rows, unrolled for K, GCC vectorises across the rows (ynn_reduce.h's short sums,
// reduce.cc's short integer argmax).
template <class F>
bool visit_short_row(int64_t k, F&& f) {
  return visit_length<1, 2, 3, 4, 8, 16>(k, std::forward<F>(f));
}

// f(U{}) for the unsigned integer type of `size` bytes (1, 2, 4 or 8), returning true: kernels
// that only move elements move them as such integers. False for another size, f not called.
template <class F>
bool visit_bits(size_t size, F&& f) {
  switch (size) {
    case 1:
      f(uint8_t{});
      return true;
    case 2:
      f(uint16_t{});
      return true;
    case 4:
      f(uint32_t{});
      return true;
    case 8:
      f(uint64_t{});
      return true;
    default:
      return false;
  }
}

// `n` elements of `t` at `data` as float32 (t must be a half type).
std::vector<float> to_wide(DType t, const std::byte* data, int64_t n);
// Rounds `wide` once into `n` elements of half type `t` at `out`.
void from_wide(DType t, std::span<const float> wide, std::byte* out);

}  // namespace spmd::kernels
