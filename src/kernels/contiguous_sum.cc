// contiguous_sum for float32 and float64: lane_sum built twice, for AVX2 and for the baseline.
#include "kernels/contiguous_sum.h"

namespace spmd::kernels {
namespace {

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx2"))) float sum_avx2(const float* x, int64_t n) { return lane_sum(x, n); }
__attribute__((target("avx2"))) double sum_avx2(const double* x, int64_t n) {
  return lane_sum(x, n);
}
bool has_avx2() {
  static const bool supported = __builtin_cpu_supports("avx2");
  return supported;
}
#else
template <class T>
T sum_avx2(const T* x, int64_t n) {
  return lane_sum(x, n);
}
bool has_avx2() { return false; }
#endif

}  // namespace

float contiguous_sum(const float* x, int64_t n) {
  return has_avx2() ? sum_avx2(x, n) : lane_sum(x, n);
}

double contiguous_sum(const double* x, int64_t n) {
  return has_avx2() ? sum_avx2(x, n) : lane_sum(x, n);
}

}  // namespace spmd::kernels
