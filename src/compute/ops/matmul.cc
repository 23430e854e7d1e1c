// Matrix products of 2-D blocks through CBLAS (Debian's single-threaded OpenBLAS: each device
// already has its own thread, so BLAS threads of its own would only oversubscribe the cores).
#include <cblas.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstring>

#include "spmd/block_ops.h"

namespace spmd {
namespace {

std::string describe(const Block& b) {
  return fmt::format("{}[{}]", dtype_name(b.dtype()), fmt::join(b.shape(), ", "));
}

}  // namespace

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
  constexpr int64_t kBlasMax = 0x7fffffff;  // CBLAS takes int dimensions
  if (m > kBlasMax || n > kBlasMax || k > kBlasMax || a.shape()[1] > kBlasMax ||
      b.shape()[1] > kBlasMax) {
    throw InvalidArgument(fmt::format("matmul: {} times {} has a dimension past CBLAS's int range",
                                      describe(a), describe(b)));
  }
  Block out = Block::zeros(a.dtype(), {m, n});
  if (m == 0 || n == 0 || k == 0) return out;
  const auto ta = transpose_a ? CblasTrans : CblasNoTrans;
  const auto tb = transpose_b ? CblasTrans : CblasNoTrans;
  const auto lda = static_cast<int>(a.shape()[1]);
  const auto ldb = static_cast<int>(b.shape()[1]);
  if (a.dtype() == DType::kFloat32) {
    cblas_sgemm(CblasRowMajor, ta, tb, static_cast<int>(m), static_cast<int>(n),
                static_cast<int>(k), 1.0f, a.data<float>().data(), lda, b.data<float>().data(), ldb,
                0.0f, out.mutable_data<float>().data(), static_cast<int>(n));
  } else {
    cblas_dgemm(CblasRowMajor, ta, tb, static_cast<int>(m), static_cast<int>(n),
                static_cast<int>(k), 1.0, a.data<double>().data(), lda, b.data<double>().data(),
                ldb, 0.0, out.mutable_data<double>().data(), static_cast<int>(n));
  }
  return out;
}

}  // namespace spmd
