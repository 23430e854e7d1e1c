// The dtype dispatch behind the block operations: calls a generic function with a value of the
// C++ element type, and maps float16/bfloat16 to float32 for computing.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <type_traits>
#include <utility>

#include "spmd/dtype.h"
#include "spmd/error.h"

namespace spmd::ops {

template <typename T>
inline constexpr bool is_half_v = std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>;

// The type elements of T are computed in.
template <typename T>
using compute_t = std::conditional_t<is_half_v<T>, float, T>;

template <typename T>
compute_t<T> load(T v) {
  if constexpr (is_half_v<T>) {
    return to_float(v);
  } else {
    return v;
  }
}

template <typename T>
T store(compute_t<T> v) {
  if constexpr (std::is_same_v<T, float16>) {
    return to_float16(v);
  } else if constexpr (std::is_same_v<T, bfloat16>) {
    return to_bfloat16(v);
  } else {
    return v;
  }
}

// fn(T{}) for a floating dtype; InvalidArgument starting with `what` otherwise.
template <class Fn>
decltype(auto) visit_floating(DType t, const char* what, Fn&& fn) {
  switch (t) {
    case DType::kFloat16:
      return fn(float16{});
    case DType::kBFloat16:
      return fn(bfloat16{});
    case DType::kFloat32:
      return fn(float{});
    case DType::kFloat64:
      return fn(double{});
    default:
      break;
  }
  throw InvalidArgument(
      fmt::format("{}: needs a floating dtype (float16, bfloat16, float32, float64), not {}; "
                  "convert the block first",
                  what, dtype_name(t)));
}

// fn(T{}) for the numeric dtype `t`; InvalidArgument starting with `what` for bool.
template <class Fn>
decltype(auto) visit_numeric(DType t, const char* what, Fn&& fn) {
  switch (t) {
    case DType::kInt8:
      return fn(int8_t{});
    case DType::kInt16:
      return fn(int16_t{});
    case DType::kInt32:
      return fn(int32_t{});
    case DType::kInt64:
      return fn(int64_t{});
    case DType::kUInt8:
      return fn(uint8_t{});
    case DType::kUInt16:
      return fn(uint16_t{});
    case DType::kUInt32:
      return fn(uint32_t{});
    case DType::kUInt64:
      return fn(uint64_t{});
    case DType::kFloat16:
    case DType::kBFloat16:
    case DType::kFloat32:
    case DType::kFloat64:
      return visit_floating(t, what, std::forward<Fn>(fn));
    case DType::kBool:
      break;
  }
  throw InvalidArgument(fmt::format("{}: no arithmetic on {} blocks", what, dtype_name(t)));
}

}  // namespace spmd::ops
