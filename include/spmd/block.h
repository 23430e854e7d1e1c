// spmd::Block — one device's part of an array inside shard_map and pmap: a dtype, a shape and
// row-major elements (the per-device value JAX's shard_map hands its function).
//
// A Block is a value. Copies share the elements; writing through mutable_data() first copies them
// when anything else shares them (copy on write), so a Block never changes under another Block.
// The blocks shard_map passes in are views of the input arrays' shards, valid until the
// shard_map call returns: a function that keeps a block past that must keep a copy()
// (everything it computes from one is a new, owning block). Not synchronised: share a Block
// between threads only for reading.
//
// A block's elements live in host memory or in one device's memory (memory()). Only the
// kernels of that memory's backend (src/kernels/backend.h) touch device memory: reading a device
// block's elements here (data, item) is a FailedPrecondition that says to copy them to the host
// first (to_host, to_memory), and copies, copy on write and comparison go through the backend.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "spmd/dtype.h"
#include "spmd/error.h"
#include "spmd/host_array.h"
#include "spmd/memory_space.h"
#include "spmd/sharding.h"

namespace spmd {

class Block {
 public:
  // An empty float32 block of shape (0), which allocates nothing for its elements.
  Block();
  // Owns `data`.
  explicit Block(HostArray data);

  // Views `shape` elements of `dtype` at `data`, owned by someone else who keeps them alive and
  // unchanged while this block (or a copy sharing them) is in use. shard_map uses it for inputs.
  static Block view(DType dtype, Shape shape, const std::byte* data);

  // Zero-filled; throws InvalidArgument for a negative dimension.
  static Block zeros(DType dtype, Shape shape);
  // Contents unspecified, for code that writes every element.
  static Block uninitialized(DType dtype, Shape shape);
  // The same in `memory`: host memory as uninitialized(), a device's from the backend whose
  // memory it is (InvalidArgument where there is none).
  static Block allocate(DType dtype, Shape shape, MemorySpace memory);
  // `values` in row-major order; their count must equal the shape's product.
  template <typename T>
  static Block from_vector(const std::vector<T>& values, Shape shape) {
    return Block(HostArray::from_vector(values, std::move(shape)));
  }
  // A rank-0 block holding `value`.
  template <typename T>
  static Block scalar(T value) {
    return from_vector(std::vector<T>{value}, {});
  }

  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  // The memory the elements live in: host memory for every block of a CPU device; a GPU
  // device's blocks in jit name its memory.
  MemorySpace memory() const { return memory_; }
  int rank() const { return static_cast<int>(shape_.size()); }
  int64_t size() const;  // elements
  size_t nbytes() const { return static_cast<size_t>(size()) * dtype_size(dtype_); }

  // The elements' place in memory(): the host reads them only when that is host memory; a
  // device's are for its backend's kernels.
  std::span<const std::byte> bytes() const { return {data_, nbytes()}; }
  // Copies the elements first when they are shared or viewed (in the same memory).
  std::span<std::byte> mutable_bytes();
  // True when this block alone owns its elements, so that writing through it copies nothing.
  bool owns_exclusively() const { return owner_ && owner_.use_count() == 1; }

  // The elements as T; throws InvalidArgument when T is not this block's dtype, and
  // FailedPrecondition when they are in device memory.
  template <typename T>
  std::span<const T> data() const {
    check_type(dtype_of<T>());
    check_host("data");
    return {reinterpret_cast<const T*>(data_), static_cast<size_t>(size())};
  }
  template <typename T>
  std::span<T> mutable_data() {
    check_type(dtype_of<T>());
    check_host("mutable_data");
    auto b = mutable_bytes();
    return {reinterpret_cast<T*>(b.data()), static_cast<size_t>(size())};
  }
  // The one element of a block of size 1 (any rank); throws InvalidArgument otherwise.
  template <typename T>
  T item() const {
    check_item();
    check_host("item");
    return data<T>()[0];
  }

  // The same elements in another shape of the same size (one entry may be -1: inferred).
  // Shares the elements. Throws InvalidArgument when the sizes differ.
  Block reshape(Shape shape) const;
  // The same bytes read as `dtype`, in `shape` (whose size times dtype's equals nbytes()):
  // jax.lax.bitcast_convert_type. Shares the elements; their start must be aligned to dtype's
  // size where a kernel reads them. Throws InvalidArgument when the byte counts differ.
  Block bitcast(DType dtype, Shape shape) const;

  // A block that owns its elements (a copy, in the same memory, when they are viewed or
  // shared).
  Block copy() const;
  // This block when its elements are in `memory`, else a copy of them there (host to device,
  // device to host, through the device's backend).
  Block to_memory(MemorySpace memory) const;

  // The elements as a HostArray (copied from device memory); moves them out when this block is
  // their only owner in host memory.
  HostArray to_host() const&;
  HostArray to_host() &&;

  // True when dtype, shape and every byte are equal.
  bool operator==(const Block& other) const;
  // "float32[2, 3]" followed by the values when there are at most 64.
  std::string to_string() const;

 private:
  Block(std::shared_ptr<void> owner, HostArray* host_owner, DType dtype, Shape shape,
        const std::byte* data, MemorySpace memory);
  void check_type(DType requested) const;
  void check_item() const;
  void check_host(const char* what) const;
  Block to_memory_copy(MemorySpace memory) const;

  DType dtype_ = DType::kFloat32;
  Shape shape_;
  std::shared_ptr<void> owner_;      // keeps the elements alive; null for a view
  HostArray* host_owner_ = nullptr;  // owner_ as a HostArray, when it is one
  const std::byte* data_ = nullptr;
  MemorySpace memory_ = MemorySpace::host();
};

}  // namespace spmd
