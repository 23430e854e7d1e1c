// linalg.h by Eigen: one matrix at a time, mapped in place (row-major).
#include "kernels/linalg.h"

#include <Eigen/Cholesky>
#include <Eigen/Dense>
#include <Eigen/QR>
#include <algorithm>
#include <limits>

namespace spmd::kernels {
namespace {

template <class T>
using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <class T>
using Map = Eigen::Map<Matrix<T>>;
template <class T>
using ConstMap = Eigen::Map<const Matrix<T>>;

template <class T>
void cholesky_of(const T* in, int64_t batch, int64_t n, T* out) {
  for (int64_t b = 0; b < batch; ++b) {
    const ConstMap<T> a(in + b * n * n, n, n);
    Map<T> l(out + b * n * n, n, n);
    const Eigen::LLT<Matrix<T>, Eigen::Lower> llt(a);
    if (llt.info() != Eigen::Success) {  // JAX's: NaN on and below the diagonal, 0 above
      l.setZero();
      l.template triangularView<Eigen::Lower>().setConstant(std::numeric_limits<T>::quiet_NaN());
    } else {
      l = llt.matrixL();
    }
  }
}

template <class T>
void qr_of(const T* in, int64_t batch, int64_t m, int64_t n, T* q, T* r) {
  const int64_t k = std::min(m, n);
  for (int64_t b = 0; b < batch; ++b) {
    const Eigen::HouseholderQR<Matrix<T>> qr(ConstMap<T>(in + b * m * n, m, n));
    Map<T>(q + b * m * k, m, k) = qr.householderQ() * Matrix<T>::Identity(m, k);
    Map<T>(r + b * k * n, k, n) = qr.matrixQR().topRows(k).template triangularView<Eigen::Upper>();
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

}  // namespace spmd::kernels
