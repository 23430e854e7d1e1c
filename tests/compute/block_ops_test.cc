// The block operations against plain loops, their broadcasting, and their errors; and shard_map
// in a process alone.
#include "spmd/block_ops.h"

#include <gtest/gtest.h>

#include <cmath>
#include <utility>
#include <vector>

#include "spmd/runtime.h"
#include "spmd/shard_map.h"

namespace spmd {
namespace {

template <typename T>
std::vector<T> values(const Block& b) {
  const auto d = b.data<T>();
  return {d.begin(), d.end()};
}

TEST(BlockOps, ElementwiseOnEqualShapes) {
  const Block a = Block::from_vector(std::vector<float>{1, 2, 3, 4}, {2, 2});
  const Block b = Block::from_vector(std::vector<float>{5, 6, 7, 8}, {2, 2});
  EXPECT_EQ(values<float>(add(a, b)), (std::vector<float>{6, 8, 10, 12}));
  EXPECT_EQ(values<float>(sub(a, b)), (std::vector<float>{-4, -4, -4, -4}));
  EXPECT_EQ(values<float>(mul(a, b)), (std::vector<float>{5, 12, 21, 32}));
  EXPECT_EQ(values<float>(div(b, a)), (std::vector<float>{5, 3, 7.0f / 3, 2}));
}

TEST(BlockOps, BroadcastingFollowsNumPy) {
  const Block m = Block::from_vector(std::vector<int32_t>{1, 2, 3, 4, 5, 6}, {2, 3});
  const Block row = Block::from_vector(std::vector<int32_t>{10, 20, 30}, {3});
  const Block col = Block::from_vector(std::vector<int32_t>{100, 200}, {2, 1});
  EXPECT_EQ(values<int32_t>(add(m, row)), (std::vector<int32_t>{11, 22, 33, 14, 25, 36}));
  EXPECT_EQ(values<int32_t>(add(col, m)), (std::vector<int32_t>{101, 102, 103, 204, 205, 206}));
  const Block outer = mul(col, row.reshape({1, 3}));
  EXPECT_EQ(outer.shape(), (Shape{2, 3}));
  EXPECT_EQ(values<int32_t>(outer), (std::vector<int32_t>{1000, 2000, 3000, 2000, 4000, 6000}));
  EXPECT_EQ(values<int32_t>(sub(m, Block::scalar<int32_t>(1))),
            (std::vector<int32_t>{0, 1, 2, 3, 4, 5}));
}

TEST(BlockOps, ShapesThatDoNotBroadcastAreNamed) {
  const Block a = Block::zeros(DType::kFloat32, {2, 3});
  const Block b = Block::zeros(DType::kFloat32, {2});
  try {
    add(a, b);
    FAIL() << "no error";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("float32[2, 3] and float32[2]"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(add(a, Block::zeros(DType::kFloat64, {2, 3})), InvalidArgument);
  EXPECT_THROW(add(Block::zeros(DType::kBool, {1}), Block::zeros(DType::kBool, {1})),
               InvalidArgument);
}

TEST(BlockOps, IntegerDivisionTruncatesAndRefusesZero) {
  const Block a = Block::from_vector(std::vector<int32_t>{7, -7}, {2});
  EXPECT_EQ(values<int32_t>(div(a, Block::scalar<int32_t>(2))), (std::vector<int32_t>{3, -3}));
  EXPECT_THROW(div(a, Block::scalar<int32_t>(0)), InvalidArgument);
}

TEST(BlockOps, HalfPrecisionComputesInFloatAndRoundsOnce) {
  // 1 + 2^-8 is not a bfloat16 (7 mantissa bits): it rounds to even, 1.
  const Block one = Block::scalar(to_bfloat16(1.0f));
  const Block tiny = Block::scalar(to_bfloat16(1.0f / 256));
  EXPECT_EQ(to_float(add(one, tiny).item<bfloat16>()), 1.0f);
  EXPECT_EQ(to_float(add(one, add(tiny, tiny)).item<bfloat16>()), 1.0f + 1.0f / 128);
}

TEST(BlockOps, ScaleAndSqrt) {
  const Block a = Block::from_vector(std::vector<double>{1, 4, 9}, {3});
  EXPECT_EQ(values<double>(scale(a, 0.5)), (std::vector<double>{0.5, 2, 4.5}));
  EXPECT_EQ(values<double>(sqrt(a)), (std::vector<double>{1, 2, 3}));
  EXPECT_THROW(sqrt(Block::scalar<int32_t>(4)), InvalidArgument);
}

TEST(BlockOps, SumAndMeanOverEverythingOrOneAxis) {
  const Block m = Block::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(sum(m).shape(), Shape{});
  EXPECT_EQ(sum(m).item<float>(), 21);
  EXPECT_EQ(values<float>(sum(m, 0)), (std::vector<float>{5, 7, 9}));
  EXPECT_EQ(values<float>(sum(m, -1)), (std::vector<float>{6, 15}));
  EXPECT_EQ(values<float>(mean(m, 1)), (std::vector<float>{2, 5}));
  EXPECT_EQ(mean(m).item<float>(), 3.5f);
  EXPECT_THROW(sum(m, 2), InvalidArgument);
  EXPECT_THROW(mean(Block::scalar<int32_t>(1)), InvalidArgument);
}

TEST(BlockOps, MatmulMatchesALoopWithAndWithoutTransposes) {
  std::vector<double> av(6), bv(12);
  for (size_t i = 0; i < av.size(); ++i) av[i] = static_cast<double>(i) - 2.5;
  for (size_t i = 0; i < bv.size(); ++i) bv[i] = static_cast<double>(i * i % 7);
  const Block a = Block::from_vector(av, {2, 3});
  const Block b = Block::from_vector(bv, {3, 4});
  std::vector<double> want(8, 0.0);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 4; ++j)
      for (int k = 0; k < 3; ++k) want[i * 4 + j] += av[i * 3 + k] * bv[k * 4 + j];
  EXPECT_EQ(values<double>(matmul(a, b)), want);
  // aᵀ stored as (3, 2), bᵀ stored as (4, 3).
  std::vector<double> at(6), bt(12);
  for (int i = 0; i < 2; ++i)
    for (int k = 0; k < 3; ++k) at[k * 2 + i] = av[i * 3 + k];
  for (int k = 0; k < 3; ++k)
    for (int j = 0; j < 4; ++j) bt[j * 3 + k] = bv[k * 4 + j];
  EXPECT_EQ(values<double>(
                matmul(Block::from_vector(at, {3, 2}), Block::from_vector(bt, {4, 3}), true, true)),
            want);
  const Block af = Block::from_vector(std::vector<float>{1, 2, 3, 4}, {2, 2});
  EXPECT_EQ(values<float>(matmul(af, af)), (std::vector<float>{7, 10, 15, 22}));
}

TEST(BlockOps, MatmulRefusesMismatchedOrUnsupportedOperands) {
  const Block a = Block::zeros(DType::kFloat32, {2, 3});
  EXPECT_THROW(matmul(a, a), InvalidArgument);
  EXPECT_THROW(matmul(a, Block::zeros(DType::kFloat64, {3, 2})), InvalidArgument);
  EXPECT_THROW(matmul(Block::zeros(DType::kInt32, {2, 2}), Block::zeros(DType::kInt32, {2, 2})),
               InvalidArgument);
  EXPECT_THROW(matmul(Block::zeros(DType::kFloat32, {4}), a), InvalidArgument);
  EXPECT_EQ(matmul(a, a, false, true).shape(), (Shape{2, 2}));
}

// A process alone (before initialize) is a mesh of one device: collectives are identities.
TEST(ShardMapAlone, RunsTheFunctionOnTheOnlyDevice) {
  const Mesh mesh(devices(), {"x"});
  const Array x = device_put(HostArray::from_vector(std::vector<float>{1, 2, 3}, {3}),
                             NamedSharding(mesh, P("x")));
  const auto f = shard_map(
      [](Block b) {
        EXPECT_EQ(axis_index("x"), 0);
        EXPECT_EQ(axis_size("x"), 1);
        return all_gather(scale(psum(std::move(b), "x"), 2.0), "x");
      },
      mesh, {P("x")}, P(None, "x"));
  const Array y = f(x);
  EXPECT_EQ(y.shape(), (Shape{1, 3}));
  EXPECT_EQ(y.to_host().data<float>()[2], 6.0f);
}

TEST(ShardMapAlone, ArgumentCountMustMatchInSpecs) {
  const Mesh mesh(devices(), {"x"});
  const Array x = device_put(HostArray::zeros(DType::kFloat32, {2}), NamedSharding(mesh, P()));
  EXPECT_THROW(shard_map([](const Block& a, const Block&) { return a; }, mesh, {P()}, P())(x, x),
               InvalidArgument);
  EXPECT_THROW(shard_map([](Block a) { return a; }, mesh, {P("y")}, P())(x), InvalidArgument);
}

}  // namespace
}  // namespace spmd
