#include "compute/ops/block_kernels.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "kernels/elementwise.h"

namespace spmd::ops {

std::string describe(const Block& b) {
  return fmt::format("{}[{}]", dtype_name(b.dtype()), fmt::join(b.shape(), ", "));
}

void require_numeric(const char* what, const Block& b) {
  if (b.dtype() == DType::kBool) {
    throw InvalidArgument(fmt::format("{}: {} is not numeric", what, describe(b)));
  }
}

void require_floating(const char* what, const Block& b) {
  if (!is_floating(b.dtype())) {
    throw InvalidArgument(fmt::format("{}: needs a floating block, not {}", what, describe(b)));
  }
}

Block converted(const Block& b, DType to) {
  if (b.dtype() == to) return b;
  Block out = Block::uninitialized(to, b.shape());
  kernels::convert(b.dtype(), to, {b.bytes().data(), b.size()}, out.mutable_bytes().data(),
                   b.size());
  return out;
}

Block widened(const Block& b) {
  const bool half = b.dtype() == DType::kFloat16 || b.dtype() == DType::kBFloat16;
  return half ? converted(b, DType::kFloat32) : b;
}

Block with_scalar(kernels::Binary op, const Block& x, double s) {
  Block scalar = Block::uninitialized(x.dtype(), {});
  kernels::convert(DType::kFloat64, x.dtype(), {reinterpret_cast<const std::byte*>(&s), 1},
                   scalar.mutable_bytes().data(), 1);
  Block out = Block::uninitialized(x.dtype(), x.shape());
  kernels::binary(op, x.dtype(), {x.bytes().data(), x.size()}, {scalar.bytes().data(), 1},
                  out.mutable_bytes().data(), out.size());
  return out;
}

}  // namespace spmd::ops
