// Moving the pieces of a block between "by device" and "by position" order, for the collectives
// that split or concatenate along a dimension other than the first: a block seen as
// (outer, n, inner) and the same pieces as (n, outer, inner). Pure; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>

namespace spmd {

// dst (outer, n, inner) = src (n, outer, inner); inner in bytes.
void interleave(const std::byte* src, std::byte* dst, int64_t n, int64_t outer, size_t inner);

// dst (n, outer, inner) = src (outer, n, inner); inner in bytes.
void deinterleave(const std::byte* src, std::byte* dst, int64_t n, int64_t outer, size_t inner);

}  // namespace spmd
