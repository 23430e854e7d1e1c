// kernels::matmul with strided operands and result (kernels/matmul.h: leading dimensions and
// batch dimensions with a stride per operand): the attention's per-head layout, with padding
// between the result's rows that must stay untouched, in every dtype (BLAS's read in place, the
// others gathered and scattered), against the definition; and a large strided product gives the
// same bytes on every team.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/dispatch.h"
#include "kernels/matmul.h"
#include "kernels/matmul_cases.h"
#include "kernels/thread_team.h"

namespace {

namespace k = spmd::kernels;
using spmd::DType;

k::MatmulShape attention(int64_t q = 5, int64_t keys = 4, int64_t d = 6) {
  return spmd::testing::attention_product(q, keys, d);
}

int64_t extent(const k::MatmulShape& s, int which) {
  return spmd::testing::matmul_extent(s, which);
}

// The product by its definition, where the result's elements lie; the rest left as they were.
std::vector<double> reference(const k::MatmulShape& s, const std::vector<double>& a,
                              const std::vector<double>& b, std::vector<double> c) {
  for (int64_t i = 0; i < s.batch; ++i) {
    const k::MatmulOffsets o = k::member_offsets(s, i);
    for (int64_t r = 0; r < s.m; ++r) {
      for (int64_t col = 0; col < s.n; ++col) {
        double sum = 0;
        for (int64_t p = 0; p < s.k; ++p) {
          const double x =
              a[size_t(o.a + (s.transpose_a ? p * k::leading_a(s) + r : r * k::leading_a(s) + p))];
          const double y = b[size_t(
              o.b + (s.transpose_b ? col * k::leading_b(s) + p : p * k::leading_b(s) + col))];
          sum += x * y;
        }
        c[size_t(o.out + r * k::leading_c(s) + col)] = sum;
      }
    }
  }
  return c;
}

std::vector<std::byte> bytes_of(DType dtype, const std::vector<double>& v) {
  std::vector<std::byte> out(v.size() * spmd::dtype_size(dtype));
  k::visit_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    if constexpr (k::is_half<T>) {
      k::from_wide(dtype, std::vector<float>(v.begin(), v.end()), out.data());
    } else {
      for (size_t i = 0; i < v.size(); ++i) reinterpret_cast<T*>(out.data())[i] = T(v[i]);
    }
  });
  return out;
}

std::vector<double> doubles(DType dtype, const std::vector<std::byte>& bytes) {
  const size_t n = bytes.size() / spmd::dtype_size(dtype);
  std::vector<double> v(n);
  k::visit_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    if constexpr (k::is_half<T>) {
      const auto wide = k::to_wide(dtype, bytes.data(), static_cast<int64_t>(n));
      for (size_t i = 0; i < n; ++i) v[i] = wide[i];
    } else {
      for (size_t i = 0; i < n; ++i) v[i] = double(reinterpret_cast<const T*>(bytes.data())[i]);
    }
  });
  return v;
}

std::vector<double> small_integers(int64_t n, int seed) {
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[size_t(i)] = double((i * 5 + seed) % 7 - 3);
  return v;
}

TEST(StridedMatmul, ThePerHeadLayoutInEveryDtypeWithItsPaddingUntouched) {
  for (DType dtype : {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16,
                      DType::kInt32, DType::kInt8}) {
    for (bool transposed : {false, true}) {
      SCOPED_TRACE(std::string(spmd::dtype_name(dtype)) + (transposed ? ", a transposed" : ""));
      k::MatmulShape s = attention();
      if (transposed) {  // a read as d × q per head: "bdhq"-like, rows H·Q apart
        s.transpose_a = true;
        s.lda = int64_t{3} * 5;
        s.batch_dims[0].a = int64_t{6} * 3 * 5;
        s.batch_dims[1].a = 5;
      }
      const std::vector<double> a = small_integers(extent(s, 0), 1);
      const std::vector<double> b = small_integers(extent(s, 1), 2);
      const std::vector<double> padding(static_cast<size_t>(extent(s, 2)), -2.0);
      const std::vector<double> want = reference(s, a, b, padding);
      std::vector<std::byte> out = bytes_of(dtype, padding);
      k::matmul(dtype, s, bytes_of(dtype, a).data(), bytes_of(dtype, b).data(), out.data());
      const std::vector<double> got = doubles(dtype, out);
      int padded = 0;
      for (size_t i = 0; i < want.size(); ++i) {
        ASSERT_EQ(got[i], want[i]) << "element " << i;
        padded += want[i] == -2.0 && padding[i] == -2.0;
      }
      EXPECT_GE(padded, 2 * 3 * 5 * 3) << "the padding columns were checked";
    }
  }
}

TEST(StridedMatmul, AnEmptyContractionWritesZerosWhereTheResultLiesOnly) {
  for (DType dtype : {DType::kFloat32, DType::kFloat16, DType::kInt32}) {
    SCOPED_TRACE(std::string(spmd::dtype_name(dtype)));
    k::MatmulShape s = attention();
    s.k = 0;
    const std::vector<double> padding(static_cast<size_t>(extent(s, 2)), -2.0);
    std::vector<std::byte> out = bytes_of(dtype, padding);
    k::matmul(dtype, s, nullptr, nullptr, out.data());
    const std::vector<double> got = doubles(dtype, out);
    const std::vector<double> want = reference(s, {}, {}, padding);
    EXPECT_EQ(got, want);
    EXPECT_NE(std::count(want.begin(), want.end(), 0.0), 0);
  }
}

TEST(StridedMatmul, ALargeStridedProductIsTheSameBytesOnEveryTeam) {
  const k::MatmulShape s = attention(300, 520, 64);
  std::vector<float> a(size_t(extent(s, 0))), b(size_t(extent(s, 1)));
  for (size_t i = 0; i < a.size(); ++i) a[i] = float((i * 37 + 11) % 61) * 0.01f;
  for (size_t i = 0; i < b.size(); ++i) b[i] = float((i * 53 + 5) % 59) * 0.01f - 0.2f;
  const auto product = [&] {
    std::vector<float> c(size_t(extent(s, 2)), -2.0f);
    k::matmul(DType::kFloat32, s, reinterpret_cast<const std::byte*>(a.data()),
              reinterpret_cast<const std::byte*>(b.data()), reinterpret_cast<std::byte*>(c.data()));
    return c;
  };
  const std::vector<float> alone = product();
  for (int size : {2, 3, 4}) {
    k::ThreadTeam team(size);
    const k::TeamScope scope(&team);
    EXPECT_EQ(product(), alone) << "team of " << size;
  }
  // Spot-check against the definition, in double.
  const k::MatmulOffsets o = k::member_offsets(s, 4);
  double sum = 0;
  for (int64_t p = 0; p < s.k; ++p) {
    sum += double(a[size_t(o.a + 7 * s.lda + p)]) * double(b[size_t(o.b + 11 * s.ldb + p)]);
  }
  EXPECT_NEAR(alone[size_t(o.out + 7 * s.ldc + 11)], sum, 1e-4);
  EXPECT_EQ(alone[size_t(o.out + 7 * s.ldc + s.n)], -2.0f) << "padding written";
}

TEST(StridedMatmul, BatchDimensionsThatDoNotMultiplyToTheBatchAreRefused) {
  k::MatmulShape s = attention();
  s.batch = 5;
  std::vector<float> buffer(4096);
  auto* p = reinterpret_cast<std::byte*>(buffer.data());
  EXPECT_THROW(k::matmul(DType::kFloat32, s, p, p, p), spmd::InvalidArgument);
}

}  // namespace
