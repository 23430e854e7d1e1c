// (n, outer, inner) <-> (outer, n, inner) byte copies.
#include "compute/block_layout.h"

#include <cstring>

namespace spmd {

void interleave(const std::byte* src, std::byte* dst, int64_t n, int64_t outer, size_t inner) {
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < n; ++i) {
      std::memcpy(dst + (o * n + i) * inner, src + (i * outer + o) * inner, inner);
    }
  }
}

void deinterleave(const std::byte* src, std::byte* dst, int64_t n, int64_t outer, size_t inner) {
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t o = 0; o < outer; ++o) {
      std::memcpy(dst + (i * outer + o) * inner, src + (o * n + i) * inner, inner);
    }
  }
}

}  // namespace spmd
