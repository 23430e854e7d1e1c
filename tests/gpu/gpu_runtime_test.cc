// GPU devices in the runtime (label gpu): with the platform "gpu", initialize() loads the GPU
// plugin (src/runtime/gpu_plugin.h), the devices are the GPUs, and jit runs each device's
// program in its memory through the CUDA backend: arrays stay there between calls until the host
// reads them, and collectives go through the device communicators or the host. Each result is
// checked against the CPU backend's, which block operations on host blocks still reach in the same
// process. Every test skips, saying why, where this process sees no GPU.
#include <gtest/gtest.h>
#include <spmd/spmd.h>

#include <cmath>
#include <functional>
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

// A call returns with its work queued (JAX's asynchronous dispatch;
// kernels/cuda/calls_in_flight.h): eight 4096² float32 products still run on the GPU when the call
// returns, block_until_ready() waits for them, and each call's values are the first's. Calls 2 to 4
// are measured, captured and replayed as a graph (call_graph.h): each of those returns early too.
TEST_F(GpuRuntime, ACallReturnsBeforeItsWorkIsDoneAndBlockUntilReadyWaitsForIt) {
  const spmd::Mesh mesh(spmd::devices(), {"x"});
  auto f = spmd::jit([](const Tensor& x) {
    Tensor y = x;
    for (int i = 0; i < 8; ++i) y = jnp::tanh(jnp::matmul(y, x));
    return y;
  });
  const Array x = spmd::device_put(wave({4096, 4096}, 0.1), NamedSharding(mesh, P()));
  const Array first = f(x);
  first.block_until_ready();
  const HostArray want = first.to_host();
  const spmd::kernels::Backend& backend = spmd::kernels::backend_for("gpu");
  for (int call = 2; call <= 4; ++call) {
    SCOPED_TRACE("call " + std::to_string(call));
    const Array y = f(x);
    std::vector<std::function<bool()>> done;
    for (const spmd::Shard& shard : y.addressable_shards()) {
      done.push_back(backend.fence(backend.memory(shard.device.local_hardware_id())));
    }
    for (const auto& d : done) {
      EXPECT_FALSE(d()) << "the call waited for its work (SPMD_GPU_CALLS_IN_FLIGHT=0 set?)";
    }
    y.block_until_ready();
    for (const auto& d : done) EXPECT_TRUE(d()) << "block_until_ready returned before the work";
    expect_close(y.to_host(), want, 1e-5f);
  }
}

// A loop that passes new arrays every call, as a train step's state is, replays one graph: the
// inputs are copied into the program's own buffers first (Executable::Replay's slots). Each
// call's values are the host's, the outputs that are an input passed through, reshaped or
// sliced keep the caller's values after later calls, and calls 3 to 8 are replays.
TEST_F(GpuRuntime, ALoopPassingNewArraysEachCallReplaysOneGraphWithTheCallersValues) {
  const spmd::Mesh mesh(spmd::devices(), {"x"});
  if (mesh.size() != 1) GTEST_SKIP() << "graphs replay programs of one device; " << mesh.size();
  // Six steps or so (the chain, the sums, the transpose, the slice): enough to take slots.
  auto f = spmd::jit([](const Tensor& p, const Tensor& x) {
    return std::vector<Tensor>{
        jnp::tanh(p * 0.5f + x),  p,
        jnp::reshape(p, {8, 64}), jnp::slice(p, {16, 0}, {32, 8}),
        jnp::sum(p * x, {1}),     jnp::transpose(jnp::exp(p)) + jnp::sum(x, {1})};
  });
  const NamedSharding rep(mesh, P());
  const HostArray x = wave({64, 8}, 0.7);
  Array p = spmd::device_put(wave({64, 8}, 0.2), rep);
  const Array xd = spmd::device_put(x, rep);
  HostArray want = wave({64, 8}, 0.2);
  std::vector<std::vector<Array>> kept;  // every call's outputs, read after the loop
  std::vector<HostArray> wants;
  spmd::kernels::cuda::CallGraph::Counts before{};
  for (int call = 1; call <= 8; ++call) {
    if (call == 3) before = spmd::kernels::cuda::CallGraph::counts();
    std::vector<Array> out = f(p, xd);
    wants.push_back(want);  // the host's value of this call's input
    for (size_t i = 0; i < want.data<float>().size(); ++i) {
      want.mutable_data<float>()[i] = std::tanh(want.data<float>()[i] * 0.5f + x.data<float>()[i]);
    }
    p = out[0];
    kept.push_back(std::move(out));
  }
  const spmd::kernels::cuda::CallGraph::Counts after = spmd::kernels::cuda::CallGraph::counts();
  EXPECT_EQ(after.replayed - before.replayed, 6) << "calls 3 to 8 launched the kept graph";
  for (size_t call = 0; call < kept.size(); ++call) {
    SCOPED_TRACE("call " + std::to_string(call + 1));
    // The call's input exactly: the first's from the host, each later one the call before's.
    const HostArray in = call == 0 ? wants[0] : kept[call - 1][0].to_host();
    const HostArray next = call + 1 < wants.size() ? wants[call + 1] : want;
    expect_close(kept[call][0].to_host(), next, 1e-5f);
    expect_close(kept[call][1].to_host(), in, 0);
    HostArray reshaped = in;
    reshaped.reshape({8, 64});
    expect_close(kept[call][2].to_host(), reshaped, 0);
    expect_close(kept[call][3].to_host(), in.slice({{16, 32}, {0, 8}}), 0);
    HostArray row_sums = HostArray::zeros(spmd::DType::kFloat32, {64});
    HostArray exp_t = HostArray::zeros(spmd::DType::kFloat32, {8, 64});
    for (int64_t r = 0; r < 64; ++r) {
      for (int64_t c = 0; c < 8; ++c) {
        const float v = in.data<float>()[r * 8 + c];
        row_sums.mutable_data<float>()[r] += v * x.data<float>()[r * 8 + c];
        float row = 0;  // x's row r summed
        for (int64_t k = 0; k < 8; ++k) row += x.data<float>()[r * 8 + k];
        exp_t.mutable_data<float>()[c * 64 + r] = std::exp(v) + row;
      }
    }
    expect_close(kept[call][4].to_host(), row_sums, 1e-5f);
    expect_close(kept[call][5].to_host(), exp_t, 1e-5f);
  }
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
