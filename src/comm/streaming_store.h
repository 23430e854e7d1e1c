// Copies whose destination goes to memory, not into this core's cache (non-temporal stores).
//
// For payloads written once and read next by another core or much later: the receive side of
// a collective over comm memory. An ordinary store first reads the line it writes (read for
// ownership) and leaves it modified in this core's cache, from where the peer that reads it next
// must fetch it core to core; a streaming store skips both. Element-wise and exact: the bytes are
// those of memcpy.
#pragma once

#include <cstddef>
#include <span>

#include "spmd/dtype.h"
#include "spmd/reduce_op.h"

namespace spmd {

// memcpy(dst, src, n) through streaming stores (ordinary ones for an unaligned head and tail).
void stream_copy(std::byte* dst, const std::byte* src, size_t n);

// reduce_to(dtype, op, out, a, b, count) (reduce_kernels.h) with `out` written through streaming
// stores: reduce_to_all_streaming() with two inputs and one output.
void reduce_to_streaming(DType dtype, ReduceOp op, std::byte* out, const std::byte* a,
                         const std::byte* b, size_t count);

// Every output gets the same `count` elements: op over the inputs, combined in their order
// (op(op(ins[0], ins[1]), ins[2]) ...), written through streaming stores. At least two inputs.
// Reduced a tile of kStreamTile bytes at a time into a block that stays in L1, then streamed out
// to every output, so the reads of one tile and the writes of the last stay interleaved; tiles
// are laid so that the first output takes whole cache lines. Plain code, as a sink must be
// (exchange.h): outputs may be mappings of peers' buffers.
void reduce_to_all_streaming(DType dtype, ReduceOp op, std::span<const std::byte* const> ins,
                             std::span<std::byte* const> outs, size_t count);

// Measured on 2 processes writing two outputs each from two inputs (the mapped all-reduce): tiles
// of 256 B to 1 KiB run at the same speed, 4 KiB ones 20% slower — the reads and the streaming
// stores no longer overlap.
inline constexpr size_t kStreamTile = size_t{1} << 10;

}  // namespace spmd
