// Meshes, specs and shardings on worked examples, each rule and each error.
#include "spmd/sharding.h"

#include <gtest/gtest.h>

#include <optional>
#include <thread>

#include "spmd/mesh.h"
#include "spmd/mesh_context.h"
#include "spmd/mesh_utils.h"
#include "spmd/partition_spec.h"

namespace spmd {
namespace {

// `n` CPU devices, `per_process` to a process.
std::vector<Device> cpu_devices(int n, int per_process = 1000) {
  std::vector<Device> out;
  for (int i = 0; i < n; ++i) {
    out.emplace_back(i, i / per_process, i % per_process, "cpu",
                     "h" + std::to_string(i / per_process));
  }
  return out;
}

Index idx(std::initializer_list<Slice> slices) { return Index(slices); }

std::string what(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(PartitionSpec, ReadsLikeJax) {
  EXPECT_EQ(P("x").to_string(), "PartitionSpec('x',)");
  EXPECT_EQ(P(None, "y").to_string(), "PartitionSpec(None, 'y')");
  EXPECT_EQ(P({"x", "y"}, {}).to_string(), "PartitionSpec(('x', 'y'), None)");
  EXPECT_EQ(P().size(), 0u);
  EXPECT_EQ(P({}, "x"), P(None, "x"));
  EXPECT_EQ(P(Axes{"x", "y"}).axes(), (std::vector<std::string>{"x", "y"}));
}

TEST(Mesh, ShapeNamesAndCoordinates) {
  Mesh mesh(cpu_devices(8), {2, 4}, {"dp", "mp"});
  EXPECT_EQ(mesh.shape(), (std::vector<std::pair<std::string, int64_t>>{{"dp", 2}, {"mp", 4}}));
  EXPECT_EQ(mesh.axis_size("mp"), 4);
  EXPECT_EQ(mesh.coordinates(6), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(mesh.to_string(), "Mesh('dp': 2, 'mp': 4)");
  EXPECT_EQ(Mesh(cpu_devices(3), {"devices"}).axis_size("devices"), 3);
}

TEST(Mesh, BadMeshesAreRefusedSayingWhy) {
  EXPECT_NE(what([] {
              Mesh(cpu_devices(8), {3, 3}, {"a", "b"});
            }).find("holds 9 devices"),
            std::string::npos);
  EXPECT_FALSE(what([] { Mesh(cpu_devices(4), {2, 2}, {"a", "a"}); }).empty());
  EXPECT_FALSE(what([] { Mesh(cpu_devices(4), {4}, {"a", "b"}); }).empty());
  auto twice = cpu_devices(2);
  twice[1] = twice[0];
  EXPECT_NE(what([&] { Mesh(twice, {"a"}); }).find("appears twice"), std::string::npos);
  Mesh mesh(cpu_devices(4), {"a"});
  EXPECT_NE(what([&] { mesh.axis_index("b"); }).find("has no axis 'b'"), std::string::npos);
}

TEST(Mesh, AxisTypesAreJaxsAndPartOfTheMesh) {
  const Mesh plain(cpu_devices(4), {2, 2}, {"a", "b"});
  EXPECT_EQ(plain.axis_types(), (std::vector<AxisType>{AxisType::kAuto, AxisType::kAuto}));
  const Mesh typed(cpu_devices(4), {2, 2}, {"a", "b"}, {AxisType::kExplicit, AxisType::kAuto});
  EXPECT_EQ(typed.to_string(), "Mesh('a': 2, 'b': 2, axis_types=(Explicit, Auto))");
  EXPECT_FALSE(typed == plain);
  EXPECT_EQ(typed.local_mesh(0).axis_types(), typed.axis_types());
  EXPECT_EQ(Mesh(cpu_devices(2), {2}, {"x"}, {AxisType::kManual}).to_string(),
            "Mesh('x': 2, axis_types=(Manual,))");
  EXPECT_NE(what([] {
              Mesh(cpu_devices(2), {2}, {"x"}, {AxisType::kAuto, AxisType::kAuto});
            }).find("one axis type per axis name"),
            std::string::npos);
}

TEST(Mesh, MakeMeshTakesTheFirstDevicesAndExplicitAxes) {
  const Mesh m = make_mesh({2, 2}, {"a", "b"}, {}, cpu_devices(6));
  EXPECT_EQ(m.devices(), std::vector<Device>(cpu_devices(4)));
  EXPECT_EQ(m.axis_types(), (std::vector<AxisType>{AxisType::kExplicit, AxisType::kExplicit}));
  EXPECT_EQ(make_mesh({4}, {"x"}, {AxisType::kAuto}, cpu_devices(4)).axis_types()[0],
            AxisType::kAuto);
  EXPECT_NE(what([] {
              make_mesh({4, 2}, {"a", "b"}, {}, cpu_devices(6));
            }).find("needs 8 devices, but there are 6"),
            std::string::npos);
}

TEST(MeshContext, ABarePartitionSpecIsAShardingOnTheMeshInScope) {
  const Mesh outer(cpu_devices(4), {4}, {"x"});
  const Mesh inner(cpu_devices(4), {2, 2}, {"a", "b"});
  EXPECT_NE(what([] { NamedSharding s = P("x"); }).find("given without a mesh"), std::string::npos);
  set_mesh(outer);
  const NamedSharding on_outer = P("x");
  EXPECT_EQ(on_outer.mesh(), outer);
  {
    MeshScope scope(inner);
    const NamedSharding on_inner = P("a", "b");
    EXPECT_EQ(on_inner.mesh(), inner);
    EXPECT_NE(what([] { NamedSharding s = P("x"); }).find("names the axis 'x'"), std::string::npos);
  }
  EXPECT_EQ(get_mesh(), outer);
  // Per thread, as JAX's: another thread starts with none.
  std::optional<Mesh> seen = outer;
  std::thread([&] { seen = get_mesh(); }).join();
  EXPECT_FALSE(seen.has_value());
  set_mesh(std::nullopt);
  EXPECT_FALSE(get_mesh().has_value());
  const Mesh manual(cpu_devices(2), {2}, {"x"}, {AxisType::kManual});
  EXPECT_NE(what([&] { set_mesh(manual); }).find("manual axes"), std::string::npos);
  EXPECT_NE(what([&] { MeshScope s(manual); }).find("manual axes"), std::string::npos);
}

TEST(Mesh, LocalMeshIsTheProcessesContiguousBlock) {
  // 2 processes x 4 devices, process-major rows: each row is one process.
  Mesh mesh(cpu_devices(8, 4), {2, 4}, {"hosts", "local"});
  Mesh local = mesh.local_mesh(1);
  EXPECT_EQ(local.axis_sizes(), (std::vector<int64_t>{1, 4}));
  EXPECT_EQ(local.devices()[0].id(), 4);
  EXPECT_EQ(mesh.local_devices(0).size(), 4u);
  // Transposed: process 0 owns columns 0-1 of both rows: still a block.
  Mesh columns(cpu_devices(8, 2), {4, 2}, {"a", "b"});
  EXPECT_EQ(columns.local_mesh(1).axis_sizes(), (std::vector<int64_t>{1, 2}));
  // A process on the diagonal does not form a block.
  std::vector<Device> diagonal;
  for (int i = 0; i < 4; ++i) diagonal.emplace_back(i, (i == 0 || i == 3) ? 0 : 1, 0, "cpu", "h");
  Mesh bad(diagonal, {2, 2}, {"a", "b"});
  EXPECT_NE(what([&] { bad.local_mesh(0); }).find("contiguous block"), std::string::npos);
}

TEST(NamedSharding, TwoDimensionalSplitGivesEachDeviceItsTile) {
  Mesh mesh(cpu_devices(8), {2, 4}, {"x", "y"});
  NamedSharding s(mesh, P("x", "y"));
  auto map = s.devices_indices_map({8, 8});
  ASSERT_EQ(map.size(), 8u);
  EXPECT_EQ(map[6].device.id(), 6);  // coordinates (1, 2)
  EXPECT_EQ(map[6].index, idx({{4, 8}, {4, 6}}));
  EXPECT_EQ(s.shard_shape({8, 8}), (Shape{4, 2}));
  for (const auto& e : map) EXPECT_EQ(e.replica_id, 0);
}

TEST(NamedSharding, TupleEntriesSplitOverTheAxesProductMajorFirst) {
  Mesh mesh(cpu_devices(8), {2, 4}, {"x", "y"});
  NamedSharding s(mesh, P(Axes{"x", "y"}));
  auto map = s.devices_indices_map({16});
  for (int64_t k = 0; k < 8; ++k) EXPECT_EQ(map[k].index, idx({{2 * k, 2 * k + 2}})) << k;
  NamedSharding minor_first(mesh, P(Axes{"y", "x"}));
  // Device (x=1, y=0) is shard y*2 + x = 1.
  EXPECT_EQ(minor_first.devices_indices_map({16})[4].index, idx({{2, 4}}));
}

TEST(NamedSharding, UnnamedAxesMakeReplicasNumberedInDeviceOrder) {
  Mesh mesh(cpu_devices(8), {2, 4}, {"x", "y"});
  NamedSharding rows(mesh, P("x"));
  auto map = rows.devices_indices_map({8, 4});
  for (int64_t f = 0; f < 8; ++f) {
    EXPECT_EQ(map[f].index, idx({{f / 4 * 4, f / 4 * 4 + 4}, {0, 4}}));
    EXPECT_EQ(map[f].replica_id, f % 4);
  }
  NamedSharding replicated(mesh, P());
  EXPECT_TRUE(replicated.is_fully_replicated());
  EXPECT_FALSE(rows.is_fully_replicated());
  auto all = replicated.devices_indices_map({3});
  for (int f = 0; f < 8; ++f) EXPECT_EQ(all[f].replica_id, f);
  EXPECT_TRUE(NamedSharding(Mesh(cpu_devices(1), {"x"}), P("x")).is_fully_replicated());
}

TEST(NamedSharding, SpecErrorsAreJaxs) {
  Mesh mesh(cpu_devices(4), {2, 2}, {"x", "y"});
  EXPECT_THROW(NamedSharding(mesh, P("x", "x")), DuplicateSpecError);
  EXPECT_THROW(NamedSharding(mesh, P({"x", "y"}, "y")), DuplicateSpecError);
  EXPECT_NE(what([&] { NamedSharding(mesh, P("z")); }).find("axis 'z'"), std::string::npos);
  NamedSharding s(mesh, P("x", "y"));
  EXPECT_NE(what([&] { s.devices_indices_map({4}); }).find("rank at least 2"), std::string::npos);
}

TEST(NamedSharding, IndivisibleDimensionsNameDimensionSizeAndAxes) {
  Mesh mesh(cpu_devices(4), {4}, {"x"});
  NamedSharding s(mesh, P(None, "x"));
  try {
    s.shard_shape({3, 10});
    FAIL();
  } catch (const IndivisibleError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("dimension 1 of size 10"), std::string::npos) << msg;
    EXPECT_NE(msg.find("axes (x) into 4 shards"), std::string::npos) << msg;
  }
  // The index map itself follows XLA's tiling: chunks of ceil(10 / 4) = 3.
  auto map = s.devices_indices_map({3, 10});
  EXPECT_EQ(map[0].index[1], (Slice{0, 3}));
  EXPECT_EQ(map[3].index[1], (Slice{9, 10}));
}

TEST(Sharding, AddressabilityFollowsProcesses) {
  Mesh mesh(cpu_devices(4, 2), {4}, {"x"});
  NamedSharding s(mesh, P("x"));
  EXPECT_FALSE(s.is_fully_addressable(0));
  EXPECT_EQ(s.addressable_devices(1).size(), 2u);
  EXPECT_EQ(s.addressable_devices(1)[0].id(), 2);
  NamedSharding local(mesh.local_mesh(0), P("x"));
  EXPECT_TRUE(local.is_fully_addressable(0));
}

TEST(SingleDeviceSharding, TheWholeArrayOnOneDevice) {
  SingleDeviceSharding s(cpu_devices(3)[2]);
  auto map = s.devices_indices_map({4, 5});
  ASSERT_EQ(map.size(), 1u);
  EXPECT_EQ(map[0].device.id(), 2);
  EXPECT_EQ(map[0].index, idx({{0, 4}, {0, 5}}));
  EXPECT_TRUE(s.is_fully_replicated());
}

TEST(PositionalSharding, ReshapeAndReplicateLikeJax) {
  PositionalSharding rows = PositionalSharding(cpu_devices(4)).reshape({-1, 1});
  EXPECT_EQ(rows.shape(), (Shape{4, 1}));
  auto map = rows.devices_indices_map({8, 2});
  EXPECT_EQ(map[3].index, idx({{6, 8}, {0, 2}}));
  EXPECT_THROW(PositionalSharding(cpu_devices(4)).devices_indices_map({8, 2}), InvalidArgument);
  PositionalSharding grid(cpu_devices(4), {2, 2});
  auto half = grid.replicate(1);
  auto hmap = half.devices_indices_map({4, 6});
  EXPECT_EQ(hmap[1].index, idx({{0, 2}, {0, 6}}));
  EXPECT_EQ(hmap[1].replica_id, 1);
  EXPECT_EQ(half.shard_shape({4, 6}), (Shape{2, 6}));
  EXPECT_THROW(grid.shard_shape({3, 6}), IndivisibleError);
}

TEST(MeshUtils, CreateDeviceMeshChecksTheCount) {
  EXPECT_EQ(mesh_utils::create_device_mesh({2, 2}, cpu_devices(4)).size(), 4u);
  EXPECT_NE(what([] { mesh_utils::create_device_mesh({3}, cpu_devices(4)); }).find("holds 3"),
            std::string::npos);
}

TEST(MeshUtils, HybridMeshesPutEachProcessInOneBlock) {
  // 2 processes of 4 devices; per-process mesh (2, 2), processes side by side along axis 1.
  const auto devices = cpu_devices(8, 4);
  const auto mesh = mesh_utils::create_hybrid_device_mesh({2, 2}, {1, 2}, devices);
  EXPECT_EQ(mesh_utils::hybrid_mesh_shape({2, 2}, {1, 2}), (std::vector<int64_t>{2, 4}));
  std::vector<int> ids;
  for (const auto& d : mesh) ids.push_back(d.id());
  EXPECT_EQ(ids, (std::vector<int>{0, 1, 4, 5, 2, 3, 6, 7}));
  Mesh m(mesh, {2, 4}, {"a", "b"});
  EXPECT_EQ(m.local_mesh(1).axis_sizes(), (std::vector<int64_t>{2, 2}));
  EXPECT_FALSE(what([&] {
                 mesh_utils::create_hybrid_device_mesh({2, 2}, {3, 1}, devices);
               }).empty());
  EXPECT_FALSE(what([&] {
                 mesh_utils::create_hybrid_device_mesh({1, 2}, {2, 1}, devices);
               }).empty());
}

}  // namespace
}  // namespace spmd
