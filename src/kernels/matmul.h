// Matrix products: out[b] = a[b] · b[b] for each of `batch` row-major (m × k) · (k × n) pairs.
// float32 and float64 go to CBLAS (OpenBLAS, one BLAS thread per call); a large product is cut
// into panels of whole rows or columns by its shape alone, and the calling thread's team
// (thread_team.h) multiplies the panels, and the products of a batch, in turn, so a product's
// bits never depend on the team's size. float16 and bfloat16 are widened to float32, multiplied
// there and rounded once; integers multiply through Eigen 3.4 in their own type (wrapping as
// NumPy's do); bool is "any of a and b". Throws InvalidArgument for a dimension past CBLAS's int
// range. Pure; thread-safe: device threads multiply at once.
#pragma once

#include <cstddef>
#include <cstdint>

#include "spmd/dtype.h"

namespace spmd::kernels {

struct MatmulShape {
  int64_t batch = 1, m = 0, k = 0, n = 0;
  // a is stored (k × m), b (n × k): each is read transposed.
  bool transpose_a = false, transpose_b = false;
};

void matmul(DType dtype, MatmulShape s, const std::byte* a, const std::byte* b, std::byte* out);

}  // namespace spmd::kernels
