// Device memory without a device: with the simulated device backend (support/
// simulated_device_backend.h) standing in for the CPU's, blocks live in memory the host may not
// read, jit copies each device's inputs there and leaves its outputs there until the host reads
// them, collectives stage through the host, and every kernel is handed device pointers only. The
// values must be the CPU's, bit for bit: a GPU's backend (src/kernels/cuda) serves the same seam.
#include <gtest/gtest.h>
#include <spmd/spmd.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "comm/device_comm_factory.h"
#include "kernels/backend.h"
#include "support/sgd_mlp.h"
#include "support/simulated_device_backend.h"

namespace {

namespace jnp = spmd::numpy;
using spmd::Array;
using spmd::Block;
using spmd::DType;
using spmd::HostArray;
using spmd::MemorySpace;
using spmd::NamedSharding;
using spmd::P;
using spmd::Shape;
using spmd::Tensor;
using spmd::testing::SimulatedDeviceBackend;
using spmd::testing::wave;

void expect_same_bytes(const std::vector<Array>& got, const std::vector<Array>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t k = 0; k < want.size(); ++k) {
    const HostArray g = got[k].to_host(), w = want[k].to_host();
    ASSERT_EQ(g.dtype(), w.dtype()) << "output " << k;
    ASSERT_EQ(g.shape(), w.shape()) << "output " << k;
    EXPECT_EQ(std::memcmp(g.bytes().data(), w.bytes().data(), w.nbytes()), 0) << "output " << k;
    EXPECT_EQ(got[k].sharding().to_string(), want[k].sharding().to_string()) << "output " << k;
  }
}

TEST(DeviceMemory, ABlockLivesInTheMemoryItWasMadeInAndTheHostReadsOnlyACopy) {
  SimulatedDeviceBackend device;
  const spmd::kernels::BackendOverride installed(device);
  const Block host = Block::from_vector(std::vector<float>{1, 2, 3, 4}, {2, 2});
  const Block there = host.to_memory(MemorySpace::device(1));
  EXPECT_EQ(there.memory(), MemorySpace::device(1));
  EXPECT_EQ(device.counts().host_to_device, 1);
  try {
    (void)there.data<float>();
    ADD_FAILURE() << "the host read device memory";
  } catch (const spmd::FailedPrecondition& e) {
    EXPECT_NE(std::string(e.what()).find("device:1 memory"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("to_host()"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)there.reshape({4}).item<float>(), spmd::InvalidArgument);  // 4 elements
  EXPECT_THROW((void)there.reshape({4}).to_memory(MemorySpace::device(1)).data<float>(),
               spmd::FailedPrecondition);
  EXPECT_EQ(there.to_host().data<float>()[3], 4.0f);
  EXPECT_EQ(device.counts().device_to_host, 1);
  EXPECT_TRUE(there == host);  // compared through a host copy

  // Copy on write stays in device memory: the shared elements are copied there, not to the host.
  Block writer = there;
  (void)writer.mutable_bytes();
  EXPECT_EQ(device.counts().device_to_device, 1);
  EXPECT_EQ(writer.memory(), MemorySpace::device(1));

  const Block empty = Block::allocate(DType::kInt32, {0, 3}, MemorySpace::device(0));
  EXPECT_EQ(empty.to_host().shape(), (Shape{0, 3}));
  EXPECT_TRUE(device.violations().empty());
}

TEST(DeviceMemory, BlockOperationsOnADeviceBlockComputeThereAndFetchAHostOperand) {
  SimulatedDeviceBackend device;
  const spmd::kernels::BackendOverride installed(device);
  const Block a =
      Block::from_vector(std::vector<float>{1, 4, 9, 16}, {4}).to_memory(MemorySpace::device(0));
  const Block b = Block::from_vector(std::vector<float>{1, 2, 3, 4}, {4});  // made on the host
  const Block sum = spmd::add(spmd::sqrt(a), b);
  EXPECT_EQ(sum.memory(), MemorySpace::device(0));
  EXPECT_EQ(sum.to_host().data<float>()[3], 8.0f);
  const Block total = spmd::sum(spmd::scale(a, 0.5));
  EXPECT_EQ(total.memory(), MemorySpace::device(0));
  EXPECT_EQ(total.to_host().data<float>()[0], 15.0f);
  EXPECT_TRUE(device.violations().empty()) << device.violations().front();
}

// What the other tests lean on: a host pointer handed to a device kernel is caught, as a GPU
// would fault on it, and so is a copy that names the wrong memory.
TEST(DeviceMemory, TheSimulatedDeviceCatchesAHostPointerAtAKernelOrACopy) {
  SimulatedDeviceBackend device;
  const spmd::kernels::BackendOverride installed(device);
  std::vector<float> host(4, 1.0f);
  auto* host_bytes = reinterpret_cast<std::byte*>(host.data());
  Block out = Block::allocate(DType::kFloat32, {4}, MemorySpace::device(0));
  EXPECT_THROW(device.fill(DType::kFloat32, 2.0, host_bytes, 4), std::logic_error);
  EXPECT_THROW(device.copy(host_bytes, MemorySpace::device(0), out.mutable_bytes().data(),
                           MemorySpace::device(0), 16),
               std::logic_error);
  EXPECT_THROW(device.copy(host_bytes, MemorySpace::host(), out.mutable_bytes().data(),
                           MemorySpace::device(1), 16),
               std::logic_error);  // the right pointer, named as another device's
  EXPECT_EQ(device.violations().size(), 3u);
  device.fill(DType::kFloat32, 2.0, out.mutable_bytes().data(), 4);  // device memory: fine
  EXPECT_EQ(out.to_host().data<float>()[2], 2.0f);
  EXPECT_EQ(device.violations().size(), 3u);
}

std::vector<Array> families(const std::vector<Array>& in) {
  auto f = spmd::jit([](const Tensor& x, const Tensor& w, const Tensor& idx) {
    const Tensor y = jnp::matmul(x, w);                             // contraction over a split axis
    const Tensor z = jnp::tanh(y) * 2.0f + jnp::exp(-jnp::abs(y));  // a fused chain
    const Tensor rows = jnp::sum(z, {1});                           // a reduction (and its psum)
    const Tensor cols = jnp::max(z, {0});
    const Tensor t = jnp::transpose(z);
    const Tensor c = jnp::concatenate({jnp::slice(t, {0, 0}, {2, 8}), t}, 0);
    const Tensor picked = jnp::take(z, idx, 0);
    const Tensor scan = jnp::cumsum(rows, 0);
    const Tensor sorted = jnp::sort(cols, 0);
    const Tensor best = jnp::argmax(z, 1);
    const Tensor k =
        jnp::arange(8, DType::kInt32) * 3 +
        jnp::asarray(HostArray::from_vector(std::vector<int32_t>{5, 1, 4, 1, 5, 9, 2, 6},
                                            {8}));  // a constant of the program
    return std::vector<Tensor>{rows, cols, c, picked, scan, sorted, best, k};
  });
  return f(in[0], in[1], in[2]);
}

std::vector<Array> family_inputs() {
  const spmd::Mesh mesh(spmd::devices(), {2, 2}, {"a", "b"});
  return {spmd::device_put(wave({8, 6}, 0.1), NamedSharding(mesh, P("a", "b"))),
          spmd::device_put(wave({6, 4}, 0.7), NamedSharding(mesh, P("b"))),
          spmd::device_put(HostArray::from_vector(std::vector<int32_t>{7, 0, 3, 3, 5}, {5}),
                           NamedSharding(mesh, P()))};
}

TEST(DeviceMemory, JitRunsEachFamilyInDeviceMemoryAndGivesTheHostsValues) {
  const std::vector<Array> in = family_inputs();
  const std::vector<Array> want = families(in);
  SimulatedDeviceBackend device;
  std::vector<Array> got;
  {
    const spmd::kernels::BackendOverride installed(device);
    got = families(in);
  }
  EXPECT_EQ(device.counts().live, 4 * 8);  // each device's eight outputs stay in its memory
  expect_same_bytes(got, want);
  const auto v = device.violations();
  EXPECT_TRUE(v.empty()) << v.front();
  got.clear();
  const SimulatedDeviceBackend::Counts n = device.counts();
  EXPECT_GE(n.host_to_device, 4 * 3);  // each device's three inputs, at least
  EXPECT_GE(n.device_to_host, 8);      // each output read once the host asked, at least
  EXPECT_EQ(n.live, 0);                // every block in device memory given back
  EXPECT_EQ(device.bindings_held(), 0);
}

TEST(DeviceMemory, RandomNumbersInDeviceMemoryAreTheHostsBitForBit) {
  auto draw = [] {
    auto f = spmd::jit([](const Tensor& key) {
      const Tensor keys = spmd::random::split(key, 3);
      return std::vector<Tensor>{spmd::random::normal(spmd::random::fold_in(key, 1u), {8, 4}),
                                 spmd::random::uniform(key, {16}), spmd::random::bits(key, {4, 4}),
                                 keys};
    });
    return f(spmd::random::PRNGKey(7));
  };
  const std::vector<Array> want = draw();
  SimulatedDeviceBackend device;
  std::vector<Array> got;
  {
    const spmd::kernels::BackendOverride installed(device);
    got = draw();
  }
  expect_same_bytes(got, want);
  EXPECT_TRUE(device.violations().empty());
  EXPECT_GE(device.counts().host_to_device, 1);      // the key
  EXPECT_GE(device.counts().device_to_host, 4 + 1);  // the outputs, and the key read for the draws
  got.clear();
  EXPECT_EQ(device.counts().live, 0);
}

// The edges, in device memory as on the host: empty arrays split and whole, and float16 with
// ±inf, NaN, a signed zero and a subnormal through a chain and a reduction.
TEST(DeviceMemory, EmptyArraysAndFloat16SpecialValuesAreTheHostsBitForBit) {
  const spmd::Mesh mesh(spmd::devices(), {"x"});
  const std::vector<float> special{-INFINITY, INFINITY, NAN, -0.0f, 6e-8f, 1.5f, -2.0f, 65504.0f};
  std::vector<spmd::float16> halves;
  for (float v : special) halves.push_back(spmd::to_float16(v));
  const HostArray half = HostArray::from_vector(halves, {8});
  auto run = [&] {
    auto f = spmd::jit([](const Tensor& e, const Tensor& h) {
      return std::vector<Tensor>{jnp::sum(jnp::exp(e), {0}), jnp::exp(e) * 2.0f, jnp::tanh(h) + h,
                                 jnp::max(h, {0}), jnp::cumsum(h, 0)};
    });
    return f(spmd::device_put(HostArray::zeros(DType::kFloat32, {0, 4}), NamedSharding(mesh, P())),
             spmd::device_put(half, NamedSharding(mesh, P("x"))));
  };
  const std::vector<Array> want = run();
  SimulatedDeviceBackend device;
  std::vector<Array> got;
  {
    const spmd::kernels::BackendOverride installed(device);
    got = run();
  }
  expect_same_bytes(got, want);
  EXPECT_TRUE(device.violations().empty());
  got.clear();
  EXPECT_EQ(device.counts().live, 0);
}

// jit's outputs on a device stay in its memory (compute/resident_shard.h): the next call takes
// them there with no copy, and the host's first read of a shard copies it once. Each call ends
// with its work queued (Backend::call_queued), and block_until_ready() waits for each shard's
// device.
TEST(DeviceMemory, OutputsStayInDeviceMemoryUntilTheHostReadsThem) {
  SimulatedDeviceBackend device;  // first: the jitted function keeps blocks in its memory
  const spmd::Mesh mesh(spmd::devices(), {"x"});
  const Array x = spmd::device_put(wave({8, 4}, 0.3), NamedSharding(mesh, P("x")));
  auto step = spmd::jit([](const Tensor& t) { return t * 2.0f + 1.0f; });
  Array want = x;
  for (int i = 0; i < 6; ++i) want = step(want);
  Array y = x;
  {
    const spmd::kernels::BackendOverride installed(device);
    y = step(y);
    EXPECT_EQ(device.counts().host_to_device, 4);  // each device's shard of x
    EXPECT_EQ(device.counts().device_to_host, 0);
    for (const spmd::Shard& shard : y.addressable_shards()) {
      EXPECT_NE(shard.data.deferred_source(), nullptr) << shard.device.to_string();
      EXPECT_EQ(shard.data.shape(), (Shape{2, 4}));
    }
    for (int i = 1; i < 6; ++i) y = step(y);
    EXPECT_EQ(device.counts().host_to_device, 4);  // the later calls found their input there
    EXPECT_EQ(device.counts().device_to_host, 0);
    EXPECT_EQ(device.counts().calls_queued, 6 * 4);
    EXPECT_EQ(device.counts().synchronizations, 0) << "a call waited for its devices";
    y.block_until_ready();
    EXPECT_EQ(device.counts().synchronizations, 4) << "one wait for each shard's device";
    EXPECT_EQ(device.counts().device_to_host, 0) << "the wait read nothing";
  }
  // Read after the override has ended: the shards come from the backend that made them.
  expect_same_bytes({y}, {want});
  EXPECT_EQ(device.counts().device_to_host, 4);
  EXPECT_EQ(y.to_host(), want.to_host());
  EXPECT_EQ(device.counts().device_to_host, 4);  // fetched once
  EXPECT_TRUE(device.violations().empty());
  const int live = device.counts().live;  // the last call's outputs, and the kept constants
  y = x;
  EXPECT_EQ(device.counts().live, live - 4);
}

// Data entering an Array on such a device goes to its memory once (array/shard_placement.h), as
// jax.device_put puts a buffer on its device: jit then copies nothing to the device.
TEST(DeviceMemory, DevicePutKeepsEachShardInItsDevicesMemory) {
  SimulatedDeviceBackend device;  // first: the jitted function may keep blocks in its memory
  const spmd::Mesh mesh(spmd::devices(), {"x"});
  const HostArray host = wave({8, 4}, 0.6);
  auto f = spmd::jit([](const Tensor& t) { return jnp::exp(t); });
  (void)f(spmd::device_put(host, NamedSharding(mesh, P("x"))));  // compiled on the host
  {
    const spmd::kernels::BackendOverride installed(device);
    const Array x = spmd::device_put(host, NamedSharding(mesh, P("x")));
    EXPECT_EQ(device.counts().host_to_device, 4);
    for (const spmd::Shard& shard : x.addressable_shards()) {
      EXPECT_NE(shard.data.deferred_source(), nullptr) << shard.device.to_string();
    }
    const Array y = f(x);
    EXPECT_EQ(device.counts().host_to_device, 4);
    EXPECT_EQ(device.counts().device_to_host, 0);
    EXPECT_EQ(x.to_host(), host);  // read back once the host asks
    EXPECT_EQ(device.counts().device_to_host, 4);
    EXPECT_EQ(device.counts().live, 8);
  }
  EXPECT_TRUE(device.violations().empty());
  EXPECT_EQ(device.counts().live, 0);
}

// Seed 002's step, model-parallel over ("dp", "mp"): the gradients' reductions are collectives
// on blocks in device memory, staged through the host (one process holds all four devices).
std::vector<Array> train(int steps) {
  const spmd::Mesh mesh(spmd::devices(), {2, 2}, {"dp", "mp"});
  return spmd::testing::sgd_steps(mesh, {P(spmd::None, "mp"), P("mp"), P("mp", spmd::None), P()},
                                  P("dp"), 32, 8, 16, 4, steps)
      .last;
}

// A device-communicator factory that must not be asked: a process whose several devices share a
// group stages its collectives through the host (compute/device_route.h), as NCCL would need
// grouped calls across its device threads.
class RefusingFactory final : public spmd::DeviceCommFactory {
 public:
  std::string name() const override { return "refusing"; }
  std::string make_id() const override {
    ++asked;
    return "";
  }
  std::unique_ptr<spmd::DeviceCommunicator> make(const spmd::DeviceCommSpec&) const override {
    ++asked;
    throw std::logic_error("a group of one process's devices was given a device communicator");
  }
  mutable int asked = 0;
};

// Steps that give the same block at every call (full, arange, a captured constant) are made at a
// device's first call and shared by the later ones (jit/execute.h's KeptSteps): no launch and no
// allocation after the first, and a later step never writes into them (each call's values are
// the host's).
// Calls replayed as a GPU's backend replays them (the simulated backend's `replays`): each
// call's outputs are the CPU's bit for bit, and keep their values after later calls reuse the
// program's memory. `loop` makes 8 calls of `f`, each passing the last call's first output (new
// buffers every call, as a training loop's state), and returns every call's outputs.
std::vector<std::vector<Array>> replayed_loop(
    const std::function<std::vector<Array>(const Array&, const Array&)>& f, const Array& p0,
    const Array& x) {
  std::vector<std::vector<Array>> outs;
  Array p = p0;
  for (int call = 0; call < 8; ++call) {
    outs.push_back(f(p, x));
    p = outs.back()[0];
  }
  return outs;
}

TEST(DeviceMemory, ReplayedCallsLeaveEachCallsValuesWithTheCaller) {
  SimulatedDeviceBackend device(/*replays=*/true);  // first: the jitted functions use it
  const spmd::Mesh one({spmd::devices()[0]}, {"x"});
  const NamedSharding rep(one, P());
  // Enough steps to copy its inputs into slots of its own (Executable::run_replayable), with
  // outputs that are an input passed through, reshaped and sliced (inside the input's slot).
  auto big = spmd::jit([](const Tensor& p, const Tensor& x) {
    return std::vector<Tensor>{
        jnp::tanh(p * 0.5f + x), p,
        jnp::reshape(p, {8, 8}), jnp::slice(p, {4, 0}, {12, 4}),
        jnp::sum(p * x, {1}),    jnp::transpose(jnp::exp(p)) + jnp::sum(x, {1})};
  });
  // Too few steps for slots: replayed only when its input buffers come again.
  auto small = spmd::jit([](const Tensor& p, const Tensor& x) {
    return std::vector<Tensor>{p * 2.0f + x, p};
  });
  auto run = [&](auto& f, bool chained) {
    // Made here, so that under the override they lie in the simulated device's memory, as a
    // GPU's arrays do: a call then passes the same input buffers again.
    const Array p0 = spmd::device_put(wave({16, 4}, 0.2), rep);
    const Array x = spmd::device_put(wave({16, 4}, 0.9), rep);
    auto call = [&](const Array& p, const Array& in) { return f(p, in); };
    if (chained) return replayed_loop(call, p0, x);
    std::vector<std::vector<Array>> outs;
    for (int i = 0; i < 8; ++i) outs.push_back(f(p0, x));
    return outs;
  };
  const auto want_big = run(big, true), want_small = run(small, true),
             want_same = run(small, false);
  std::vector<std::vector<Array>> got_big, got_small, got_same;
  SimulatedDeviceBackend::Counts after_big{}, after_small{};
  {
    const spmd::kernels::BackendOverride installed(device);
    got_big = run(big, true);
    after_big = device.counts();
    got_small = run(small, true);
    after_small = device.counts();
    got_same = run(small, false);
  }
  EXPECT_EQ(after_big.replayed, 6) << "calls 3 to 8 of a program with slots replayed";
  EXPECT_EQ(device.counts().replayed - after_small.replayed, 7)
      << "calls 2 to 8 with the same inputs (the first captured) replayed";
  for (size_t call = 0; call < 8; ++call) {
    SCOPED_TRACE("call " + std::to_string(call + 1));
    expect_same_bytes(got_big[call], want_big[call]);
    expect_same_bytes(got_small[call], want_small[call]);
    expect_same_bytes(got_same[call], want_same[call]);
  }
  EXPECT_TRUE(device.violations().empty());
}

// The same with an input and outputs of no elements beside the others: a (0, 4) array copied
// into a slot of no bytes, passed through, and computed on.
TEST(DeviceMemory, ReplayedCallsKeepArraysOfNoElements) {
  SimulatedDeviceBackend device(/*replays=*/true);  // first: the jitted function uses it
  const spmd::Mesh one({spmd::devices()[0]}, {"x"});
  const NamedSharding rep(one, P());
  auto f = spmd::jit([](const Tensor& p, const Tensor& e) {
    return std::vector<Tensor>{jnp::tanh(p) * 2.0f + 1.0f, jnp::sum(p, {0}), jnp::exp(p), e * 2.0f,
                               e};
  });
  auto run = [&] {
    const Array p0 = spmd::device_put(wave({16, 4}, 0.4), rep);
    const Array e = spmd::device_put(HostArray::zeros(DType::kFloat32, {0, 4}), rep);
    return replayed_loop([&](const Array& p, const Array& in) { return f(p, in); }, p0, e);
  };
  const auto want = run();
  std::vector<std::vector<Array>> got;
  {
    const spmd::kernels::BackendOverride installed(device);
    got = run();
  }
  EXPECT_EQ(device.counts().replayed, 6) << "calls 3 to 8 replayed";
  for (size_t call = 0; call < 8; ++call) {
    SCOPED_TRACE("call " + std::to_string(call + 1));
    expect_same_bytes(got[call], want[call]);
  }
  EXPECT_TRUE(device.violations().empty());
}

TEST(DeviceMemory, ConstantStepsAreMadeAtTheFirstCallAndShared) {
  SimulatedDeviceBackend device;  // first: the jitted function keeps blocks in its memory
  const spmd::Mesh mesh(spmd::devices(), {"x"});
  const HostArray captured = wave({8, 4}, 0.9);
  auto f = spmd::jit([&](const Tensor& t) {
    const Tensor c = jnp::full({8, 4}, 3.0f) + jnp::asarray(captured);
    const Tensor r = jnp::arange(4, DType::kFloat32);
    return std::vector<Tensor>{t * c + r, c};
  });
  std::vector<HostArray> inputs;
  std::vector<std::vector<Array>> want;
  for (int i = 0; i < 3; ++i) {
    inputs.push_back(wave({8, 4}, 0.1 * (i + 1)));
    want.push_back(f(spmd::device_put(inputs.back(), NamedSharding(mesh, P("x")))));
  }
  std::vector<int> allocations{0};
  std::vector<std::vector<Array>> got;
  {
    const spmd::kernels::BackendOverride installed(device);
    for (int i = 0; i < 3; ++i) {
      const Array x = spmd::device_put(inputs[static_cast<size_t>(i)], NamedSharding(mesh, P("x")));
      got.push_back(f(x));
      allocations.push_back(device.counts().allocations);
    }
  }
  for (size_t i = 0; i < 3; ++i) expect_same_bytes(got[i], want[i]);
  const int first = allocations[1] - allocations[0], second = allocations[2] - allocations[1],
            third = allocations[3] - allocations[2];
  EXPECT_EQ(second, third);
  EXPECT_LT(second, first) << "the constants were made again";
  EXPECT_TRUE(device.violations().empty());
}

// A collective over one device is the identity where the block lies: a sum over a dimension
// split along a mesh axis of size 1 (a train step on one GPU sums its gradients so) stages
// nothing through the host and asks no device communicator.
TEST(DeviceMemory, CollectivesOverOneDeviceMoveNothing) {
  SimulatedDeviceBackend device;  // first: the jitted function keeps blocks in its memory
  const spmd::Mesh mesh(std::vector<spmd::Device>{spmd::devices()[0]}, {"dp"});
  const HostArray host = wave({8, 4}, 0.4);
  auto f = spmd::jit([](const Tensor& t) {
    return std::vector<Tensor>{jnp::sum(t, {0}), jnp::max(t, {0}), jnp::mean(t, {0})};
  });
  const std::vector<Array> want = f(spmd::device_put(host, NamedSharding(mesh, P("dp"))));
  RefusingFactory factory;
  std::vector<Array> got;
  {
    const spmd::kernels::BackendOverride installed(device);
    const spmd::DeviceCommFactoryOverride comms("cpu", factory);
    got = f(spmd::device_put(host, NamedSharding(mesh, P("dp"))));
    EXPECT_EQ(device.counts().host_to_device, 1);  // x, put on the device
    EXPECT_EQ(device.counts().device_to_host, 0);  // nothing staged
  }
  expect_same_bytes(got, want);
  EXPECT_TRUE(device.violations().empty());
  EXPECT_EQ(factory.asked, 0);
}

TEST(DeviceMemory, SeedTwosTrainStepInDeviceMemoryEndsWhereTheHostsDoes) {
  const std::vector<Array> want = train(3);
  SimulatedDeviceBackend device;
  RefusingFactory factory;
  std::vector<Array> got;
  {
    const spmd::kernels::BackendOverride installed(device);
    const spmd::DeviceCommFactoryOverride comms("cpu", factory);
    got = train(3);
  }
  expect_same_bytes(got, want);
  EXPECT_TRUE(device.violations().empty());
  EXPECT_GE(device.counts().host_to_device, 4 * 6);  // the first step's six inputs per device
  got.clear();
  EXPECT_EQ(device.counts().live, 0);
  EXPECT_EQ(factory.asked, 0);
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  spmd::distributed::initialize({.num_processes = 1, .num_cpu_devices = 4});
  const int result = RUN_ALL_TESTS();
  spmd::distributed::shutdown();
  return result;
}
