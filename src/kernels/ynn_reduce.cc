#include "kernels/ynn_reduce.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "kernels/dispatch.h"
#include "kernels/ynn_math.h"
#include "kernels/ynn_simd.h"
#include "spmd/error.h"

namespace spmd::kernels {
namespace {

constexpr int64_t kLanes = 16;
constexpr int64_t kGroup = 4 * kLanes;  // elements one partial sum reads
using Lanes = std::array<float, kLanes>;

// acc += the group at x (n <= kGroup elements, the rest read as zeros), lane-wise in four steps.
void add_group(const float* x, int64_t n, Lanes& acc) {
  Lanes local{};
  for (int64_t step = 0; step < 4; ++step) {
    for (int l = 0; l < kLanes; ++l) {
      const int64_t i = step * kLanes + l;
      local[l] = local[l] + (i < n ? x[i] : 0.0f);
    }
  }
  for (int l = 0; l < kLanes; ++l) acc[l] = acc[l] + local[l];
}

// The accumulator tree's state, lane-wise.
struct Tree {
  Lanes first{}, second{}, third{}, error{};

  // Kahan's step: third += second, compensated; an error that is not finite is dropped.
  void compensate() {
    for (int l = 0; l < kLanes; ++l) {
      const float y = second[l] - error[l];
      const float t = third[l] + y;
      const float e = (t - third[l]) - y;
      error[l] = std::isfinite(e) ? e : 0.0f;
      third[l] = t;
      second[l] = 0.0f;
    }
  }

  // YNNPACK's accumulate(clock): first into second on every sixteenth tick, second into third
  // on every 256th (clock 0, the flush, is both).
  void tick(uint64_t clock) {
    if ((clock & 15u) != 0) return;
    for (int l = 0; l < kLanes; ++l) {
      second[l] = second[l] + first[l];
      first[l] = 0.0f;
    }
    if ((clock & 255u) == 0) compensate();
  }
};

float halve(Lanes lanes) {
  for (int width = kLanes / 2; width >= 1; width /= 2) {
    for (int l = 0; l < width; ++l) lanes[l] = lanes[l] + lanes[l + width];
  }
  return lanes[0];
}

// Orders a float's bits as its value (sign and magnitude to two's complement): YNNPACK's max.
int32_t max_key(float v) {
  const auto bits = std::bit_cast<int32_t>(v);
  return bits >= 0 ? bits : bits ^ 0x7fffffff;
}

float row_max(const float* x, int64_t k) {
  float best = -std::numeric_limits<float>::infinity();
  for (int64_t j = 0; j < k; ++j) {
    if (max_key(x[j]) > max_key(best)) best = x[j];
  }
  return best;
}

}  // namespace

float ynn_row_sum(const float* x, int64_t k) {
  const YnnLoops* loops = ynn_loops();
  return loops != nullptr ? loops->row_sum(x, k) : ynn_row_sum_portable(x, k);
}

bool ynn_half_row_sum(DType dtype, const std::byte* x, int64_t k, float* sum) {
  const YnnLoops* loops = ynn_loops();
  if (loops == nullptr || !is_half_dtype(dtype)) return false;
  *sum = loops->half_row_sum(dtype == DType::kBFloat16, reinterpret_cast<const uint16_t*>(x), k);
  return true;
}

float ynn_row_sum_portable(const float* x, int64_t k) {
  Tree tree;
  uint64_t clock = 0;
  while (k >= 4 * kGroup) {
    for (int g = 0; g < 4; ++g, x += kGroup) add_group(x, kGroup, tree.first);
    k -= 4 * kGroup;
    clock += 4 * kLanes;
    tree.tick(clock);
  }
  while (k >= kGroup) {
    add_group(x, kGroup, tree.first);
    x += kGroup;
    k -= kGroup;
    clock += kLanes;
    tree.tick(clock);
  }
  if (k > 0) add_group(x, k, tree.first);
  tree.tick(0);
  Lanes total{};
  for (int l = 0; l < kLanes; ++l) total[l] = total[l] + tree.third[l];
  return 0.0f + halve(total);
}

namespace {

// Rows of K elements (1 ≤ K ≤ 16: one element a lane), each element plus +0 in its lane, the lanes
// halved pairwise as halve() does. Lanes past K hold +0, whose additions change no value that is
// not −0, and no lane is −0 after its element's + 0: only the lanes of the next power of two are
// kept.
template <int K>
void short_row_sums(const float* x, int64_t rows, float* out) {
  constexpr int kWidth = std::bit_ceil(unsigned{K});
  for (int64_t r = 0; r < rows; ++r) {
    std::array<float, kWidth> lanes{};
    for (int l = 0; l < K; ++l) lanes[l] = x[r * K + l] + 0.0f;
    for (int width = kWidth / 2; width >= 1; width /= 2) {
      for (int l = 0; l < width; ++l) lanes[l] = lanes[l] + lanes[l + width];
    }
    out[r] = 0.0f + lanes[0];
  }
}

// Rows of K elements (5 to 7, 9 to 15) copied a block at a time into rows of the next power of
// two, the lanes past K +0, then summed by short_row_sums of that width: the bits of
// short_row_sums<K>, whose lanes past K hold +0 too, through a loop GCC vectorises (rows of 5
// summed in place ran a scalar loop, 1.8 ns an element).
template <int K>
void padded_row_sums(const float* x, int64_t rows, float* out) {
  constexpr int kWidth = std::bit_ceil(unsigned{K});
  constexpr int64_t kBlock = 128;
  std::array<float, kBlock * kWidth> padded{};  // lanes past K stay +0
  for (int64_t first = 0; first < rows; first += kBlock) {
    const int64_t count = std::min(kBlock, rows - first);
    const float* from = x + first * K;
    for (int64_t r = 0; r < count; ++r) {
      for (int l = 0; l < K; ++l) padded[static_cast<size_t>(r * kWidth + l)] = from[r * K + l];
    }
    short_row_sums<kWidth>(padded.data(), count, out + first);
  }
}

}  // namespace

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"), flatten))
#endif
bool ynn_short_row_sums(const float* x, int64_t rows, int64_t k, float* out) {
  return visit_short_row(k, [&](auto length) { short_row_sums<length()>(x, rows, out); }) ||
         visit_length<5, 6, 7, 9, 10, 11, 12, 13, 14, 15>(
             k, [&](auto length) { padded_row_sums<length()>(x, rows, out); });
}

bool ynn_has_own(Unary op) {
  switch (op) {
    case Unary::kExp:
    case Unary::kLog:
    case Unary::kExpm1:
    case Unary::kLog1p:
    case Unary::kTanh:
    case Unary::kLogistic:
      return true;
    default:
      return false;
  }
}

namespace {

// y[i] = f(x[i]) for i < n, x one element (every y the same) or n.
template <class F>
void each(F f, const float* x, int64_t elements, float* y, int64_t n) {
  if (elements == 1) return std::fill(y, y + n, f(x[0]));
  for (int64_t i = 0; i < n; ++i) y[i] = f(x[i]);
}

}  // namespace

void ynn_unary(Unary op, DType /*dtype*/, Input a, std::byte* out, int64_t n) {
  const auto* x = reinterpret_cast<const float*>(a.data);
  auto* y = reinterpret_cast<float*>(out);
  const YnnLoops* loops = ynn_loops();
  if (a.elements != 1 && loops != nullptr && loops->unary(op, x, y, n)) return;
  switch (op) {
    case Unary::kExp:
      return each([](float v) { return ynn_exp(v); }, x, a.elements, y, n);
    case Unary::kLog:
      return each([](float v) { return ynn_log(v); }, x, a.elements, y, n);
    case Unary::kExpm1:
      return each([](float v) { return ynn_expm1(v); }, x, a.elements, y, n);
    case Unary::kLog1p:
      return each([](float v) { return ynn_log1p(v); }, x, a.elements, y, n);
    case Unary::kTanh:
      return each([](float v) { return ynn_tanh(v); }, x, a.elements, y, n);
    case Unary::kLogistic:
      return each([](float v) { return ynn_logistic(v); }, x, a.elements, y, n);
    default:
      throw InvalidArgument(
          fmt::format("ynn_unary: YNNPACK has no formula of its own for {}", name(op)));
  }
}

void ynn_softmax_rows(const float* x, int64_t rows, int64_t k, float* out) {
  for (int64_t i = 0; i < rows; ++i, x += k, out += k) {
    const float top = row_max(x, k);
    for (int64_t j = 0; j < k; ++j) out[j] = x[j] - top;
    ynn_unary(Unary::kExp, DType::kFloat32, {reinterpret_cast<const std::byte*>(out), k},
              reinterpret_cast<std::byte*>(out), k);
    const float scale = 1.0f / ynn_row_sum(out, k);
    for (int64_t j = 0; j < k; ++j) out[j] = out[j] * scale;
  }
}

void ynn_power_sum_rows(const float* g, int64_t rows, int64_t k, float p, float* out) {
  std::vector<float> powers(static_cast<size_t>(k));
  for (int64_t i = 0; i < rows; ++i, g += k) {
    for (int64_t j = 0; j < k; ++j) powers[static_cast<size_t>(j)] = std::pow(std::fabs(g[j]), p);
    out[i] = ynn_row_sum(powers.data(), k);
  }
}

}  // namespace spmd::kernels
