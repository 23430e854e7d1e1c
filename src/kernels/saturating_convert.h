// Floating-point values converted to an integer type as XLA converts them (jnp's astype, a
// chain's convert): NaN is 0, values beyond the type's range (infinities included) are its
// extremes, the rest truncate toward zero. The same values as a scalar conversion with those
// three cases tested in turn (elementwise.cc's saturating_cast), in a branch-free loop that runs
// in vector lanes: a float32 4 MiB astype(int32) under jit took 0.49 ms one element at a time
// against JAX's 0.24.
//
// Pure; thread-safe; runs on the calling thread. Internal to kernels/.
#pragma once

#include <cstddef>
#include <cstdint>

#include "spmd/dtype.h"

namespace spmd::kernels {

// out[i] = `from`'s in[i] as `to` for i < n, where `from` is float32 or float64 and `to` an
// integer type (not bool); false, nothing written, for another pair.
bool saturating_convert(DType from, DType to, const std::byte* in, std::byte* out, int64_t n);

}  // namespace spmd::kernels
