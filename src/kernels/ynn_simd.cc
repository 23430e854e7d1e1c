#include "kernels/ynn_simd.h"

namespace spmd::kernels {

const YnnLoops* ynn_loops() {
  static const YnnLoops* const widest =
      ynn_loops_avx512() != nullptr ? ynn_loops_avx512() : ynn_loops_avx2();
  return widest;
}

}  // namespace spmd::kernels
