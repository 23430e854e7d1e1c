// spmd::Mesh — devices arranged in an N-d array with a name per axis (jax.sharding.Mesh).
//
// A Mesh is an immutable value: copyable, comparable, safe to share between threads. Its
// devices are stored row-major (the last axis varies fastest), exactly as numpy's
// `np.array(devices).reshape(shape)` lays them out.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "spmd/device.h"

namespace spmd {

// How a mesh axis is partitioned over (jax.sharding.AxisType). kAuto: the compiler propagates
// shardings along it (GSPMD). kExplicit: a value's sharding along it is part of the value's type,
// known when traced (JAX's explicit sharding). kManual: per-device code (inside shard_map).
// spmd propagates explicit axes as auto ones for now: the types, x.sharding() inside jit and the
// trace-time ambiguity errors are not yet there (issue 27).
enum class AxisType { kAuto, kExplicit, kManual };

// "Auto", "Explicit", "Manual", as JAX prints them.
std::string_view axis_type_name(AxisType type);

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
  // With a type per axis (empty: every axis kAuto, as jax.sharding.Mesh). Throws
  // InvalidArgument, besides the above, when the type count differs from the axis count.
  Mesh(std::vector<Device> devices, std::vector<int64_t> shape, std::vector<std::string> axis_names,
       std::vector<AxisType> axis_types);

  const std::vector<std::string>& axis_names() const { return axis_names_; }
  // One per axis, in axis order.
  const std::vector<AxisType>& axis_types() const { return axis_types_; }
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

  // Equal devices, shape, names and axis types.
  bool operator==(const Mesh& other) const;
  // E.g. "Mesh('dp': 2, 'mp': 4)"; axis types follow unless all are kAuto:
  // "Mesh('x': 4, axis_types=(Explicit,))".
  std::string to_string() const;

 private:
  std::vector<Device> devices_;
  std::vector<int64_t> sizes_;
  std::vector<std::string> axis_names_;
  std::vector<AxisType> axis_types_;
};

// jax.make_mesh: the first product(axis_shapes) of `devices` (default: every device of the
// cluster) in mesh_utils::create_device_mesh's order, with `axis_types` (empty: every axis
// kExplicit, JAX's default since 0.9). Throws InvalidArgument when there are fewer devices than
// the shape holds, or as the Mesh constructor does.
Mesh make_mesh(const std::vector<int64_t>& axis_shapes, std::vector<std::string> axis_names,
               std::vector<AxisType> axis_types, const std::vector<Device>& devices);
Mesh make_mesh(const std::vector<int64_t>& axis_shapes, std::vector<std::string> axis_names,
               std::vector<AxisType> axis_types = {});

}  // namespace spmd
