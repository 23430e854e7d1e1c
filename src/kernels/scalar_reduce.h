// Reductions along one axis (reduce.h) one output element at a time, written once for the host
// and the GPU: the CUDA backend's reduction kernels (cuda/reduce.cu) accumulate with these, and
// tests/kernels/scalar_reduce_test.cc runs them on the host against reduce.h's kernels. An
// array is viewed as outer × extent × inner, as there. Values are scalar_ops.h Slots in the
// output dtype's class (a half type accumulates in float and rounds once, when stored); sums
// convert each element to the output dtype first (a widening sum). Pure; thread-safe.
#pragma once

#include <cstdint>

#include "kernels/reduce.h"
#include "kernels/scalar_ops.h"

namespace spmd::kernels {

struct ReducePlan {
  Reduce op = Reduce::kSum;
  DType dtype = DType::kFloat32;      // the input's
  DType out_dtype = DType::kFloat32;  // the accumulator's and the output's
  int64_t outer = 1, extent = 1, inner = 1;
};

// Element j along the axis of output (o, i), in the output dtype's class.
SPMD_HOST_DEVICE inline scalar::Slot reduce_element(const ReducePlan& p, const void* in, int64_t o,
                                                    int64_t i, int64_t j) {
  const scalar::Slot x = scalar::load(p.dtype, in, (o * p.extent + j) * p.inner + i);
  return p.dtype == p.out_dtype ? x : scalar::convert(p.dtype, p.out_dtype, x);
}

// Two partial results combined: a + b, a × b (integers wrapping), or the maximum or minimum with
// NaN winning (scalar_ops.h's binary: -0 < +0 for floats).
SPMD_HOST_DEVICE inline scalar::Slot reduce_combine(const ReducePlan& p, scalar::Slot a,
                                                    scalar::Slot b) {
  const Binary op = p.op == Reduce::kSum    ? Binary::kAdd
                    : p.op == Reduce::kProd ? Binary::kMul
                    : p.op == Reduce::kMax  ? Binary::kMax
                                            : Binary::kMin;
  bool unused = false;
  return scalar::binary(op, p.out_dtype, a, b, &unused);
}

// The result of an empty axis, in the output dtype's class: 1 for a product (true for bool),
// else 0 (only sums and products have one).
SPMD_HOST_DEVICE inline scalar::Slot reduce_identity(const ReducePlan& p) {
  scalar::Slot s{};
  if (p.op != Reduce::kProd) return s;
  switch (scalar::class_of(p.out_dtype)) {
    case scalar::Class::kBool:
      s.b = true;
      break;
    case scalar::Class::kInt:
      s.i = 1;
      break;
    case scalar::Class::kFloat:
      s.f = 1;
      break;
    case scalar::Class::kDouble:
      s.d = 1;
      break;
  }
  return s;
}

// The reduction of elements begin, begin + step, … (< end) of output (o, i), which must be at
// least one.
SPMD_HOST_DEVICE inline scalar::Slot reduce_range(const ReducePlan& p, const void* in, int64_t o,
                                                  int64_t i, int64_t begin, int64_t end,
                                                  int64_t step) {
  scalar::Slot acc = reduce_element(p, in, o, i, begin);
  for (int64_t j = begin + step; j < end; j += step) {
    acc = reduce_combine(p, acc, reduce_element(p, in, o, i, j));
  }
  return acc;
}

// The index along the axis of output (o, i)'s first maximum, the first NaN counting as the
// maximum (NumPy's and JAX's argmax); extent ≥ 1. `dtype` is the input's.
SPMD_HOST_DEVICE inline int32_t argmax_element(DType dtype, const void* in, int64_t extent,
                                               int64_t inner, int64_t o, int64_t i) {
  const auto at = [&](int64_t j) { return scalar::load(dtype, in, (o * extent + j) * inner + i); };
  const scalar::Class k = scalar::class_of(dtype);
  scalar::Slot best = at(0);
  int32_t index = 0;
  for (int64_t j = 0; j < extent; ++j) {
    const scalar::Slot x = at(j);
    const bool nan =
        k == scalar::Class::kFloat ? x.f != x.f : k == scalar::Class::kDouble && x.d != x.d;
    if (nan) return static_cast<int32_t>(j);
    const bool greater = k == scalar::Class::kBool    ? (x.b && !best.b)
                         : k == scalar::Class::kInt   ? x.i > best.i
                         : k == scalar::Class::kFloat ? x.f > best.f
                                                      : x.d > best.d;
    if (greater) {
      best = x;
      index = static_cast<int32_t>(j);
    }
  }
  return index;
}

}  // namespace spmd::kernels
