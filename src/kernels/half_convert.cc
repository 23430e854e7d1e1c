#include "kernels/half_convert.h"

#include <algorithm>
#include <bit>
#include <cstring>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace spmd::kernels {
namespace {

// Float16 bits to float32 bits (dtype.h's to_float(float16)): inf and NaN keep their mantissa, a
// subnormal is its mantissa times 2^-24 (exact, and a normal float32), the rest rebased.
inline uint32_t float16_to_float32(uint32_t h) {
  const uint32_t sign = (h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  const uint32_t mantissa = h & 0x3ffu;
  const uint32_t special = sign | 0x7f800000u | (mantissa << 13);
  const uint32_t normal = sign | ((exponent + 112) << 23) | (mantissa << 13);
  const uint32_t small =
      sign | std::bit_cast<uint32_t>(static_cast<float>(mantissa) * (1.0f / 16777216.0f));
  return exponent == 0x1fu ? special : exponent == 0 ? small : normal;
}

// All ones where `condition` holds, else zero: the classes' results are blended by masks, so
// that the loop has no branch to vectorise around.
inline uint32_t mask(bool condition) { return 0u - static_cast<uint32_t>(condition); }

// Float32 bits to float16 bits (dtype.h's to_float16), each class's result made and one kept.
// Rounding to nearest even by addition: adding half the dropped range less one, plus the kept
// part's lowest bit, carries exactly when the dropped part is above half, or half and the kept
// part odd.
inline uint32_t float32_to_float16(uint32_t u) {
  const uint32_t sign = (u >> 16) & 0x8000u;
  const uint32_t magnitude = u & 0x7fffffffu;
  // Normal halves: the exponent rebased from 127 to 15, 13 mantissa bits dropped.
  const uint32_t rebased = magnitude - 0x38000000u;
  const uint32_t normal = (rebased + 0xfffu + ((rebased >> 13) & 1u)) >> 13;
  // Subnormal halves (2^-25 <= |f| < 2^-14): the mantissa with its leading 1, shifted by 14 to
  // 24 places; the shift is held in range for the lanes that are not subnormal.
  const auto exponent = static_cast<int32_t>(magnitude >> 23);
  const auto shift = static_cast<uint32_t>(std::min(std::max(126 - exponent, 1), 31));
  const uint32_t mantissa = (magnitude & 0x7fffffu) | 0x800000u;
  const uint32_t half_ulp = 1u << (shift - 1);
  const uint32_t small = (mantissa + (half_ulp - 1) + ((mantissa >> shift) & 1u)) >> shift;
  const uint32_t nan = mask(magnitude > 0x7f800000u);
  const uint32_t infinite = mask(magnitude >= 0x477ff000u) & ~nan;  // 65520 and up
  const uint32_t finite = mask(magnitude < 0x477ff000u);
  const uint32_t is_normal = mask(magnitude >= 0x38800000u) & finite;  // 2^-14 and up
  const uint32_t is_small = mask(magnitude >= 0x33000000u) & ~mask(magnitude >= 0x38800000u);
  return sign | (nan & 0x7e00u) | (infinite & 0x7c00u) | (is_normal & normal) |
         (is_small & small);  // below 2^-25: zero
}

// Float32 bits to bfloat16 bits (dtype.h's to_bfloat16): a NaN keeps its top bits, quieted.
inline uint32_t float32_to_bfloat16(uint32_t u) {
  const uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
  return (u & 0x7fffffffu) > 0x7f800000u ? (u >> 16) | 0x40u : rounded;
}

// Halves are read and written as uint16_t, floats as uint32_t (memcpy: the buffers are bytes).
template <class Convert>
void widen(const std::byte* in, float* out, int64_t n, Convert convert) {
  for (int64_t i = 0; i < n; ++i) {
    uint16_t h;
    std::memcpy(&h, in + 2 * i, sizeof h);
    const uint32_t f = convert(uint32_t{h});
    std::memcpy(out + i, &f, sizeof f);
  }
}

template <class Convert>
void narrow(const float* in, std::byte* out, int64_t n, Convert convert) {
  for (int64_t i = 0; i < n; ++i) {
    uint32_t f;
    std::memcpy(&f, in + i, sizeof f);
    const auto h = static_cast<uint16_t>(convert(f));
    std::memcpy(out + 2 * i, &h, sizeof h);
  }
}

#if defined(__x86_64__) && defined(__GNUC__)
#define SPMD_HAS_F16C_PATH 1
// Float16 through the processor's own conversions (F16C: eight per instruction), where it has
// them. They round as dtype.h does (to nearest even, the immediate's mode, whatever the thread's)
// and carry subnormals both ways whether or not the thread flushes them (a float32 subnormal is
// below half of float16's least and rounds to zero either way), but a NaN comes out as the
// instruction makes it: quieted, its payload kept. A group of eight holding a NaN is therefore
// converted again element by element, as the scalar functions above do.
__attribute__((target("avx2,f16c"))) void widen_float16_f16c(const std::byte* in, float* out,
                                                             int64_t n) {
  const __m256i magnitude = _mm256_set1_epi32(0x7fff), infinity = _mm256_set1_epi32(0x7c00);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + 2 * i));
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(h));
    const __m256i wide = _mm256_and_si256(_mm256_cvtepu16_epi32(h), magnitude);
    if (_mm256_movemask_epi8(_mm256_cmpgt_epi32(wide, infinity)) != 0)
      widen(in + 2 * i, out + i, 8, float16_to_float32);
  }
  widen(in + 2 * i, out + i, n - i, float16_to_float32);
}

__attribute__((target("avx2,f16c"))) void narrow_float16_f16c(const float* in, std::byte* out,
                                                              int64_t n) {
  const __m256i magnitude = _mm256_set1_epi32(0x7fffffff), infinity = _mm256_set1_epi32(0x7f800000);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 f = _mm256_loadu_ps(in + i);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 2 * i),
                     _mm256_cvtps_ph(f, _MM_FROUND_TO_NEAREST_INT));
    const __m256i bits = _mm256_and_si256(_mm256_castps_si256(f), magnitude);
    if (_mm256_movemask_epi8(_mm256_cmpgt_epi32(bits, infinity)) != 0)
      narrow(in + i, out + 2 * i, 8, float32_to_float16);
  }
  narrow(in + i, out + 2 * i, n - i, float32_to_float16);
}

// F16C is bit 29 of CPUID leaf 1's ECX; AVX2 (which also says the system saves the wide
// registers) as the compiler's runtime check reports it.
bool has_f16c() {
  static const bool has = [] {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    return __builtin_cpu_supports("avx2") && __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 &&
           (ecx & (1u << 29)) != 0;
  }();
  return has;
}
#endif

}  // namespace

// Built for x86-64-v3 (AVX2) and the baseline (SSE2), picked at load time, the loops inlined
// into each (as mask_ops.cc's).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define SPMD_HALF_CONVERT_CLONES \
  __attribute__((target_clones("arch=x86-64-v3", "default"), flatten))
#else
#define SPMD_HALF_CONVERT_CLONES
#endif

SPMD_HALF_CONVERT_CLONES
bool widen_half_portable(DType t, const std::byte* in, float* out, int64_t n) {
  if (t == DType::kFloat16) {
    widen(in, out, n, float16_to_float32);
  } else if (t == DType::kBFloat16) {
    widen(in, out, n, [](uint32_t h) { return h << 16; });
  } else {
    return false;
  }
  return true;
}

SPMD_HALF_CONVERT_CLONES
bool narrow_half_portable(DType t, const float* in, std::byte* out, int64_t n) {
  if (t == DType::kFloat16) {
    narrow(in, out, n, float32_to_float16);
  } else if (t == DType::kBFloat16) {
    narrow(in, out, n, float32_to_bfloat16);
  } else {
    return false;
  }
  return true;
}

bool widen_half(DType t, const std::byte* in, float* out, int64_t n) {
#ifdef SPMD_HAS_F16C_PATH
  if (t == DType::kFloat16 && has_f16c()) {
    widen_float16_f16c(in, out, n);
    return true;
  }
#endif
  return widen_half_portable(t, in, out, n);
}

bool narrow_half(DType t, const float* in, std::byte* out, int64_t n) {
#ifdef SPMD_HAS_F16C_PATH
  if (t == DType::kFloat16 && has_f16c()) {
    narrow_float16_f16c(in, out, n);
    return true;
  }
#endif
  return narrow_half_portable(t, in, out, n);
}

}  // namespace spmd::kernels
#undef SPMD_HALF_CONVERT_CLONES
#undef SPMD_HAS_F16C_PATH
