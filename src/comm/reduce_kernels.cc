#include "comm/reduce_kernels.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace spmd {
namespace {

// The max (min) of two equal floats: the AND (OR) of their bits, +0 (-0) of zeros of both signs
// and the value itself otherwise, so that pmax and pmin, like jnp.max (kernels/extremes.h), give
// jnp.maximum's answer in whatever order the contributions arrive.
template <typename T>
T equal_bits(ReduceOp op, T a, T b) {
  using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  const auto x = std::bit_cast<Bits>(a), y = std::bit_cast<Bits>(b);
  return std::bit_cast<T>(op == ReduceOp::kMax ? Bits(x & y) : Bits(x | y));
}

// Combines two values of an arithmetic type T.
template <typename T>
T combine(ReduceOp op, T a, T b) {
  if constexpr (std::is_same_v<T, bool>) {
    return (op == ReduceOp::kSum || op == ReduceOp::kMax) ? (a || b) : (a && b);
  } else if constexpr (std::is_integral_v<T>) {
    // Wrap on overflow without undefined behaviour: compute in the unsigned type.
    using U = std::make_unsigned_t<T>;
    switch (op) {
      case ReduceOp::kSum:
        return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
      case ReduceOp::kProd:
        return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
      case ReduceOp::kMin:
        return a < b ? a : b;
      case ReduceOp::kMax:
        return a > b ? a : b;
    }
    return a;
  } else {
    switch (op) {
      case ReduceOp::kSum:
        return a + b;
      case ReduceOp::kProd:
        return a * b;
      case ReduceOp::kMin:
        if (std::isnan(a) || std::isnan(b)) return std::isnan(a) ? a : b;
        if (a == b) return equal_bits(op, a, b);
        return a < b ? a : b;
      case ReduceOp::kMax:
        if (std::isnan(a) || std::isnan(b)) return std::isnan(a) ? a : b;
        if (a == b) return equal_bits(op, a, b);
        return a > b ? a : b;
    }
    return a;
  }
}

// The loop is written per op so the compiler vectorises the common ones.
template <typename T>
void reduce_typed(ReduceOp op, T* inout, const T* in, size_t count) {
  switch (op) {
    case ReduceOp::kSum:
      for (size_t i = 0; i < count; ++i) inout[i] = combine(ReduceOp::kSum, inout[i], in[i]);
      return;
    case ReduceOp::kProd:
      for (size_t i = 0; i < count; ++i) inout[i] = combine(ReduceOp::kProd, inout[i], in[i]);
      return;
    case ReduceOp::kMin:
      for (size_t i = 0; i < count; ++i) inout[i] = combine(ReduceOp::kMin, inout[i], in[i]);
      return;
    case ReduceOp::kMax:
      for (size_t i = 0; i < count; ++i) inout[i] = combine(ReduceOp::kMax, inout[i], in[i]);
      return;
  }
}

// out[i] = op(a[i], b[i]): one pass where a copy then reduce_into would take two.
template <typename T>
void combine_typed(ReduceOp op, T* out, const T* a, const T* b, size_t count) {
  switch (op) {
    case ReduceOp::kSum:
      for (size_t i = 0; i < count; ++i) out[i] = combine(ReduceOp::kSum, a[i], b[i]);
      return;
    case ReduceOp::kProd:
      for (size_t i = 0; i < count; ++i) out[i] = combine(ReduceOp::kProd, a[i], b[i]);
      return;
    case ReduceOp::kMin:
      for (size_t i = 0; i < count; ++i) out[i] = combine(ReduceOp::kMin, a[i], b[i]);
      return;
    case ReduceOp::kMax:
      for (size_t i = 0; i < count; ++i) out[i] = combine(ReduceOp::kMax, a[i], b[i]);
      return;
  }
}

template <typename Half>
void reduce_half(ReduceOp op, Half* inout, const Half* in, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    const float r = combine(op, to_float(inout[i]), to_float(in[i]));
    if constexpr (std::is_same_v<Half, bfloat16>) {
      inout[i] = to_bfloat16(r);
    } else {
      inout[i] = to_float16(r);
    }
  }
}

}  // namespace

void reduce_into(DType dtype, ReduceOp op, void* inout, const void* in, size_t count) {
  switch (dtype) {
    case DType::kBool: {
      // Booleans travel as bytes; any non-zero byte is true.
      auto* a = static_cast<uint8_t*>(inout);
      const auto* b = static_cast<const uint8_t*>(in);
      for (size_t i = 0; i < count; ++i) {
        a[i] = combine<bool>(op, a[i] != 0, b[i] != 0) ? 1 : 0;
      }
      return;
    }
    case DType::kInt8:
      return reduce_typed(op, static_cast<int8_t*>(inout), static_cast<const int8_t*>(in), count);
    case DType::kInt16:
      return reduce_typed(op, static_cast<int16_t*>(inout), static_cast<const int16_t*>(in), count);
    case DType::kInt32:
      return reduce_typed(op, static_cast<int32_t*>(inout), static_cast<const int32_t*>(in), count);
    case DType::kInt64:
      return reduce_typed(op, static_cast<int64_t*>(inout), static_cast<const int64_t*>(in), count);
    case DType::kUInt8:
      return reduce_typed(op, static_cast<uint8_t*>(inout), static_cast<const uint8_t*>(in), count);
    case DType::kUInt16:
      return reduce_typed(op, static_cast<uint16_t*>(inout), static_cast<const uint16_t*>(in),
                          count);
    case DType::kUInt32:
      return reduce_typed(op, static_cast<uint32_t*>(inout), static_cast<const uint32_t*>(in),
                          count);
    case DType::kUInt64:
      return reduce_typed(op, static_cast<uint64_t*>(inout), static_cast<const uint64_t*>(in),
                          count);
    case DType::kFloat16:
      return reduce_half(op, static_cast<float16*>(inout), static_cast<const float16*>(in), count);
    case DType::kBFloat16:
      return reduce_half(op, static_cast<bfloat16*>(inout), static_cast<const bfloat16*>(in),
                         count);
    case DType::kFloat32:
      return reduce_typed(op, static_cast<float*>(inout), static_cast<const float*>(in), count);
    case DType::kFloat64:
      return reduce_typed(op, static_cast<double*>(inout), static_cast<const double*>(in), count);
  }
}

void reduce_to(DType dtype, ReduceOp op, void* out, const void* a, const void* b, size_t count) {
  switch (dtype) {
    case DType::kInt32:
      return combine_typed(op, static_cast<int32_t*>(out), static_cast<const int32_t*>(a),
                           static_cast<const int32_t*>(b), count);
    case DType::kInt64:
      return combine_typed(op, static_cast<int64_t*>(out), static_cast<const int64_t*>(a),
                           static_cast<const int64_t*>(b), count);
    case DType::kFloat32:
      return combine_typed(op, static_cast<float*>(out), static_cast<const float*>(a),
                           static_cast<const float*>(b), count);
    case DType::kFloat64:
      return combine_typed(op, static_cast<double*>(out), static_cast<const double*>(a),
                           static_cast<const double*>(b), count);
    default:
      // The rarer dtypes: copy, then combine in place.
      if (out != a) std::memmove(out, a, count * dtype_size(dtype));
      reduce_into(dtype, op, out, b, count);
  }
}

void widen_to_float32(DType dtype, const void* in, float* out, size_t count) {
  if (dtype == DType::kBFloat16) {
    const auto* h = static_cast<const bfloat16*>(in);
    for (size_t i = 0; i < count; ++i) out[i] = to_float(h[i]);
  } else {
    const auto* h = static_cast<const float16*>(in);
    for (size_t i = 0; i < count; ++i) out[i] = to_float(h[i]);
  }
}

void reduce_into_float32(DType dtype, ReduceOp op, float* acc, const void* in, size_t count) {
  if (dtype == DType::kBFloat16) {
    const auto* h = static_cast<const bfloat16*>(in);
    for (size_t i = 0; i < count; ++i) acc[i] = combine(op, acc[i], to_float(h[i]));
  } else {
    const auto* h = static_cast<const float16*>(in);
    for (size_t i = 0; i < count; ++i) acc[i] = combine(op, acc[i], to_float(h[i]));
  }
}

void narrow_from_float32(DType dtype, const float* in, void* out, size_t count) {
  if (dtype == DType::kBFloat16) {
    auto* h = static_cast<bfloat16*>(out);
    for (size_t i = 0; i < count; ++i) h[i] = to_bfloat16(in[i]);
  } else {
    auto* h = static_cast<float16*>(out);
    for (size_t i = 0; i < count; ++i) h[i] = to_float16(in[i]);
  }
}

}  // namespace spmd
