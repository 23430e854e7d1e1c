// The no-argument forms of the sharding layer's functions, for this process. src/sharding/ is pure
// (no runtime queries, so it can be tested exhaustively): each of its functions takes the process
// index or device list it needs, and the conveniences that ask the runtime live here, in the
// first layer above both.
#include "spmd/mesh.h"
#include "spmd/mesh_utils.h"
#include "spmd/runtime.h"
#include "spmd/sharding.h"

namespace spmd {

std::vector<Device> Mesh::local_devices() const { return local_devices(spmd::process_index()); }

Mesh Mesh::local_mesh() const { return local_mesh(spmd::process_index()); }

std::vector<Device> Sharding::addressable_devices() const {
  return addressable_devices(spmd::process_index());
}

bool Sharding::is_fully_addressable() const { return is_fully_addressable(spmd::process_index()); }

Mesh make_mesh(const std::vector<int64_t>& axis_shapes, std::vector<std::string> axis_names,
               std::vector<AxisType> axis_types) {
  return make_mesh(axis_shapes, std::move(axis_names), std::move(axis_types), spmd::devices());
}

namespace mesh_utils {

std::vector<Device> create_device_mesh(const std::vector<int64_t>& mesh_shape) {
  return create_device_mesh(mesh_shape, spmd::devices());
}

std::vector<Device> create_hybrid_device_mesh(const std::vector<int64_t>& mesh_shape,
                                              const std::vector<int64_t>& dcn_mesh_shape) {
  return create_hybrid_device_mesh(mesh_shape, dcn_mesh_shape, spmd::devices());
}

}  // namespace mesh_utils

}  // namespace spmd
