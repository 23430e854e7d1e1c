#include "comm/streaming_store.h"

#include <emmintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "comm/reduce_kernels.h"

namespace spmd {
namespace {

constexpr size_t kLine = 64;
// The L1-resident block reduce_to_streaming() reduces into before streaming it out.
constexpr size_t kBlock = size_t{4} << 10;

// stream_copy() without the closing fence.
void stream_unfenced(std::byte* dst, const std::byte* src, size_t n) {
  const size_t head = std::min(n, (kLine - reinterpret_cast<uintptr_t>(dst) % kLine) % kLine);
  std::memcpy(dst, src, head);
  size_t i = head;
  for (; i + kLine <= n; i += kLine) {
    const auto* s = reinterpret_cast<const __m128i*>(src + i);
    auto* d = reinterpret_cast<__m128i*>(dst + i);
    const __m128i x0 = _mm_loadu_si128(s);
    const __m128i x1 = _mm_loadu_si128(s + 1);
    const __m128i x2 = _mm_loadu_si128(s + 2);
    const __m128i x3 = _mm_loadu_si128(s + 3);
    _mm_stream_si128(d, x0);
    _mm_stream_si128(d + 1, x1);
    _mm_stream_si128(d + 2, x2);
    _mm_stream_si128(d + 3, x3);
  }
  std::memcpy(dst + i, src + i, n - i);
}

}  // namespace

void stream_copy(std::byte* dst, const std::byte* src, size_t n) {
  stream_unfenced(dst, src, n);
  _mm_sfence();
}

void reduce_to_streaming(DType dtype, ReduceOp op, std::byte* out, const std::byte* a,
                         const std::byte* b, size_t count) {
  alignas(kLine) std::byte block[kBlock];
  const size_t elem = dtype_size(dtype);
  const size_t per_block = kBlock / elem;
  for (size_t done = 0; done < count; done += per_block) {
    const size_t k = std::min(per_block, count - done);
    reduce_to(dtype, op, block, a + done * elem, b + done * elem, k);
    stream_unfenced(out + done * elem, block, k * elem);
  }
  _mm_sfence();
}

}  // namespace spmd
