#include "comm/streaming_store.h"

#include <emmintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "comm/reduce_kernels.h"

namespace spmd {
namespace {

constexpr size_t kLine = 64;

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
  const std::byte* const ins[] = {a, b};
  std::byte* const outs[] = {out};
  reduce_to_all_streaming(dtype, op, ins, outs, count);
}

void reduce_to_all_streaming(DType dtype, ReduceOp op, std::span<const std::byte* const> ins,
                             std::span<std::byte* const> outs, size_t count) {
  alignas(kLine) std::byte tile[kStreamTile];
  const size_t elem = dtype_size(dtype);
  const size_t per_tile = kStreamTile / elem;
  // A short first tile up to the first output's next line boundary; whole lines after it.
  const size_t misaligned = reinterpret_cast<uintptr_t>(outs[0]) % kLine;
  size_t k = misaligned != 0 && misaligned % elem == 0 ? (kLine - misaligned) / elem : per_tile;
  for (size_t done = 0; done < count; done += k, k = per_tile) {
    k = std::min(k, count - done);
    const size_t at = done * elem;
    reduce_to(dtype, op, tile, ins[0] + at, ins[1] + at, k);
    for (size_t q = 2; q < ins.size(); ++q) reduce_into(dtype, op, tile, ins[q] + at, k);
    for (std::byte* out : outs) stream_unfenced(out + at, tile, k * elem);
  }
  _mm_sfence();
}

}  // namespace spmd
