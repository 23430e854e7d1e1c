// Prints which OpenBLAS kernels this process runs and what spmd would warn about them
// (kernels/blas_core.h), for blas_core_test.py.
#include <cstdio>

#include "kernels/blas_core.h"

int main() {
  std::printf("core=%s\n", spmd::kernels::blas_core().c_str());
  std::printf("warning=%s\n", spmd::kernels::blas_core_warning().c_str());
  return 0;
}
