// Strided matrix products (kernels/matmul.h) for tests of an implementation against the CPU
// kernel: tests/kernels/strided_matmul_test.cc runs them on the host against the definition,
// tests/gpu/gpu_kernels_test.cc on a GPU against the CPU.
#pragma once

#include <cstdint>

#include "kernels/matmul.h"

namespace spmd::testing {

// q (b 2, q, h 3, d) · k (b 2, keys, h 3, d)ᵀ per (b, h), into (b, h, q, keys) whose rows are
// padded to keys + 3 columns: "bqhd,bkhd->bhqk" read where it lies.
inline kernels::MatmulShape attention_product(int64_t q = 5, int64_t keys = 4, int64_t d = 6) {
  const int64_t b = 2, h = 3, ldc = keys + 3;
  return {.batch = b * h,
          .m = q,
          .k = d,
          .n = keys,
          .transpose_b = true,
          .lda = h * d,
          .ldb = h * d,
          .ldc = ldc,
          .batch_dims = {{b, q * h * d, keys * h * d, h * q * ldc}, {h, d, d, q * ldc}}};
}

// The elements the buffer of a (0), b (1) or out (2) spans.
inline int64_t matmul_extent(const kernels::MatmulShape& s, int which) {
  int64_t last = 0;
  for (const kernels::MatmulBatchDim& d : s.batch_dims) {
    last += (d.size - 1) * (which == 0 ? d.a : which == 1 ? d.b : d.out);
  }
  if (which == 0) return last + (s.transpose_a ? s.k : s.m) * kernels::leading_a(s);
  if (which == 1) return last + (s.transpose_b ? s.n : s.k) * kernels::leading_b(s);
  return last + s.m * kernels::leading_c(s);
}

}  // namespace spmd::testing
