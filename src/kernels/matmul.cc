#include "kernels/matmul.h"

#include <cblas.h>
#include <fmt/format.h>

#include <Eigen/Core>
#include <algorithm>
#include <type_traits>
#include <vector>

#include "kernels/dispatch.h"
#include "spmd/error.h"

namespace spmd::kernels {
namespace {

template <class T>
using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

void blas(const float* a, const float* b, float* c, MatmulShape s) {
  const int m = static_cast<int>(s.m), n = static_cast<int>(s.n), k = static_cast<int>(s.k);
  for (int64_t i = 0; i < s.batch; ++i) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a + i * s.m * s.k,
                std::max(k, 1), b + i * s.k * s.n, std::max(n, 1), 0.0f, c + i * s.m * s.n,
                std::max(n, 1));
  }
}

void blas(const double* a, const double* b, double* c, MatmulShape s) {
  const int m = static_cast<int>(s.m), n = static_cast<int>(s.n), k = static_cast<int>(s.k);
  for (int64_t i = 0; i < s.batch; ++i) {
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0, a + i * s.m * s.k,
                std::max(k, 1), b + i * s.k * s.n, std::max(n, 1), 0.0, c + i * s.m * s.n,
                std::max(n, 1));
  }
}

template <class T>
void eigen_product(const T* a, const T* b, T* c, MatmulShape s) {
  for (int64_t i = 0; i < s.batch; ++i) {
    const Eigen::Map<const Matrix<T>> x(a + i * s.m * s.k, s.m, s.k);
    const Eigen::Map<const Matrix<T>> y(b + i * s.k * s.n, s.k, s.n);
    Eigen::Map<Matrix<T>> z(c + i * s.m * s.n, s.m, s.n);
    if constexpr (std::is_same_v<T, bool>) {
      z = (x.template cast<int32_t>() * y.template cast<int32_t>()).array() != 0;
    } else {
      z.noalias() = x * y;
    }
  }
}

}  // namespace

void matmul(DType dtype, MatmulShape s, const std::byte* a, const std::byte* b, std::byte* out) {
  constexpr int64_t kBlasMax = 0x7fffffff;
  if (s.m > kBlasMax || s.n > kBlasMax || s.k > kBlasMax) {
    throw InvalidArgument(
        fmt::format("matmul: ({} × {}) · ({} × {}) has a dimension past "
                    "CBLAS's int range",
                    s.m, s.k, s.k, s.n));
  }
  if (s.m * s.n == 0) return;
  if (is_half_dtype(dtype)) {
    const std::vector<float> x = to_wide(dtype, a, s.batch * s.m * s.k);
    const std::vector<float> y = to_wide(dtype, b, s.batch * s.k * s.n);
    std::vector<float> z(static_cast<size_t>(s.batch * s.m * s.n));
    blas(x.data(), y.data(), z.data(), s);
    from_wide(dtype, z, out);
    return;
  }
  visit_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    const auto* x = reinterpret_cast<const T*>(a);
    const auto* y = reinterpret_cast<const T*>(b);
    auto* z = reinterpret_cast<T*>(out);
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      blas(x, y, z, s);
    } else if constexpr (!is_half<T>) {
      eigen_product(x, y, z, s);
    }
  });
}

}  // namespace spmd::kernels
