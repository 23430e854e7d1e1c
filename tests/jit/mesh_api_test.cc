// JAX's current mesh API around jit (mesh.h, mesh_context.h): make_mesh over this process's
// devices, a bare P(...) on the mesh in scope wherever a sharding is taken (device_put, jit's
// shardings, constraints, reshard), and shard_map with its mesh left out. Part of
// jit_property_test (its main initializes 4 CPU devices).
#include <gtest/gtest.h>
#include <spmd/spmd.h>

#include <string>
#include <vector>

namespace {

namespace jnp = spmd::numpy;
using spmd::Array;
using spmd::AxisType;
using spmd::HostArray;
using spmd::NamedSharding;
using spmd::P;
using spmd::Tensor;

HostArray counting(int64_t rows, int64_t cols) {
  std::vector<float> v(static_cast<size_t>(rows * cols));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);
  return HostArray::from_vector(v, {rows, cols});
}

std::string spec_of(const Array& a) {
  return dynamic_cast<const NamedSharding&>(a.sharding()).spec().to_string();
}

TEST(MeshApi, MakeMeshLaysOutThisClustersDevicesInOrder) {
  const spmd::Mesh mesh = spmd::make_mesh({2, 2}, {"a", "b"});
  EXPECT_EQ(mesh.devices(), spmd::devices());  // CPU devices: create_device_mesh keeps the order
  EXPECT_EQ(mesh.axis_types(), (std::vector<AxisType>{AxisType::kExplicit, AxisType::kExplicit}));
  EXPECT_EQ(spmd::make_mesh({2}, {"x"}).devices().size(), 2u);  // the first devices
  EXPECT_THROW(spmd::make_mesh({8}, {"x"}), spmd::InvalidArgument);
}

TEST(MeshApi, ABarePartitionSpecTakesTheMeshInScope) {
  const spmd::Mesh mesh = spmd::make_mesh({4}, {"x"}, {AxisType::kAuto});
  spmd::MeshScope scope(mesh);
  const Array x = spmd::device_put(counting(8, 4), P("x"));
  EXPECT_EQ(x.sharding().to_string(), NamedSharding(mesh, P("x")).to_string());
  // jit's shardings and a constraint inside it.
  auto f = spmd::jit(
      [](const Tensor& t) {
        return spmd::lax::with_sharding_constraint(t * 2.0f, P(spmd::None, "x"));
      },
      {.in_shardings = {P()}, .out_shardings = {P("x")}});
  const Array y = f(x);
  EXPECT_EQ(spec_of(y), P("x").to_string());
  EXPECT_EQ(spmd::multihost::process_allgather(y).data<float>()[5], 10.0f);
  // reshard of an Array, and inside jit.
  const Array r = spmd::reshard(x, P(spmd::None, "x"));
  EXPECT_EQ(spec_of(r), P(spmd::None, "x").to_string());
  auto g = spmd::jit([](const Tensor& t) { return spmd::reshard(t + 1.0f, P(spmd::None, "x")); });
  EXPECT_EQ(spec_of(g(x)), P(spmd::None, "x").to_string());
  EXPECT_NE(g.lower(x).as_text().find("all_to_all"), std::string::npos)
      << "moving the split from rows to columns is one all_to_all";
}

TEST(MeshApi, ShardMapTakesTheMeshInScope) {
  const spmd::Mesh mesh = spmd::make_mesh({4}, {"x"}, {AxisType::kAuto});
  const Array x = spmd::device_put(counting(8, 4), NamedSharding(mesh, P("x")));
  EXPECT_THROW(spmd::shard_map([](const spmd::Block& b) { return b; }, {P("x")}, P("x")),
               spmd::InvalidArgument);
  spmd::MeshScope scope(mesh);
  auto eager =
      spmd::shard_map([](const spmd::Block& b) { return spmd::psum(b, "x"); }, {P("x")}, P());
  const HostArray summed = spmd::multihost::process_allgather(eager(x));
  EXPECT_EQ(summed.shape(), (spmd::Shape{2, 4}));
  EXPECT_EQ(summed.data<float>()[0], 0.0f + 8 + 16 + 24);  // element 0 of each device's block
  auto traced = spmd::jit([](const Tensor& t) {
    return spmd::lax::shard_map([](const Tensor& b) { return spmd::lax::psum(b, "x"); }, {P("x")},
                                P())(t);
  });
  EXPECT_EQ(spmd::multihost::process_allgather(traced(x)).data<float>()[0], 48.0f);
}

// psum of bool counts in int32 and pmean gives the float32 fraction, as JAX's, in the per-device
// shard_map over Blocks and in the traced one alike.
TEST(MeshApi, CollectivesOfBoolCountAsJaxsDo) {
  const spmd::Mesh mesh = spmd::make_mesh({4}, {"x"}, {AxisType::kAuto});
  const HostArray flags = HostArray::from_vector(std::vector<bool>{true, true, true, false}, {4});
  const Array x = spmd::device_put(flags, NamedSharding(mesh, P("x")));
  spmd::MeshScope scope(mesh);
  const auto first = [](const Array& a) { return spmd::multihost::process_allgather(a); };
  const HostArray eager_sum = first(spmd::shard_map(
      [](const spmd::Block& b) { return spmd::psum(b, "x"); }, {P("x")}, P("x"))(x));
  const HostArray eager_mean = first(spmd::shard_map(
      [](const spmd::Block& b) { return spmd::pmean(b, "x"); }, {P("x")}, P("x"))(x));
  ASSERT_EQ(eager_sum.dtype(), spmd::DType::kInt32);
  ASSERT_EQ(eager_mean.dtype(), spmd::DType::kFloat32);
  EXPECT_EQ(eager_sum.data<int32_t>()[3], 3);
  EXPECT_EQ(eager_mean.data<float>()[3], 0.75f);
  const HostArray traced = first(spmd::jit([](const Tensor& t) {
    return spmd::lax::shard_map(
        [](const Tensor& b) { return spmd::lax::pmean(spmd::lax::psum(b, "x"), "x"); }, {P("x")},
        P("x"))(t);
  })(x));
  ASSERT_EQ(traced.dtype(), spmd::DType::kFloat32);
  EXPECT_EQ(traced.data<float>()[0], 3.0f);
}

}  // namespace
