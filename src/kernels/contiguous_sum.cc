// contiguous_sum for float32, float64 and bfloat16 widened as read: lane_sum built three times,
// for AVX-512, for AVX2 and for the baseline.
#include "kernels/contiguous_sum.h"

#include <algorithm>
#include <bit>

namespace spmd::kernels {
namespace {

// A bfloat16's bits as the float32 it is (the upper half of one).
[[gnu::always_inline]] inline float widen_bfloat16(uint16_t h) {
  return std::bit_cast<float>(static_cast<uint32_t>(h) << 16);
}

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx2"))) float sum_avx2(const float* x, int64_t n) { return lane_sum(x, n); }
__attribute__((target("avx2"))) double sum_avx2(const double* x, int64_t n) {
  return lane_sum(x, n);
}
__attribute__((target("avx512f"))) float sum_avx512(const float* x, int64_t n) {
  return lane_sum(x, n);
}
__attribute__((target("avx512f"))) double sum_avx512(const double* x, int64_t n) {
  return lane_sum(x, n);
}
__attribute__((target("avx2"))) float bf16_sum_avx2(const uint16_t* x, int64_t n) {
  return lane_sum_of<float>(x, n, widen_bfloat16);
}
__attribute__((target("avx512f"))) float bf16_sum_avx512(const uint16_t* x, int64_t n) {
  return lane_sum_of<float>(x, n, widen_bfloat16);
}
SumBuild widest() {
  if (__builtin_cpu_supports("avx512f")) return SumBuild::kAvx512;
  return __builtin_cpu_supports("avx2") ? SumBuild::kAvx2 : SumBuild::kBaseline;
}
#else
template <class T>
T sum_avx2(const T* x, int64_t n) {
  return lane_sum(x, n);
}
template <class T>
T sum_avx512(const T* x, int64_t n) {
  return lane_sum(x, n);
}
float bf16_sum_avx2(const uint16_t* x, int64_t n) {
  return lane_sum_of<float>(x, n, widen_bfloat16);
}
float bf16_sum_avx512(const uint16_t* x, int64_t n) {
  return lane_sum_of<float>(x, n, widen_bfloat16);
}
SumBuild widest() { return SumBuild::kBaseline; }
#endif

float bf16_sum_in(const uint16_t* x, int64_t n, SumBuild build) {
  switch (build) {
    case SumBuild::kAvx512:
      return bf16_sum_avx512(x, n);
    case SumBuild::kAvx2:
      return bf16_sum_avx2(x, n);
    case SumBuild::kBaseline:
      break;
  }
  return lane_sum_of<float>(x, n, widen_bfloat16);
}

template <class T>
T sum_in(const T* x, int64_t n, SumBuild build) {
  switch (build) {
    case SumBuild::kAvx512:
      return sum_avx512(x, n);
    case SumBuild::kAvx2:
      return sum_avx2(x, n);
    case SumBuild::kBaseline:
      break;
  }
  return lane_sum(x, n);
}

}  // namespace

SumBuild widest_sum_build() {
  static const SumBuild build = widest();
  return build;
}

float contiguous_sum(const float* x, int64_t n) { return sum_in(x, n, widest_sum_build()); }

double contiguous_sum(const double* x, int64_t n) { return sum_in(x, n, widest_sum_build()); }

float contiguous_sum(const float* x, int64_t n, SumBuild build) {
  return sum_in(x, n, std::min(build, widest_sum_build()));
}

double contiguous_sum(const double* x, int64_t n, SumBuild build) {
  return sum_in(x, n, std::min(build, widest_sum_build()));
}

float contiguous_sum_bfloat16(const uint16_t* x, int64_t n) {
  return bf16_sum_in(x, n, widest_sum_build());
}

float contiguous_sum_bfloat16(const uint16_t* x, int64_t n, SumBuild build) {
  return bf16_sum_in(x, n, std::min(build, widest_sum_build()));
}

}  // namespace spmd::kernels
