#include "kernels/xla_sum.h"

#include <algorithm>
#include <vector>

#include "kernels/ynn_reduce.h"

namespace spmd::kernels {
namespace {

constexpr int64_t kSequentialRow = 31;
constexpr int64_t kWindow = 32;

// x[0..k) added in order from +0 (a single element is itself: XLA drops a reduction of one).
float in_order(const float* x, int64_t k) {
  if (k == 1) return x[0];
  float sum = 0.0F;
  for (int64_t j = 0; j < k; ++j) sum += x[j];
  return sum;
}

// The sums of the windows of 32 that the padded row falls into, each added in order from +0.
std::vector<float> window_sums(const float* x, int64_t k) {
  const int64_t windows = (k + kWindow - 1) / kWindow;
  const int64_t low = (windows * kWindow - k) / 2;  // zeros before the row
  std::vector<float> sums(static_cast<size_t>(windows));
  for (int64_t w = 0; w < windows; ++w) {
    float sum = 0.0F;
    for (int64_t p = w * kWindow; p < (w + 1) * kWindow; ++p) {
      const int64_t j = p - low;
      sum += j >= 0 && j < k ? x[j] : 0.0F;
    }
    sums[static_cast<size_t>(w)] = sum;
  }
  return sums;
}

float tree_sum(const float* x, int64_t k) {
  if (k <= kSequentialRow) return in_order(x, k);
  const std::vector<float> sums = window_sums(x, k);
  return tree_sum(sums.data(), static_cast<int64_t>(sums.size()));
}

}  // namespace

float xla_row_sum(const float* x, int64_t k, int64_t input_elements) {
  if (k == 0) return 0.0F;
  return input_elements >= kYnnReduceElements ? ynn_row_sum(x, k) : tree_sum(x, k);
}

}  // namespace spmd::kernels
