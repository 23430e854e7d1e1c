// The CUDA backend's order-dependent kernels on a GPU (label gpu) against the CPU's, bit for bit:
// cumsum and cumprod along each axis at lengths around XLA's rows of 16, jnp.searchsorted,
// lax.top_k with ties and NaN, the sort along an axis (values, positions and payloads of each
// width, both directions), scatter_add (take's transpose) in its order, and the scatter with a
// combiner (x.at[].set/add/mul/min/max, computed on the host for now) with repeats and drops.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "gpu/gpu_fixture.h"
#include "kernels/cuda/host_fallback.h"
#include "kernels/cuda/ordering.h"
#include "kernels/cuda/random_permute.h"
#include "kernels/ordering.h"
#include "kernels/random_samplers.h"
#include "kernels/scatter.h"
#include "spmd/error.h"

namespace spmd::test {
namespace {

using GpuOrdering = Gpu;

template <class T>
Bytes as_bytes(const std::vector<T>& v) {
  Bytes b(v.size() * sizeof(T));
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

TEST_F(GpuOrdering, CumsumAndCumprodAreTheCpusBitForBit) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> d(0.9f, 1.1f);
  for (const Shape& shape : {Shape{300}, Shape{3, 17, 5}, Shape{2, 4100}, Shape{70001, 2}}) {
    std::vector<float> x(static_cast<size_t>(shape_size(shape)));
    for (auto& v : x) v = d(rng);
    x[x.size() / 2] = -0.0f;
    const Bytes in = as_bytes(x);
    const DeviceBuffer d_in = upload(in);
    for (int axis = 0; axis < static_cast<int>(shape.size()); ++axis) {
      for (bool multiply : {false, true}) {
        Bytes want(in.size());
        DeviceBuffer out = upload(Bytes(in.size(), std::byte{0xEE}));
        if (multiply) {
          kernels::cumprod(DType::kFloat32, in.data(), shape, axis, want.data());
          kernels::cuda::cumprod(gpu(), DType::kFloat32, d_in.data(), shape, axis, out.data());
        } else {
          kernels::cumsum(DType::kFloat32, in.data(), shape, axis, want.data());
          kernels::cuda::cumsum(gpu(), DType::kFloat32, d_in.data(), shape, axis, out.data());
        }
        EXPECT_EQ(download(out, in.size()), want)
            << (multiply ? "cumprod" : "cumsum") << " along " << axis << " of " << shape.size();
      }
    }
  }
  std::vector<int64_t> wide(1000);
  for (auto& v : wide) v = static_cast<int64_t>(rng()) << 20;
  const Bytes in = as_bytes(wide);
  Bytes want(in.size());
  kernels::cumprod(DType::kInt64, in.data(), {1000}, 0, want.data());
  const DeviceBuffer d_in = upload(in);
  DeviceBuffer out = upload(Bytes(in.size()));
  kernels::cuda::cumprod(gpu(), DType::kInt64, d_in.data(), {1000}, 0, out.data());
  EXPECT_EQ(download(out, in.size()), want) << "int64 cumprod wraps as the CPU's";
}

TEST_F(GpuOrdering, SearchSortedIsTheCpus) {
  std::vector<double> sorted(1000);
  for (size_t i = 0; i < sorted.size(); ++i) sorted[i] = std::floor(i / 3.0) - 100;
  sorted.back() = NAN;
  std::vector<double> queries;
  for (int q = -120; q < 260; ++q) queries.push_back(q * 0.75);
  queries.push_back(NAN);
  queries.push_back(-0.0);
  std::vector<int32_t> want(queries.size());
  kernels::search_sorted(DType::kFloat64, as_bytes(sorted).data(),
                         static_cast<int64_t>(sorted.size()), as_bytes(queries).data(),
                         static_cast<int64_t>(queries.size()), want.data());
  const DeviceBuffer d_sorted = upload(as_bytes(sorted)), d_queries = upload(as_bytes(queries));
  DeviceBuffer out = upload(Bytes(want.size() * 4));
  kernels::cuda::search_sorted(gpu(), DType::kFloat64, d_sorted.data(),
                               static_cast<int64_t>(sorted.size()), d_queries.data(),
                               static_cast<int64_t>(queries.size()),
                               reinterpret_cast<int32_t*>(out.data()));
  EXPECT_EQ(download(out, want.size() * 4), as_bytes(want));
}

TEST_F(GpuOrdering, TopKIsTheCpusWithTiesAndNaN) {
  std::mt19937 rng(9);
  for (int64_t n : {1, 10, 1000, 100003}) {
    std::vector<float> x(static_cast<size_t>(n));
    for (auto& v : x) v = static_cast<float>(rng() % 50) - 25.0f;  // many ties
    if (n > 10) {
      x[7] = NAN;
      x[3] = -0.0f;
    }
    const int64_t k = std::min<int64_t>(n, 64);
    std::vector<int32_t> want(static_cast<size_t>(k));
    kernels::top_k(DType::kFloat32, as_bytes(x).data(), n, k, want.data());
    const DeviceBuffer d_in = upload(as_bytes(x));
    DeviceBuffer out = upload(Bytes(static_cast<size_t>(k) * 4));
    kernels::cuda::top_k(gpu(), DType::kFloat32, d_in.data(), n, k,
                         reinterpret_cast<int32_t*>(out.data()));
    EXPECT_EQ(download(out, static_cast<size_t>(k) * 4), as_bytes(want)) << n;
  }
  EXPECT_THROW(kernels::cuda::top_k(gpu(), DType::kInt8, nullptr, 4, 1, nullptr), InvalidArgument);
}

// jnp.sort, jnp.argsort and lax.sort_key_val: the CPU's results bit for bit, along each axis,
// ascending and descending, on floats with ties, signed zeros and NaN of both signs.
TEST_F(GpuOrdering, SortIsTheCpusAlongEachAxisBothWays) {
  std::mt19937 rng(11);
  const float pool[] = {0.0f, -0.0f, 1.0f, -1.0f, 2.5f, INFINITY, -INFINITY, NAN, -NAN};
  for (const Shape& shape : {Shape{1}, Shape{17}, Shape{5, 7, 6}, Shape{3, 40000}}) {
    const auto count = static_cast<size_t>(shape_size(shape));
    std::vector<float> x(count);
    for (auto& v : x) v = pool[rng() % std::size(pool)];
    std::vector<uint16_t> payload(count);
    for (auto& v : payload) v = static_cast<uint16_t>(rng());
    const Bytes keys = as_bytes(x), extra = as_bytes(payload);
    const DeviceBuffer d_keys = upload(keys), d_payload = upload(extra);
    for (int axis = 0; axis < static_cast<int>(shape.size()); ++axis) {
      for (const bool descending : {false, true}) {
        // No payload (positions), a 2-byte payload, and the keys as their own payload.
        for (const size_t width : {size_t{0}, size_t{2}, size_t{4}}) {
          const kernels::SortSpec spec{shape, axis, descending, width};
          const size_t out_bytes = count * (width == 0 ? 4 : width);
          Bytes want(out_bytes);
          kernels::sort(DType::kFloat32, keys.data(), spec,
                        width == 2   ? extra.data()
                        : width == 4 ? keys.data()
                                     : nullptr,
                        want.data());
          DeviceBuffer out = upload(Bytes(out_bytes));
          kernels::cuda::sort(gpu(), DType::kFloat32, d_keys.data(), spec,
                              width == 2   ? d_payload.data()
                              : width == 4 ? d_keys.data()
                                           : nullptr,
                              out.data());
          EXPECT_EQ(download(out, out_bytes), want)
              << "shape rank " << shape.size() << ", axis " << axis << ", descending " << descending
              << ", payload width " << width;
        }
      }
    }
  }
  const kernels::SortSpec bad{Shape{4}, 0, false, 3};
  EXPECT_THROW(kernels::cuda::sort(gpu(), DType::kFloat32, nullptr, bad, nullptr, nullptr),
               InvalidArgument);
}

// take's transpose: the CPU's sums bit for bit (repeated indices summed in their order, ones
// out of range clamped), along each axis, in float32 and float16.
TEST_F(GpuOrdering, ScatterAddIsTheCpusInOrder) {
  std::mt19937 rng(13);
  for (const Shape& shape : {Shape{7}, Shape{5, 300}, Shape{1000, 3}}) {
    for (int axis = 0; axis < static_cast<int>(shape.size()); ++axis) {
      const int64_t count = 2 * shape[static_cast<size_t>(axis)] + 3;
      std::vector<int32_t> indices(static_cast<size_t>(count));
      for (auto& i : indices) i = static_cast<int32_t>(rng() % 9) - 1;  // repeats, -1, past 7
      Shape updates_shape = shape;
      updates_shape[static_cast<size_t>(axis)] = count;
      const auto n = static_cast<size_t>(shape_size(updates_shape));
      std::vector<float> updates(n);
      for (auto& v : updates) v = static_cast<float>(static_cast<int>(rng() % 2001) - 1000) / 7.0f;
      std::vector<uint16_t> halves(n);
      for (size_t k = 0; k < n; ++k) halves[k] = to_float16(updates[k]).bits;
      for (const DType dtype : {DType::kFloat32, DType::kFloat16}) {
        const Bytes in = dtype == DType::kFloat32 ? as_bytes(updates) : as_bytes(halves);
        const size_t out_bytes = static_cast<size_t>(shape_size(shape)) * dtype_size(dtype);
        Bytes want(out_bytes);
        kernels::scatter_add(dtype, in.data(), shape, axis, indices.data(), count, want.data());
        const DeviceBuffer d_in = upload(in), d_indices = upload(as_bytes(indices));
        DeviceBuffer out = upload(Bytes(out_bytes));
        kernels::cuda::scatter_add(gpu(), dtype, d_in.data(), shape, axis,
                                   reinterpret_cast<const int32_t*>(d_indices.data()), count,
                                   out.data());
        EXPECT_EQ(download(out, out_bytes), want)
            << dtype_name(dtype) << ", rank " << shape.size() << ", axis " << axis;
      }
    }
  }
  EXPECT_THROW(
      kernels::cuda::scatter_add(gpu(), DType::kInt32, nullptr, Shape{4}, 0, nullptr, 1, nullptr),
      InvalidArgument);
}

TEST_F(GpuOrdering, ScatterWithACombinerIsTheCpus) {
  const Shape shape{3, 5, 2};
  const std::vector<int32_t> indices = {4, 0, 4, -1, 9, 2, 4};
  const auto count = static_cast<int64_t>(indices.size());
  std::vector<float> x(30), updates(static_cast<size_t>(3 * count * 2));
  std::iota(x.begin(), x.end(), -7.0F);
  for (size_t k = 0; k < updates.size(); ++k) updates[k] = static_cast<float>(k % 7) - 2.5F;
  using kernels::ScatterCombine;
  for (const ScatterCombine how : {ScatterCombine::kSet, ScatterCombine::kAdd, ScatterCombine::kMul,
                                   ScatterCombine::kMin, ScatterCombine::kMax}) {
    Bytes want = as_bytes(x);
    kernels::scatter(how, DType::kFloat32, as_bytes(updates).data(), shape, 1, indices.data(),
                     count, want.data());
    const DeviceBuffer d_updates = upload(as_bytes(updates)), d_indices = upload(as_bytes(indices));
    DeviceBuffer out = upload(as_bytes(x));
    kernels::cuda::scatter_on_host(gpu(), how, DType::kFloat32, d_updates.data(), shape, 1,
                                   reinterpret_cast<const int32_t*>(d_indices.data()), count,
                                   out.data());
    EXPECT_EQ(download(out, want.size()), want) << kernels::scatter_combine_name(how);
  }
}

// jax.random.permutation's shuffle: the CPU's order, bit for bit, along each axis.
TEST_F(GpuOrdering, RandomPermuteIsTheCpusShuffle) {
  for (const Shape& shape : {Shape{1}, Shape{10}, Shape{1000, 3}, Shape{4, 100003}}) {
    const int64_t n = shape_size(shape);
    std::vector<int32_t> x(static_cast<size_t>(n));
    std::iota(x.begin(), x.end(), 0);
    const Bytes in = as_bytes(x);
    const DeviceBuffer d_in = upload(in);
    for (int axis = 0; axis < static_cast<int>(shape.size()); ++axis) {
      Bytes want(in.size());
      kernels::random_permute({11, 22}, 4, in.data(), shape, axis, want.data());
      DeviceBuffer out = upload(Bytes(in.size(), std::byte{0xEE}));
      kernels::cuda::random_permute(gpu(), {11, 22}, 4, d_in.data(), shape, axis, out.data());
      EXPECT_EQ(download(out, in.size()), want) << "axis " << axis << " of " << n;
    }
  }
}

}  // namespace
}  // namespace spmd::test
