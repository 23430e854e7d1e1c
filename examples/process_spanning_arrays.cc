// Seed 002, "Creating Process-Spanning Arrays": a global array over every device of the cluster,
// built from what each process holds — the whole array, of which each device takes its part
// (approach 1, device_put), its own rows (approach 2), one array per local device (approach 3),
// or a callback asked for each shard.
//
//   spmdrun -n 4 --cpu-devices 2 -- ./process_spanning_arrays
#include <spmd/spmd.h>

#include <cstdio>
#include <string>
#include <vector>

int main() {
  spmd::distributed::initialize();
  const int n = spmd::device_count();

  // mesh = Mesh(jax.devices(), ('devices',)); sharding = NamedSharding(mesh, P('devices'))
  spmd::Mesh mesh(spmd::devices(), {"devices"});
  spmd::NamedSharding sharding(mesh, spmd::P("devices"));
  const spmd::Shape global_shape = {2 * static_cast<int64_t>(n), 3};

  // The whole array, as every process could compute it: element = its row-major position.
  std::vector<float> values(static_cast<size_t>(global_shape[0] * global_shape[1]));
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i);
  const auto whole = spmd::HostArray::from_vector(values, global_shape);

  // 1. Each process loads the full array and shards it: every device takes its rows.
  spmd::Array from_full = spmd::device_put(whole, sharding);

  // 2. Each process loads its portion: its devices' rows.
  const int64_t rows = int64_t{2} * spmd::local_device_count();
  const int64_t first = rows * spmd::process_index();
  const auto local_data = whole.slice({{first, first + rows}, {0, 3}});
  spmd::Array from_local = spmd::make_array_from_process_local_data(sharding, local_data);

  // 3. One array per local device.
  std::vector<spmd::HostArray> per_device;
  for (const auto& e : sharding.devices_indices_map(global_shape)) {
    if (e.device.process_index() == spmd::process_index())
      per_device.push_back(whole.slice(e.index));
  }
  spmd::Array from_devices =
      spmd::make_array_from_single_device_arrays(global_shape, sharding, per_device);

  // And the callback form: asked once per shard this process holds.
  spmd::Array from_callback = spmd::make_array_from_callback(
      global_shape, sharding, [&](const spmd::Index& index) { return whole.slice(index); });

  bool same = true;
  for (size_t i = 0; i < from_local.addressable_shards().size(); ++i) {
    same = same &&
           from_local.addressable_data(static_cast<int>(i)) ==
               from_devices.addressable_data(static_cast<int>(i)) &&
           from_local.addressable_data(static_cast<int>(i)) ==
               from_callback.addressable_data(static_cast<int>(i)) &&
           from_local.addressable_data(static_cast<int>(i)) ==
               from_full.addressable_data(static_cast<int>(i));
  }
  std::printf("Process %d: %s, fully addressable: %s, the four ways agree: %s\n",
              spmd::process_index(), from_local.to_string().c_str(),
              from_local.is_fully_addressable() ? "yes" : "no", same ? "yes" : "no");
  for (const auto& shard : from_local.addressable_shards()) {
    std::printf("  %s holds rows %s: %s\n", shard.device.to_string().c_str(),
                spmd::index_to_string(shard.index).c_str(), shard.data.to_string().c_str());
  }
  return same ? 0 : 1;
}
