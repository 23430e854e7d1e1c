// spmd::Mesh — devices arranged in an N-d array with a name per axis (jax.sharding.Mesh).
//
// A Mesh is an immutable value: copyable, comparable, safe to share between threads. Its
// devices are stored row-major (the last axis varies fastest), exactly as numpy's
// `np.array(devices).reshape(shape)` lays them out.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "spmd/device.h"

namespace spmd {

class Mesh {
 public:
  // A 1-D mesh: Mesh(spmd::devices(), {"devices"}). Throws InvalidArgument unless exactly one
  // axis name is given.
  Mesh(const std::vector<Device>& devices, std::vector<std::string> axis_names);

  // An N-d mesh: `devices` row-major in the given shape, one name per axis:
  //   Mesh(spmd::devices(), {2, 4}, {"dp", "mp"})
  // Throws InvalidArgument when the shape's product differs from the device count, a size is
  // not positive, names repeat or are empty, their count differs from the rank, or a device
  // appears twice.
  Mesh(std::vector<Device> devices, std::vector<int64_t> shape,
       std::vector<std::string> axis_names);

  const std::vector<std::string>& axis_names() const { return axis_names_; }
  // Axis name -> size, in axis order.
  std::vector<std::pair<std::string, int64_t>> shape() const;
  // The size of each axis, in axis order.
  const std::vector<int64_t>& axis_sizes() const { return sizes_; }
  // The position of `axis` among the axes. Throws InvalidArgument naming the mesh's axes when
  // there is no such axis.
  int axis_index(const std::string& axis) const;
  int64_t axis_size(const std::string& axis) const { return sizes_[axis_index(axis)]; }

  // Every device, row-major.
  const std::vector<Device>& devices() const { return devices_; }
  // The number of devices.
  int64_t size() const { return static_cast<int64_t>(devices_.size()); }
  // The mesh coordinates of the device at row-major position `flat`.
  std::vector<int64_t> coordinates(int64_t flat) const;

  // The devices of process `process_index` (default: this process), in mesh order.
  std::vector<Device> local_devices(int process_index) const;
  std::vector<Device> local_devices() const;

  // The sub-mesh of process `process_index`'s devices, with the same axis names. Throws
  // InvalidArgument when they do not form one contiguous block of the mesh (JAX's requirement).
  Mesh local_mesh(int process_index) const;
  Mesh local_mesh() const;

  bool operator==(const Mesh& other) const;
  // E.g. "Mesh('dp': 2, 'mp': 4)".
  std::string to_string() const;

 private:
  std::vector<Device> devices_;
  std::vector<int64_t> sizes_;
  std::vector<std::string> axis_names_;
};

}  // namespace spmd
