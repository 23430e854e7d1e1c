// linalg.h by OpenBLAS's LAPACK and BLAS, the routines JAX's CPU backend calls (through SciPy's):
// potrf for Cholesky, geqrf and orgqr for QR, trsm for triangular solves, on column-major copies
// as jaxlib hands them over.
#include "kernels/linalg.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <vector>

#include "kernels/blas_calls.h"

// LAPACK's Fortran entry points (OpenBLAS exports them; Debian ships no lapacke.h with it). The
// trailing size_t is the hidden length of a character argument, as gfortran passes it.
extern "C" {
void spotrf_(const char* uplo, const int* n, float* a, const int* lda, int* info, size_t);
void dpotrf_(const char* uplo, const int* n, double* a, const int* lda, int* info, size_t);
void sgeqrf_(const int* m, const int* n, float* a, const int* lda, float* tau, float* work,
             const int* lwork, int* info);
void dgeqrf_(const int* m, const int* n, double* a, const int* lda, double* tau, double* work,
             const int* lwork, int* info);
void sorgqr_(const int* m, const int* n, const int* k, float* a, const int* lda, const float* tau,
             float* work, const int* lwork, int* info);
void dorgqr_(const int* m, const int* n, const int* k, double* a, const int* lda, const double* tau,
             double* work, const int* lwork, int* info);
}

namespace spmd::kernels {
namespace {

void potrf(int n, float* a, int* info) { spotrf_("L", &n, a, &n, info, 1); }
void potrf(int n, double* a, int* info) { dpotrf_("L", &n, a, &n, info, 1); }
void geqrf(int m, int n, float* a, float* tau, float* work, int lwork, int* info) {
  sgeqrf_(&m, &n, a, &m, tau, work, &lwork, info);
}
void geqrf(int m, int n, double* a, double* tau, double* work, int lwork, int* info) {
  dgeqrf_(&m, &n, a, &m, tau, work, &lwork, info);
}
void orgqr(int m, int k, double* a, const double* tau, double* work, int lwork, int* info) {
  dorgqr_(&m, &k, &k, a, &m, tau, work, &lwork, info);
}
void orgqr(int m, int k, float* a, const float* tau, float* work, int lwork, int* info) {
  sorgqr_(&m, &k, &k, a, &m, tau, work, &lwork, info);
}

// The rows × cols row-major matrix `in` as a column-major one (its transpose, row-major).
template <class T>
void to_column_major(const T* in, int64_t rows, int64_t cols, T* out) {
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) out[j * rows + i] = in[i * cols + j];
  }
}

void trsm(CBLAS_SIDE side, CBLAS_UPLO uplo, CBLAS_TRANSPOSE trans, CBLAS_DIAG diag, int m, int n,
          const float* a, int lda, float* b, int ldb) {
  cblas_strsm(CblasColMajor, side, uplo, trans, diag, m, n, 1.0f, a, lda, b, ldb);
}
void trsm(CBLAS_SIDE side, CBLAS_UPLO uplo, CBLAS_TRANSPOSE trans, CBLAS_DIAG diag, int m, int n,
          const double* a, int lda, double* b, int ldb) {
  cblas_dtrsm(CblasColMajor, side, uplo, trans, diag, m, n, 1.0, a, lda, b, ldb);
}

template <class T>
void triangular_solve_of(const T* a, const T* b, int64_t batch, int64_t m, int64_t n,
                         TriangularSolve how, T* out) {
  const int64_t k = how.left_side ? m : n;
  std::vector<T> ac(static_cast<size_t>(k * k)), bc(static_cast<size_t>(m * n));
  for (int64_t i = 0; i < batch; ++i) {
    to_column_major(a + i * k * k, k, k, ac.data());
    to_column_major(b + i * m * n, m, n, bc.data());
    if (m > 0 && n > 0) {
      BlasCalls::get().run([&] {
        trsm(how.left_side ? CblasLeft : CblasRight, how.lower ? CblasLower : CblasUpper,
             how.transpose_a ? CblasTrans : CblasNoTrans,
             how.unit_diagonal ? CblasUnit : CblasNonUnit, static_cast<int>(m), static_cast<int>(n),
             ac.data(), static_cast<int>(std::max<int64_t>(k, 1)), bc.data(),
             static_cast<int>(std::max<int64_t>(m, 1)));
      });
    }
    T* x = out + i * m * n;
    for (int64_t r = 0; r < m; ++r) {
      for (int64_t c = 0; c < n; ++c) x[r * n + c] = bc[c * m + r];
    }
  }
}

template <class T>
void cholesky_of(const T* in, int64_t batch, int64_t n, T* out) {
  std::vector<T> a(static_cast<size_t>(n * n));
  for (int64_t b = 0; b < batch; ++b) {
    to_column_major(in + b * n * n, n, n, a.data());
    int info = 0;
    BlasCalls::get().run([&] { potrf(static_cast<int>(n), a.data(), &info); });
    T* l = out + b * n * n;
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        // JAX's, where the matrix is not positive definite: NaN on and below the diagonal.
        const T v = info != 0 ? std::numeric_limits<T>::quiet_NaN() : a[j * n + i];
        l[i * n + j] = j <= i ? v : T(0);
      }
    }
  }
}

template <class T>
void qr_of(const T* in, int64_t batch, int64_t m, int64_t n, T* q, T* r) {
  const int64_t k = std::min(m, n);
  if (k == 0 || batch == 0) return;  // Q (m × 0) and R (0 × n) are empty; LAPACK wants lda ≥ 1
  std::vector<T> a(static_cast<size_t>(m * n)), tau(static_cast<size_t>(k));
  // LAPACK's blocked algorithm needs its workspace (asked for first, as jaxlib does): with less,
  // it falls back to the unblocked one, whose rounding differs.
  int info = 0;
  T size = 0;
  geqrf(static_cast<int>(m), static_cast<int>(n), a.data(), tau.data(), &size, -1, &info);
  T size_q = 0;
  orgqr(static_cast<int>(m), static_cast<int>(k), a.data(), tau.data(), &size_q, -1, &info);
  std::vector<T> work(static_cast<size_t>(std::max<T>({size, size_q, T(1)})));
  const int lwork = static_cast<int>(work.size());
  for (int64_t b = 0; b < batch; ++b) {
    to_column_major(in + b * m * n, m, n, a.data());
    BlasCalls::get().run([&] {
      geqrf(static_cast<int>(m), static_cast<int>(n), a.data(), tau.data(), work.data(), lwork,
            &info);
    });
    T* rb = r + b * k * n;
    for (int64_t i = 0; i < k; ++i) {
      for (int64_t j = 0; j < n; ++j) rb[i * n + j] = j >= i ? a[j * m + i] : T(0);
    }
    BlasCalls::get().run([&] {
      orgqr(static_cast<int>(m), static_cast<int>(k), a.data(), tau.data(), work.data(), lwork,
            &info);
    });
    T* qb = q + b * m * k;
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < k; ++j) qb[i * k + j] = a[j * m + i];
    }
  }
}

}  // namespace

bool factorizable(DType dtype) { return dtype == DType::kFloat32 || dtype == DType::kFloat64; }

void cholesky(DType dtype, const std::byte* in, int64_t batch, int64_t n, std::byte* out) {
  if (dtype == DType::kFloat64) {
    return cholesky_of(reinterpret_cast<const double*>(in), batch, n,
                       reinterpret_cast<double*>(out));
  }
  cholesky_of(reinterpret_cast<const float*>(in), batch, n, reinterpret_cast<float*>(out));
}

void qr(DType dtype, const std::byte* in, int64_t batch, int64_t m, int64_t n, std::byte* q,
        std::byte* r) {
  if (dtype == DType::kFloat64) {
    return qr_of(reinterpret_cast<const double*>(in), batch, m, n, reinterpret_cast<double*>(q),
                 reinterpret_cast<double*>(r));
  }
  qr_of(reinterpret_cast<const float*>(in), batch, m, n, reinterpret_cast<float*>(q),
        reinterpret_cast<float*>(r));
}

void triangular_solve(DType dtype, const std::byte* a, const std::byte* b, int64_t batch, int64_t m,
                      int64_t n, TriangularSolve how, std::byte* out) {
  if (dtype == DType::kFloat64) {
    return triangular_solve_of(reinterpret_cast<const double*>(a),
                               reinterpret_cast<const double*>(b), batch, m, n, how,
                               reinterpret_cast<double*>(out));
  }
  triangular_solve_of(reinterpret_cast<const float*>(a), reinterpret_cast<const float*>(b), batch,
                      m, n, how, reinterpret_cast<float*>(out));
}

}  // namespace spmd::kernels
