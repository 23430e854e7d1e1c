// Matrix products: out[b] = a[b] · b[b] for each of `batch` row-major (m × k) · (k × n) pairs.
// float32 goes to oneDNN's sgemm or OpenBLAS's (sgemm.h), float64 to OpenBLAS's dgemm, one
// thread per call; a large product is cut into tiles by its shape alone (product_cut), and the
// calling thread's team (thread_team.h) multiplies the tiles, and the products of a batch, in
// turn, so a product's bits never depend on the team's size. A float32 matrix
// times a vector (n = 1, m ≥ 2, a not transposed) is summed in XLA's order instead, JAX's bits
// (xla_matvec.h). float16 and bfloat16
// are widened to float32, multiplied there and rounded once; integers give their own type's
// wrapping products (as NumPy's and XLA's do): through float32's or float64's GEMM where
// k · max|a| · max|b| keeps every sum an exact integer there (at most 2^24, under 2^53), else
// through Eigen 3.4 in the type itself; bool is "any of a and b". Throws InvalidArgument for a
// dimension or leading dimension past CBLAS's int range. Pure; thread-safe: device threads multiply
// at once.
//
// The operands and the result may lie strided in their buffers, as a permuted einsum operand
// does (the attention's "bqhd,bkhd->bhqk" reads each head's rows H·D apart): each matrix's rows
// `ld` elements apart, and the batch as dimensions with a stride per operand. BLAS reads them in
// place; the other dtypes gather them into packed copies first and scatter the result.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "spmd/dtype.h"

namespace spmd::kernels {

// One dimension of a strided batch: its size, and the distance in elements between consecutive
// members along it in a, b and out.
struct MatmulBatchDim {
  int64_t size = 1, a = 0, b = 0, out = 0;
};

struct MatmulShape {
  int64_t batch = 1, m = 0, k = 0, n = 0;
  // a is stored (k × m), b (n × k): each is read transposed.
  bool transpose_a = false, transpose_b = false;
  // Leading dimensions: elements from one stored row of a matrix to the next (a's rows are k or,
  // transposed, m long). 0: packed, the row's own length.
  int64_t lda = 0, ldb = 0, ldc = 0;
  // The batch's dimensions, outermost first, their sizes multiplying to `batch`; empty: members
  // one after another, member i at i times a matrix's stored extent (rows × leading dimension).
  std::vector<MatmulBatchDim> batch_dims;
};

// Leading dimensions with 0 resolved.
int64_t leading_a(const MatmulShape& s);
int64_t leading_b(const MatmulShape& s);
int64_t leading_c(const MatmulShape& s);

// True where every matrix is packed and the members lie one after another.
bool is_packed(const MatmulShape& s);

// Element offsets of batch member i (0 ≤ i < batch, in row-major order over batch_dims).
struct MatmulOffsets {
  int64_t a = 0, b = 0, out = 0;
};
MatmulOffsets member_offsets(const MatmulShape& s, int64_t i);

// How a float32 or float64 product of `s` is cut (matmul.cc says why): into tiles of `rows` ×
// `cols` of c, the last in each direction possibly shorter, each one single-threaded BLAS call,
// which the team multiplies in turn. It depends on the shape alone, so a product's bits never
// depend on the team's size. Most products are cut one way, into panels of whole rows or whole
// columns at least 256 wide (128 under 512); one whose m and n are both at least 1024, with at
// least 2^28 multiply-adds, is cut both ways, into the squarest tiles at least 256 wide of which
// there are one per 2^27 multiply-adds, at least 8 and at most 64.
struct ProductCut {
  int64_t rows = 0, cols = 0;
  int64_t tiles(const MatmulShape& s) const;
};
ProductCut product_cut(const MatmulShape& s);

void matmul(DType dtype, MatmulShape s, const std::byte* a, const std::byte* b, std::byte* out);

}  // namespace spmd::kernels
