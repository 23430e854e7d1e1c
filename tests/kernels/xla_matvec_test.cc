// kernels::matmul of a float32 matrix and a vector sums in XLA's order (kernels/xla_matvec.h):
// inputs whose sums differ by order (2^25 + 1 rounds back to 2^25 in float32) show which lanes
// meet first in a full tile of eight rows, in a leftover row, and for the last k % 8 columns;
// a strided vector, a batch, and a large product give the same bytes on every team.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kernels/matmul.h"
#include "kernels/thread_team.h"

namespace {

namespace k = spmd::kernels;
using spmd::DType;

constexpr float kBig = 33554432.0F;  // 2^25: kBig + 1 is kBig again in float32

std::vector<float> product(const k::MatmulShape& s, const std::vector<float>& a,
                           const std::vector<float>& x) {
  std::vector<float> out(size_t(s.batch * s.m), -7.0F);
  k::matmul(DType::kFloat32, s, reinterpret_cast<const std::byte*>(a.data()),
            reinterpret_cast<const std::byte*>(x.data()), reinterpret_cast<std::byte*>(out.data()));
  return out;
}

k::MatmulShape matvec(int64_t m, int64_t kk, int64_t batch = 1) {
  k::MatmulShape s;
  s.batch = batch;
  s.m = m;
  s.k = kk;
  s.n = 1;
  return s;
}

// Every row of a (m × 8) matrix is {2^25, 1, -2^25, 0, ...}, the vector all ones. A full tile
// adds lanes pairwise, (2^25 + 1) + (-2^25 + 0) = 0; a leftover row by halves, (2^25 + 0) +
// (-2^25 + 0) then (1 + 0): 1. Summed in order, it would be 0 everywhere.
TEST(XlaMatvec, AFullTileAddsItsLanesPairwiseALeftoverRowByHalves) {
  const int64_t m = 11;
  std::vector<float> a(size_t(m * 8), 0.0F);
  for (int64_t r = 0; r < m; ++r) {
    a[size_t(r * 8)] = kBig;
    a[size_t(r * 8 + 1)] = 1.0F;
    a[size_t(r * 8 + 2)] = -kBig;
  }
  const std::vector<float> got = product(matvec(m, 8), a, std::vector<float>(8, 1.0F));
  for (int64_t r = 0; r < m; ++r) EXPECT_EQ(got[size_t(r)], r < 8 ? 0.0F : 1.0F) << "row " << r;
}

// The last k % 8 columns are summed apart, from zero, and added to the lanes' sum at the end:
// lanes {-2^25, 0, ...}, tail {2^25, 1}: apart, 2^25 + 1 = 2^25, and -2^25 + 2^25 = 0; added one
// by one to the lanes' sum it would be (-2^25 + 2^25) + 1 = 1. Under eight columns the tail is
// all there is, in order: {1, 2^25, -2^25} gives (1 + 2^25) - 2^25 = 0, in reverse 1.
TEST(XlaMatvec, TheLastColumnsAreSummedApartAndAddedAtTheEnd) {
  std::vector<float> a(size_t{20}, 0.0F);
  for (size_t r = 0; r < 2; ++r) {
    a[r * 10] = -kBig;
    a[r * 10 + 8] = kBig;
    a[r * 10 + 9] = 1.0F;
  }
  const std::vector<float> got = product(matvec(2, 10), a, std::vector<float>(10, 1.0F));
  EXPECT_EQ(got[0], 0.0F);
  EXPECT_EQ(got[1], 0.0F);
  const std::vector<float> short_rows = {1.0F, kBig, -kBig, 1.0F, kBig, -kBig};
  const std::vector<float> two = product(matvec(2, 3), short_rows, {1.0F, 1.0F, 1.0F});
  EXPECT_EQ(two[0], 0.0F);
  EXPECT_EQ(two[1], 0.0F);
}

TEST(XlaMatvec, AStridedVectorAndABatchGiveEachMemberItsOwnProduct) {
  const int64_t m = 13, kk = 21, batch = 3;
  std::vector<float> a(static_cast<size_t>(batch * m * kk)), x(static_cast<size_t>(batch * kk * 2));
  for (size_t i = 0; i < a.size(); ++i) a[i] = float((i * 37 + 11) % 61) * 0.25F - 7.0F;
  for (size_t i = 0; i < x.size(); ++i) x[i] = float((i * 53 + 5) % 59) * 0.5F - 14.0F;
  k::MatmulShape s = matvec(m, kk, batch);
  s.ldb = 2;  // the vector's elements two apart, as a column of a (k × 2) matrix
  s.batch_dims = {{batch, m * kk, kk * 2, m}};
  const std::vector<float> got = product(s, a, x);
  for (int64_t i = 0; i < batch; ++i) {
    for (int64_t r = 0; r < m; ++r) {
      double want = 0;  // small integers times quarters: exact in any order
      for (int64_t j = 0; j < kk; ++j) {
        want += double(a[size_t((i * m + r) * kk + j)]) * double(x[size_t(i * kk * 2 + j * 2)]);
      }
      EXPECT_EQ(got[size_t(i * m + r)], float(want)) << "member " << i << " row " << r;
    }
  }
}

TEST(XlaMatvec, ALargeProductIsTheSameBytesOnEveryTeam) {
  const int64_t m = 4099, kk = 517;
  std::vector<float> a(static_cast<size_t>(m * kk)), x(static_cast<size_t>(kk));
  for (size_t i = 0; i < a.size(); ++i) a[i] = std::sin(float(i) * 0.37F);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::cos(float(i) * 0.11F);
  const std::vector<float> alone = product(matvec(m, kk), a, x);
  for (int size : {2, 3}) {
    k::ThreadTeam team(size);
    const k::TeamScope scope(&team);
    EXPECT_EQ(product(matvec(m, kk), a, x), alone) << "team of " << size;
  }
}

}  // namespace
