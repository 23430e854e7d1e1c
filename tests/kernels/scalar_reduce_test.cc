// kernels/scalar_reduce.h, the accumulation of the CUDA backend's reductions, run here on the
// host against reduce.h's CPU kernels: sum, max, min, prod and argmax along each axis, over every
// dtype the GPU computes in, with widening sums, NaN, signed zeros and empty axes. Integer results
// and argmax agree bit for bit; floating-point sums and products within rounding (the CPU adds
// pairwise, this in order); max and min may differ in the sign of a zero.
#include "kernels/scalar_reduce.h"

#include <gtest/gtest.h>

#include <cmath>

#include "kernels/chain_cases.h"

namespace spmd::test {
namespace {

using kernels::Reduce;
using kernels::ReducePlan;

ReducePlan plan_of(Reduce op, DType dtype, DType out, const Shape& shape, int axis) {
  ReducePlan p{op, dtype, out};
  for (int d = 0; d < axis; ++d) p.outer *= shape[static_cast<size_t>(d)];
  p.extent = shape[static_cast<size_t>(axis)];
  for (size_t d = static_cast<size_t>(axis) + 1; d < shape.size(); ++d) p.inner *= shape[d];
  return p;
}

// Each output in order from element 0, as the GPU's strided kernel and each of its block
// kernel's threads reduce (a thread's elements stride by 256; with fewer, one each).
Bytes host_reduce(const ReducePlan& p, const ChainValue& in) {
  Bytes out(static_cast<size_t>(p.outer * p.inner) * dtype_size(p.out_dtype));
  for (int64_t o = 0; o < p.outer; ++o) {
    for (int64_t i = 0; i < p.inner; ++i) {
      const scalar::Slot v = p.extent == 0
                                 ? kernels::reduce_identity(p)
                                 : kernels::reduce_range(p, in.bytes.data(), o, i, 0, p.extent, 1);
      scalar::store(p.out_dtype, out.data(), o * p.inner + i, v);
    }
  }
  return out;
}

::testing::AssertionResult close(const ReducePlan& p, const Bytes& got, const Bytes& want) {
  const int64_t n = p.outer * p.inner;
  const bool floating = scalar::class_of(p.out_dtype) == scalar::Class::kFloat ||
                        scalar::class_of(p.out_dtype) == scalar::Class::kDouble;
  for (int64_t k = 0; k < n; ++k) {
    const scalar::Slot g = scalar::load(p.out_dtype, got.data(), k);
    const scalar::Slot w = scalar::load(p.out_dtype, want.data(), k);
    if (!floating) {
      if (g.i != w.i && !(scalar::class_of(p.out_dtype) == scalar::Class::kBool && g.b == w.b)) {
        return ::testing::AssertionFailure() << "output " << k << ": " << g.i << " vs " << w.i;
      }
      continue;
    }
    const double x = p.out_dtype == DType::kFloat64 ? g.d : g.f;
    const double y = p.out_dtype == DType::kFloat64 ? w.d : w.f;
    if ((std::isnan(x) && std::isnan(y)) || x == y) continue;
    const bool rounds = p.op == Reduce::kSum || p.op == Reduce::kProd;
    const double tolerance = rounds ? (scalar::is_half(p.out_dtype) ? 1e-2 : 1e-5) : 0.0;
    if (std::abs(x - y) <= tolerance * std::max(1.0, std::abs(y))) continue;
    return ::testing::AssertionFailure() << "output " << k << ": " << x << " vs " << y;
  }
  return ::testing::AssertionSuccess();
}

std::vector<double> values(int64_t n, DType t) {
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) v[static_cast<size_t>(k)] = std::fmod(k * 7.3, 23.0) - 11.0;
  if (scalar::class_of(t) == scalar::Class::kBool) {
    for (auto& x : v) x = x > 5 ? 1 : 0;
  }
  return v;
}

TEST(ScalarReduce, SumMaxMinProdAlongEachAxisAreTheCpuKernels) {
  const Shape shape{3, 5, 4};
  for (DType t : chain_dtypes()) {
    const ChainValue in = chain_value(t, values(shape_size(shape), t));
    for (Reduce op : {Reduce::kSum, Reduce::kMax, Reduce::kMin, Reduce::kProd}) {
      for (int axis = 0; axis < 3; ++axis) {
        const ReducePlan p = plan_of(op, t, t, shape, axis);
        Bytes want(static_cast<size_t>(p.outer * p.inner) * dtype_size(t));
        kernels::reduce(op, t, in.bytes.data(), shape, axis, t, want.data());
        EXPECT_TRUE(close(p, host_reduce(p, in), want))
            << kernels::name(op) << " of " << dtype_name(t) << " along " << axis;
      }
    }
  }
}

TEST(ScalarReduce, AWideningSumConvertsEachElementFirst) {
  const Shape shape{4, 300};
  for (auto [from, to] : {std::pair{DType::kInt8, DType::kInt32},
                          {DType::kBool, DType::kInt32},
                          {DType::kFloat16, DType::kFloat32},
                          {DType::kInt32, DType::kInt64}}) {
    const ChainValue in = chain_value(from, values(shape_size(shape), from));
    const ReducePlan p = plan_of(Reduce::kSum, from, to, shape, 1);
    Bytes want(static_cast<size_t>(p.outer) * dtype_size(to));
    kernels::reduce(Reduce::kSum, from, in.bytes.data(), shape, 1, to, want.data());
    EXPECT_TRUE(close(p, host_reduce(p, in), want)) << dtype_name(from) << " to " << dtype_name(to);
  }
}

TEST(ScalarReduce, NaNWinsAndAnEmptySumIsZeroAndAnEmptyProductOne) {
  const ChainValue in = chain_value(DType::kFloat32, {1, NAN, 3, -INFINITY, 5, 6});
  for (Reduce op : {Reduce::kSum, Reduce::kMax, Reduce::kMin}) {
    const ReducePlan p = plan_of(op, DType::kFloat32, DType::kFloat32, {2, 3}, 1);
    const Bytes got = host_reduce(p, in);
    EXPECT_TRUE(std::isnan(scalar::load(DType::kFloat32, got.data(), 0).f)) << kernels::name(op);
    EXPECT_FALSE(std::isnan(scalar::load(DType::kFloat32, got.data(), 1).f)) << kernels::name(op);
  }
  const ReducePlan empty = plan_of(Reduce::kSum, DType::kFloat32, DType::kFloat32, {2, 0}, 1);
  const Bytes zeros = host_reduce(empty, chain_value(DType::kFloat32, {}));
  EXPECT_EQ(scalar::load(DType::kFloat32, zeros.data(), 1).f, 0.0f);
  // An empty product is one in every class, as the CPU kernel's.
  for (DType t : chain_dtypes()) {
    const ReducePlan p = plan_of(Reduce::kProd, t, t, {2, 0}, 1);
    const Bytes ones = host_reduce(p, chain_value(t, {}));
    Bytes want(2 * dtype_size(t));
    kernels::reduce(Reduce::kProd, t, nullptr, {2, 0}, 1, t, want.data());
    EXPECT_EQ(ones, want) << dtype_name(t);
    const scalar::Slot one = scalar::load(t, ones.data(), 1);
    const double value = scalar::class_of(t) == scalar::Class::kBool    ? one.b
                         : scalar::class_of(t) == scalar::Class::kInt   ? double(one.i)
                         : scalar::class_of(t) == scalar::Class::kFloat ? one.f
                                                                        : one.d;
    EXPECT_EQ(value, 1.0) << dtype_name(t);
  }
}

TEST(ScalarReduce, ArgmaxIsTheCpuKernelsFirstMaximumAndFirstNaN) {
  const Shape shape{3, 7, 2};
  for (DType t : chain_dtypes()) {
    std::vector<double> v = values(shape_size(shape), t);
    if (scalar::class_of(t) == scalar::Class::kFloat || t == DType::kFloat64) v[9] = NAN;
    const ChainValue in = chain_value(t, v);
    for (int axis = 0; axis < 3; ++axis) {
      const ReducePlan p = plan_of(Reduce::kMax, t, t, shape, axis);
      std::vector<int32_t> want(static_cast<size_t>(p.outer * p.inner));
      kernels::argmax(t, in.bytes.data(), shape, axis, reinterpret_cast<std::byte*>(want.data()));
      for (int64_t o = 0; o < p.outer; ++o) {
        for (int64_t i = 0; i < p.inner; ++i) {
          EXPECT_EQ(kernels::argmax_element(t, in.bytes.data(), p.extent, p.inner, o, i),
                    want[static_cast<size_t>(o * p.inner + i)])
              << dtype_name(t) << " along " << axis << " at " << o << "," << i;
        }
      }
    }
  }
}

}  // namespace
}  // namespace spmd::test
