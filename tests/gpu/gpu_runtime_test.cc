// GPU devices in the runtime (label gpu): with the platform "gpu", initialize() loads the GPU
// plugin (src/runtime/gpu_plugin.h), the devices are the GPUs, and jit runs each device's
// program in its memory through the CUDA backend: arrays stay there between calls until the host
// reads them, and collectives go through the device communicators or the host. Each result is
// checked against the CPU backend's, which block operations on host blocks still reach in the same
// process. Every test skips, saying why, where this process sees no GPU.
#include <gtest/gtest.h>
#include <spmd/spmd.h>

#include <cmath>
#include <string>
#include <vector>

#include "kernels/backend.h"
#include "kernels/cuda/call_graph.h"
#include "support/sgd_mlp.h"

namespace {

namespace jnp = spmd::numpy;
using spmd::Array;
using spmd::Block;
using spmd::HostArray;
using spmd::NamedSharding;
using spmd::P;
using spmd::Shape;
using spmd::Tensor;
using spmd::testing::wave;

std::string& no_gpu() {
  static std::string why;
  return why;
}

class GpuRuntime : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!no_gpu().empty()) GTEST_SKIP() << "no GPU visible: " << no_gpu();
  }
};

void expect_close(const HostArray& got, const HostArray& want, float tolerance) {
  ASSERT_EQ(got.shape(), want.shape());
  const auto g = got.data<float>(), w = want.data<float>();
  for (size_t i = 0; i < w.size(); ++i) {
    EXPECT_NEAR(g[i], w[i], tolerance * std::max(1.0f, std::abs(w[i]))) << "element " << i;
  }
}

TEST_F(GpuRuntime, TheDevicesAreTheGpusAndTheirBackendIsCudas) {
  const auto devices = spmd::local_devices();
  ASSERT_FALSE(devices.empty());
  for (const spmd::Device& d : devices) EXPECT_EQ(d.platform(), "gpu") << d.to_string();
  EXPECT_EQ(spmd::kernels::backend_for("gpu").memory(0), spmd::MemorySpace::device(0));
}

TEST_F(GpuRuntime, JitsLayerIsTheCpuBackendsWithinFloatRounding) {
  const spmd::Mesh mesh(spmd::devices(), {"x"});
  const HostArray x = wave({64, 32}, 0.1), w = wave({32, 16}, 0.5), b = wave({16}, 0.9);
  auto layer = spmd::jit([](const Tensor& x, const Tensor& w, const Tensor& b) {
    return jnp::tanh(jnp::matmul(x, w) + b);
  });
  const Array y = layer(spmd::device_put(x, NamedSharding(mesh, P("x"))),
                        spmd::device_put(w, NamedSharding(mesh, P())),
                        spmd::device_put(b, NamedSharding(mesh, P())));
  // The same on the host: the product and the bias with block operations (the CPU backend).
  HostArray want = spmd::add(spmd::matmul(Block(x), Block(w)), Block(b)).to_host();
  for (float& v : want.mutable_data<float>()) v = std::tanh(v);
  expect_close(y.to_host(), want, 1e-5f);
}

TEST_F(GpuRuntime, ReductionsLayoutsAndOrderingMatchTheHost) {
  const spmd::Mesh mesh(spmd::devices(), {"x"});
  const HostArray x = wave({16, 8}, 0.3);
  auto f = spmd::jit([](const Tensor& t) {
    return std::vector<Tensor>{jnp::sum(t, {1}), jnp::transpose(t), jnp::cumsum(t, 0),
                               jnp::sort(t, 1)};
  });
  const std::vector<Array> got = f(spmd::device_put(x, NamedSharding(mesh, P())));
  const Block h(x);
  expect_close(got[0].to_host(), spmd::sum(h, 1).to_host(), 1e-6f);
  // Each copy named: on a GPU, to_host() copies into a new HostArray, and a span into a
  // temporary one would dangle (on the CPU it shares the array's own buffer).
  const HostArray transposed = got[1].to_host(), sorted = got[3].to_host();
  const auto t = transposed.data<float>();
  const auto s = sorted.data<float>();
  for (int64_t r = 0; r < 16; ++r) {
    for (int64_t c = 0; c < 8; ++c) EXPECT_EQ(t[c * 16 + r], x.data<float>()[r * 8 + c]);
    for (int64_t c = 1; c < 8; ++c) EXPECT_LE(s[r * 8 + c - 1], s[r * 8 + c]);
  }
}

TEST_F(GpuRuntime, RandomNumbersOnTheGpuAreJaxsAsOnCpu) {
  // Threefry on the GPU and JAX's samplers through the host: the values of a CPU run, which
  // are JAX's (tests/python/jax_parity), checked here against the CPU backend directly.
  auto f = spmd::jit([](const Tensor& key) {
    return std::vector<Tensor>{spmd::random::bits(key, {64}), spmd::random::normal(key, {64})};
  });
  const std::vector<Array> got = f(spmd::random::PRNGKey(3));
  const spmd::kernels::RandomBlock block{{0, 3}, {64}, {0}, {64}, 0};
  std::vector<uint32_t> bits(64);
  spmd::kernels::cpu_backend().random_bits(spmd::kernels::RandomBits::k32, block,
                                           reinterpret_cast<std::byte*>(bits.data()));
  const HostArray host_bits = got[0].to_host();
  const auto g = host_bits.data<uint32_t>();
  EXPECT_EQ(std::vector<uint32_t>(g.begin(), g.end()), bits);
  for (float v : got[1].to_host().data<float>()) EXPECT_TRUE(std::isfinite(v));
}

// Arrays stay in GPU memory (compute/resident_shard.h): device_put puts each shard there, jit's
// outputs stay there between calls, and the host's first read copies a shard back.
TEST_F(GpuRuntime, ArraysStayOnTheGpuBetweenCallsUntilTheHostReadsThem) {
  const spmd::Mesh mesh(spmd::devices(), {"x"});
  const HostArray host = wave({64, 8}, 0.2);
  Array y = spmd::device_put(host, NamedSharding(mesh, P("x")));
  auto step = spmd::jit([](const Tensor& t) { return jnp::tanh(t) * 0.5f + t; });
  HostArray want = host;
  for (int i = 0; i < 5; ++i) {
    y = step(y);
    for (float& v : want.mutable_data<float>()) v = std::tanh(v) * 0.5f + v;
  }
  for (const spmd::Shard& shard : y.addressable_shards()) {
    EXPECT_NE(shard.data.deferred_source(), nullptr) << shard.device.to_string();
  }
  expect_close(y.to_host(), want, 1e-5f);
}

// A program called again is replayed as one CUDA graph (kernels/cuda/call_graph.h): each call's
// values are the host's, and an earlier call's outputs keep theirs after later calls reuse the
// graph's memory.
TEST_F(GpuRuntime, ACallMadeAgainReplaysAGraphAndEarlierOutputsKeepTheirValues) {
  const spmd::Mesh mesh(spmd::devices(), {"x"});
  if (mesh.size() != 1) GTEST_SKIP() << "graphs replay programs of one device; " << mesh.size();
  auto f = spmd::jit(
      [](const Tensor& x, const Tensor& w) { return jnp::tanh(jnp::matmul(x, w) + 1.0f) * 2.0f; });
  const spmd::kernels::cuda::CallGraph::Counts before = spmd::kernels::cuda::CallGraph::counts();
  std::vector<Array> outs;
  std::vector<HostArray> wants;
  for (int call = 0; call < 4; ++call) {
    const HostArray x = wave({32, 16}, 0.1 * (call + 1)), w = wave({16, 8}, 0.3 + call);
    outs.push_back(f(spmd::device_put(x, NamedSharding(mesh, P())),
                     spmd::device_put(w, NamedSharding(mesh, P()))));
    HostArray want = spmd::matmul(Block(x), Block(w)).to_host();
    for (float& v : want.mutable_data<float>()) v = std::tanh(v + 1.0f) * 2.0f;
    wants.push_back(std::move(want));
  }
  for (size_t call = 0; call < outs.size(); ++call) {
    SCOPED_TRACE("call " + std::to_string(call));
    expect_close(outs[call].to_host(), wants[call], 1e-5f);
  }
  const spmd::kernels::cuda::CallGraph::Counts after = spmd::kernels::cuda::CallGraph::counts();
  EXPECT_GE(after.captured + after.replayed - before.captured - before.replayed, 3)
      << "calls 2 to 4 captured or replayed";
  EXPECT_EQ(after.fell_back - before.fell_back, 0);
}

// Seed 002's step: value_and_grad of an MLP's loss and an SGD update, the batch split over the
// GPUs (a psum of the gradients when there are several); the loss falls.
TEST_F(GpuRuntime, SeedTwosTrainStepLearns) {
  const spmd::Mesh mesh(spmd::devices(), {"dp"});
  const std::vector<float> losses =
      spmd::testing::sgd_steps(mesh, {P(), P(), P(), P()}, P("dp"), 64, 8, 32, 4, 30).losses;
  EXPECT_LT(losses.back(), 0.8f * losses.front())
      << "first " << losses.front() << ", last " << losses.back();
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (GTEST_FLAG_GET(list_tests)) return RUN_ALL_TESTS();  // CTest's discovery: names only
  try {
    spmd::distributed::initialize({.num_processes = 1, .platforms = "gpu"});
  } catch (const spmd::InvalidArgument& e) {
    no_gpu() = e.what();
    std::printf("gpu_runtime_test: skipped, no GPU: %s\n", e.what());
  }
  const int result = RUN_ALL_TESTS();
  if (no_gpu().empty()) spmd::distributed::shutdown();
  return result;
}
