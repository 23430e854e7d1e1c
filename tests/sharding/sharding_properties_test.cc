// Properties of every NamedSharding over random meshes, specs and shapes (RapidCheck): the index
// map covers the array exactly once per replica, replica ids partition the holders of each
// index, and shard_shape is every slice's extent.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <map>
#include <numeric>

#include "spmd/sharding.h"

namespace spmd {
namespace {

struct Case {
  Mesh mesh;
  PartitionSpec spec;
  Shape shape;
  int64_t replicas;  // the product of the mesh axes the spec does not name
};

// The entry that splits a dimension over `axes` (None when empty, a tuple when several).
AxisEntry entry_for(const std::vector<std::string>& axes) {
  if (axes.empty()) return AxisEntry();
  if (axes.size() == 1) return AxisEntry(axes[0]);
  if (axes.size() == 2) return AxisEntry({axes[0], axes[1]});
  return AxisEntry({axes[0], axes[1], axes[2]});
}

// A random mesh of 1-3 axes of size 1-3 over 1-2 processes, and a spec naming a random subset of
// its axes in random order, some grouped into tuples. The array's dimensions are multiples of
// their shard counts, or anything (even zero) when `uneven`.
Case random_case(bool uneven) {
  const int rank = *rc::gen::inRange(1, 4);
  std::vector<int64_t> sizes;
  std::vector<std::string> names;
  int64_t total = 1;
  for (int i = 0; i < rank; ++i) {
    sizes.push_back(*rc::gen::inRange(1, 4));
    names.emplace_back(1, static_cast<char>('a' + i));
    total *= sizes.back();
  }
  const int processes = *rc::gen::inRange(1, 3);
  std::vector<Device> devices;
  for (int i = 0; i < total; ++i) {
    devices.emplace_back(i, i * processes / static_cast<int>(total), 0, "cpu", "h");
  }
  std::vector<int> order(rank);
  std::iota(order.begin(), order.end(), 0);
  for (int i = rank - 1; i > 0; --i) std::swap(order[i], order[*rc::gen::inRange(0, i + 1)]);
  const int used = *rc::gen::inRange(0, rank + 1);
  const int array_rank = *rc::gen::inRange(1, 4);
  std::vector<std::vector<std::string>> dim_axes(static_cast<size_t>(array_rank));
  for (int k = 0; k < used; ++k) {
    dim_axes[*rc::gen::inRange(0, array_rank)].push_back(names[order[k]]);
  }
  int64_t replicas = total;
  Shape shape;
  std::vector<AxisEntry> entries;
  for (int d = 0; d < array_rank; ++d) {
    int64_t n = 1;
    for (const auto& a : dim_axes[d]) n *= sizes[a[0] - 'a'];
    replicas /= n;
    entries.push_back(entry_for(dim_axes[d]));
    shape.push_back(uneven ? *rc::gen::inRange<int64_t>(0, 3 * n + 2)
                           : n * *rc::gen::inRange<int64_t>(1, 3));
  }
  return Case{Mesh(devices, sizes, names), PartitionSpec::from_entries(entries), shape, replicas};
}

int64_t elements(const Shape& s) {
  return std::accumulate(s.begin(), s.end(), int64_t{1}, std::multiplies<>());
}

// How many devices hold each element, by row-major element number.
std::vector<int64_t> coverage(const std::vector<DeviceIndex>& map, const Shape& shape) {
  std::vector<int64_t> count(static_cast<size_t>(elements(shape)), 0);
  for (const auto& e : map) {
    for (int64_t flat = 0; flat < elements(shape); ++flat) {
      int64_t rest = flat;
      bool inside = true;
      for (size_t d = shape.size(); d-- > 0;) {
        const int64_t c = rest % shape[d];
        rest /= shape[d];
        inside = inside && c >= e.index[d].start && c < e.index[d].stop;
      }
      if (inside) ++count[flat];
    }
  }
  return count;
}

RC_GTEST_PROP(ShardingProperties, EveryElementIsHeldOncePerReplica, ()) {
  for (bool uneven : {false, true}) {
    const Case c = random_case(uneven);
    const NamedSharding s(c.mesh, c.spec);
    for (int64_t n : coverage(s.devices_indices_map(c.shape), c.shape)) RC_ASSERT(n == c.replicas);
  }
}

RC_GTEST_PROP(ShardingProperties, ReplicaIdsPartitionTheHoldersOfEachIndex, ()) {
  const Case c = random_case(false);
  const NamedSharding s(c.mesh, c.spec);
  std::map<Index, std::vector<int>> ids;
  for (const auto& e : s.devices_indices_map(c.shape)) ids[e.index].push_back(e.replica_id);
  for (auto& [index, list] : ids) {
    std::sort(list.begin(), list.end());
    RC_ASSERT(static_cast<int64_t>(list.size()) == c.replicas);
    for (size_t i = 0; i < list.size(); ++i) RC_ASSERT(list[i] == static_cast<int>(i));
  }
  RC_ASSERT(s.is_fully_replicated() == (c.replicas == c.mesh.size()));
}

RC_GTEST_PROP(ShardingProperties, ShardShapeIsEverySlicesExtent, ()) {
  const Case c = random_case(false);
  const NamedSharding s(c.mesh, c.spec);
  const Shape shard = s.shard_shape(c.shape);
  for (const auto& e : s.devices_indices_map(c.shape)) {
    for (size_t d = 0; d < shard.size(); ++d) RC_ASSERT(e.index[d].size() == shard[d]);
  }
}

}  // namespace
}  // namespace spmd
