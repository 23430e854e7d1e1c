// spmd::Array — a global array laid out over devices by a Sharding (jax.Array), and the ways to
// build one from what each process holds.
//
// Every process holds the shards of its own (addressable) devices; CPU devices keep them in host
// memory. An Array is immutable after construction and safe to read from many threads; copies
// share its shards (like jax.Array references), so passing Arrays by value costs no bytes.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "spmd/host_array.h"
#include "spmd/sharding.h"

namespace spmd {

// One addressable device's part of an Array.
struct Shard {
  Device device;
  Index index;         // where the data sits in the global array
  int replica_id = 0;  // 0 for the first device holding this index
  // The shard's elements. A device that computes in its own memory (a GPU) keeps them there:
  // `data` is then a deferred HostArray, copied to the host on its first read (host_array.h).
  HostArray data;
};

class Array {
 public:
  // Checks every shard against the sharding (device, index, shape, dtype), and keeps each in
  // its device's memory (a GPU's: copied there now, as jax.device_put does). Most users build
  // Arrays with the make_array_* functions below.
  Array(Shape shape, DType dtype, std::shared_ptr<const Sharding> sharding,
        std::vector<Shard> addressable_shards, int process_index);
  // For code that laid the shards out from the sharding's own devices_indices_map (jit's planned
  // calls): the same Array, without the check.
  struct Unchecked {};
  Array(Shape shape, DType dtype, std::shared_ptr<const Sharding> sharding,
        std::vector<Shard> addressable_shards, int process_index, Unchecked);

  const Shape& shape() const { return shape_; }
  DType dtype() const { return dtype_; }
  int64_t size() const;
  const Sharding& sharding() const { return *sharding_; }
  std::shared_ptr<const Sharding> sharding_ptr() const { return sharding_; }

  // This process's shards, in the sharding's device order. Throws InvalidArgument once the
  // array is deleted.
  const std::vector<Shard>& addressable_shards() const {
    if (!shards_) throw_deleted();
    return *shards_;
  }

  // jax.Array.delete: drops this handle's shards (their memory is freed once no other handle,
  // such as a copy of this Array, holds them); every later read of the data through this handle
  // throws InvalidArgument saying the array was deleted. Deleting twice is allowed.
  void delete_buffers() { shards_.reset(); }
  bool is_deleted() const { return shards_ == nullptr; }
  // The data of addressable shard `i`. Throws InvalidArgument when out of range.
  const HostArray& addressable_data(int i) const;

  // True when this process holds every device of the sharding.
  bool is_fully_addressable() const;
  bool is_fully_replicated() const { return sharding_->is_fully_replicated(); }

  // The whole array: this process's copy when the array is fully replicated (as
  // np.asarray of a replicated jax.Array), else assembled from the shards. Throws
  // FailedPrecondition when other processes hold part of it: gather it with
  // spmd::multihost::process_allgather instead.
  HostArray to_host() const;

  // jax.Array.block_until_ready: returns once every shard of this process is computed. A jit
  // call on a GPU returns with its work queued (JAX's asynchronous dispatch); this waits for it,
  // and throws the error that work met (an integer division by zero in a kernel). A CPU device's
  // shards are ready when the call returns. Throws InvalidArgument once the array is deleted.
  void block_until_ready() const;

  // "Array(float32[8, 4], NamedSharding(…))"
  std::string to_string() const;

 private:
  [[noreturn]] void throw_deleted() const;

  Shape shape_;
  DType dtype_;
  std::shared_ptr<const Sharding> sharding_;
  // Shared by copies: an Array never changes, so copying one is cheap and shares its bytes.
  std::shared_ptr<const std::vector<Shard>> shards_;
  int process_index_;
};

// Builds a global array from the data this process holds (jax.make_array_from_process_local_data).
// Along each dimension, `local` holds either the whole global extent, or exactly this process's
// share: the shards of its devices, packed in increasing global order when they are not
// contiguous. `global_shape` is inferred when left out (a dimension this process covers whole
// is taken as global). Throws InvalidArgument saying which dimension is neither, and
// IndivisibleError for an uneven split.
Array make_array_from_process_local_data(const Sharding& sharding, const HostArray& local,
                                         const std::optional<Shape>& global_shape = std::nullopt);

// Builds a global array from one array per addressable device, in the order of
// sharding.addressable_devices() (jax.make_array_from_single_device_arrays). Each must have its
// device's shard shape and all the same dtype — `dtype` when given; the error names the device
// that does not. As in JAX, a process that holds no shard of the array must pass `dtype`
// (InvalidArgument otherwise): it has no array to take it from.
Array make_array_from_single_device_arrays(const Shape& shape, const Sharding& sharding,
                                           std::vector<HostArray> per_device,
                                           std::optional<DType> dtype = std::nullopt);

// Builds a global array by asking `data_callback` for each distinct index this process's devices
// hold — once per distinct index, so once in all when the sharding is fully replicated
// (jax.make_array_from_callback). Each answer must have the index's extents and one dtype —
// `dtype` when given. A process holding no shard must pass `dtype`, as above.
Array make_array_from_callback(const Shape& shape, const Sharding& sharding,
                               const std::function<HostArray(const Index&)>& data_callback,
                               std::optional<DType> dtype = std::nullopt);

// Reshards `x` onto `sharding` (jax.device_put of an Array): every device of the new sharding
// gets its shard, and only the bytes a device does not already hold move — within a process by
// copy, between processes in one variable all-to-all (the collectives engine). Collective among
// the processes owning devices of either sharding; a process owning none returns an array with no
// shards. Throws InvalidArgument when `sharding` does not fit the array's rank or names a device
// this cluster does not have (check_cluster_devices).
Array device_put(const Array& x, const Sharding& sharding);

// Places `host` — the same value in every process, as with jax.device_put of a NumPy array —
// onto `sharding`: each addressable device takes its slice (an uneven split, which jit and its
// gradients handle, gives the last devices fewer rows). Nothing crosses processes. Throws
// InvalidArgument for a device this cluster does not have (check_cluster_devices).
Array device_put(const HostArray& host, const Sharding& sharding);
// IndivisibleError naming device_put when `sharding` splits a dimension of `shape` unevenly
// (a 6-row array over 4 devices): Python's device_put checks it, as JAX's device_put refuses
// such a layout; C++ keeps uneven layouts, which the runtime supports.
void check_even_split(const Shape& shape, const Sharding& sharding);
// InvalidArgument when a device of `sharding` is not one of this cluster's (a mesh made before
// the last initialize(), of more devices, or of another process's); both device_puts check it.
void check_cluster_devices(const Sharding& sharding);

// The same, for a NamedSharding or a bare P(...) on the mesh in scope (mesh_context.h).
Array device_put(const Array& x, const NamedSharding& sharding);
Array device_put(const HostArray& host, const NamedSharding& sharding);

}  // namespace spmd
