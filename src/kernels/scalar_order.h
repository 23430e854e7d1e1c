// ordering.h's cumulative sums and products and its binary search, one line or one query at a
// time, written once for the host and the GPU: the CUDA backend's kernels (cuda/ordering.cu) run
// these, and tests/kernels/scalar_order_test.cc runs them on the host against ordering.h's CPU
// kernels, bit for bit. Pure; thread-safe.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "kernels/scalar_ops.h"

namespace spmd::kernels::scalar {

// a + b or a × b in T, integers wrapping (as XLA's), with its identity.
template <class T, bool kMultiply>
struct ScanOp {
  SPMD_HOST_DEVICE static T apply(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      using U = std::make_unsigned_t<T>;
      return static_cast<T>(kMultiply ? static_cast<U>(static_cast<U>(a) * static_cast<U>(b))
                                      : static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
    } else {
      return kMultiply ? a * b : a + b;
    }
  }
  SPMD_HOST_DEVICE static constexpr T identity() { return kMultiply ? T{1} : T{0}; }
};

// XLA's inclusive scan of a line of n values (ordering.h's cumsum order: rows of 16, each row's
// running result plus the exclusive running result of the rows' totals, itself scanned the same
// way), computed online: feed() takes the values in order and returns each one's result, with
// a few values of state per level of rows instead of the line's length in scratch.
template <class T, bool kMultiply>
class XlaScan {
 public:
  using Op = ScanOp<T, kMultiply>;
  static constexpr int64_t kBase = 16;   // XLA's ReduceWindowRewriter base length on CPU
  static constexpr int kMaxLevels = 17;  // 16^16 > 2^63

  SPMD_HOST_DEVICE explicit XlaScan(int64_t n) {
    // Level l scans a line of length_[l]: the values for l = 0, the row totals of level l - 1
    // above. The last level's line has at most 16 values and is a plain running result.
    int64_t length = n;
    levels_ = 0;
    while (length > kBase && levels_ + 1 < kMaxLevels) {
      length = (length + kBase - 1) / kBase;
      ++levels_;
    }
    for (int l = 0; l <= levels_; ++l) {
      row_[l] = Op::identity();
      before_[l] = Op::identity();
      count_[l] = 0;
    }
  }

  SPMD_HOST_DEVICE T feed(T x) {
    if (levels_ == 0) return row_[0] = Op::apply(row_[0], x);
    row_[0] = Op::apply(row_[0], x);
    const T out = Op::apply(row_[0], before_[0]);
    // A full row passes its total up: the level above's result for it is the next row's
    // "before". Rows complete upward as a counter carries.
    for (int l = 0; l < levels_ && ++count_[l] == kBase; ++l) {
      const T total = row_[l];
      row_[l] = Op::identity();
      count_[l] = 0;
      if (l + 1 == levels_) {
        before_[l] = row_[l + 1] = Op::apply(row_[l + 1], total);
      } else {
        row_[l + 1] = Op::apply(row_[l + 1], total);
        before_[l] = Op::apply(row_[l + 1], before_[l + 1]);
      }
    }
    return out;
  }

 private:
  int levels_ = 0;
  T row_[kMaxLevels];     // the running result within the current row (the last level's line)
  T before_[kMaxLevels];  // the exclusive result of the rows before the current one
  int64_t count_[kMaxLevels];
};

// JAX's sort key of a value: for floats, -0 as 0 and every NaN as the positive quiet NaN, then
// ordered as the total order orders bit patterns.
template <class T>
SPMD_HOST_DEVICE inline auto sort_key(T v) {
  if constexpr (std::is_floating_point_v<T>) {
    using Bits = std::conditional_t<sizeof(T) == 4, int32_t, int64_t>;
    if (v == T{0}) v = T{0};
    if (v != v) v = std::numeric_limits<T>::quiet_NaN();
    const auto bits = std::bit_cast<Bits>(v);
    constexpr Bits kMagnitude = std::numeric_limits<Bits>::max();
    return bits < 0 ? static_cast<Bits>(bits ^ kMagnitude) : bits;
  } else {
    return v;
  }
}

// jnp.searchsorted(sorted[0..n), query), side 'left', method 'scan' (ordering.h): `levels`
// halvings of [0, n], levels = ceil(log2(n + 1)).
template <class T>
SPMD_HOST_DEVICE inline int32_t search_sorted_one(const T* sorted, int64_t n, int levels, T query) {
  const auto key = sort_key(query);
  uint64_t low = 0, high = static_cast<uint64_t>(n);
  for (int l = 0; l < levels; ++l) {
    const uint64_t mid = low + (high - low) / 2;
    if (key <= sort_key(sorted[mid])) {
      high = mid;
    } else {
      low = mid;
    }
  }
  return static_cast<int32_t>(high);
}

}  // namespace spmd::kernels::scalar
