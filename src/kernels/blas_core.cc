#include "kernels/blas_core.h"

#include <cblas.h>
#include <fmt/format.h>

#include <array>
#include <cstdlib>
#include <string_view>

#include "kernels/sgemm.h"

namespace spmd::kernels {
namespace {

// OpenBLAS's kernels that use AVX-512.
bool avx512_kernels(std::string_view core) {
  constexpr std::array<std::string_view, 3> kCores = {"SkylakeX", "Cooperlake", "SapphireRapids"};
  for (std::string_view c : kCores) {
    if (core == c) return true;
  }
  return false;
}

}  // namespace

std::string blas_core() {
  const char* name = openblas_get_corename();
  return name != nullptr ? name : "";
}

bool processor_has_avx512() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") != 0 && __builtin_cpu_supports("avx512bw") != 0 &&
         __builtin_cpu_supports("avx512dq") != 0 && __builtin_cpu_supports("avx512vl") != 0;
}

std::string blas_core_warning() {
  const std::string core = blas_core();
  if (!processor_has_avx512() || avx512_kernels(core) || core.empty()) return "";
  const char* forced = std::getenv("OPENBLAS_CORETYPE");
  const std::string cause =
      forced != nullptr
          ? fmt::format(
                ", because OPENBLAS_CORETYPE={} names them; unset it (OpenBLAS then picks "
                "its AVX-512 kernels) or set it to SkylakeX",
                forced)
          : "; set OPENBLAS_CORETYPE=SkylakeX to use them";
  bool float32_too = true;
  try {
    float32_too = sgemm_library() == SgemmLibrary::kOpenBlas;
  } catch (const std::exception&) {
    // An SPMD_CPU_SGEMM it cannot honour: the first product says so.
  }
  return fmt::format(
      "OpenBLAS runs its {} kernels, without AVX-512, on this processor, which has AVX-512: "
      "{} run at about half the speed of its AVX-512 kernels{}",
      core,
      float32_too ? "matrix products" : "float64 matrix products (float32 ones run on oneDNN)",
      cause);
}

}  // namespace spmd::kernels
