// Which OpenBLAS kernels run this process's products, and whether they leave the processor's
// vector units half used. OpenBLAS picks its kernels for the processor once, as it loads, unless
// OPENBLAS_CORETYPE names others; naming AVX2 ones (Haswell, as some environments do) on a
// processor with AVX-512 halves the speed of every float32 product (here: 114 against 220
// GFLOP/s per core). spmd cannot change the choice once OpenBLAS has loaded, and a user's setting
// is theirs to keep, so it says so instead (jit, at its first compile). Where oneDNN computes
// the float32 products (sgemm.h), only float64 ones are slowed, and the warning says so.
// Pure; thread-safe.
#pragma once

#include <string>

namespace spmd::kernels {

// Whether the processor has AVX-512 (F, BW, DQ and VL).
bool processor_has_avx512();

// OpenBLAS's name for the kernels this process runs ("Haswell", "SkylakeX", "Cooperlake", …).
std::string blas_core();

// When the processor has AVX-512 (F, BW, DQ, VL) and OpenBLAS runs kernels without it: what to
// say, naming OPENBLAS_CORETYPE when it is the cause. Empty otherwise.
std::string blas_core_warning();

}  // namespace spmd::kernels
