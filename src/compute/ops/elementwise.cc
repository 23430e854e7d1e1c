// Element-wise block arithmetic with NumPy broadcasting, through the block's backend
// (broadcast, then one vectorised pass).
#include "kernels/elementwise.h"

#include <fmt/format.h>

#include "compute/ops/block_kernels.h"
#include "spmd/block_ops.h"

namespace spmd {
namespace {

using ops::describe;

Shape broadcast_shape(const char* what, const Block& a, const Block& b) {
  const size_t rank = std::max(a.shape().size(), b.shape().size());
  Shape out(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.shape().size() ? 1 : a.shape()[i - (rank - a.shape().size())];
    const int64_t db = i < rank - b.shape().size() ? 1 : b.shape()[i - (rank - b.shape().size())];
    if (da != db && da != 1 && db != 1) {
      throw InvalidArgument(fmt::format(
          "{}: shapes {} and {} do not broadcast (dimension {} of the result: {} vs {})", what,
          describe(a), describe(b), i, da, db));
    }
    out[i] = da == 1 ? db : da;
  }
  return out;
}

Block binary(const char* what, kernels::Binary op, const Block& a, const Block& b) {
  if (a.dtype() != b.dtype()) {
    throw InvalidArgument(fmt::format("{}: operands {} and {} have different dtypes", what,
                                      describe(a), describe(b)));
  }
  ops::require_numeric(what, a);
  const Shape shape = broadcast_shape(what, a, b);
  return ops::binary(op, ops::broadcast_to(a, shape), ops::broadcast_to(b, shape));
}

}  // namespace

Block add(const Block& a, const Block& b) { return binary("add", kernels::Binary::kAdd, a, b); }
Block sub(const Block& a, const Block& b) { return binary("sub", kernels::Binary::kSub, a, b); }
Block mul(const Block& a, const Block& b) { return binary("mul", kernels::Binary::kMul, a, b); }
Block div(const Block& a, const Block& b) { return binary("div", kernels::Binary::kDiv, a, b); }

Block scale(const Block& a, double s) {
  ops::require_numeric("scale", a);
  // The factor in a's computation type: float32 for the half types, which round once at the end.
  return ops::converted(ops::with_scalar(kernels::Binary::kMul, ops::widened(a), s), a.dtype());
}

Block sqrt(const Block& a) {
  ops::require_floating("sqrt", a);
  return ops::unary(kernels::Unary::kSqrt, a);
}

}  // namespace spmd
