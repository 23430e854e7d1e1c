// The CUDA backend through the device seam (kernels/backend.h), as the executor will call it: on
// the GPU the calling thread has bound, each method's result the CPU backend's for the same
// call. The kernels themselves are tested one family at a time beside this file.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "gpu/gpu_fixture.h"
#include "kernels/backend.h"
#include "kernels/cuda/cuda_backend.h"
#include "kernels/cuda/gpu_scope.h"
#include "spmd/error.h"

namespace spmd::test {
namespace {

using GpuBackend = Gpu;

TEST_F(GpuBackend, MethodsRunOnTheBoundGpuAndMatchTheCpuBackend) {
  const kernels::Backend& cuda = kernels::cuda::cuda_backend();
  const kernels::Backend& cpu = kernels::cpu_backend();
  EXPECT_EQ(cuda.platform(), "gpu");
  EXPECT_EQ(cuda.memory(0), MemorySpace::device(0));
  kernels::cuda::GpuScope scope(gpu());
  const Shape shape{6, 7};
  const ChainValue x = chain_value(
      DType::kFloat32,
      std::vector<double>{1,  -2, 3.5, 0,  -0.0, 7,  1e-3, 100, -100, 2,  2,  2,  3,  4,
                          5,  6,  7,   8,  9,    10, 11,   12,  13,   14, 15, 16, 17, 18,
                          19, 20, 21,  22, 23,   24, 25,   26,  27,   28, 29, 30, 31, 32});
  const DeviceBuffer d_x = upload(x.bytes);
  const auto both = [&](size_t bytes, auto&& call) {
    Bytes want(bytes);
    DeviceBuffer out = upload(Bytes(bytes, std::byte{0xEE}));
    call(cpu, x.bytes.data(), want.data());
    call(cuda, d_x.data(), out.data());
    return std::pair{download(out, bytes), want};
  };
  {
    auto [got, want] =
        both(42 * 8, [](const kernels::Backend& b, const std::byte* in, std::byte* o) {
          b.convert(DType::kFloat32, DType::kFloat64, {in, 42}, o, 42);
        });
    EXPECT_EQ(got, want) << "convert";
  }
  {
    auto [got, want] =
        both(7 * 4, [&](const kernels::Backend& b, const std::byte* in, std::byte* o) {
          b.reduce(kernels::Reduce::kMax, DType::kFloat32, in, shape, 0, DType::kFloat32, o);
        });
    EXPECT_EQ(got, want) << "reduce";
  }
  {
    const std::vector<int> perm{1, 0};
    auto [got, want] = both(42 * 4, [&](const kernels::Backend& b, const std::byte* in,
                                        std::byte* o) { b.transpose(4, in, shape, perm, o); });
    EXPECT_EQ(got, want) << "transpose";
  }
  {
    auto [got, want] =
        both(42 * 4, [&](const kernels::Backend& b, const std::byte* in, std::byte* o) {
          b.cumsum(DType::kFloat32, in, shape, 1, o);
        });
    EXPECT_EQ(got, want) << "cumsum";
  }
  {
    auto [got, want] =
        both(5 * 4, [&](const kernels::Backend& b, const std::byte* in, std::byte* o) {
          b.top_k(DType::kFloat32, in, 42, 5, reinterpret_cast<int32_t*>(o));
        });
    EXPECT_EQ(got, want) << "top_k";
  }
  {
    auto [got, want] =
        both(42 * 4, [&](const kernels::Backend& b, const std::byte* in, std::byte* o) {
          b.ynn_softmax_rows(reinterpret_cast<const float*>(in), 6, 7, reinterpret_cast<float*>(o));
        });
    EXPECT_EQ(got, want) << "ynn_softmax_rows (the host fallback)";
  }
  {
    const float p = 1.5f;
    const DeviceBuffer d_p = upload(Bytes(reinterpret_cast<const std::byte*>(&p),
                                          reinterpret_cast<const std::byte*>(&p) + sizeof p));
    auto [got, want] =
        both(6 * 4, [&](const kernels::Backend& b, const std::byte* in, std::byte* o) {
          const auto* power = &b == &cpu ? &p : reinterpret_cast<const float*>(d_p.data());
          b.ynn_power_sum_rows(reinterpret_cast<const float*>(in), 6, 7, power,
                               reinterpret_cast<float*>(o));
        });
    EXPECT_EQ(got, want) << "ynn_power_sum_rows (the host fallback)";
  }
  {
    auto [got, want] =
        both(6 * 6 * 4, [&](const kernels::Backend& b, const std::byte* in, std::byte* o) {
          b.matmul(DType::kFloat32, {1, 6, 7, 6, false, true}, in, in, o);
        });
    for (int64_t k = 0; k < 36; ++k) {
      const float g = scalar::load(DType::kFloat32, got.data(), k).f;
      const float w = scalar::load(DType::kFloat32, want.data(), k).f;
      EXPECT_NEAR(g, w, 1e-5f * std::max(1.0f, std::abs(w))) << "matmul element " << k;
    }
  }
  // JAX's samplers and the factorizations: the CPU's, on host copies, bit for bit.
  {
    const kernels::Sampler normal{kernels::Distribution::kNormal};
    const kernels::RandomBlock block{{7, 42}, {6, 7}, {0, 0}, {6, 7}, 0};
    auto [got, want] = both(42 * 4, [&](const kernels::Backend& b, const std::byte*, std::byte* o) {
      b.random_sample(normal, block, o);
    });
    EXPECT_EQ(got, want) << "random_sample";
  }
  {
    auto [got, want] =
        both((18 + 9) * 4, [&](const kernels::Backend& b, const std::byte* in, std::byte* o) {
          b.qr(DType::kFloat32, in, 1, 6, 3, o, o + 6 * 3 * 4);  // Q 6×3, then R 3×3
        });
    EXPECT_EQ(got, want) << "qr";
  }
  {
    // a: the input's first 3×3 (its lower triangle read, a unit diagonal), b: its next 3×2.
    auto [got, want] = both(3 * 2 * 4, [&](const kernels::Backend& b, const std::byte* in,
                                           std::byte* o) {
      b.triangular_solve(DType::kFloat32, in, in + 9 * 4, 1, 3, 2, {true, true, false, true}, o);
    });
    EXPECT_EQ(got, want) << "triangular_solve";
  }
}

// Every memory method of the seam, as jit's staging calls them: a block from the GPU's pool,
// host to device, device to device and back, each on the GPU's stream.
TEST_F(GpuBackend, MemoryMethodsAllocateAndCopyInTheGpusMemory) {
  const kernels::Backend& cuda = kernels::cuda::cuda_backend();
  const std::vector<float> host{1, 2, 3, 4, 5};
  const size_t bytes = host.size() * sizeof(float);
  const auto a = cuda.allocate(MemorySpace::device(0), bytes);
  const auto b = cuda.allocate(MemorySpace::device(0), bytes);
  ASSERT_NE(a, nullptr);
  cuda.copy(reinterpret_cast<const std::byte*>(host.data()), MemorySpace::host(), a.get(),
            MemorySpace::device(0), bytes);
  cuda.copy(a.get(), MemorySpace::device(0), b.get(), MemorySpace::device(0), bytes);
  std::vector<float> back(host.size());
  cuda.copy(b.get(), MemorySpace::device(0), reinterpret_cast<std::byte*>(back.data()),
            MemorySpace::host(), bytes);
  EXPECT_EQ(back, host);
  // Past 1 MiB a copy goes through the pinned staging buffers, 4 MiB a chunk: an odd length
  // over three chunks each way, and the bytes come back in place.
  const size_t big = (9 << 20) + 5;
  std::vector<std::byte> pattern(big), returned(big);
  for (size_t i = 0; i < big; ++i) pattern[i] = static_cast<std::byte>((i * 131) >> 3);
  const auto d = cuda.allocate(MemorySpace::device(0), big);
  cuda.copy(pattern.data(), MemorySpace::host(), d.get(), MemorySpace::device(0), big);
  cuda.copy(d.get(), MemorySpace::device(0), returned.data(), MemorySpace::host(), big);
  EXPECT_TRUE(returned == pattern);
  const std::shared_ptr<void> bound = cuda.bind_thread(MemorySpace::device(0));
  EXPECT_EQ(&kernels::cuda::GpuScope::current(), &gpu());
}

TEST_F(GpuBackend, AThreadBoundToNoGpuIsToldSo) {
  EXPECT_THROW(kernels::cuda::cuda_backend().fill(DType::kFloat32, 1, nullptr, 1),
               FailedPrecondition);
}

}  // namespace
}  // namespace spmd::test
