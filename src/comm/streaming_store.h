// Copies whose destination goes to memory, not into this core's cache (non-temporal stores).
//
// For payloads written once and read next by another core or much later: the receive side of
// a collective over comm memory. An ordinary store first reads the line it writes (read for
// ownership) and leaves it modified in this core's cache, from where the peer that reads it next
// must fetch it core to core; a streaming store skips both. Element-wise and exact: the bytes are
// those of memcpy.
#pragma once

#include <cstddef>

#include "spmd/dtype.h"
#include "spmd/reduce_op.h"

namespace spmd {

// memcpy(dst, src, n) through streaming stores (ordinary ones for an unaligned head and tail).
void stream_copy(std::byte* dst, const std::byte* src, size_t n);

// reduce_to(dtype, op, out, a, b, count) (reduce_kernels.h) with `out` written through streaming
// stores: reduced a few KiB at a time into a block that stays in L1, then streamed out.
void reduce_to_streaming(DType dtype, ReduceOp op, std::byte* out, const std::byte* a,
                         const std::byte* b, size_t count);

}  // namespace spmd
