#include "spmd/mesh_utils.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>

#include "spmd/error.h"
#include "spmd/sharding.h"

namespace spmd::mesh_utils {
std::vector<Device> create_device_mesh(const std::vector<int64_t>& mesh_shape,
                                       const std::vector<Device>& devices) {
  if (shape_size(mesh_shape) != static_cast<int64_t>(devices.size())) {
    throw InvalidArgument(
        fmt::format("create_device_mesh: a mesh of shape ({}) holds {} devices, but there are {}",
                    fmt::join(mesh_shape, ", "), shape_size(mesh_shape), devices.size()));
  }
  return devices;
}

std::vector<int64_t> hybrid_mesh_shape(const std::vector<int64_t>& mesh_shape,
                                       const std::vector<int64_t>& dcn_mesh_shape) {
  if (mesh_shape.size() != dcn_mesh_shape.size()) {
    throw InvalidArgument(fmt::format(
        "create_hybrid_device_mesh: mesh_shape ({}) and dcn_mesh_shape ({}) differ in rank",
        fmt::join(mesh_shape, ", "), fmt::join(dcn_mesh_shape, ", ")));
  }
  std::vector<int64_t> out(mesh_shape.size());
  for (size_t i = 0; i < out.size(); ++i) {
    if (__builtin_mul_overflow(mesh_shape[i], dcn_mesh_shape[i], &out[i])) {
      throw InvalidArgument(fmt::format(
          "create_hybrid_device_mesh: axis {} of mesh_shape ({}) times dcn_mesh_shape ({}) is "
          "beyond int64",
          i, fmt::join(mesh_shape, ", "), fmt::join(dcn_mesh_shape, ", ")));
    }
  }
  return out;
}

std::vector<Device> create_hybrid_device_mesh(const std::vector<int64_t>& mesh_shape,
                                              const std::vector<int64_t>& dcn_mesh_shape,
                                              const std::vector<Device>& devices) {
  const std::vector<int64_t> shape = hybrid_mesh_shape(mesh_shape, dcn_mesh_shape);
  std::map<int, std::vector<Device>> granules;  // by process index, in process order
  for (const auto& d : devices) granules[d.process_index()].push_back(d);
  if (static_cast<int64_t>(granules.size()) != shape_size(dcn_mesh_shape)) {
    throw InvalidArgument(fmt::format(
        "create_hybrid_device_mesh: dcn_mesh_shape ({}) lays out {} processes, but the devices "
        "belong to {}",
        fmt::join(dcn_mesh_shape, ", "), shape_size(dcn_mesh_shape), granules.size()));
  }
  std::vector<const std::vector<Device>*> ordered;
  for (const auto& [process, granule] : granules) {
    if (static_cast<int64_t>(granule.size()) != shape_size(mesh_shape)) {
      throw InvalidArgument(fmt::format(
          "create_hybrid_device_mesh: mesh_shape ({}) holds {} devices per process, but process "
          "{} has {}",
          fmt::join(mesh_shape, ", "), shape_size(mesh_shape), process, granule.size()));
    }
    ordered.push_back(&granule);
  }
  const size_t rank = shape.size();
  std::vector<Device> out;
  out.reserve(devices.size());
  std::vector<int64_t> coord(rank, 0);
  for (int64_t flat = 0; flat < shape_size(shape); ++flat) {
    int64_t rest = flat;
    for (size_t i = rank; i-- > 0;) {
      coord[i] = rest % shape[i];
      rest /= shape[i];
    }
    int64_t granule = 0;
    int64_t within = 0;
    for (size_t i = 0; i < rank; ++i) {  // process position major, device position minor
      granule = granule * dcn_mesh_shape[i] + coord[i] / mesh_shape[i];
      within = within * mesh_shape[i] + coord[i] % mesh_shape[i];
    }
    out.push_back((*ordered[granule])[within]);
  }
  return out;
}

}  // namespace spmd::mesh_utils
