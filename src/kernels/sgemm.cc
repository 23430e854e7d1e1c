// oneDNN's sgemm, loaded at run time, or OpenBLAS's.
#include "kernels/sgemm.h"

#include <cblas.h>
#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <string>

#include "kernels/blas_core.h"
#include "spmd/error.h"

namespace spmd::kernels {
namespace {

// oneDNN's C API as its header (oneapi/dnnl/dnnl.h, 2.x and 3.x alike) declares it:
// dnnl_status_t dnnl_sgemm(char transa, char transb, dnnl_dim_t M, dnnl_dim_t N, dnnl_dim_t K,
//   float alpha, const float *A, dnnl_dim_t lda, const float *B, dnnl_dim_t ldb, float beta,
//   float *C, dnnl_dim_t ldc); row-major, dnnl_dim_t int64_t, dnnl_status_t a C enum (0: success).
using DnnlSgemm = int (*)(char, char, int64_t, int64_t, int64_t, float, const float*, int64_t,
                          const float*, int64_t, float, float*, int64_t);

// oneDNN and the OpenMP runtime it is built on (found through its handle: libgomp is one of
// its dependencies).
struct OneDnn {
  DnnlSgemm sgemm = nullptr;
  int (*omp_get_max_threads)() = nullptr;
  void (*omp_set_num_threads)(int) = nullptr;
  std::string why_not;  // empty when loaded
};

OneDnn load_onednn() {
  OneDnn d;
  void* handle = nullptr;
  for (const char* name : {"libdnnl.so.3", "libdnnl.so.2"}) {
    handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (handle != nullptr) break;
    d.why_not += fmt::format("{}{}", d.why_not.empty() ? "" : "; ", dlerror());
  }
  if (handle == nullptr) return d;
  d.sgemm = reinterpret_cast<DnnlSgemm>(dlsym(handle, "dnnl_sgemm"));
  d.omp_get_max_threads = reinterpret_cast<int (*)()>(dlsym(handle, "omp_get_max_threads"));
  d.omp_set_num_threads = reinterpret_cast<void (*)(int)>(dlsym(handle, "omp_set_num_threads"));
  if (d.sgemm == nullptr || d.omp_get_max_threads == nullptr || d.omp_set_num_threads == nullptr) {
    // A oneDNN on another threading runtime (TBB, a thread pool) would split each call itself.
    d.why_not = "the oneDNN found has no dnnl_sgemm, or is not built on OpenMP";
    d.sgemm = nullptr;
  } else {
    d.why_not.clear();
  }
  return d;
}

const OneDnn& onednn() {
  static const OneDnn d = load_onednn();
  return d;
}

}  // namespace

bool onednn_loads(std::string* why_not) {
  if (why_not != nullptr) *why_not = onednn().why_not;
  return onednn().sgemm != nullptr;
}

SgemmLibrary sgemm_library_for(const char* setting) {
  const std::string_view want = setting != nullptr ? setting : "";
  if (want == "openblas") return SgemmLibrary::kOpenBlas;
  if (want.empty())
    return onednn().sgemm != nullptr ? SgemmLibrary::kOneDnn : SgemmLibrary::kOpenBlas;
  if (want != "onednn") {
    throw InvalidArgument(fmt::format(
        "SPMD_CPU_SGEMM={} names no library: set it to onednn or openblas, or unset it (oneDNN "
        "where it loads, else OpenBLAS)",
        want));
  }
  if (onednn().sgemm == nullptr) {
    throw InvalidArgument(
        fmt::format("SPMD_CPU_SGEMM=onednn, but oneDNN cannot be loaded ({}): install it (Debian: "
                    "libdnnl2) or unset SPMD_CPU_SGEMM to use OpenBLAS",
                    onednn().why_not));
  }
  return SgemmLibrary::kOneDnn;
}

namespace {

// Holds the calling thread's OpenMP thread count at one for its life, then puts it back.
class OneOpenMpThread {
 public:
  explicit OneOpenMpThread(const OneDnn& d) : d_(d), before_(d.omp_get_max_threads()) {
    if (before_ != 1) d_.omp_set_num_threads(1);
  }
  ~OneOpenMpThread() {
    if (before_ != 1) d_.omp_set_num_threads(before_);
  }
  OneOpenMpThread(const OneOpenMpThread&) = delete;
  OneOpenMpThread& operator=(const OneOpenMpThread&) = delete;

 private:
  const OneDnn& d_;
  int before_;
};

void openblas_sgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
                    const float* b, int64_t ldb, float* c, int64_t ldc) {
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
              static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), 1.0f, a,
              static_cast<int>(lda), b, static_cast<int>(ldb), 0.0f, c, static_cast<int>(ldc));
}

}  // namespace

SgemmLibrary sgemm_library() {
  static const SgemmLibrary library = sgemm_library_for(std::getenv("SPMD_CPU_SGEMM"));
  return library;
}

std::string_view sgemm_library_name(SgemmLibrary library) {
  return library == SgemmLibrary::kOneDnn ? "oneDNN" : "OpenBLAS";
}

SgemmLibrary product_library(SgemmLibrary process, bool by_hand, bool avx512, int64_t m, int64_t n,
                             int64_t k) {
  // In double: m·n·k of dimensions within int's range may pass int64_t's.
  const bool large = static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) >=
                     static_cast<double>(kLargeProduct);
  if (process == SgemmLibrary::kOneDnn && !by_hand && !avx512 && large) {
    return SgemmLibrary::kOpenBlas;
  }
  return process;
}

void sgemm(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, const float* a,
           int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc) {
  static const bool by_hand = [] {
    const char* setting = std::getenv("SPMD_CPU_SGEMM");
    return setting != nullptr && *setting != '\0';
  }();
  static const bool avx512 = processor_has_avx512();
  const SgemmLibrary library = product_library(sgemm_library(), by_hand, avx512, m, n, k);
  sgemm(library, transpose_a, transpose_b, m, n, k, a, lda, b, ldb, c, ldc);
}

void sgemm(SgemmLibrary library, bool transpose_a, bool transpose_b, int64_t m, int64_t n,
           int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb, float* c,
           int64_t ldc) {
  if (k == 0) {  // oneDNN leaves c as it was there (Sgemm.AnEmptyContraction…); BLAS zeros it
    for (int64_t i = 0; i < m; ++i) std::fill_n(c + i * ldc, n, 0.0f);
    return;
  }
  if (library == SgemmLibrary::kOneDnn && onednn().sgemm != nullptr) {
    const OneDnn& d = onednn();
    const OneOpenMpThread one(d);
    const int status = d.sgemm(transpose_a ? 'T' : 'N', transpose_b ? 'T' : 'N', m, n, k, 1.0f, a,
                               lda, b, ldb, 0.0f, c, ldc);
    if (status == 0) return;
    // Arguments oneDNN refuses (it checks what CBLAS checks) are computed by OpenBLAS, which
    // takes every shape matmul passes.
  }
  openblas_sgemm(transpose_a, transpose_b, m, n, k, a, lda, b, ldb, c, ldc);
}

}  // namespace spmd::kernels
