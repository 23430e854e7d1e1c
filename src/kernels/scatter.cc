#include "kernels/scatter.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <memory>
#include <numeric>
#include <type_traits>
#include <vector>

#include "kernels/elementwise.h"
#include "kernels/row_copy.h"
#include "kernels/thread_team.h"
#include "spmd/error.h"

namespace spmd::kernels {
namespace {

// The element-wise operation `how` combines with in `dtype` (bool's add and mul are or and and).
Binary binary_of(ScatterCombine how, DType dtype) {
  const bool logical = dtype == DType::kBool;
  switch (how) {
    case ScatterCombine::kAdd:
      return logical ? Binary::kOr : Binary::kAdd;
    case ScatterCombine::kMul:
      return logical ? Binary::kAnd : Binary::kMul;
    case ScatterCombine::kMin:
      return logical ? Binary::kAnd : Binary::kMin;
    case ScatterCombine::kMax:
      return logical ? Binary::kOr : Binary::kMax;
    case ScatterCombine::kSet:
      break;
  }
  throw InvalidArgument("scatter: set has no element-wise operation");
}

// The updates in rounds that each touch an index at most once, in order: round r holds every
// index's r-th update (by position). Combining round after round is combining update after
// update, and within a round the elements are independent, so each round is one vectorised
// binary() over gathered rows. A counting sort: `order` lists the kept updates round by round,
// round r at order[start[r]] … order[start[r + 1]] - 1.
struct Rounds {
  std::vector<int64_t> order;
  std::vector<int64_t> start;
};

Rounds rounds_of(const int32_t* indices, int64_t count, int64_t n) {
  std::vector<int32_t> seen(static_cast<size_t>(n), 0);
  std::vector<int32_t> round(static_cast<size_t>(count), -1);
  std::vector<int64_t> sizes;
  for (int64_t i = 0; i < count; ++i) {
    const int32_t at = indices[i];
    if (at < 0 || at >= n) continue;  // dropped
    const int32_t r = seen[static_cast<size_t>(at)]++;
    round[static_cast<size_t>(i)] = r;
    if (static_cast<size_t>(r) == sizes.size()) sizes.push_back(0);
    ++sizes[static_cast<size_t>(r)];
  }
  Rounds out;
  out.start.assign(sizes.size() + 1, 0);
  std::partial_sum(sizes.begin(), sizes.end(), out.start.begin() + 1);
  out.order.resize(static_cast<size_t>(out.start.back()));
  std::vector<int64_t> next(out.start.begin(), out.start.end() - 1);
  for (int64_t i = 0; i < count; ++i) {
    const int32_t r = round[static_cast<size_t>(i)];
    if (r >= 0) out.order[static_cast<size_t>(next[static_cast<size_t>(r)]++)] = i;
  }
  return out;
}

// Update elements per part of the team, at the least (add_in_order, a round of scatter's).
constexpr int64_t kAddGrain = int64_t{1} << 15;

// Adds the updates in order straight into out, for the types whose addition is the machine's
// own (floats of 32 and 64 bits, integers wrapping as unsigned): the same sums as binary()'s,
// without gathering rows. The common case: embedding gradients, segment sums, histograms.
// The type T's sums are computed in: unsigned for an integer (wrapping, never undefined).
template <class T, bool = std::is_integral_v<T>>
struct SumOf {
  using type = T;
};
template <class T>
struct SumOf<T, true> {
  using type = std::make_unsigned_t<T>;
};

//
// The team splits the rows of out: each thread reads every index and adds the updates of its own
// rows, so each element still gets its updates in their order, and the bits are one thread's.
template <class T>
void add_in_order(const std::byte* updates, int64_t outer, int64_t n, int64_t inner,
                  const int32_t* indices, int64_t count, std::byte* out) {
  using Sum = typename SumOf<T>::type;
  const auto* u = reinterpret_cast<const T*>(updates);
  auto* y = reinterpret_cast<T*>(out);
  const int64_t work = std::max<int64_t>(outer * count * inner, 1);
  const int64_t grain = std::max<int64_t>(1, n * kAddGrain / work);
  parallel_for(n, grain, 1, [&](int64_t first, int64_t last) {
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < count; ++i) {
        if (indices[i] < first || indices[i] >= last) continue;
        T* row = y + (o * n + indices[i]) * inner;
        const T* from = u + (o * count + i) * inner;
        for (int64_t j = 0; j < inner; ++j) {
          row[j] = static_cast<T>(static_cast<Sum>(row[j]) + static_cast<Sum>(from[j]));
        }
      }
    }
  });
}

// add_in_order for `dtype` when it takes it; false otherwise.
bool added_in_order(DType dtype, const std::byte* updates, int64_t outer, int64_t n, int64_t inner,
                    const int32_t* indices, int64_t count, std::byte* out) {
  switch (dtype) {
    case DType::kFloat32:
      add_in_order<float>(updates, outer, n, inner, indices, count, out);
      return true;
    case DType::kFloat64:
      add_in_order<double>(updates, outer, n, inner, indices, count, out);
      return true;
    case DType::kInt32:
      add_in_order<int32_t>(updates, outer, n, inner, indices, count, out);
      return true;
    case DType::kInt64:
      add_in_order<int64_t>(updates, outer, n, inner, indices, count, out);
      return true;
    default:
      return false;
  }
}

}  // namespace

const char* scatter_combine_name(ScatterCombine how) {
  switch (how) {
    case ScatterCombine::kSet:
      return "set";
    case ScatterCombine::kAdd:
      return "add";
    case ScatterCombine::kMul:
      return "mul";
    case ScatterCombine::kMin:
      return "min";
    case ScatterCombine::kMax:
      return "max";
  }
  return "?";
}

void scatter(ScatterCombine how, DType dtype, const std::byte* updates, const Shape& shape,
             int axis, const int32_t* indices, int64_t count, std::byte* out) {
  const auto at = shape.begin() + axis;
  const int64_t outer = std::accumulate(shape.begin(), at, int64_t{1}, std::multiplies<>());
  const int64_t n = *at;
  const int64_t inner = std::accumulate(at + 1, shape.end(), int64_t{1}, std::multiplies<>());
  const size_t size = dtype_size(dtype), row = static_cast<size_t>(inner) * size;
  const auto slot = [&](int64_t o, int64_t i) {
    return out + static_cast<size_t>(o * n + i) * row;
  };
  const auto update = [&](int64_t o, int64_t i) {
    return updates + static_cast<size_t>(o * count + i) * row;
  };
  if (how == ScatterCombine::kSet) {  // in order: the last of a repeated index stays
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < count; ++i) {
        if (indices[i] >= 0 && indices[i] < n) copy_row(slot(o, indices[i]), update(o, i), row);
      }
    }
    return;
  }
  if (how == ScatterCombine::kAdd &&
      added_in_order(dtype, updates, outer, n, inner, indices, count, out)) {
    return;
  }
  const Binary op = binary_of(how, dtype);
  const Rounds rounds = rounds_of(indices, count, n);
  // Updates `members`[0 … m) of one round (distinct indices): their rows gathered, combined in
  // one binary() call, and put back.
  const auto combine = [&](const int64_t* members, int64_t m) {
    // Not zeroed: every byte is written before it is read.
    const std::unique_ptr<std::byte[]> now_rows(new std::byte[static_cast<size_t>(m) * row]);
    const std::unique_ptr<std::byte[]> with_rows(new std::byte[static_cast<size_t>(m) * row]);
    std::byte* now = now_rows.get();
    std::byte* with = with_rows.get();
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t k = 0; k < m; ++k) {
        copy_row(now + static_cast<size_t>(k) * row, slot(o, indices[members[k]]), row);
        copy_row(with + static_cast<size_t>(k) * row, update(o, members[k]), row);
      }
      binary(op, dtype, Input{now, m * inner}, Input{with, m * inner}, now, m * inner);
      for (int64_t k = 0; k < m; ++k) {
        copy_row(slot(o, indices[members[k]]), now + static_cast<size_t>(k) * row, row);
      }
    }
  };
  // A round's rows are distinct: the team splits each round, and the rounds stay in order.
  const int64_t grain = std::max<int64_t>(1, kAddGrain / std::max<int64_t>(outer * inner, 1));
  for (size_t r = 0; r + 1 < rounds.start.size(); ++r) {
    const int64_t* members = rounds.order.data() + rounds.start[r];
    parallel_for(rounds.start[r + 1] - rounds.start[r], grain, 1,
                 [&](int64_t first, int64_t last) { combine(members + first, last - first); });
  }
}

}  // namespace spmd::kernels
