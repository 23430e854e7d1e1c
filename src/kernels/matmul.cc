#include "kernels/matmul.h"

#include <cblas.h>
#include <fmt/format.h>

#include <Eigen/Core>
#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <type_traits>
#include <vector>

#include "kernels/dispatch.h"
#include "spmd/error.h"

namespace spmd::kernels {
namespace {

template <class T>
using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// CBLAS's arguments for one product of `s`: transposes and leading dimensions.
struct BlasCall {
  CBLAS_TRANSPOSE ta, tb;
  int m, n, k, lda, ldb, ldc;
};

BlasCall blas_call(const MatmulShape& s) {
  BlasCall c{s.transpose_a ? CblasTrans : CblasNoTrans,
             s.transpose_b ? CblasTrans : CblasNoTrans,
             static_cast<int>(s.m),
             static_cast<int>(s.n),
             static_cast<int>(s.k),
             0,
             0,
             0};
  c.lda = std::max(s.transpose_a ? c.m : c.k, 1);
  c.ldb = std::max(s.transpose_b ? c.k : c.n, 1);
  c.ldc = std::max(c.n, 1);
  return c;
}

// Every device thread multiplies at once. OpenBLAS's threaded build takes that (its work
// buffers are claimed under a lock); Debian 12's sequential build (libopenblas0-serial 0.3.21)
// does not: two threads can be handed the same buffer, and 167 of 2000 runs of 4 threads calling
// dgemm together got a wrong product (a jit gradient on 4 devices came out as one device's
// contribution twice). So: with a threaded build, one thread per call (each device already is a
// thread; OPENBLAS_NUM_THREADS, when set, wins); with a sequential one, one call at a time.
class BlasCalls {
 public:
  static const BlasCalls& get() {
    static const BlasCalls calls;
    return calls;
  }
  template <class F>
  void run(F&& f) const {
    if (!one_at_a_time_) return f();
    std::lock_guard lock(mu_);
    f();
  }

 private:
  BlasCalls() : one_at_a_time_(openblas_get_parallel() == 0) {
    if (!one_at_a_time_ && std::getenv("OPENBLAS_NUM_THREADS") == nullptr) {
      openblas_set_num_threads(1);
    }
  }
  bool one_at_a_time_;
  mutable std::mutex mu_;
};

void blas(const float* a, const float* b, float* c, MatmulShape s) {
  const BlasCall x = blas_call(s);
  BlasCalls::get().run([&] {
    for (int64_t i = 0; i < s.batch; ++i) {
      cblas_sgemm(CblasRowMajor, x.ta, x.tb, x.m, x.n, x.k, 1.0f, a + i * s.m * s.k, x.lda,
                  b + i * s.k * s.n, x.ldb, 0.0f, c + i * s.m * s.n, x.ldc);
    }
  });
}

void blas(const double* a, const double* b, double* c, MatmulShape s) {
  const BlasCall x = blas_call(s);
  BlasCalls::get().run([&] {
    for (int64_t i = 0; i < s.batch; ++i) {
      cblas_dgemm(CblasRowMajor, x.ta, x.tb, x.m, x.n, x.k, 1.0, a + i * s.m * s.k, x.lda,
                  b + i * s.k * s.n, x.ldb, 0.0, c + i * s.m * s.n, x.ldc);
    }
  });
}

template <class T>
void eigen_product(const T* a, const T* b, T* c, MatmulShape s) {
  for (int64_t i = 0; i < s.batch; ++i) {
    const Eigen::Map<const Matrix<T>> xs(a + i * s.m * s.k, s.transpose_a ? s.k : s.m,
                                         s.transpose_a ? s.m : s.k);
    const Eigen::Map<const Matrix<T>> ys(b + i * s.k * s.n, s.transpose_b ? s.n : s.k,
                                         s.transpose_b ? s.k : s.n);
    const Matrix<T> x = s.transpose_a ? Matrix<T>(xs.transpose()) : Matrix<T>(xs);
    const Matrix<T> y = s.transpose_b ? Matrix<T>(ys.transpose()) : Matrix<T>(ys);
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
