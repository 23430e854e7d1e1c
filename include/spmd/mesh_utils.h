// spmd::mesh_utils — building device meshes (jax.experimental.mesh_utils). Pure; thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "spmd/device.h"

namespace spmd::mesh_utils {

// `devices` (default: every device of the cluster) arranged row-major in `mesh_shape`. CPU
// devices have no physical topology to follow, so their order is kept. Throws InvalidArgument
// when the shape's product differs from the device count.
std::vector<Device> create_device_mesh(const std::vector<int64_t>& mesh_shape,
                                       const std::vector<Device>& devices);
std::vector<Device> create_device_mesh(const std::vector<int64_t>& mesh_shape);

// A mesh for clusters whose processes are joined by a slower network: each process's devices
// (its "granule", as JAX groups them) form a per-process mesh of `mesh_shape`, and the processes
// are laid out in `dcn_mesh_shape`; axis i of the result has size mesh_shape[i] *
// dcn_mesh_shape[i], with the process position major. Processes are taken in process order.
// The result is row-major in that combined shape. Throws InvalidArgument when the shapes differ
// in rank, the process count differs from dcn_mesh_shape's product, or a process's device count
// from mesh_shape's.
std::vector<Device> create_hybrid_device_mesh(const std::vector<int64_t>& mesh_shape,
                                              const std::vector<int64_t>& dcn_mesh_shape,
                                              const std::vector<Device>& devices);
std::vector<Device> create_hybrid_device_mesh(const std::vector<int64_t>& mesh_shape,
                                              const std::vector<int64_t>& dcn_mesh_shape);

// The combined shape create_hybrid_device_mesh lays its result out in.
std::vector<int64_t> hybrid_mesh_shape(const std::vector<int64_t>& mesh_shape,
                                       const std::vector<int64_t>& dcn_mesh_shape);

}  // namespace spmd::mesh_utils
