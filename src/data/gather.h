// Copying scattered records into consecutive rows with several reads in flight: the loop behind
// Source::read_many, shared by the default (virtual calls per record) and memory-mapped sources
// (inlined address arithmetic).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

namespace spmd::data {

// Starts loading [p, p + bytes) into the cache. The empty asm statement keeps the loop: GCC
// otherwise deletes a loop whose only statements are prefetches, as a loop without effects.
inline void prefetch_bytes(const std::byte* p, size_t bytes) {
  for (size_t off = 0; off < bytes; off += 64) {
    __builtin_prefetch(p + off);
    asm volatile("" : : "r"(p + off));
  }
}

// Row r of `out` (rows of `bytes`) gets record indices[r] through read(index, row), or zeros for
// an index of -1; hint(index) is called kAhead rows before each read, so that a scattered record
// is on its way from memory while the ones before it are copied.
template <class Read, class Hint>
void gather_rows(std::span<const int64_t> indices, std::span<std::byte> out, size_t bytes,
                 const Read& read, const Hint& hint) {
  constexpr size_t kAhead = 16;
  const size_t n = indices.size();
  for (size_t r = 0; r < std::min(kAhead, n); ++r) {
    if (indices[r] >= 0) hint(indices[r]);
  }
  for (size_t r = 0; r < n; ++r) {
    if (r + kAhead < n && indices[r + kAhead] >= 0) hint(indices[r + kAhead]);
    const std::span<std::byte> row = out.subspan(r * bytes, bytes);
    if (indices[r] >= 0) {
      read(indices[r], row);
    } else {
      std::memset(row.data(), 0, bytes);
    }
  }
}

}  // namespace spmd::data
