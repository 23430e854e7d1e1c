// Prints which OpenBLAS kernels this process runs and what spmd would warn about them
// (kernels/blas_core.h), and which library computes float32 products (kernels/sgemm.h), for
// blas_core_test.py.
#include <cstdio>

#include "kernels/blas_core.h"
#include "kernels/sgemm.h"

int main() {
  std::printf("core=%s\n", spmd::kernels::blas_core().c_str());
  std::printf("warning=%s\n", spmd::kernels::blas_core_warning().c_str());
  const auto sgemm = spmd::kernels::sgemm_library_name(spmd::kernels::sgemm_library());
  std::printf("sgemm=%.*s\n", static_cast<int>(sgemm.size()), sgemm.data());
  return 0;
}
