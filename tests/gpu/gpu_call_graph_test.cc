// A jit call's GPU work replayed as a CUDA graph (kernels/cuda/call_graph.h), through the device
// seam's run_call as the executor calls it: a first call measured directly, later calls captured
// into a graph that is updated with each call's buffers, every result equal to the CPU's; a call
// on the input buffers of a kept graph launched again without running, reading their new
// contents; a call that copies from the host inside falls back to running directly and is still
// right; a call needing more arena than measured runs directly and the next gets a larger arena.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <vector>

#include "gpu/gpu_fixture.h"
#include "kernels/backend.h"
#include "kernels/cuda/call_graph.h"
#include "kernels/cuda/cuda_backend.h"
#include "kernels/cuda/gpu_scope.h"

namespace spmd::test {
namespace {

using GpuCallGraph = Gpu;
using kernels::ChainStep;
using kernels::cuda::CallGraph;

std::vector<float> floats(size_t n, float first) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = first + 0.25f * static_cast<float>(i % 97);
  return v;
}

// The n floats at `data` in GPU memory `memory`, read back to the host.
std::vector<float> floats_at(const kernels::Backend& backend, MemorySpace memory,
                             const std::byte* data, size_t n) {
  std::vector<float> host(n);
  backend.copy(data, memory, reinterpret_cast<std::byte*>(host.data()), MemorySpace::host(), n * 4);
  return host;
}

Bytes bytes_of(const std::vector<float>& v) {
  Bytes b(v.size() * 4);
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

const ChainStep kMul{ChainStep::Kind::kBinary,
                     uint8_t(kernels::Binary::kMul),
                     DType::kFloat32,
                     DType::kFloat32,
                     {kernels::chain_input(0), kernels::chain_input(1), 0}};
const ChainStep kAdd{ChainStep::Kind::kBinary,
                     uint8_t(kernels::Binary::kAdd),
                     DType::kFloat32,
                     DType::kFloat32,
                     {kernels::chain_input(0), kernels::chain_input(1), 0}};

TEST_F(GpuCallGraph, LaterCallsAreCapturedIntoKeptGraphsWithEachCallsBuffersAndEqualTheCpu) {
  const kernels::Backend& cuda = kernels::cuda::cuda_backend();
  const kernels::cuda::GpuScope scope(gpu());
  const MemorySpace memory = MemorySpace::device(0);
  constexpr size_t kN = 5000;
  std::shared_ptr<void> state;
  const CallGraph::Counts before = CallGraph::counts();
  // Six calls: one measured, five captured; the first kSlots captures each instantiate a graph
  // in an empty slot, the fifth updates the one used longest ago.
  for (int call = 0; call < 6; ++call) {
    const auto a = floats(kN, float(call)), b = floats(kN, 0.5f), c = floats(kN, -float(call));
    const DeviceBuffer da = upload(bytes_of(a)), db = upload(bytes_of(b)), dc = upload(bytes_of(c));
    std::shared_ptr<std::byte> out;
    const void* key[] = {da.data(), db.data(), dc.data()};
    cuda.run_call(memory, state, key, false, [&](bool) {
      // An intermediate (a * b) and the result, both from run_call's memory while captured.
      std::shared_ptr<std::byte> product = cuda.allocate(memory, kN * 4);
      const kernels::Input ab[] = {{da.data(), kN}, {db.data(), kN}};
      cuda.chain({&kMul, 1}, ab, product.get(), kN);
      out = cuda.allocate(memory, kN * 4);
      const kernels::Input pc[] = {{product.get(), kN}, {dc.data(), kN}};
      cuda.chain({&kAdd, 1}, pc, out.get(), kN);
    });
    // From the second call on, the result lies in the memory the next call reuses.
    EXPECT_EQ(cuda.replay_holds(state, out.get()), call > 0) << "call " << call;
    const std::vector<float> got = floats_at(cuda, memory, out.get(), kN);
    for (size_t i = 0; i < kN; ++i) {
      ASSERT_EQ(got[i], a[i] * b[i] + c[i]) << "call " << call << ", element " << i;
    }
  }
  const CallGraph::Counts after = CallGraph::counts();
  EXPECT_EQ(after.captured - before.captured, 5);
  EXPECT_EQ(after.instantiated - before.instantiated, kernels::cuda::GraphSlots::kSlots)
      << "a capture past the slots updates a graph";
  EXPECT_EQ(after.fell_back - before.fell_back, 0);
}

TEST_F(GpuCallGraph, ACallOnTheSameInputBuffersReplaysItsGraphWithoutRunningAndReadsThemAnew) {
  const kernels::Backend& cuda = kernels::cuda::cuda_backend();
  const kernels::cuda::GpuScope scope(gpu());
  const MemorySpace memory = MemorySpace::device(0);
  constexpr size_t kN = 4096;
  DeviceBuffer da(gpu(), kN * 4), db(gpu(), kN * 4);
  const void* key[] = {da.data(), db.data()};
  std::shared_ptr<void> state;
  const std::byte* result = nullptr;  // where the captured call leaves its result
  const CallGraph::Counts before = CallGraph::counts();
  for (int call = 0; call < 5; ++call) {
    const auto a = floats(kN, float(call) - 2), b = floats(kN, 0.75f * float(call));
    da.copy_from_host(a.data(), kN * 4);
    db.copy_from_host(b.data(), kN * 4);
    bool ran = false;
    std::shared_ptr<std::byte> out;
    const auto how = cuda.run_call(memory, state, key, result != nullptr, [&](bool) {
      ran = true;
      out = cuda.allocate(memory, kN * 4);
      const kernels::Input ab[] = {{da.data(), kN}, {db.data(), kN}};
      cuda.chain({&kMul, 1}, ab, out.get(), kN);
    });
    if (how == kernels::Backend::CallRun::kCaptured) result = out.get();
    EXPECT_EQ(ran, call < 2) << "call " << call << ": measured, captured, then replayed";
    ASSERT_NE(result == nullptr, call > 0);
    const std::vector<float> got = floats_at(cuda, memory, ran ? out.get() : result, kN);
    for (size_t i = 0; i < kN; ++i) {
      ASSERT_EQ(got[i], a[i] * b[i]) << "call " << call << ", element " << i;
    }
  }
  const CallGraph::Counts after = CallGraph::counts();
  EXPECT_EQ(after.replayed - before.replayed, 3);
  EXPECT_EQ(after.captured - before.captured, 1);
}

// A call that allocates nothing (it writes into the caller's buffer) is captured with an arena
// of no bytes, which is kept: calls alternating between two sets of buffers are captured once
// for each, then replayed.
TEST_F(GpuCallGraph, ACallAllocatingNothingIsReplayedToo) {
  const kernels::Backend& cuda = kernels::cuda::cuda_backend();
  const kernels::cuda::GpuScope scope(gpu());
  const MemorySpace memory = MemorySpace::device(0);
  constexpr size_t kN = 1000;
  DeviceBuffer da[] = {{gpu(), kN * 4}, {gpu(), kN * 4}}, db[] = {{gpu(), kN * 4}, {gpu(), kN * 4}};
  DeviceBuffer out(gpu(), kN * 4);
  std::shared_ptr<void> state;
  bool captured = false;
  const CallGraph::Counts before = CallGraph::counts();
  // Call 0 is measured; calls 1 and 2 are captured on each set; calls 3 and 4 replay them.
  for (int call = 0; call < 5; ++call) {
    DeviceBuffer &a_in = da[call % 2], &b_in = db[call % 2];
    const auto a = floats(kN, float(call)), b = floats(kN, 1.5f);
    a_in.copy_from_host(a.data(), kN * 4);
    b_in.copy_from_host(b.data(), kN * 4);
    const void* key[] = {a_in.data(), b_in.data()};
    const auto how = cuda.run_call(memory, state, key, captured, [&](bool) {
      const kernels::Input ab[] = {{a_in.data(), kN}, {b_in.data(), kN}};
      cuda.chain({&kMul, 1}, ab, out.data(), kN);
    });
    captured = captured || how == kernels::Backend::CallRun::kCaptured;
    const std::vector<float> got = floats_at(cuda, memory, out.data(), kN);
    for (size_t i = 0; i < kN; ++i) ASSERT_EQ(got[i], a[i] * b[i]) << "call " << call;
  }
  const CallGraph::Counts after = CallGraph::counts();
  EXPECT_EQ(after.captured - before.captured, 2);
  EXPECT_EQ(after.replayed - before.replayed, 2);
}

TEST_F(GpuCallGraph, ACallCopyingFromTheHostRunsDirectlyAndStaysRight) {
  const kernels::Backend& cuda = kernels::cuda::cuda_backend();
  const kernels::cuda::GpuScope scope(gpu());
  const MemorySpace memory = MemorySpace::device(0);
  constexpr size_t kN = 300;
  std::shared_ptr<void> state;
  const CallGraph::Counts before = CallGraph::counts();
  for (int call = 0; call < 3; ++call) {
    const auto host = floats(kN, float(call) * 3);
    std::shared_ptr<std::byte> out;
    cuda.run_call(memory, state, {}, false, [&](bool) {
      out = cuda.allocate(memory, kN * 4);
      cuda.copy(reinterpret_cast<const std::byte*>(host.data()), MemorySpace::host(), out.get(),
                memory, kN * 4);
    });
    EXPECT_FALSE(cuda.replay_holds(state, out.get()));
    const std::vector<float> got = floats_at(cuda, memory, out.get(), kN);
    EXPECT_EQ(got, host) << "call " << call;
  }
  const CallGraph::Counts after = CallGraph::counts();
  EXPECT_EQ(after.fell_back - before.fell_back, 1) << "one failed capture, then direct";
  EXPECT_EQ(after.captured - before.captured, 0);
}

TEST_F(GpuCallGraph, ACallOutgrowingItsArenaRunsDirectlyAndTheNextHasRoom) {
  const kernels::Backend& cuda = kernels::cuda::cuda_backend();
  const kernels::cuda::GpuScope scope(gpu());
  const MemorySpace memory = MemorySpace::device(0);
  std::shared_ptr<void> state;
  const CallGraph::Counts before = CallGraph::counts();
  // The first call (measured) allocates 1 KiB; the second asks for 1 MiB, the third too.
  for (int call = 0; call < 3; ++call) {
    const size_t n = call == 0 ? 256 : 262144;
    std::shared_ptr<std::byte> out;
    cuda.run_call(memory, state, {}, false, [&](bool) {
      out = cuda.allocate(memory, n * 4);
      cuda.fill(DType::kFloat32, 2.5 + call, out.get(), static_cast<int64_t>(n));
    });
    const std::vector<float> got = floats_at(cuda, memory, out.get(), n);
    EXPECT_EQ(got, std::vector<float>(n, 2.5f + float(call))) << "call " << call;
  }
  const CallGraph::Counts after = CallGraph::counts();
  EXPECT_EQ(after.fell_back - before.fell_back, 1) << "the second call ran out of arena";
  EXPECT_EQ(after.captured - before.captured, 1) << "the third had room";
}

}  // namespace
}  // namespace spmd::test
