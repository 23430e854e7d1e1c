// kernels/linalg.h, OpenBLAS's LAPACK and BLAS behind row-major batches: each factorization and
// solve against its defining equation, the triangle each reads (NaN in the other changes
// nothing), a matrix that is not positive definite, and four threads solving at once getting
// one thread's bits.
#include "kernels/linalg.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <thread>
#include <vector>

namespace spmd::kernels {
namespace {

const float kNaN = std::numeric_limits<float>::quiet_NaN();

std::vector<float> random_matrix(int64_t rows, int64_t cols, unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> normal;
  std::vector<float> m(static_cast<size_t>(rows * cols));
  for (float& v : m) v = normal(gen);
  return m;
}

const std::byte* bytes(const std::vector<float>& v) {
  return reinterpret_cast<const std::byte*>(v.data());
}
std::byte* bytes(std::vector<float>& v) { return reinterpret_cast<std::byte*>(v.data()); }

// a k×k with its solved triangle well conditioned and NaN in the other (and on the diagonal
// when it is a unit one): the solve must read neither.
std::vector<float> triangular(int64_t k, const TriangularSolve& how, unsigned seed) {
  std::vector<float> a = random_matrix(k, k, seed);
  for (int64_t i = 0; i < k; ++i) {
    for (int64_t j = 0; j < k; ++j) {
      float& v = a[static_cast<size_t>(i * k + j)];
      const bool kept = how.lower ? j <= i : j >= i;
      if (!kept) v = kNaN;
      if (i == j) v = how.unit_diagonal ? kNaN : 4.0f + std::abs(v);
    }
  }
  return a;
}

// op(a)[i][j] as the solve sees it.
double op_a(const std::vector<float>& a, int64_t k, const TriangularSolve& how, int64_t i,
            int64_t j) {
  if (how.transpose_a) std::swap(i, j);
  if (i == j) return how.unit_diagonal ? 1.0 : a[static_cast<size_t>(i * k + j)];
  const bool kept = how.lower ? j < i : j > i;
  return kept ? a[static_cast<size_t>(i * k + j)] : 0.0;
}

TEST(Linalg, ATriangularSolveSatisfiesItsSystemForEveryFlagAndReadsOnlyItsTriangle) {
  const int64_t m = 5, n = 3;
  for (int flags = 0; flags < 16; ++flags) {
    const TriangularSolve how{(flags & 1) != 0, (flags & 2) != 0, (flags & 4) != 0,
                              (flags & 8) != 0};
    const int64_t k = how.left_side ? m : n;
    const std::vector<float> a = triangular(k, how, 10 + flags);
    const std::vector<float> b = random_matrix(m, n, 40 + flags);
    std::vector<float> x(static_cast<size_t>(m * n));
    triangular_solve(DType::kFloat32, bytes(a), bytes(b), 1, m, n, how, bytes(x));
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0;  // (op(a) x)[i][j] or (x op(a))[i][j]
        for (int64_t l = 0; l < k; ++l) {
          sum += how.left_side ? op_a(a, k, how, i, l) * x[static_cast<size_t>(l * n + j)]
                               : x[static_cast<size_t>(i * n + l)] * op_a(a, k, how, l, j);
        }
        EXPECT_NEAR(sum, b[static_cast<size_t>(i * n + j)], 1e-4)
            << "flags " << flags << " at " << i << ", " << j;
      }
    }
  }
}

TEST(Linalg, CholeskyFactorsReadTheLowerTriangleAndANonPositiveMatrixIsNaN) {
  const int64_t n = 6;
  const std::vector<float> g = random_matrix(n, n, 3);
  std::vector<float> a(static_cast<size_t>(2 * n * n), 0.0f);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      float s = i == j ? static_cast<float>(n) : 0.0f;
      for (int64_t l = 0; l < n; ++l) s += g[i * n + l] * g[j * n + l];
      a[static_cast<size_t>(i * n + j)] = j > i ? kNaN : s;  // the upper triangle unread
      a[static_cast<size_t>(n * n + i * n + j)] = i == j ? -1.0f : 0.0f;  // not positive
    }
  }
  std::vector<float> l(a.size());
  cholesky(DType::kFloat32, bytes(a), 2, n, bytes(l));
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      if (j > i) {
        EXPECT_EQ(l[static_cast<size_t>(i * n + j)], 0.0f);
        EXPECT_EQ(l[static_cast<size_t>(n * n + i * n + j)], 0.0f);
        continue;
      }
      double s = 0;
      for (int64_t k = 0; k <= j; ++k) s += l[i * n + k] * l[j * n + k];
      EXPECT_NEAR(s, a[static_cast<size_t>(i * n + j)], 1e-3) << i << ", " << j;
      EXPECT_TRUE(std::isnan(l[static_cast<size_t>(n * n + i * n + j)]));
    }
  }
}

TEST(Linalg, QrGivesOrthonormalColumnsAndAnUpperFactorOfTallAndWideMatrices) {
  for (const auto& [m, n] : {std::pair<int64_t, int64_t>{7, 4}, {4, 7}, {5, 5}}) {
    const int64_t k = std::min(m, n);
    const std::vector<float> a = random_matrix(m, n, 5);
    std::vector<float> q(static_cast<size_t>(m * k)), r(static_cast<size_t>(k * n));
    qr(DType::kFloat32, bytes(a), 1, m, n, bytes(q), bytes(r));
    for (int64_t i = 0; i < k; ++i) {
      for (int64_t j = 0; j < k; ++j) {
        double dot = 0;
        for (int64_t l = 0; l < m; ++l) dot += q[l * k + i] * q[l * k + j];
        EXPECT_NEAR(dot, i == j ? 1.0 : 0.0, 1e-5) << m << "x" << n;
      }
      for (int64_t j = 0; j < i; ++j) EXPECT_EQ(r[i * n + j], 0.0f);
    }
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t l = 0; l < k; ++l) s += q[i * k + l] * r[l * n + j];
        EXPECT_NEAR(s, a[i * n + j], 1e-4) << m << "x" << n << " at " << i << ", " << j;
      }
    }
  }
}

TEST(Linalg, FourThreadsSolvingAtOnceGetOneThreadsBits) {
  const int64_t m = 64, n = 48, batch = 8;
  const TriangularSolve how{true, true, false, false};
  std::vector<float> a, b = random_matrix(batch * m, n, 8);
  for (int64_t i = 0; i < batch; ++i) {
    const std::vector<float> one = triangular(m, how, 20 + static_cast<unsigned>(i));
    a.insert(a.end(), one.begin(), one.end());
  }
  std::vector<float> want(b.size());
  triangular_solve(DType::kFloat32, bytes(a), bytes(b), batch, m, n, how, bytes(want));
  std::vector<std::vector<float>> got(4, std::vector<float>(b.size()));
  std::vector<std::thread> threads;
  for (auto& out : got) {
    threads.emplace_back([&, out = &out] {
      for (int round = 0; round < 50; ++round) {
        triangular_solve(DType::kFloat32, bytes(a), bytes(b), batch, m, n, how, bytes(*out));
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (const auto& out : got) {
    EXPECT_EQ(std::memcmp(out.data(), want.data(), want.size() * sizeof(float)), 0);
  }
}

}  // namespace
}  // namespace spmd::kernels
