// Element-wise reduction of typed buffers: the arithmetic of every reducing collective,
// independent of how bytes move. Pure; thread-safe on disjoint buffers.
//
// Same-type reduction combines two buffers of one dtype. For float16 and bfloat16 a collective
// that combines many contributions widens to a float32 accumulator, combines there, and narrows
// once at the end, so the result does not depend on the order contributions arrive in beyond
// float32 rounding (the "reduce in float32, round to nearest even").
#pragma once

#include <cstddef>

#include "spmd/dtype.h"
#include "spmd/reduce_op.h"

namespace spmd {

// inout[i] = op(inout[i], in[i]) for `count` elements of `dtype`. For float16/bfloat16 each
// element is combined in float32 and rounded back.
void reduce_into(DType dtype, ReduceOp op, void* inout, const void* in, size_t count);

// out[i] = op(a[i], b[i]) for `count` elements of `dtype`; `out` may be `a`.
void reduce_to(DType dtype, ReduceOp op, void* out, const void* a, const void* b, size_t count);

// True for the dtypes that reduce through a float32 accumulator (float16, bfloat16).
constexpr bool accumulates_in_float32(DType dtype) {
  return dtype == DType::kFloat16 || dtype == DType::kBFloat16;
}

// float16/bfloat16 -> float32.
void widen_to_float32(DType dtype, const void* in, float* out, size_t count);

// acc[i] = op(acc[i], widen(in[i])) for float16/bfloat16 `in`.
void reduce_into_float32(DType dtype, ReduceOp op, float* acc, const void* in, size_t count);

// float32 -> float16/bfloat16, rounding to nearest even.
void narrow_from_float32(DType dtype, const float* in, void* out, size_t count);

}  // namespace spmd
