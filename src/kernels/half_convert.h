// float16 and bfloat16 widened to float32 and float32 rounded to them, many at a time: the
// conversions every half-type kernel makes around its float32 arithmetic (dispatch.h's to_wide
// and from_wide), as loops the compiler vectorises.
//
// The element-by-element conversions (spmd/dtype.h: to_float, to_float16, to_bfloat16) branch on
// the value's class, so a loop of them ran one element at a time: a float16 `a * b + a` over
// 4096 × 2048 took 133 ms on the 2-core Zen 3, JAX 2.1 (issue 51). Here float16 goes through the
// processor's F16C conversions where it has them (eight per instruction; a group holding a NaN is
// redone element by element, since the instruction quiets a NaN and keeps its payload where
// dtype.h makes one quiet NaN), and otherwise, as bfloat16 always, through conversions written
// without branches, every class's result computed and one kept by masks, in 32-bit integer
// lanes, built for x86-64-v3 (AVX2: eight lanes, per-lane shifts) and the baseline
// (`target_clones`). The values
// are dtype.h's bit for bit, for every input (`HalfConvert.*` checks every float16 and bfloat16,
// and every float32 near each rounding boundary and a spread of the rest): round to nearest
// even, overflow to infinity, float16 subnormals kept, a NaN to the quiet NaN of its sign
// (float16: 0x7e00; bfloat16: its top bits with the quiet bit set). Integer arithmetic, but for
// a float16 subnormal's widening (an exact product of normal floats), so the thread's
// floating-point mode never changes a value. Thread-safe. Internal to kernels/.
#pragma once

#include <cstddef>
#include <cstdint>

#include "spmd/dtype.h"

namespace spmd::kernels {

// out[i] = the float32 value of the i-th `t` at `in`, for i < n. False, with nothing written, for
// a dtype other than float16 and bfloat16.
bool widen_half(DType t, const std::byte* in, float* out, int64_t n);

// The i-th `t` at `out` = in[i] rounded to t, for i < n. False, with nothing written, for a dtype
// other than float16 and bfloat16.
bool narrow_half(DType t, const float* in, std::byte* out, int64_t n);

// The same without the processor's float16 conversions (F16C), as CPUs without them run it; the
// tests compare both with dtype.h.
bool widen_half_portable(DType t, const std::byte* in, float* out, int64_t n);
bool narrow_half_portable(DType t, const float* in, std::byte* out, int64_t n);

}  // namespace spmd::kernels
