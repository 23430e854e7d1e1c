// Every block operation, shard_map's and jit's, reaches its kernels through the device seam
// (src/kernels/backend.h): with a counting backend standing in for the CPU's, each operation
// makes the calls it should there and gives the CPU's values. An operation that called a CPU
// kernel directly would compute right and count nothing.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "kernels/backend.h"
#include "spmd/block_ops.h"
#include "spmd/jit.h"
#include "spmd/numpy.h"
#include "spmd/runtime.h"
#include "spmd/shard_map.h"
#include "support/counting_backend.h"

namespace spmd {
namespace {

using testing::CountingBackend;

template <typename T>
std::vector<T> seam_values(const Block& b) {
  const auto d = b.data<T>();
  return {d.begin(), d.end()};
}

class BlockSeam : public ::testing::Test {
 protected:
  CountingBackend counting{"cpu"};
  kernels::BackendOverride installed{counting};
};

TEST_F(BlockSeam, ElementwiseOperationsAreOneChainCallEach) {
  const Block a = Block::from_vector(std::vector<float>{1, 4, 9, 16}, {2, 2});
  const Block b = Block::from_vector(std::vector<float>{1, 2, 3, 4}, {2, 2});
  EXPECT_EQ(seam_values<float>(add(a, b)), (std::vector<float>{2, 6, 12, 20}));
  EXPECT_EQ(seam_values<float>(sub(a, b)), (std::vector<float>{0, 2, 6, 12}));
  EXPECT_EQ(seam_values<float>(mul(a, b)), (std::vector<float>{1, 8, 27, 64}));
  EXPECT_EQ(seam_values<float>(div(a, b)), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(seam_values<float>(sqrt(a)), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(counting.calls("chain"), 5);
  EXPECT_EQ(counting.calls(), 5);
}

TEST_F(BlockSeam, BroadcastingGoesThroughTheBackendsBroadcast) {
  const Block m = Block::from_vector(std::vector<int32_t>{1, 2, 3, 4, 5, 6}, {2, 3});
  const Block row = Block::from_vector(std::vector<int32_t>{10, 20, 30}, {3});
  EXPECT_EQ(seam_values<int32_t>(add(m, row)), (std::vector<int32_t>{11, 22, 33, 14, 25, 36}));
  EXPECT_EQ(counting.calls("broadcast"), 1);  // the row; m has the result's shape already
  EXPECT_EQ(counting.calls("chain"), 1);
}

TEST_F(BlockSeam, ScaleOfAHalfTypeWidensAndRoundsBackThroughTheBackend) {
  const Block h =
      Block::from_vector(std::vector<float16>{to_float16(1.5f), to_float16(-2.0f)}, {2});
  const Block scaled = scale(h, 3.0);
  EXPECT_EQ(to_float(scaled.data<float16>()[0]), 4.5f);
  EXPECT_EQ(to_float(scaled.data<float16>()[1]), -6.0f);
  EXPECT_EQ(counting.calls("convert"), 2);  // to float32 and back
  EXPECT_EQ(counting.calls("fill"), 1);     // the factor
  EXPECT_EQ(counting.calls("chain"), 1);    // the product
}

TEST_F(BlockSeam, SumsAndMeansReduceThroughTheBackend) {
  const Block a = Block::from_vector(std::vector<double>{1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(seam_values<double>(sum(a, 1)), (std::vector<double>{6, 15}));
  EXPECT_EQ(seam_values<double>(mean(a, 0)), (std::vector<double>{2.5, 3.5, 4.5}));
  EXPECT_EQ(sum(a).item<double>(), 21.0);
  EXPECT_EQ(counting.calls("reduce"), 3);
  EXPECT_EQ(counting.calls("chain"), 1);  // the mean's division
}

TEST_F(BlockSeam, MatmulIsTheBackendsMatmul) {
  const Block a = Block::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3});
  const Block b = Block::from_vector(std::vector<float>{1, 0, 0, 1, 1, 1}, {3, 2});
  EXPECT_EQ(seam_values<float>(matmul(a, b)), (std::vector<float>{4, 5, 10, 11}));
  EXPECT_EQ(seam_values<float>(matmul(a, a, false, true)), (std::vector<float>{14, 32, 32, 77}));
  EXPECT_EQ(counting.calls("matmul"), 2);
  EXPECT_EQ(counting.calls(), 2);
}

TEST_F(BlockSeam, ShardMapsDeviceThreadsComputeThroughIt) {
  const Mesh mesh(devices(), {"x"});
  const Array x = device_put(HostArray::from_vector(std::vector<float>{1, 4, 9}, {3}),
                             NamedSharding(mesh, P("x")));
  const Array y =
      shard_map([](const Block& b) { return sqrt(scale(b, 4.0)); }, mesh, {P("x")}, P("x"))(x);
  EXPECT_EQ(y.to_host().data<float>()[2], 6.0f);
  EXPECT_GE(counting.calls("chain"), 2);  // the product and the root, on the device's thread
}

TEST_F(BlockSeam, JitLooksItsBackendUpAtEachRun) {
  const Mesh mesh(devices(), {"x"});
  const Array x = device_put(HostArray::from_vector(std::vector<float>{0, 1}, {2}),
                             NamedSharding(mesh, P("x")));
  auto f = jit([](const Tensor& t) { return numpy::exp(t) * 2.0f; });
  const Array y = f(x);
  EXPECT_FLOAT_EQ(y.to_host().data<float>()[1], 2.0f * std::exp(1.0f));
  const int first = counting.calls();
  EXPECT_GE(first, 1);
  f(x);  // the cached program, run again: through the backend installed now
  EXPECT_GT(counting.calls(), first);
}

TEST(BackendOverride, EndsWithItsScopeAndRefusesAPlatformTheBuildLacks) {
  const kernels::Backend& cpu = kernels::cpu_backend();
  {
    CountingBackend counting("cpu");
    const kernels::BackendOverride installed(counting);
    EXPECT_EQ(&kernels::backend_for("cpu"), &counting);
    EXPECT_EQ(&kernels::backend_of(MemorySpace::host()), &counting);
  }
  EXPECT_EQ(&kernels::backend_for("cpu"), &cpu);
  CountingBackend elsewhere("gpu");
  EXPECT_THROW(kernels::BackendOverride{elsewhere}, InvalidArgument);
  EXPECT_THROW(kernels::backend_of(MemorySpace::device(0)), InvalidArgument);
}

}  // namespace
}  // namespace spmd
