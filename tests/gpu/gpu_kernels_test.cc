// The CUDA backend's kernels on a GPU (label gpu), each against the CPU backend's result:
// element-wise chains over every operation, dtype and conversion (tests/kernels/chain_cases.h),
// matrix products through cuBLAS, memory and copies, and the errors a GPU reports. Every test
// skips, saying why, where this process sees no GPU.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "gpu/gpu_fixture.h"
#include "kernels/chain_cases.h"
#include "kernels/cuda/chain.h"
#include "kernels/cuda/gpu_context.h"
#include "kernels/cuda/matmul.h"
#include "kernels/matmul.h"
#include "kernels/matmul_cases.h"
#include "spmd/error.h"

namespace spmd::test {
namespace {

using kernels::MatmulShape;
using kernels::cuda::DeviceBuffer;
using kernels::cuda::GpuContext;

bool input_is(const ChainCase& c, std::initializer_list<DType> dtypes) {
  for (DType t : dtypes) {
    if (c.steps.front().dtype == t) return true;
  }
  return false;
}

constexpr std::initializer_list<DType> kIntegers = {DType::kInt8,  DType::kInt16, DType::kInt32,
                                                    DType::kInt64, DType::kUInt8, DType::kUInt16,
                                                    DType::kUInt32};
constexpr std::initializer_list<DType> kHalves = {DType::kFloat16, DType::kBFloat16};

TEST_F(Gpu, TheContextNamesTheDevice) {
  EXPECT_FALSE(gpu().name().empty());
  EXPECT_GT(gpu().multiprocessors(), 0);
  EXPECT_EQ(&GpuContext::get(0), &gpu());
}

TEST_F(Gpu, BytesGoThereAndBackUnchanged) {
  Bytes host(1 << 20);
  std::mt19937 rng(1);
  for (auto& b : host) b = static_cast<std::byte>(rng());
  const DeviceBuffer buffer = upload(host);
  EXPECT_EQ(download(buffer, host.size()), host);
  Bytes too_many(host.size() + 1);
  EXPECT_THROW(buffer.copy_to_host(too_many.data(), too_many.size()), InvalidArgument);
}

TEST_F(Gpu, AnAllocationPastTheMemoryIsResourceExhaustedAndTheGpuStaysUsable) {
  try {
    DeviceBuffer huge(gpu(), size_t{1} << 50);
    FAIL() << "a PiB was allocated";
  } catch (const ResourceExhausted& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("cudaMallocAsync of 1125899906842624 bytes failed on GPU 0 of"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("free arrays"), std::string::npos) << message;
  }
  const ChainCase c = mixed_cases().front();
  EXPECT_TRUE(chain_values_match(c, gpu_chain_result(c), cpu_chain_result(c)));
}

TEST_F(Gpu, UnaryOperationsOnFloat32) {
  expect_cases_match(unary_cases_on_gpu(),
                     [](const ChainCase& c) { return input_is(c, {DType::kFloat32}); });
}

TEST_F(Gpu, UnaryOperationsOnFloat64) {
  expect_cases_match(unary_cases_on_gpu(),
                     [](const ChainCase& c) { return input_is(c, {DType::kFloat64}); });
}

TEST_F(Gpu, UnaryOperationsOnTheHalfTypes) {
  expect_cases_match(unary_cases_on_gpu(), [](const ChainCase& c) { return input_is(c, kHalves); });
}

TEST_F(Gpu, UnaryOperationsOnIntegersAndBool) {
  expect_cases_match(unary_cases_on_gpu(), [](const ChainCase& c) {
    return input_is(c, kIntegers) || input_is(c, {DType::kBool});
  });
}

TEST_F(Gpu, BinaryOperationsOnFloat32) {
  expect_cases_match(binary_cases(),
                     [](const ChainCase& c) { return input_is(c, {DType::kFloat32}); });
}

TEST_F(Gpu, BinaryOperationsOnFloat64) {
  expect_cases_match(binary_cases(),
                     [](const ChainCase& c) { return input_is(c, {DType::kFloat64}); });
}

TEST_F(Gpu, BinaryOperationsOnTheHalfTypes) {
  expect_cases_match(binary_cases(), [](const ChainCase& c) { return input_is(c, kHalves); });
}

TEST_F(Gpu, BinaryOperationsOnIntegers) {
  expect_cases_match(binary_cases(), [](const ChainCase& c) { return input_is(c, kIntegers); });
}

TEST_F(Gpu, BinaryOperationsOnBool) {
  expect_cases_match(binary_cases(),
                     [](const ChainCase& c) { return input_is(c, {DType::kBool}); });
}

TEST_F(Gpu, ConversionsFromFloatingPoint) {
  expect_cases_match(convert_cases(), [](const ChainCase& c) {
    return input_is(c, {DType::kFloat16, DType::kBFloat16, DType::kFloat32, DType::kFloat64});
  });
}

TEST_F(Gpu, ConversionsFromIntegersAndBool) {
  expect_cases_match(convert_cases(), [](const ChainCase& c) {
    return input_is(c, kIntegers) || input_is(c, {DType::kBool});
  });
}

TEST_F(Gpu, MultiplyAddsOfEveryFormAreTheCpus) {
  expect_cases_match(multiply_add_cases(), [](const ChainCase&) { return true; });
}

TEST_F(Gpu, SelectMixedDtypesScalarOperandsAndThirtyTwoSteps) {
  expect_cases_match(mixed_cases(), [](const ChainCase&) { return true; });
}

// More elements than the grid has threads: each thread's loop must reach every element.
TEST_F(Gpu, EveryElementOfALargeChainIsWritten) {
  const int64_t n = (int64_t{10} << 20) + 7;
  std::vector<double> x(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) x[static_cast<size_t>(i)] = static_cast<double>(i % 1000) - 500;
  ChainCase c{"x_times_x_plus_1",
              {},
              {chain_value(DType::kFloat32, x), chain_value(DType::kFloat32, {1.0})},
              n,
              false};
  c.steps = {binary_step(Binary::kMul, DType::kFloat32, 0, 0),
             binary_step(Binary::kAdd, DType::kFloat32, kernels::chain_result(0), 1)};
  EXPECT_TRUE(chain_values_match(c, gpu_chain_result(c), cpu_chain_result(c)));
}

// A uniform chain reads and writes K neighbours with one vector access where every array is
// aligned to it, and element by element where one is not (an array starting one element into its
// buffer, as a slice's view does): both, with a tail of n % 4 elements, are the CPU's values.
TEST_F(Gpu, UniformChainsOfAlignedAndMisalignedArraysAreTheCpus) {
  const int64_t n = 4099;
  for (DType t : {DType::kFloat32, DType::kFloat64, DType::kBFloat16}) {
    std::vector<double> x(static_cast<size_t>(n) + 1), y(x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      x[i] = std::fmod(static_cast<double>(i) * 0.37, 9.0) - 4.5;
      y[i] = static_cast<double>(i % 13) * 0.25;
    }
    const ChainStep steps[] = {binary_step(Binary::kMul, t, 0, 1),
                               binary_step(Binary::kAdd, t, kernels::chain_result(0), 2)};
    const ChainValue xs = chain_value(t, x), ys = chain_value(t, y), c = chain_value(t, {0.5});
    const DeviceBuffer dx = upload(xs.bytes), dy = upload(ys.bytes), dc = upload(c.bytes);
    const size_t size = dtype_size(t), bytes = static_cast<size_t>(n) * size;
    for (size_t skip : {size_t{0}, size_t{1}}) {  // elements skipped at the start of x's buffer
      const kernels::Input inputs[] = {
          {dx.data() + skip * size, n}, {dy.data(), n}, {dc.data(), 1}};
      DeviceBuffer out = upload(Bytes(bytes, std::byte{0xA5}));
      kernels::cuda::run_chain(gpu(), steps, inputs, out.data(), n);
      const Bytes got = download(out, bytes);
      Bytes want(bytes);
      const kernels::Input host[] = {
          {xs.bytes.data() + skip * size, n}, {ys.bytes.data(), n}, {c.bytes.data(), 1}};
      kernels::run_chain(steps, host, want.data(), n);
      EXPECT_EQ(got, want) << dtype_name(t) << ", x from element " << skip;
    }
  }
}

// A uniform kernel expands the arithmetic and the short functions at each step and calls one
// function for the others (chain_uniform.h's expanded()): programs of 2, 4 and 7 steps (the three
// kernel lengths) mixing both, at the first step and later ones, are the CPU's values. The half
// types take the two-step program only: each of their steps rounds, and a longer program could
// carry a difference of one unit from a middle step into the next (past the tolerance's one).
TEST_F(Gpu, UniformChainsMixingExpandedAndCalledStepsAreTheCpus) {
  using kernels::chain_input;
  using kernels::chain_result;
  const int64_t n = 4099;
  std::vector<double> x(static_cast<size_t>(n)), y(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    x[i] = 0.5 + static_cast<double>(i % 97) * 0.015;
    y[i] = 0.25 + static_cast<double>(i % 31) * 0.03;
  }
  for (DType t : {DType::kFloat32, DType::kFloat64, DType::kBFloat16, DType::kFloat16}) {
    const ChainStep mixed[] = {
        unary_step(Unary::kSin, t),                                     // called, first step
        binary_step(Binary::kMul, t, chain_result(0), chain_input(1)),  // expanded
        binary_step(Binary::kAdd, t, chain_result(1), chain_input(0)),  // expanded
        {ChainStep::Kind::kUnary, static_cast<uint8_t>(Unary::kCbrt), t, t, {chain_result(2)}},
        binary_step(Binary::kPow, t, chain_result(3), chain_input(1)),  // called binary
        binary_step(Binary::kMul, t, chain_result(4), chain_input(1)),  // expanded
        {ChainStep::Kind::kUnary, static_cast<uint8_t>(Unary::kLog1p), t, t, {chain_result(5)}}};
    for (size_t length : {size_t{2}, size_t{4}, size_t{7}}) {
      if (scalar::is_half(t) && length > 2) continue;
      ChainCase c{fmt::format("{} steps of {}", length, dtype_name(t)),
                  std::vector<ChainStep>(mixed, mixed + length),
                  {chain_value(t, x), chain_value(t, y)},
                  n,
                  true};
      EXPECT_TRUE(chain_values_match(c, gpu_chain_result(c), cpu_chain_result(c))) << c.name;
    }
  }
}

TEST_F(Gpu, AnIntegerDivisionByZeroIsReportedAtSynchronizeAndThenCleared) {
  ChainCase c{"div",
              {binary_step(Binary::kDiv, DType::kInt32, 0, 1)},
              {chain_value(DType::kInt32, {1, 2, 3}), chain_value(DType::kInt32, {1, 0, 1})},
              3,
              false};
  try {
    gpu_chain_result(c);
    FAIL() << "no error";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("integer division by zero in a kernel on GPU 0"),
              std::string::npos)
        << e.what();
  }
  EXPECT_NO_THROW(gpu().synchronize());
}

TEST_F(Gpu, NothingIsLaunchedForNoElementsOrARefusedChain) {
  const ChainStep neg = unary_step(Unary::kNeg, DType::kFloat32);
  const kernels::Input empty[] = {{nullptr, 0}};
  EXPECT_NO_THROW(kernels::cuda::run_chain(gpu(), {&neg, 1}, empty, nullptr, 0));
  const ChainStep wide = unary_step(Unary::kNeg, DType::kUInt64);
  const kernels::Input none[] = {{nullptr, 1}};
  EXPECT_THROW(kernels::cuda::run_chain(gpu(), {&wide, 1}, none, nullptr, 4), InvalidArgument);
  EXPECT_NO_THROW(gpu().synchronize());
}

TEST_F(Gpu, ChainsFromSeveralThreadsShareTheStream) {
  const ChainCase c = mixed_cases().back();
  const Bytes want = cpu_chain_result(c);
  std::vector<std::thread> threads;
  std::vector<int> ok(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) ok[t] += gpu_chain_result(c) == want;
    });
  }
  for (auto& t : threads) t.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(ok[t], 20) << "thread " << t;
}

// --- Matrix products -----------------------------------------------------------------------

struct Product {
  DType dtype;
  MatmulShape shape;
  double tolerance;  // ‖gpu − cpu‖ / ‖cpu‖
};

class GpuMatmul : public Gpu {
 protected:
  void expect_product(const Product& p) {
    const MatmulShape& s = p.shape;
    std::mt19937 rng(static_cast<uint32_t>(s.m * 131 + s.k * 17 + s.n));
    std::uniform_real_distribution<double> d(-1, 1);
    std::vector<double> a(static_cast<size_t>(s.batch * s.m * s.k));
    std::vector<double> b(static_cast<size_t>(s.batch * s.k * s.n));
    for (auto& v : a) v = d(rng);
    for (auto& v : b) v = d(rng);
    const ChainValue x = chain_value(p.dtype, a), y = chain_value(p.dtype, b);
    const size_t out_bytes = static_cast<size_t>(s.batch * s.m * s.n) * dtype_size(p.dtype);
    Bytes want(out_bytes);
    kernels::matmul(p.dtype, s, x.bytes.data(), y.bytes.data(), want.data());
    const DeviceBuffer dx = upload(x.bytes), dy = upload(y.bytes);
    DeviceBuffer out = upload(Bytes(out_bytes, std::byte{0x7F}));
    kernels::cuda::matmul(gpu(), p.dtype, s, dx.data(), dy.data(), out.data());
    const Bytes got = download(out, out_bytes);
    double diff = 0, norm = 0;
    const int64_t count = s.batch * s.m * s.n;
    for (int64_t i = 0; i < count; ++i) {
      const auto value = [&](const Bytes& bytes) {
        const auto slot = kernels::scalar::load(p.dtype, bytes.data(), i);
        return p.dtype == DType::kFloat64 ? slot.d : double{slot.f};
      };
      const double g = value(got), w = value(want);
      ASSERT_FALSE(std::isnan(g)) << "element " << i << " unwritten or NaN";
      diff += (g - w) * (g - w);
      norm += w * w;
    }
    if (norm == 0) {
      EXPECT_EQ(diff, 0);
    } else {
      EXPECT_LE(std::sqrt(diff / norm), p.tolerance)
          << dtype_name(p.dtype) << " " << s.m << "×" << s.k << "×" << s.n;
    }
  }
};

TEST_F(GpuMatmul, Float32IsTheCpusWithinRounding) {
  expect_product({DType::kFloat32, {1, 37, 19, 53}, 1e-6});
  expect_product({DType::kFloat32, {1, 512, 512, 512}, 1e-6});
}

TEST_F(GpuMatmul, Float64IsTheCpusWithinRounding) {
  expect_product({DType::kFloat64, {1, 64, 33, 17}, 1e-14});
}

TEST_F(GpuMatmul, BFloat16AndFloat16AccumulateInFloat32) {
  expect_product({DType::kBFloat16, {1, 128, 256, 64}, 1e-2});
  expect_product({DType::kFloat16, {1, 128, 256, 64}, 2e-3});
}

TEST_F(GpuMatmul, BatchesAndTransposedOperands) {
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      expect_product({DType::kFloat32, {3, 24, 40, 8, ta, tb}, 1e-6});
    }
  }
}

// The attention's "bqhd,bkhd->bhqk" read where it lies (kernels/matmul.h's strides: rows H·D
// apart, two batch dimensions, the result's rows padded), float32 and float16, against the CPU
// kernel on the same layout; the padding stays as it was. An empty contraction writes zeros into
// the strided result only.
TEST_F(GpuMatmul, StridedOperandsAndResultAsTheCpuReadsThem) {
  const MatmulShape s = testing::attention_product();
  for (DType dtype : {DType::kFloat32, DType::kFloat16}) {
    SCOPED_TRACE(dtype_name(dtype));
    std::vector<double> a(size_t(testing::matmul_extent(s, 0)));
    std::vector<double> w(size_t(testing::matmul_extent(s, 1)));
    for (size_t i = 0; i < a.size(); ++i) a[i] = double(int(i * 5 + 1) % 7 - 3);
    for (size_t i = 0; i < w.size(); ++i) w[i] = double(int(i * 5 + 2) % 7 - 3);
    const ChainValue x = chain_value(dtype, a), y = chain_value(dtype, w);
    const ChainValue padding =
        chain_value(dtype, std::vector<double>(size_t(testing::matmul_extent(s, 2)), -2));
    Bytes want = padding.bytes;
    kernels::matmul(dtype, s, x.bytes.data(), y.bytes.data(), want.data());
    const DeviceBuffer dx = upload(x.bytes), dy = upload(y.bytes);
    DeviceBuffer out = upload(padding.bytes);
    kernels::cuda::matmul(gpu(), dtype, s, dx.data(), dy.data(), out.data());
    EXPECT_EQ(download(out, want.size()), want) << "small integers: exact on both";
    MatmulShape empty = s;
    empty.k = 0;
    DeviceBuffer zeros = upload(padding.bytes);
    kernels::cuda::matmul(gpu(), dtype, empty, nullptr, nullptr, zeros.data());
    Bytes expected = padding.bytes;
    kernels::matmul(dtype, empty, nullptr, nullptr, expected.data());
    EXPECT_EQ(download(zeros, expected.size()), expected);
  }
}

// Products go through cuBLASLt plans kept per shape and pointer alignment (lt_gemm.h): operands
// and results 0 to 3 elements past an aligned address (float32: 4-byte steps; bfloat16: 2) are
// the CPU's within rounding, and a second call of each, from its kept plan, has the first's bits.
TEST_F(GpuMatmul, OperandsAtEveryAlignmentAreTheCpusAndAKeptPlanRepeatsItsBits) {
  for (DType dtype : {DType::kFloat32, DType::kBFloat16}) {
    const MatmulShape s{2, 48, 40, 24};
    const size_t width = dtype_size(dtype);
    std::vector<double> a(size_t(s.batch * s.m * s.k)), b(size_t(s.batch * s.k * s.n));
    for (size_t i = 0; i < a.size(); ++i) a[i] = double(int(i * 7 + 3) % 9 - 4) / 4;
    for (size_t i = 0; i < b.size(); ++i) b[i] = double(int(i * 5 + 1) % 7 - 3) / 2;
    const ChainValue x = chain_value(dtype, a), y = chain_value(dtype, b);
    const size_t out_bytes = size_t(s.batch * s.m * s.n) * width;
    Bytes want(out_bytes);
    kernels::matmul(dtype, s, x.bytes.data(), y.bytes.data(), want.data());
    for (size_t offset = 0; offset < 4; ++offset) {
      SCOPED_TRACE(fmt::format("{} operands {} elements past an aligned address", dtype_name(dtype),
                               offset));
      const Bytes pad(offset * width, std::byte{0});
      Bytes px = pad, py = pad;
      px.insert(px.end(), x.bytes.begin(), x.bytes.end());
      py.insert(py.end(), y.bytes.begin(), y.bytes.end());
      const DeviceBuffer dx = upload(px), dy = upload(py);
      DeviceBuffer out = upload(Bytes(out_bytes + pad.size(), std::byte{0x7F}));
      const auto product = [&] {
        kernels::cuda::matmul(gpu(), dtype, s, dx.data() + pad.size(), dy.data() + pad.size(),
                              out.data() + pad.size());
        const Bytes all = download(out, out_bytes + pad.size());
        return Bytes(all.begin() + static_cast<std::ptrdiff_t>(pad.size()), all.end());
      };
      const Bytes first = product();
      EXPECT_EQ(first, want) << "small multiples of 1/8: exact in float32 accumulation";
      EXPECT_EQ(product(), first);
    }
  }
}

TEST_F(GpuMatmul, AnEmptyContractionIsZeros) {
  const MatmulShape s{2, 3, 0, 4};
  const size_t out_bytes = 2 * 3 * 4 * 4;
  DeviceBuffer out = upload(Bytes(out_bytes, std::byte{0x7F}));
  kernels::cuda::matmul(gpu(), DType::kFloat32, s, nullptr, nullptr, out.data());
  EXPECT_EQ(download(out, out_bytes), Bytes(out_bytes, std::byte{0}));
}

TEST_F(GpuMatmul, IntegersAreRefusedSayingWhichDtypesAreMultiplied) {
  try {
    kernels::cuda::matmul(gpu(), DType::kInt32, {1, 2, 2, 2}, nullptr, nullptr, nullptr);
    FAIL() << "int32 was multiplied";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("matmul of int32 on a GPU"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace spmd::test
