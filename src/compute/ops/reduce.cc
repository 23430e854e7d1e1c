// Sums and means of blocks, over everything or along one axis, through the block's backend.
#include "kernels/reduce.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "compute/ops/block_kernels.h"
#include "kernels/elementwise.h"
#include "spmd/block_ops.h"

namespace spmd {
namespace {

int normalized_axis(const char* what, const Block& a, int axis) {
  const int rank = a.rank();
  if (axis < -rank || axis >= rank) {
    throw InvalidArgument(fmt::format("{}: axis {} is outside a block of rank {} ({})", what, axis,
                                      rank, ops::describe(a)));
  }
  return axis < 0 ? axis + rank : axis;
}

// The sum along `axis`, accumulated in a's computation type (float32 for the half types).
Block sum_along(const Block& a, int axis) {
  const Block x = ops::widened(a);
  Shape shape = x.shape();
  shape.erase(shape.begin() + axis);
  Block out = Block::allocate(x.dtype(), shape, x.memory());
  ops::backend_of(x).reduce(kernels::Reduce::kSum, x.dtype(), x.bytes().data(), x.shape(), axis,
                            x.dtype(), out.mutable_bytes().data());
  return out;
}

}  // namespace

Block sum(const Block& a) { return sum(a.reshape({a.size()}), 0); }

Block sum(const Block& a, int axis) {
  ops::require_numeric("sum", a);
  return ops::converted(sum_along(a, normalized_axis("sum", a, axis)), a.dtype());
}

Block mean(const Block& a) { return mean(a.reshape({a.size()}), 0); }

Block mean(const Block& a, int axis) {
  ops::require_floating("mean", a);
  const int d = normalized_axis("mean", a, axis);
  const Block total = sum_along(a, d);
  const double count = static_cast<double>(a.shape()[static_cast<size_t>(d)]);
  return ops::converted(ops::with_scalar(kernels::Binary::kDiv, total, count), a.dtype());
}

}  // namespace spmd
