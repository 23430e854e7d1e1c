// The CUDA backend's layout changes and reductions on a GPU (label gpu), against the CPU
// kernels: layout bit for bit; integer reductions and argmax bit for bit, floating-point sums
// within rounding, max and min up to the sign of a zero.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <vector>

#include "gpu/gpu_fixture.h"
#include "kernels/backend.h"
#include "kernels/cuda/fill.h"
#include "kernels/cuda/layout.h"
#include "kernels/cuda/random_bits.h"
#include "kernels/cuda/reduce.h"
#include "kernels/layout.h"
#include "kernels/ordering.h"
#include "kernels/random_bits.h"
#include "kernels/reduce.h"
#include "spmd/error.h"

namespace spmd::test {
namespace {

using GpuLayout = Gpu;
using GpuReduce = Gpu;

Bytes words(int64_t n) {
  std::vector<uint32_t> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), 7u);
  Bytes b(v.size() * 4);
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

TEST_F(GpuLayout, BroadcastTransposeAndSliceAreTheCpuKernels) {
  const Shape shape{3, 1, 4, 5};
  const Bytes in = words(shape_size(shape));
  const DeviceBuffer d_in = upload(in);
  {
    const Shape to{2, 3, 6, 4, 5};
    Bytes want(static_cast<size_t>(shape_size(to)) * 4);
    kernels::broadcast(4, in.data(), shape, want.data(), to);
    DeviceBuffer out = upload(Bytes(want.size(), std::byte{0xEE}));
    kernels::cuda::broadcast(gpu(), 4, d_in.data(), shape, out.data(), to);
    EXPECT_EQ(download(out, want.size()), want);
  }
  {
    const std::vector<int> perm{2, 0, 3, 1};
    Bytes want(in.size());
    kernels::transpose(4, in.data(), shape, perm, want.data());
    DeviceBuffer out = upload(Bytes(want.size(), std::byte{0xEE}));
    kernels::cuda::transpose(gpu(), 4, d_in.data(), shape, perm, out.data());
    EXPECT_EQ(download(out, want.size()), want);
  }
  {
    const std::vector<int64_t> start{1, 0, 1, 2};
    const Shape extent{2, 1, 3, 2};
    Bytes want(static_cast<size_t>(shape_size(extent)) * 4);
    kernels::slice(4, in.data(), shape, start, extent, want.data());
    DeviceBuffer out = upload(Bytes(want.size(), std::byte{0xEE}));
    kernels::cuda::slice(gpu(), 4, d_in.data(), shape, start, extent, out.data());
    EXPECT_EQ(download(out, want.size()), want);
  }
}

TEST_F(GpuLayout, ConcatenateAndEveryElementSize) {
  for (size_t size : {1, 2, 4, 8}) {
    const std::vector<Shape> shapes{{2, 3, 5}, {2, 7, 5}, {2, 1, 5}};
    std::vector<Bytes> ins;
    std::vector<DeviceBuffer> d_ins;
    std::vector<const std::byte*> host, device;
    int64_t total = 0;
    for (const Shape& s : shapes) {
      Bytes b(static_cast<size_t>(shape_size(s)) * size);
      for (size_t k = 0; k < b.size(); ++k) b[k] = static_cast<std::byte>(k * 13 + total);
      total += shape_size(s);
      ins.push_back(b);
    }
    for (const Bytes& b : ins) {
      d_ins.push_back(upload(b));
      host.push_back(b.data());
      device.push_back(d_ins.back().data());
    }
    Bytes want(static_cast<size_t>(total) * size);
    kernels::concatenate(size, host, shapes, 1, want.data());
    DeviceBuffer out = upload(Bytes(want.size(), std::byte{0xEE}));
    kernels::cuda::concatenate(gpu(), size, device, shapes, 1, out.data());
    EXPECT_EQ(download(out, want.size()), want) << size << "-byte elements";
  }
  EXPECT_THROW(kernels::cuda::broadcast(gpu(), 3, nullptr, {1}, nullptr, {4}), InvalidArgument);
}

TEST_F(GpuLayout, TakeClampsIndicesAsTheCpuDoes) {
  const Shape shape{3, 6, 4};
  const Bytes in = words(shape_size(shape));
  const std::vector<int32_t> indices{5, 0, -3, 9, 2, 2};
  Bytes index_bytes(indices.size() * 4);
  std::memcpy(index_bytes.data(), indices.data(), index_bytes.size());
  const DeviceBuffer d_in = upload(in), d_indices = upload(index_bytes);
  for (int axis = 0; axis < 3; ++axis) {
    const int64_t count = static_cast<int64_t>(indices.size());
    const size_t bytes = static_cast<size_t>(shape_size(shape) / shape[axis] * count) * 4;
    Bytes want(bytes);
    kernels::take(4, in.data(), shape, axis, indices.data(), count, want.data());
    DeviceBuffer out = upload(Bytes(bytes, std::byte{0xEE}));
    kernels::cuda::take(gpu(), 4, d_in.data(), shape, axis,
                        reinterpret_cast<const int32_t*>(d_indices.data()), count, out.data());
    EXPECT_EQ(download(out, bytes), want) << "axis " << axis;
    // With a fill: the indices out of range (-3, 9) give it, as the CPU's take.
    const Bytes fill = words(1);
    const DeviceBuffer d_fill = upload(fill);
    kernels::take(4, in.data(), shape, axis, indices.data(), count, want.data(), fill.data());
    kernels::cuda::take(gpu(), 4, d_in.data(), shape, axis,
                        reinterpret_cast<const int32_t*>(d_indices.data()), count, out.data(),
                        d_fill.data());
    EXPECT_EQ(download(out, bytes), want) << "axis " << axis << ", filled";
  }
}

TEST_F(GpuLayout, FillAndIotaConvertAsTheCpuDoes) {
  for (DType t : chain_dtypes()) {
    for (double value : {0.0, -0.0, 1.5, -7.25, 300.0, 1e10, -1e40, double(NAN)}) {
      const int64_t n = 1000;
      const size_t bytes = static_cast<size_t>(n) * dtype_size(t);
      Bytes want(bytes);
      kernels::cpu_backend().fill(t, value, want.data(), n);
      DeviceBuffer out = upload(Bytes(bytes, std::byte{0xEE}));
      kernels::cuda::fill(gpu(), t, value, out.data(), n);
      EXPECT_EQ(download(out, bytes), want) << dtype_name(t) << " " << value;
    }
    const int64_t n = 70000;  // past float16's and bfloat16's exact integers, and int16's range
    const size_t bytes = static_cast<size_t>(n) * dtype_size(t);
    Bytes want(bytes);
    kernels::cpu_backend().iota(t, want.data(), n);
    DeviceBuffer out = upload(Bytes(bytes, std::byte{0xEE}));
    kernels::cuda::iota(gpu(), t, out.data(), n);
    EXPECT_EQ(download(out, bytes), want) << dtype_name(t);
  }
}

// The reduction of `in` (of `dtype`, shape `shape`) along `axis` on the GPU and on the CPU.
::testing::AssertionResult reduce_matches(Gpu& test, kernels::Reduce op, DType dtype, DType out,
                                          const Shape& shape, int axis,
                                          const std::vector<double>& values) {
  const ChainValue in = chain_value(dtype, values);
  Shape reduced = shape;
  reduced.erase(reduced.begin() + axis);
  const size_t bytes = static_cast<size_t>(shape_size(reduced)) * dtype_size(out);
  Bytes want(bytes);
  kernels::reduce(op, dtype, in.bytes.data(), shape, axis, out, want.data());
  const DeviceBuffer d_in = test.upload(in.bytes);
  DeviceBuffer d_out = test.upload(Bytes(bytes, std::byte{0xEE}));
  kernels::cuda::reduce(test.gpu(), op, dtype, d_in.data(), shape, axis, out, d_out.data());
  const Bytes got = test.download(d_out, bytes);
  const bool floating = scalar::class_of(out) == scalar::Class::kFloat ||
                        scalar::class_of(out) == scalar::Class::kDouble;
  for (int64_t k = 0; k < shape_size(reduced); ++k) {
    const scalar::Slot g = scalar::load(out, got.data(), k), w = scalar::load(out, want.data(), k);
    if (!floating) {
      const bool same = scalar::class_of(out) == scalar::Class::kBool ? g.b == w.b : g.i == w.i;
      if (!same)
        return ::testing::AssertionFailure() << "output " << k << ": " << g.i << " vs " << w.i;
      continue;
    }
    const double x = out == DType::kFloat64 ? g.d : g.f, y = out == DType::kFloat64 ? w.d : w.f;
    if (std::isnan(x) && std::isnan(y)) continue;
    const bool rounds = op == kernels::Reduce::kSum || op == kernels::Reduce::kProd;
    const double tolerance = !rounds                  ? 0.0
                             : scalar::is_half(out)   ? 1e-2
                             : out == DType::kFloat32 ? 1e-5
                                                      : 1e-12;
    if (std::abs(x - y) <= tolerance * std::max(1.0, std::abs(y))) continue;
    return ::testing::AssertionFailure()
           << kernels::name(op) << " of " << dtype_name(dtype) << " along " << axis << ", output "
           << k << ": " << x << " vs " << y;
  }
  return ::testing::AssertionSuccess();
}

std::vector<double> mixed(int64_t n, DType t) {
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) v[static_cast<size_t>(k)] = std::fmod(k * 7.3, 23.0) - 11.0;
  if (t == DType::kBool) {
    for (auto& x : v) x = x > 5;
  }
  return v;
}

TEST_F(GpuReduce, SumMaxMinOfEveryDtypeAlongEachAxis) {
  const Shape shape{3, 300, 5};
  for (DType t : chain_dtypes()) {
    for (auto op : {kernels::Reduce::kSum, kernels::Reduce::kMax, kernels::Reduce::kMin}) {
      for (int axis = 0; axis < 3; ++axis) {
        EXPECT_TRUE(reduce_matches(*this, op, t, t, shape, axis, mixed(shape_size(shape), t)));
      }
    }
  }
}

// Products of ±1, 2, 0.5 and 3 (integers wrapping, floats within rounding: the GPU multiplies in
// a tree, the CPU in order), along each axis of every dtype, and an empty axis's 1.
TEST_F(GpuReduce, ProductsOfEveryDtypeAlongEachAxisAreTheCpus) {
  const Shape shape{3, 12, 5};
  const double factors[] = {1, -1, 2, 0.5, 3, -1, 1};
  for (DType t : chain_dtypes()) {
    std::vector<double> v(static_cast<size_t>(shape_size(shape)));
    for (size_t k = 0; k < v.size(); ++k) {
      v[k] = t == DType::kBool ? double(k % 5 != 0) : factors[k % 7];
      if (scalar::class_of(t) == scalar::Class::kInt && v[k] == 0.5) v[k] = 2;
    }
    for (int axis = 0; axis < 3; ++axis) {
      EXPECT_TRUE(reduce_matches(*this, kernels::Reduce::kProd, t, t, shape, axis, v))
          << dtype_name(t) << " along " << axis;
    }
    EXPECT_TRUE(reduce_matches(*this, kernels::Reduce::kProd, t, t, {3, 0}, 1, {}))
        << "an empty product of " << dtype_name(t);
  }
}

TEST_F(GpuReduce, ALongContiguousAxisAndAWideningSum) {
  const Shape shape{7, 100003};
  EXPECT_TRUE(reduce_matches(*this, kernels::Reduce::kSum, DType::kFloat32, DType::kFloat32, shape,
                             1, mixed(shape_size(shape), DType::kFloat32)));
  EXPECT_TRUE(reduce_matches(*this, kernels::Reduce::kMax, DType::kInt32, DType::kInt32, shape, 1,
                             mixed(shape_size(shape), DType::kInt32)));
  EXPECT_TRUE(reduce_matches(*this, kernels::Reduce::kSum, DType::kInt8, DType::kInt32, shape, 1,
                             mixed(shape_size(shape), DType::kInt8)));
  EXPECT_TRUE(reduce_matches(*this, kernels::Reduce::kSum, DType::kBFloat16, DType::kFloat32, shape,
                             1, mixed(shape_size(shape), DType::kBFloat16)));
}

// Axes that a one-pass launch would leave to a few blocks are cut into chunks and reduced in two
// passes: a bias gradient's sum over a batch (512 rows of 1024 or 256 columns) and a loss's sum
// of 131,072 elements. Integer values make every order's sum exact, so the CPU's is the answer;
// then a sum whose rounding depends on the order is the same bits at every run.
TEST_F(GpuReduce, ShortWideAndLongNarrowAxesSplitIntoChunksAreTheCpusAtEveryRun) {
  const auto whole = [](int64_t n) {
    std::vector<double> v(static_cast<size_t>(n));
    for (int64_t k = 0; k < n; ++k) v[static_cast<size_t>(k)] = static_cast<double>(k * 5 % 11 - 5);
    return v;
  };
  for (const Shape& shape : {Shape{512, 1024}, Shape{512, 256}, Shape{131072}, Shape{3, 40000}}) {
    for (auto op : {kernels::Reduce::kSum, kernels::Reduce::kMax}) {
      EXPECT_TRUE(reduce_matches(*this, op, DType::kFloat32, DType::kFloat32, shape, 0,
                                 whole(shape_size(shape))));
    }
    EXPECT_TRUE(reduce_matches(*this, kernels::Reduce::kSum, DType::kInt8, DType::kInt32, shape, 0,
                               whole(shape_size(shape))));
    const ChainValue in = chain_value(DType::kFloat32, mixed(shape_size(shape), DType::kFloat32));
    const DeviceBuffer d_in = upload(in.bytes);
    const size_t bytes = static_cast<size_t>(shape_size(shape) / shape[0]) * 4;
    Bytes first;
    for (int run = 0; run < 3; ++run) {
      DeviceBuffer out = upload(Bytes(bytes, std::byte{0xEE}));
      kernels::cuda::reduce(gpu(), kernels::Reduce::kSum, DType::kFloat32, d_in.data(), shape, 0,
                            DType::kFloat32, out.data());
      const Bytes got = download(out, bytes);
      if (run == 0) first = got;
      EXPECT_EQ(got, first) << "run " << run << " of the sum along 0 of ("
                            << fmt::format("{}", fmt::join(shape, ", ")) << ")";
    }
  }
}

TEST_F(GpuReduce, NaNWinsAnEmptySumIsZerosAndAnEmptyMaxIsRefused) {
  std::vector<double> v = mixed(40, DType::kFloat32);
  v[13] = NAN;
  for (auto op : {kernels::Reduce::kSum, kernels::Reduce::kMax, kernels::Reduce::kMin}) {
    EXPECT_TRUE(reduce_matches(*this, op, DType::kFloat32, DType::kFloat32, {4, 10}, 1, v));
  }
  EXPECT_TRUE(reduce_matches(*this, kernels::Reduce::kSum, DType::kFloat32, DType::kFloat32, {3, 0},
                             1, {}));
  EXPECT_THROW(kernels::cuda::reduce(gpu(), kernels::Reduce::kMax, DType::kFloat32, nullptr, {3, 0},
                                     1, DType::kFloat32, nullptr),
               InvalidArgument);
}

TEST_F(GpuReduce, ArgmaxIsTheCpusFirstMaximumAndFirstNaN) {
  const Shape shape{4, 257, 3};
  for (DType t : chain_dtypes()) {
    std::vector<double> v = mixed(shape_size(shape), t);
    if (scalar::class_of(t) == scalar::Class::kFloat || t == DType::kFloat64) v[100] = NAN;
    const ChainValue in = chain_value(t, v);
    const DeviceBuffer d_in = upload(in.bytes);
    for (int axis = 0; axis < 3; ++axis) {
      Shape reduced = shape;
      reduced.erase(reduced.begin() + axis);
      const size_t bytes = static_cast<size_t>(shape_size(reduced)) * 4;
      Bytes want(bytes);
      kernels::argmax(t, in.bytes.data(), shape, axis, want.data());
      DeviceBuffer out = upload(Bytes(bytes, std::byte{0xEE}));
      kernels::cuda::argmax(gpu(), t, d_in.data(), shape, axis, out.data());
      EXPECT_EQ(download(out, bytes), want) << dtype_name(t) << " along " << axis;
    }
  }
}

using GpuRandom = Gpu;

// JAX's bits, bit for bit: every kind, blocks of a larger array, a scalar, an offset.
TEST_F(GpuRandom, RandomBitsAreTheCpusBitForBit) {
  using kernels::RandomBits;
  const std::vector<kernels::RandomBlock> blocks = {
      {{0, 42}, {}, {}, {}, 5},
      {{7, 9}, {1000003}, {0}, {1000003}, 0},
      {{7, 9}, {8, 64, 33}, {2, 16, 0}, {4, 32, 33}, 0},
      {{3, 1}, {5, 6}, {1, 2}, {3, 4}, 123456789}};
  for (RandomBits kind :
       {RandomBits::k8, RandomBits::k16, RandomBits::k32, RandomBits::k64, RandomBits::kKeys}) {
    const size_t size = kind == RandomBits::k8    ? 1
                        : kind == RandomBits::k16 ? 2
                        : kind == RandomBits::k32 ? 4
                                                  : 8;
    for (const kernels::RandomBlock& b : blocks) {
      const size_t bytes = static_cast<size_t>(shape_size(b.extent)) * size;
      Bytes want(bytes);
      kernels::random_bits(kind, b, want.data());
      DeviceBuffer out = upload(Bytes(bytes, std::byte{0xEE}));
      kernels::cuda::random_bits(gpu(), kind, b, out.data());
      EXPECT_EQ(download(out, bytes), want) << static_cast<int>(kind) << " " << b.shape.size();
    }
  }
}

}  // namespace
}  // namespace spmd::test
