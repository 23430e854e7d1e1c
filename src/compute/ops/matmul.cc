// Matrix products of 2-D blocks, through the block's backend (OpenBLAS on the CPU).
#include "kernels/matmul.h"

#include <fmt/format.h>

#include "compute/ops/block_kernels.h"
#include "spmd/block_ops.h"

namespace spmd {

using ops::describe;

Block matmul(const Block& a, const Block& b, bool transpose_a, bool transpose_b) {
  if (a.dtype() != b.dtype() || (a.dtype() != DType::kFloat32 && a.dtype() != DType::kFloat64)) {
    throw InvalidArgument(
        fmt::format("matmul: needs two float32 or two float64 blocks, not {} and {}", describe(a),
                    describe(b)));
  }
  if (a.rank() != 2 || b.rank() != 2) {
    throw InvalidArgument(
        fmt::format("matmul: needs 2-D blocks, not {} and {}", describe(a), describe(b)));
  }
  const int64_t m = transpose_a ? a.shape()[1] : a.shape()[0];
  const int64_t k = transpose_a ? a.shape()[0] : a.shape()[1];
  const int64_t kb = transpose_b ? b.shape()[1] : b.shape()[0];
  const int64_t n = transpose_b ? b.shape()[0] : b.shape()[1];
  if (k != kb) {
    throw InvalidArgument(fmt::format("matmul: inner dimensions differ: {}{} times {}{} ({} vs {})",
                                      describe(a), transpose_a ? "ᵀ" : "", describe(b),
                                      transpose_b ? "ᵀ" : "", k, kb));
  }
  Block out = Block::allocate(a.dtype(), {m, n}, a.memory());
  if (m == 0 || n == 0) return out;
  if (k == 0) {  // an empty sum
    ops::backend_of(a).fill(a.dtype(), 0.0, out.mutable_bytes().data(), out.size());
    return out;
  }
  ops::backend_of(a).matmul(
      a.dtype(), {.m = m, .k = k, .n = n, .transpose_a = transpose_a, .transpose_b = transpose_b},
      a.bytes().data(), b.to_memory(a.memory()).bytes().data(), out.mutable_bytes().data());
  return out;
}

}  // namespace spmd
