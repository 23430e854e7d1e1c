// The make_array_* constructors in one process, which holds every device.
#include <gtest/gtest.h>

#include <functional>
#include <numeric>

#include "spmd/array.h"

namespace spmd {
namespace {

std::vector<Device> local_cpu(int n) {
  std::vector<Device> out;
  for (int i = 0; i < n; ++i) out.emplace_back(i, 0, i, "cpu", "h");
  return out;
}

HostArray make_iota(Shape shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<float> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), 0.0f);
  return HostArray::from_vector(v, std::move(shape));
}

TEST(MakeArray, FromProcessLocalDataInOneProcessIsTheWholeArray) {
  NamedSharding grid(Mesh(local_cpu(4), {2, 2}, {"x", "y"}), P("x", "y"));
  const HostArray global = make_iota({4, 6});
  Array a = make_array_from_process_local_data(grid, global);
  EXPECT_EQ(a.shape(), (Shape{4, 6}));
  EXPECT_EQ(a.dtype(), DType::kFloat32);
  ASSERT_EQ(a.addressable_shards().size(), 4u);
  EXPECT_EQ(a.addressable_shards()[3].index, (Index{{2, 4}, {3, 6}}));
  EXPECT_EQ(a.addressable_data(3), global.slice({{2, 4}, {3, 6}}));
  EXPECT_TRUE(a.is_fully_addressable());
  EXPECT_EQ(a.to_host(), global);
  EXPECT_THROW(a.addressable_data(4), InvalidArgument);
}

TEST(MakeArray, FromSingleDeviceArraysChecksEachShape) {
  NamedSharding rows(Mesh(local_cpu(2), {"x"}), P("x"));
  const HostArray global = make_iota({4, 2});
  Array a = make_array_from_single_device_arrays(
      {4, 2}, rows, {global.slice({{0, 2}, {0, 2}}), global.slice({{2, 4}, {0, 2}})});
  EXPECT_EQ(a.to_host(), global);
  try {
    make_array_from_single_device_arrays({4, 2}, rows, {make_iota({2, 2}), make_iota({3, 2})});
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("CpuDevice(id=1"), std::string::npos) << e.what();
  }
  EXPECT_THROW(make_array_from_single_device_arrays({4, 2}, rows, {make_iota({2, 2})}),
               InvalidArgument);
}

TEST(MakeArray, FromCallbackAsksOncePerDistinctIndex) {
  const HostArray global = make_iota({4, 4});
  int calls = 0;
  auto fn = [&](const Index& index) {
    ++calls;
    return global.slice(index);
  };
  NamedSharding rows(Mesh(local_cpu(4), {2, 2}, {"x", "y"}), P("x"));
  Array a = make_array_from_callback({4, 4}, rows, fn);
  EXPECT_EQ(calls, 2);  // two distinct row blocks, each on two devices
  EXPECT_EQ(a.to_host(), global);
  EXPECT_EQ(a.addressable_shards()[1].replica_id, 1);
  calls = 0;
  NamedSharding replicated(Mesh(local_cpu(4), {"x"}), P());
  make_array_from_callback({4, 4}, replicated, fn);
  EXPECT_EQ(calls, 1);
  EXPECT_THROW(make_array_from_callback({4, 4}, rows, [](const Index&) { return make_iota({1}); }),
               InvalidArgument);
}

// As in JAX: with no shard here there is nothing to take the dtype from, so it must be given.
TEST(MakeArray, AProcessHoldingNoShardMustNameTheDtype) {
  NamedSharding elsewhere(Mesh({Device(1, 1, 0, "cpu", "b")}, {"x"}), P("x"));
  auto never = [](const Index&) -> HostArray {
    ADD_FAILURE() << "asked for an index this process does not hold";
    return make_iota({4});
  };
  for (auto make :
       {std::function<Array()>(
            [&] { return make_array_from_single_device_arrays({4}, elsewhere, {}); }),
        std::function<Array()>([&] { return make_array_from_callback({4}, elsewhere, never); })}) {
    try {
      make();
      FAIL() << "no dtype and no shard: the dtype was made up";
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("holds no shard"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(make_array_from_single_device_arrays({4}, elsewhere, {}, DType::kInt32).dtype(),
            DType::kInt32);
  const Array b = make_array_from_callback({4}, elsewhere, never, DType::kBFloat16);
  EXPECT_EQ(b.dtype(), DType::kBFloat16);
  EXPECT_TRUE(b.addressable_shards().empty());
}

TEST(MakeArray, AGivenDtypeMustMatchEveryShard) {
  NamedSharding rows(Mesh(local_cpu(2), {"x"}), P("x"));
  const HostArray global = make_iota({4, 2});
  EXPECT_EQ(make_array_from_callback(
                {4, 2}, rows, [&](const Index& i) { return global.slice(i); }, DType::kFloat32)
                .dtype(),
            DType::kFloat32);
  EXPECT_THROW(make_array_from_callback(
                   {4, 2}, rows, [&](const Index& i) { return global.slice(i); }, DType::kInt32),
               InvalidArgument);
  EXPECT_THROW(make_array_from_single_device_arrays(
                   {4, 2}, rows, {global.slice({{0, 2}, {0, 2}}), global.slice({{2, 4}, {0, 2}})},
                   DType::kFloat64),
               InvalidArgument);
}

TEST(Array, ToHostOfAnArraySpanningOtherProcessesPointsToProcessAllgather) {
  std::vector<Device> two{Device(0, 0, 0, "cpu", "a"), Device(1, 1, 0, "cpu", "b")};
  NamedSharding rows(Mesh(two, {"x"}), P("x"));
  Array a = make_array_from_process_local_data(rows, make_iota({2, 3}));
  EXPECT_EQ(a.shape(), (Shape{4, 3}));
  EXPECT_FALSE(a.is_fully_addressable());
  ASSERT_EQ(a.addressable_shards().size(), 1u);
  try {
    a.to_host();
    FAIL();
  } catch (const FailedPrecondition& e) {
    EXPECT_NE(std::string(e.what()).find("process_allgather"), std::string::npos);
  }
}

// As np.asarray of a replicated jax.Array spanning processes: each process reads its own copy.
TEST(Array, ToHostOfAReplicatedArraySpanningOtherProcessesIsThisProcesssCopy) {
  std::vector<Device> two{Device(0, 0, 0, "cpu", "a"), Device(1, 1, 0, "cpu", "b")};
  NamedSharding replicated(Mesh(two, {"x"}), P());
  const HostArray value = make_iota({2, 3});
  Array a = make_array_from_callback({2, 3}, replicated, [&](const Index&) { return value; });
  EXPECT_FALSE(a.is_fully_addressable());
  EXPECT_EQ(a.to_host(), value);
}

}  // namespace
}  // namespace spmd
