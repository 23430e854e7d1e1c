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

// The lanes' sum of each element type this file serves: float32 and float64 as they are,
// uint16_t as bfloat16 bits widened to float32.
[[gnu::always_inline]] inline float lanes(const float* x, int64_t n) { return lane_sum(x, n); }
[[gnu::always_inline]] inline double lanes(const double* x, int64_t n) { return lane_sum(x, n); }
[[gnu::always_inline]] inline float lanes(const uint16_t* x, int64_t n) {
  return lane_sum_of<float>(x, n, widen_bfloat16);
}

#if defined(__x86_64__) && defined(__GNUC__)
template <class S>
__attribute__((target("avx2"))) auto sum_avx2(const S* x, int64_t n) {
  return lanes(x, n);
}
template <class S>
__attribute__((target("avx512f"))) auto sum_avx512(const S* x, int64_t n) {
  return lanes(x, n);
}
SumBuild widest() {
  if (__builtin_cpu_supports("avx512f")) return SumBuild::kAvx512;
  return __builtin_cpu_supports("avx2") ? SumBuild::kAvx2 : SumBuild::kBaseline;
}
#else
template <class S>
auto sum_avx2(const S* x, int64_t n) {
  return lanes(x, n);
}
template <class S>
auto sum_avx512(const S* x, int64_t n) {
  return lanes(x, n);
}
SumBuild widest() { return SumBuild::kBaseline; }
#endif

// The sum of x in `build` (at most the widest the CPU runs).
template <class S>
auto sum_in(const S* x, int64_t n, SumBuild build) {
  switch (build) {
    case SumBuild::kAvx512:
      return sum_avx512(x, n);
    case SumBuild::kAvx2:
      return sum_avx2(x, n);
    case SumBuild::kBaseline:
      break;
  }
  return lanes(x, n);
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
  return sum_in(x, n, widest_sum_build());
}

float contiguous_sum_bfloat16(const uint16_t* x, int64_t n, SumBuild build) {
  return sum_in(x, n, std::min(build, widest_sum_build()));
}

}  // namespace spmd::kernels
