// Seed 002, "TPU Pod Example": a 2-D mesh of all devices, (device_count / 8, 8) named
// ('dp', 'mp'), and the data-parallel, model-parallel and mixed shardings over it. CPU devices
// stand in for a pod's cores; with fewer than 8 devices the 'mp' axis takes them all.
//
//   spmdrun -n 4 --cpu-devices 2 -- ./tpu_pod_mesh
#include <spmd/spmd.h>

#include <algorithm>
#include <cstdio>
#include <string>

namespace {

void describe(const char* name, const spmd::NamedSharding& sharding, const spmd::Shape& shape) {
  const auto shard = sharding.shard_shape(shape);
  std::printf("  %-14s %s: each device holds a (%lld, %lld) block\n", name,
              sharding.spec().to_string().c_str(), static_cast<long long>(shard[0]),
              static_cast<long long>(shard[1]));
}

}  // namespace

int main() {
  spmd::distributed::initialize();
  std::printf("Process %d of %d\n", spmd::process_index(), spmd::process_count());
  std::string local;
  for (const auto& d : spmd::local_devices()) local += " " + d.to_string();
  std::printf("Local devices:%s\n", local.c_str());

  // mesh_shape = (len(devices) // 8, 8); Mesh(np.array(devices).reshape(mesh_shape), ('dp', 'mp'))
  const int64_t n = spmd::device_count();
  const int64_t mp = std::min<int64_t>(8, n);
  const std::vector<int64_t> mesh_shape = {n / mp, mp};
  spmd::Mesh mesh(spmd::mesh_utils::create_device_mesh(mesh_shape), mesh_shape, {"dp", "mp"});

  if (spmd::process_index() == 0) {
    const spmd::Shape shape = {16 * mesh_shape[0], 8 * mesh_shape[1]};
    std::printf("%s over a (%lld, %lld) array:\n", mesh.to_string().c_str(),
                static_cast<long long>(shape[0]), static_cast<long long>(shape[1]));
    describe("data parallel", spmd::NamedSharding(mesh, spmd::P("dp", spmd::None)), shape);
    describe("model parallel", spmd::NamedSharding(mesh, spmd::P(spmd::None, "mp")), shape);
    describe("mixed", spmd::NamedSharding(mesh, spmd::P("dp", "mp")), shape);
  }
  return 0;
}
