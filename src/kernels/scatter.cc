#include "kernels/scatter.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <numeric>
#include <vector>

#include "kernels/elementwise.h"
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
// binary() over gathered rows.
std::vector<std::vector<int64_t>> rounds_of(const int32_t* indices, int64_t count, int64_t n) {
  std::vector<int32_t> seen(static_cast<size_t>(n), 0);
  std::vector<std::vector<int64_t>> rounds;
  for (int64_t i = 0; i < count; ++i) {
    const int32_t at = indices[i];
    if (at < 0 || at >= n) continue;  // dropped
    const auto round = static_cast<size_t>(seen[static_cast<size_t>(at)]++);
    if (round == rounds.size()) rounds.emplace_back();
    rounds[round].push_back(i);
  }
  return rounds;
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
        if (indices[i] >= 0 && indices[i] < n) std::memcpy(slot(o, indices[i]), update(o, i), row);
      }
    }
    return;
  }
  const Binary op = binary_of(how, dtype);
  std::vector<std::byte> now, with;
  for (const std::vector<int64_t>& round : rounds_of(indices, count, n)) {
    const auto m = static_cast<int64_t>(round.size());
    now.resize(static_cast<size_t>(m) * row);
    with.resize(now.size());
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t r = 0; r < m; ++r) {
        const int64_t i = round[static_cast<size_t>(r)];
        std::memcpy(now.data() + static_cast<size_t>(r) * row, slot(o, indices[i]), row);
        std::memcpy(with.data() + static_cast<size_t>(r) * row, update(o, i), row);
      }
      binary(op, dtype, Input{now.data(), m * inner}, Input{with.data(), m * inner}, now.data(),
             m * inner);
      for (int64_t r = 0; r < m; ++r) {
        const int64_t i = round[static_cast<size_t>(r)];
        std::memcpy(slot(o, indices[i]), now.data() + static_cast<size_t>(r) * row, row);
      }
    }
  }
}

}  // namespace spmd::kernels
