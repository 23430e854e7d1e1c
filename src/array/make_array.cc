// The make_array_* constructors: building a global Array from what this process holds.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>

#include "array/process_local_layout.h"
#include "spmd/array.h"
#include "spmd/runtime.h"

namespace spmd {
namespace {

std::vector<DeviceIndex> addressable_indices(const Sharding& sharding, const Shape& shape,
                                             int process) {
  std::vector<DeviceIndex> out;
  for (auto& e : sharding.devices_indices_map(shape)) {
    if (e.device.process_index() == process) out.push_back(std::move(e));
  }
  return out;
}

}  // namespace

Array make_array_from_process_local_data(const Sharding& sharding, const HostArray& local,
                                         const std::optional<Shape>& global_shape) {
  const int process = spmd::process_index();
  const ProcessLocalLayout layout =
      process_local_layout(sharding, local.shape(), global_shape, process);
  std::vector<Shard> shards;
  shards.reserve(layout.shards.size());
  for (const auto& p : layout.shards) {
    shards.push_back(
        Shard{p.global.device, p.global.index, p.global.replica_id, local.slice(p.local)});
  }
  return Array(layout.global_shape, local.dtype(), sharding.clone(), std::move(shards), process);
}

namespace {

// The array's dtype: the one asked for, else the first shard's (JAX's rule, with its wording of
// the error for a process that holds no shard).
DType resolve_dtype(std::optional<DType> asked, std::optional<DType> first_shard,
                    const char* function) {
  if (asked) return *asked;
  if (first_shard) return *first_shard;
  throw InvalidArgument(fmt::format(
      "{}: this process holds no shard of the array, so its dtype must be passed in the dtype "
      "argument (as JAX requires)",
      function));
}

}  // namespace

Array make_array_from_single_device_arrays(const Shape& shape, const Sharding& sharding,
                                           std::vector<HostArray> per_device,
                                           std::optional<DType> dtype) {
  const int process = spmd::process_index();
  auto indices = addressable_indices(sharding, shape, process);
  if (per_device.size() != indices.size()) {
    throw InvalidArgument(fmt::format(
        "make_array_from_single_device_arrays: {} arrays given, but this process has {} devices "
        "in {}; pass one per device of sharding.addressable_devices(), in that order",
        per_device.size(), indices.size(), sharding.to_string()));
  }
  const DType want_dtype =
      resolve_dtype(dtype, per_device.empty() ? std::nullopt : std::optional(per_device[0].dtype()),
                    "make_array_from_single_device_arrays");
  std::vector<Shard> shards;
  for (size_t i = 0; i < indices.size(); ++i) {
    const Shape want = index_extents(indices[i].index);
    if (per_device[i].shape() != want || per_device[i].dtype() != want_dtype) {
      throw InvalidArgument(fmt::format(
          "make_array_from_single_device_arrays: the array for {} is {}[{}], but its shard is "
          "{}[{}]",
          indices[i].device.to_string(), dtype_name(per_device[i].dtype()),
          fmt::join(per_device[i].shape(), ", "), dtype_name(want_dtype), fmt::join(want, ", ")));
    }
    shards.push_back(Shard{indices[i].device, indices[i].index, indices[i].replica_id,
                           std::move(per_device[i])});
  }
  return Array(shape, want_dtype, sharding.clone(), std::move(shards), process);
}

Array make_array_from_callback(const Shape& shape, const Sharding& sharding,
                               const std::function<HostArray(const Index&)>& data_callback,
                               std::optional<DType> dtype) {
  const int process = spmd::process_index();
  std::map<Index, HostArray> answers;  // one call per distinct index
  std::vector<Shard> shards;
  for (auto& e : addressable_indices(sharding, shape, process)) {
    auto it = answers.find(e.index);
    if (it == answers.end()) {
      HostArray data = data_callback(e.index);
      if (data.shape() != index_extents(e.index) || (dtype && data.dtype() != *dtype)) {
        throw InvalidArgument(fmt::format(
            "make_array_from_callback: the callback returned {}[{}] for the index {}, which needs "
            "shape ({}){}",
            dtype_name(data.dtype()), fmt::join(data.shape(), ", "), index_to_string(e.index),
            fmt::join(index_extents(e.index), ", "),
            dtype ? fmt::format(" and dtype {}", dtype_name(*dtype)) : ""));
      }
      dtype = data.dtype();
      it = answers.emplace(e.index, std::move(data)).first;
    }
    shards.push_back(Shard{e.device, e.index, e.replica_id, it->second});
  }
  return Array(shape, resolve_dtype(dtype, dtype, "make_array_from_callback"), sharding.clone(),
               std::move(shards), process);
}

}  // namespace spmd
