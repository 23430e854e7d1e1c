// The float32 matrix product's library: oneDNN's sgemm where the process can load oneDNN
// (libdnnl.so.3 or .so.2), else OpenBLAS's cblas_sgemm. SPMD_CPU_SGEMM chooses by hand:
// "onednn" (an error where it cannot be loaded, naming why) or "openblas".
//
// Why oneDNN first, measured on the 2-core AVX-512 machine (DESIGN.md, "Every core at work"):
// its JIT kernels are 9-16% faster than OpenBLAS 0.3.21's AVX-512 ones on one thread (256 x 2048
// x 2048: 8.6 against 10.0 ms; 512 x 1024 x 1024: 4.2 against 4.5), and it picks them from the
// processor's features alone, where OpenBLAS obeys OPENBLAS_CORETYPE, which some environments
// set to AVX2 kernels for NumPy's sake and so halve every product (blas_core.h). Loaded at run
// time, not linked: a program built here still runs where oneDNN is absent (the GPU machine's
// bundle carries no 40 MB library it would not use), on OpenBLAS.
//
// One exception, where the library was not chosen by hand (product_library): on a processor
// without AVX-512, a large product (a call of at least kLargeProduct multiply-adds: a panel of a
// large product, matmul.cc) goes to OpenBLAS. oneDNN's AVX2 kernels took twice OpenBLAS's time
// for a weight gradient, x^T dy, on session 44's Zen 3 (512 x 256 x 2048 with two threads:
// 28.7-33.8 ms against 13.9-24.9), which was the exception's first form; session 47 found the
// same for plain products whose operands lie in 2 MiB-aligned buffers, as every large jit
// intermediate does (array/buffer_pool.h): one thread, 256 x 2048 x 2048, oneDNN 49-53 ms
// against 30 in malloc's buffers, OpenBLAS 24.5-27 in either; 256 x 512 x 2048 11.7-13 against
// 6.8, OpenBLAS 6.0-6.3. Small products stay on oneDNN: with every product on OpenBLAS,
// JAX-parity tests of small factorizations' gradients (cholesky's, bit for bit) no longer matched
// JAX, whose products sum in oneDNN's order there.
//
// Each call computes on the calling thread alone: oneDNN's OpenMP threads are held to one for
// the call (the caller's OpenMP setting is put back afterwards, so a user's own OpenMP code on
// that thread is untouched), as OpenBLAS's are (matmul.cc); the device's team splits large
// products (thread_team.h). Thread-safe: device threads multiply at once. Internal to kernels/.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace spmd::kernels {

enum class SgemmLibrary { kOneDnn, kOpenBlas };

// The library this process's float32 products use, chosen at the first call (see above);
// throws InvalidArgument for an SPMD_CPU_SGEMM it cannot honour.
SgemmLibrary sgemm_library();

// The library a setting of SPMD_CPU_SGEMM (nullptr: unset) chooses in this process; throws
// InvalidArgument, naming the variable and what to do, for one it cannot honour.
SgemmLibrary sgemm_library_for(const char* setting);

// The library one product takes (see above): `process`, the process's (sgemm_library()), unless
// it is oneDNN not chosen by hand, the processor lacks AVX-512, and m·n·k is at least
// kLargeProduct.
constexpr int64_t kLargeProduct = int64_t{1} << 24;
SgemmLibrary product_library(SgemmLibrary process, bool by_hand, bool avx512, int64_t m, int64_t n,
                             int64_t k);

// Whether oneDNN loads in this process, and if not, why (the loader's words).
bool onednn_loads(std::string* why_not = nullptr);

std::string_view sgemm_library_name(SgemmLibrary library);

// c = op(a) · op(b), row-major: c is m × n with rows ldc apart; op(a) is m × k, read as a k × m
// matrix where transpose_a (rows lda apart), op(b) k × n likewise. c is only written (beta = 0:
// whatever c held, NaN included, is not read). Dimensions within CBLAS's int range.
void sgemm(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, const float* a,
           int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc);

// The same in a given library (the tests compare both); oneDNN's only where onednn_loads().
void sgemm(SgemmLibrary library, bool transpose_a, bool transpose_b, int64_t m, int64_t n,
           int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb, float* c,
           int64_t ldc);

}  // namespace spmd::kernels
