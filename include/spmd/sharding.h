// Shardings: which part of a global array each device holds (jax.sharding).
//
// A sharding maps every device it spans to an Index: one half-open slice per array dimension.
// Shardings are immutable values, safe to share between threads; every function here is pure
// (no I/O, no communication).
//
// Uneven dimensions follow XLA's tiling, as JAX does: a dimension of size d split n ways has
// chunks of ceil(d / n), the last ones shorter or empty. shard_shape() refuses such dimensions
// (IndivisibleError), as JAX's does.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "spmd/device.h"
#include "spmd/error.h"
#include "spmd/mesh.h"
#include "spmd/partition_spec.h"
#include "spmd/shape.h"

namespace spmd {

// A PartitionSpec names one mesh axis for two dimensions (JAX's DuplicateSpecError).
class DuplicateSpecError : public InvalidArgument {
 public:
  using InvalidArgument::InvalidArgument;
};

// A dimension's size is not divisible by the number of shards it is split into.
class IndivisibleError : public InvalidArgument {
 public:
  using InvalidArgument::InvalidArgument;
};

// "[0:4, 2:3]"
std::string index_to_string(const Index& index);

// `to` with its one -1 entry (if any) inferred so that it holds as many elements as `from`.
// Throws InvalidArgument when that is impossible, naming both shapes.
Shape reshaped(const Shape& from, Shape to);

// The shape of the box `index`: each slice's size.
Shape index_extents(const Index& index);

// The part of the global array one device holds.
struct DeviceIndex {
  Device device;
  Index index;
  int replica_id = 0;  // devices holding equal indices are numbered 0, 1, … in device order
};

class Sharding {
 public:
  virtual ~Sharding() = default;

  // Every device the sharding spans, in its device order.
  virtual const std::vector<Device>& device_assignment() const = 0;

  // For each device, in device order: its index into an array of `global_shape`, and its replica
  // id. Throws InvalidArgument when the sharding does not fit an array of that rank.
  virtual std::vector<DeviceIndex> devices_indices_map(const Shape& global_shape) const = 0;

  // The shape every shard has. Throws IndivisibleError (naming the dimension, its size and the
  // number of shards) when a split dimension does not divide evenly.
  virtual Shape shard_shape(const Shape& global_shape) const = 0;

  // True when every device holds the whole array.
  virtual bool is_fully_replicated() const = 0;

  // How many ways each of the first `rank` dimensions is split (1: kept whole).
  virtual std::vector<int64_t> shard_counts(size_t rank) const = 0;

  // A copy that can outlive this object (arrays keep their sharding this way).
  virtual std::shared_ptr<const Sharding> clone() const = 0;

  // E.g. "NamedSharding(mesh=Mesh('x': 4), spec=PartitionSpec('x',))".
  virtual std::string to_string() const = 0;

  // The devices of process `process_index` (default: this process), in device order.
  std::vector<Device> addressable_devices(int process_index) const;
  std::vector<Device> addressable_devices() const;
  // True when process `process_index` (default: this process) holds every device.
  bool is_fully_addressable(int process_index) const;
  bool is_fully_addressable() const;
  int num_devices() const { return static_cast<int>(device_assignment().size()); }
};

// An array split over a mesh by a PartitionSpec (jax.sharding.NamedSharding).
class NamedSharding : public Sharding {
 public:
  // Throws DuplicateSpecError when an axis is named twice, InvalidArgument for an axis the mesh
  // lacks (naming the mesh's axes).
  NamedSharding(Mesh mesh, PartitionSpec spec);
  // `spec` on the mesh in scope (mesh_context.h), so that a bare P("x") is a sharding wherever one
  // is taken, as in JAX under jax.set_mesh. Throws InvalidArgument when no mesh is in scope.
  NamedSharding(const PartitionSpec& spec);  // NOLINT(google-explicit-constructor)

  const Mesh& mesh() const { return mesh_; }
  const PartitionSpec& spec() const { return spec_; }

  const std::vector<Device>& device_assignment() const override { return mesh_.devices(); }
  std::vector<DeviceIndex> devices_indices_map(const Shape& global_shape) const override;
  Shape shard_shape(const Shape& global_shape) const override;
  bool is_fully_replicated() const override;
  std::vector<int64_t> shard_counts(size_t rank) const override;
  std::shared_ptr<const Sharding> clone() const override;
  std::string to_string() const override;

 private:
  void check_rank(const Shape& global_shape) const;

  Mesh mesh_;
  PartitionSpec spec_;
  // Per spec entry: the mesh axis positions it splits over, major to minor.
  std::vector<std::vector<int>> dim_axes_;
};

// The whole array on one device (jax.sharding.SingleDeviceSharding).
class SingleDeviceSharding : public Sharding {
 public:
  explicit SingleDeviceSharding(Device device);
  const std::vector<Device>& device_assignment() const override { return devices_; }
  std::vector<DeviceIndex> devices_indices_map(const Shape& global_shape) const override;
  Shape shard_shape(const Shape& global_shape) const override { return global_shape; }
  bool is_fully_replicated() const override { return true; }
  std::vector<int64_t> shard_counts(size_t rank) const override;
  std::shared_ptr<const Sharding> clone() const override;
  std::string to_string() const override;

 private:
  std::vector<Device> devices_;
};

// Devices in an N-d array whose shape says how many ways each array dimension is split
// (jax.sharding.PositionalSharding). JAX deprecated it and has removed it (it is absent from JAX
// 0.10.2); it stays here, thin, because the seeds use it: new code writes a NamedSharding. The
// device array's rank must equal the array's rank; a size of 1 keeps that dimension whole.
class PositionalSharding : public Sharding {
 public:
  // A 1-D arrangement of `devices`.
  explicit PositionalSharding(const std::vector<Device>& devices);
  // `devices` row-major in `shape`. Throws InvalidArgument when the product differs from the
  // device count.
  PositionalSharding(std::vector<Device> devices, Shape shape);

  // The same devices in another shape (one entry may be -1: inferred).
  PositionalSharding reshape(Shape shape) const;
  // Keeps dimension `axis` whole: its devices become replicas (jax's .replicate(axis)).
  PositionalSharding replicate(int axis) const;
  const Shape& shape() const { return shape_; }

  const std::vector<Device>& device_assignment() const override { return devices_; }
  std::vector<DeviceIndex> devices_indices_map(const Shape& global_shape) const override;
  Shape shard_shape(const Shape& global_shape) const override;
  bool is_fully_replicated() const override;
  std::vector<int64_t> shard_counts(size_t rank) const override;
  std::shared_ptr<const Sharding> clone() const override;
  std::string to_string() const override;

 private:
  std::vector<Device> devices_;
  Shape shape_;                   // the device array's shape
  std::vector<bool> replicated_;  // per dimension: kept whole, its devices are replicas
};

}  // namespace spmd
