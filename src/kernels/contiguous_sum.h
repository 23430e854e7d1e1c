// The sum of n contiguous floating-point elements in a fixed order that depends on n alone:
// kSumLanes<T> partial sums (element i into lane i mod kSumLanes, while whole groups of lanes
// remain; the tail's elements into lanes 0, 1, … in turn), the lanes then combined as a fixed
// pairwise tree (lane l += lane l + w for w = kSumLanes / 2, …, 1). Never on where x lies in
// memory, so a row sums to the same bits wherever it is: in an array, or in run_chain_reduce's
// buffer (Eigen's vector sum peels elements up to an aligned address first, so its bits moved
// with the address).
//
// 256 bytes of lanes: eight AVX registers of partial sums, enough independent adds in flight to
// cover the add's latency on both of a core's add pipes (16 lanes, two registers, left the sum
// waiting on latency at a third of that speed). Where the CPU has AVX-512 the loop is built for
// it (four registers of sixteen), else for AVX2 where it has that, else the same lanes in SSE:
// the same bits from every build (ContiguousSum tests), since each lane's adds stay in order.
// Internal to kernels/.
#pragma once

#include <cstdint>
#include <type_traits>

namespace spmd::kernels {

template <class T>
inline constexpr int kSumLanes = 256 / static_cast<int>(sizeof(T));

// The order above, for any arithmetic T (exact for integers, where order does not matter). The
// tail is added as one more group padded with zeros, which leaves the lanes it does not reach as
// they were (a lane starts at +0 and so is never -0, and x + 0 is x for every other x): the
// lanes stay in registers, never indexed by a variable.
// lane_sum_of reads element i as widen(x[i]): the same lanes and order as lane_sum over the
// widened values, so the same bits, without storing them first.
template <class T, class Source, class Widen>
[[gnu::always_inline]] inline T lane_sum_of(const Source* x, int64_t n, Widen widen) {
  constexpr int kLanes = kSumLanes<T>;
  T lanes[kLanes] = {};
  const auto add = [&lanes, widen](const Source* group) {
    for (int l = 0; l < kLanes; ++l) lanes[l] += widen(group[l]);
  };
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) add(x + i);
  if (i < n) {
    T tail[kLanes] = {};
    for (int l = 0; i + l < n; ++l) tail[l] = widen(x[i + l]);
    for (int l = 0; l < kLanes; ++l) lanes[l] += tail[l];
  }
  for (int width = kLanes / 2; width >= 1; width /= 2) {
    for (int l = 0; l < width; ++l) lanes[l] += lanes[l + width];
  }
  return lanes[0];
}

template <class T>
[[gnu::always_inline]] inline T lane_sum(const T* x, int64_t n) {
  return lane_sum_of<T>(x, n, [](T v) { return v; });
}

// The instruction sets lane_sum is built for, narrowest first.
enum class SumBuild { kBaseline, kAvx2, kAvx512 };

// The widest build this CPU runs.
SumBuild widest_sum_build();

// lane_sum, built for the widest instruction set the CPU has.
float contiguous_sum(const float* x, int64_t n);
double contiguous_sum(const double* x, int64_t n);

// lane_sum of n bfloat16 values (their bits) widened to float32 as they are read, in the widest
// build: the bits contiguous_sum gives over the widened row (a bfloat16 is a float32's upper
// half, so widening is exact), with no widened copy (jnp.sum of a bfloat16 array).
float contiguous_sum_bfloat16(const uint16_t* x, int64_t n);
float contiguous_sum_bfloat16(const uint16_t* x, int64_t n, SumBuild build);

// lane_sum in a given build, for the tests that each gives the same bits; `build` at most
// widest_sum_build().
float contiguous_sum(const float* x, int64_t n, SumBuild build);
double contiguous_sum(const double* x, int64_t n, SumBuild build);

template <class T>
T contiguous_sum(const T* x, int64_t n) {
  return lane_sum(x, n);
}

}  // namespace spmd::kernels
