// Sums and means of blocks, over everything or along one axis.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "compute/ops/numeric.h"
#include "spmd/block_ops.h"

namespace spmd {
namespace {

using ops::compute_t;
using ops::load;
using ops::store;

int normalized_axis(const char* what, const Block& a, int axis) {
  const int rank = a.rank();
  if (axis < -rank || axis >= rank) {
    throw InvalidArgument(fmt::format("{}: axis {} is outside a block of rank {} ({}[{}])", what,
                                      axis, rank, dtype_name(a.dtype()),
                                      fmt::join(a.shape(), ", ")));
  }
  return axis < 0 ? axis + rank : axis;
}

// Sums along `axis` of a viewed as (outer, extent, inner), then applies `finish` to each sum.
template <typename T, class Finish>
Block reduce_axis(const Block& a, int axis, Finish finish) {
  Shape shape = a.shape();
  int64_t outer = 1;
  for (int d = 0; d < axis; ++d) outer *= shape[d];
  const int64_t extent = shape[axis];
  int64_t inner = 1;
  for (size_t d = axis + 1; d < shape.size(); ++d) inner *= shape[d];
  shape.erase(shape.begin() + axis);
  Block out = Block::uninitialized(a.dtype(), shape);
  const T* in = a.data<T>().data();
  T* dst = out.mutable_data<T>().data();
  std::vector<compute_t<T>> acc(static_cast<size_t>(inner));
  for (int64_t o = 0; o < outer; ++o) {
    std::fill(acc.begin(), acc.end(), compute_t<T>{});
    for (int64_t e = 0; e < extent; ++e) {
      const T* row = in + (o * extent + e) * inner;
      for (int64_t i = 0; i < inner; ++i) acc[i] = static_cast<compute_t<T>>(acc[i] + load(row[i]));
    }
    for (int64_t i = 0; i < inner; ++i) dst[o * inner + i] = store<T>(finish(acc[i]));
  }
  return out;
}

}  // namespace

Block sum(const Block& a) { return sum(a.reshape({a.size()}), 0); }

Block sum(const Block& a, int axis) {
  const int d = normalized_axis("sum", a, axis);
  return ops::visit_numeric(a.dtype(), "sum", [&](auto tag) {
    using T = decltype(tag);
    return reduce_axis<T>(a, d, [](compute_t<T> s) { return s; });
  });
}

Block mean(const Block& a) { return mean(a.reshape({a.size()}), 0); }

Block mean(const Block& a, int axis) {
  const int d = normalized_axis("mean", a, axis);
  return ops::visit_floating(a.dtype(), "mean", [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    const C count = static_cast<C>(a.shape()[d]);
    return reduce_axis<T>(a, d, [count](C s) { return s / count; });
  });
}

}  // namespace spmd
