// Sharding's front door under a generator (rapidcheck), in a process of 8 CPU devices: meshes of
// random shapes and axis names (sizes 0, negative, beyond the devices and near int64's end;
// repeated and empty names), partition specs of random entries (unknown, repeated and tuple axes;
// more entries than the array has dimensions), arrays of random shapes and dtypes (zero-size
// dimensions included). Each step either succeeds or throws an spmd::Error that says something;
// anything else (a crash, std::out_of_range, bad_alloc …) fails the run with the inputs that
// caused it. What succeeds must hold together:
// - the boxes of devices_indices_map lie inside the array, each of shard_shape's extent (where
//   the split is even; an uneven one, which device_put keeps, is an IndivisibleError there);
// - device_put of a host array, then to_host, is the array;
// - the array resharded onto a second spec (device_put of an Array) is still the array;
// - a jitted x * 2 + 1 of it, and its max over the first dimension (of size 0 included), equal
//   the same on a replicated layout.
// The sharding properties of valid cases have their own test (sharding_properties_test.cc).
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>
#include <spmd/spmd.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "kernels/elementwise.h"

namespace {

using spmd::DType;
using spmd::HostArray;
using spmd::Shape;

constexpr int kDevices = 8;

bool started() {
  static const bool ok = [] {
    try {
      spmd::distributed::initialize({.num_processes = 1, .num_cpu_devices = kDevices});
      return true;
    } catch (const spmd::FailedPrecondition&) {
      return false;  // another case of this binary initialized it already
    }
  }();
  return ok;
}

const std::vector<std::string> kNames = {"x", "y", "z", "x", "", "data", "\xc3\xa9", "a b"};

// Mostly sizes a mesh of 8 devices can have, sometimes ones it cannot.
rc::Gen<int64_t> axis_size() {
  return rc::gen::weightedOneOf<int64_t>(
      {{8, rc::gen::elementOf(std::vector<int64_t>{1, 2, 2, 4})},
       {1, rc::gen::elementOf(std::vector<int64_t>{-1, 0, 3, 8, 16, int64_t{1} << 40,
                                                   std::numeric_limits<int64_t>::max()})}});
}

// A mesh's sizes and names: usually as many names as sizes, sometimes not.
struct MeshDraw {
  std::vector<int64_t> sizes;
  std::vector<std::string> names;
};

// Usually distinct names, one per axis; sometimes names drawn from kNames (repeats, "", UTF-8)
// in any number.
MeshDraw mesh_draw() {
  const size_t rank = *rc::gen::weightedElement<size_t>({{1, 0}, {4, 1}, {4, 2}, {3, 3}});
  std::vector<int64_t> sizes = *rc::gen::container<std::vector<int64_t>>(rank, axis_size());
  if (*rc::gen::weightedElement<bool>({{4, true}, {1, false}})) {
    return {std::move(sizes),  // "x", "y", "z"
            std::vector<std::string>(kNames.begin(), kNames.begin() + static_cast<long>(rank))};
  }
  const size_t name_count = *rc::gen::weightedElement<size_t>({{4, rank}, {1, 0}, {1, 2}});
  return {std::move(sizes),
          *rc::gen::container<std::vector<std::string>>(name_count, rc::gen::elementOf(kNames))};
}

// A spec of entries, each None, one axis or a tuple, the axes drawn from the mesh's names and, now
// and then, a name no mesh has; usually no more entries than the array has dimensions (`rank`).
spmd::PartitionSpec spec_draw(const std::vector<std::string>& mesh_names, size_t rank) {
  std::vector<std::string> pool = mesh_names;
  if (pool.empty() || *rc::gen::weightedElement<bool>({{1, true}, {6, false}})) {
    pool.push_back("unknown");
  }
  const size_t n = *rc::gen::weightedOneOf<size_t>(
      {{6, rc::gen::inRange<size_t>(0, rank + 1)}, {1, rc::gen::inRange<size_t>(0, 5)}});
  std::vector<spmd::AxisEntry> entries;
  for (size_t i = 0; i < n; ++i) {
    const size_t axes = *rc::gen::weightedElement<size_t>({{3, 0}, {5, 1}, {2, 2}});
    entries.emplace_back(
        *rc::gen::container<std::vector<std::string>>(axes, rc::gen::elementOf(pool)));
  }
  return spmd::PartitionSpec::from_entries(entries);
}

// 0, 1, 2, … 99, 0, 1, … as `dtype`.
HostArray iota(DType dtype, const Shape& shape) {
  const int64_t n = spmd::shape_size(shape);
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<double>(i % 100);
  HostArray h = HostArray::zeros(dtype, shape);
  spmd::kernels::convert(DType::kFloat64, dtype, {reinterpret_cast<const std::byte*>(v.data()), n},
                         h.mutable_bytes().data(), n);
  return h;
}

// The boxes of devices_indices_map lie inside the array, each of shard_shape's extent where the
// split is even (an uneven one is an IndivisibleError there, and device_put keeps it).
void check_boxes(const spmd::NamedSharding& sharding, const Shape& shape) {
  std::optional<Shape> shard;
  try {
    shard = sharding.shard_shape(shape);
    RC_ASSERT(shard->size() == shape.size());
  } catch (const spmd::IndivisibleError&) {
    RC_TAG("uneven");
  }
  for (const spmd::DeviceIndex& d : sharding.devices_indices_map(shape)) {
    RC_ASSERT(d.index.size() == shape.size());
    if (shard) RC_ASSERT(spmd::index_extents(d.index) == *shard);
    for (size_t i = 0; i < shape.size(); ++i) {
      RC_ASSERT(d.index[i].start >= 0);
      RC_ASSERT(d.index[i].stop <= shape[i]);
    }
  }
}

// The round trips of `host` through `first` and then `second`, and a jitted x * 2 + 1 of it.
void check_values(const HostArray& host, const spmd::NamedSharding& first,
                  const spmd::NamedSharding& second) {
  const spmd::Array a = spmd::device_put(host, first);
  RC_ASSERT(a.to_host() == host);
  const spmd::Array b = spmd::device_put(a, second);
  RC_ASSERT(b.to_host() == host);
  if (host.dtype() == DType::kBool) return;
  auto f = spmd::jit([](const spmd::Tensor& x) { return x * 2 + 1; });
  const spmd::Array whole = spmd::device_put(host, spmd::NamedSharding(first.mesh(), spmd::P()));
  RC_ASSERT(f(b).to_host() == f(whole).to_host());
  if (host.shape().empty()) return;
  // A reduction over the first dimension (split, or of size 0) agrees too, refusal included.
  auto g = spmd::jit([](const spmd::Tensor& x) { return spmd::numpy::max(x * 2 + 1, {0}); });
  const auto reduced = [&](const spmd::Array& x) -> std::optional<HostArray> {
    try {
      return g(x).to_host();
    } catch (const spmd::Error&) {
      return std::nullopt;
    }
  };
  RC_ASSERT(reduced(b) == reduced(whole));
}

const std::vector<DType> kDtypes = {DType::kBool,   DType::kInt8,    DType::kInt32,
                                    DType::kUInt16, DType::kFloat16, DType::kFloat32,
                                    DType::kFloat64};

RC_GTEST_PROP(ShardingFuzz, EveryMeshSpecAndShapeIsRefusedOrHoldsTogether, ()) {
  RC_PRE(started());
  const MeshDraw m = mesh_draw();
  const Shape shape =
      *rc::gen::container<Shape>(*rc::gen::inRange<size_t>(0, 4), rc::gen::inRange<int64_t>(0, 9));
  const DType dtype = *rc::gen::elementOf(kDtypes);
  std::optional<spmd::Mesh> mesh;
  try {
    mesh = spmd::make_mesh(m.sizes, m.names);
    const spmd::NamedSharding first(*mesh, spec_draw(mesh->axis_names(), shape.size()));
    const spmd::NamedSharding second(*mesh, spec_draw(mesh->axis_names(), shape.size()));
    check_boxes(first, shape);
    check_boxes(second, shape);
    check_values(iota(dtype, shape), first, second);
    RC_TAG("computed");
  } catch (const spmd::Error& e) {
    RC_TAG(mesh ? "sharding refused" : "mesh refused");
    RC_ASSERT(std::string(e.what()).size() > 10);  // a refusal that says something
  }
}

}  // namespace
