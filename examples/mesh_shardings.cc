// Seed 002, "TPU Pod Example": a 2-D mesh of all devices named ('dp', 'mp') and the
// data-parallel, model-parallel and mixed shardings over it. The pod's (hosts, cores per host)
// becomes (processes, local devices): 'dp' runs across processes, 'mp' over each process's own
// devices. Each layout then carries a real computation — every device sums its block, and a psum
// over the axes the layout splits gives every device the array's total.
//
//   spmdrun -n 4 --cpu-devices 2 -- ./mesh_shardings
#include <spmd/spmd.h>

#include <cstdio>
#include <string>
#include <vector>

namespace {

// Sums a global array laid out as `sharding` on its devices: each device sums its block, then
// the blocks' sums are added over the mesh axes the spec splits.
void sum_under(const char* name, const spmd::NamedSharding& sharding, const spmd::HostArray& whole,
               double expected) {
  const spmd::Array x = spmd::device_put(whole, sharding);
  const std::vector<std::string> names = sharding.spec().axes();
  const auto total = spmd::shard_map(
      [&](const spmd::Block& block) {
        spmd::Block s = spmd::sum(block);
        for (const auto& axis : names) s = spmd::psum(s, axis);
        return s;
      },
      sharding.mesh(), {sharding.spec()}, spmd::P());
  const double got = total(x).addressable_data(0).data<double>()[0];
  const auto shard = sharding.shard_shape(whole.shape());
  if (spmd::process_index() == 0) {
    std::printf("  %-14s %s: each device holds a (%lld, %lld) block; total %.0f%s\n", name,
                sharding.spec().to_string().c_str(), static_cast<long long>(shard[0]),
                static_cast<long long>(shard[1]), got,
                got == expected ? "" : " — MISMATCH with the array's sum");
  }
  if (got != expected) throw spmd::Error(std::string(name) + ": wrong total");
}

}  // namespace

int main() {
  spmd::distributed::initialize();
  std::printf("Process %d of %d\n", spmd::process_index(), spmd::process_count());
  std::string local;
  for (const auto& d : spmd::local_devices()) local += " " + d.to_string();
  std::printf("Local devices:%s\n", local.c_str());

  // mesh_shape = (hosts, cores per host); Mesh(np.array(devices).reshape(mesh_shape), ('dp', 'mp'))
  const std::vector<int64_t> mesh_shape = {spmd::process_count(), spmd::local_device_count()};
  const spmd::Mesh mesh(spmd::devices(), mesh_shape, {"dp", "mp"});

  const spmd::Shape shape = {16 * mesh_shape[0], 8 * mesh_shape[1]};
  std::vector<double> values(static_cast<size_t>(shape[0] * shape[1]));
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<double>(i);
  const auto whole = spmd::HostArray::from_vector(values, shape);
  const double expected =
      static_cast<double>(values.size()) * static_cast<double>(values.size() - 1) / 2;

  if (spmd::process_index() == 0) {
    std::printf("%s over a (%lld, %lld) array:\n", mesh.to_string().c_str(),
                static_cast<long long>(shape[0]), static_cast<long long>(shape[1]));
  }
  sum_under("data parallel", spmd::NamedSharding(mesh, spmd::P("dp", spmd::None)), whole, expected);
  sum_under("model parallel", spmd::NamedSharding(mesh, spmd::P(spmd::None, "mp")), whole,
            expected);
  sum_under("mixed", spmd::NamedSharding(mesh, spmd::P("dp", "mp")), whole, expected);
  return 0;
}
