// jax.make_mesh (mesh.h): the device order create_device_mesh gives, JAX's default axis types.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "spmd/error.h"
#include "spmd/mesh.h"
#include "spmd/mesh_utils.h"
#include "spmd/shape.h"

namespace spmd {

Mesh make_mesh(const std::vector<int64_t>& axis_shapes, std::vector<std::string> axis_names,
               std::vector<AxisType> axis_types, const std::vector<Device>& devices) {
  for (int64_t s : axis_shapes) {
    if (s <= 0) {
      throw InvalidArgument(fmt::format("make_mesh: axis sizes must be positive, got ({})",
                                        fmt::join(axis_shapes, ", ")));
    }
  }
  const int64_t product = shape_size(axis_shapes);  // InvalidArgument beyond int64, not a wrap
  if (product > static_cast<int64_t>(devices.size())) {
    throw InvalidArgument(fmt::format(
        "make_mesh: a mesh of shape ({}) needs {} devices, but there are {} (JAX: the number of "
        "devices must be >= the product of mesh_shape)",
        fmt::join(axis_shapes, ", "), product, devices.size()));
  }
  const std::vector<Device> used(devices.begin(), devices.begin() + product);
  if (axis_types.empty()) axis_types.assign(axis_names.size(), AxisType::kExplicit);
  return Mesh(mesh_utils::create_device_mesh(axis_shapes, used), axis_shapes, std::move(axis_names),
              std::move(axis_types));
}

}  // namespace spmd
