// spmd::HostArray — an N-d array in this process's memory: a dtype, a shape and contiguous
// row-major bytes. The plain container for users' data going into and coming out of global
// Arrays; no arithmetic. A value type: copies copy the bytes, except a borrowed or deferred
// array's (see borrow(), deferred()), which nobody writes. Not synchronised: share it between
// threads only for reading.
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
#include "spmd/sharding.h"

namespace spmd {

namespace detail {

// Memory for array bytes: not value-initialised (the owner fills it). Buffers of 64 KiB and more
// are kept when freed and reused for the next buffer of the same size (page-rounded), up to
// SPMD_HOST_BUFFER_CACHE bytes kept (default: an eighth of physical memory, at most 4 GiB; 0
// turns it off), so a loop allocating the same sizes every step does not fault fresh pages in
// each time. Buffers of 4 MiB and more are aligned and advised to use transparent huge pages, so
// first touch costs one page fault per 2 MiB instead of one per 4 KiB. Thread-safe. Throws
// std::bad_alloc.
void* allocate_buffer(size_t bytes);
void free_buffer(void* p, size_t bytes) noexcept;

template <typename T>
struct BufferAllocator {
  using value_type = T;
  BufferAllocator() = default;
  template <typename U>
  BufferAllocator(const BufferAllocator<U>&) noexcept {}  // NOLINT: allocators convert implicitly
  T* allocate(size_t n) { return static_cast<T*>(allocate_buffer(n * sizeof(T))); }
  void deallocate(T* p, size_t n) noexcept { free_buffer(p, n * sizeof(T)); }
  // Default-initialisation: no zeroing of bytes about to be overwritten.
  template <typename U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
  template <typename U>
  bool operator==(const BufferAllocator<U>&) const noexcept {
    return true;
  }
};

using Bytes = std::vector<std::byte, BufferAllocator<std::byte>>;

class DeferredBytes;  // a deferred array's bytes (HostArray::deferred), in host_array.cc

}  // namespace detail

// Where a deferred HostArray's bytes come from (HostArray::deferred): jit's outputs on a GPU are
// deferred arrays whose source is the device buffer, as a jax.Array's NumPy value is copied
// from its device when first asked for.
class DeferredSource {
 public:
  virtual ~DeferredSource() = default;
  // Writes all of the array's bytes into `out`. Called on the first read of the bytes, by
  // whichever thread reads first while the others wait; an exception is that read's error, and
  // the next read calls fetch again.
  virtual void fetch(std::span<std::byte> out) const = 0;
  // Returns once the bytes are computed, without copying them (Array::block_until_ready): a
  // device buffer's once the work queued on its device is done, throwing that work's error. The
  // default returns at once.
  virtual void wait_ready() const {}
};

class HostArray {
 public:
  // A float32 array of shape (0).
  HostArray();

  // Zero-filled. Throws InvalidArgument for a negative dimension.
  static HostArray zeros(DType dtype, Shape shape);

  // Contents unspecified, for code that writes every element (cheaper than zeros() for large
  // arrays). Throws InvalidArgument for a negative dimension.
  static HostArray uninitialized(DType dtype, Shape shape);

  // `values` in row-major order; their count must equal the shape's product.
  template <typename T>
  static HostArray from_vector(const std::vector<T>& values, Shape shape);

  // `bytes` (row-major elements of `dtype` in `shape`) viewed where they are, without a copy:
  // JAX's zero-copy transfer from a NumPy array on CPU. `owner` keeps the memory alive for as
  // long as any array views it; whoever lends it promises not to change it meanwhile. Copies of a
  // borrowed array, and its slices that are whole rows of the leading dimension, view the same
  // memory; mutable_bytes() first copies it into memory of the array's own. Throws
  // InvalidArgument when the byte count does not match the shape, or for a negative dimension.
  static HostArray borrow(DType dtype, Shape shape, std::span<const std::byte> bytes,
                          std::shared_ptr<const void> owner);
  // True when the bytes are borrowed (borrow()), not the array's own.
  bool borrowed() const { return lent_ != nullptr; }

  // An array whose bytes `source` writes when they are first read (bytes(), data(), slice(),
  // ==, to_string()), once, then kept; dtype, shape and nbytes() need no read. Copies share the
  // bytes, fetched or not, as a borrowed array's copies do; mutable_bytes() first copies them
  // into memory of the array's own. Reading is thread-safe: concurrent first reads fetch once.
  // Throws InvalidArgument for a negative dimension.
  static HostArray deferred(DType dtype, Shape shape, std::shared_ptr<const DeferredSource> source);
  // The source of a deferred array (whether or not its bytes were fetched yet); null for any
  // other array, and once mutable_bytes() has made the bytes the array's own.
  const DeferredSource* deferred_source() const;

  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int64_t size() const;  // elements
  size_t nbytes() const { return lent_ || deferred_ ? lent_size_ : bytes_.size(); }

  // A deferred array's are fetched here on the first read (deferred()).
  std::span<const std::byte> bytes() const {
    if (deferred_) return deferred_bytes();
    return lent_ ? std::span<const std::byte>(lent_, lent_size_)
                 : std::span<const std::byte>(bytes_);
  }
  // Copies borrowed bytes into the array's own memory first.
  std::span<std::byte> mutable_bytes();

  // The elements as T; throws InvalidArgument when T is not this array's dtype.
  template <typename T>
  std::span<const T> data() const;
  template <typename T>
  std::span<T> mutable_data();

  // Gives the same elements another shape of the same size (one entry may be -1: inferred).
  // Throws InvalidArgument when the sizes differ.
  void reshape(Shape shape);

  // A copy of the box `index` (one slice per dimension). Throws InvalidArgument when the box
  // does not fit.
  HostArray slice(const Index& index) const;

  // Writes `block` (same dtype, shape = the box's extents) into the box `index`.
  void assign(const Index& index, const HostArray& block);

  bool operator==(const HostArray& other) const;
  // "float32[2, 3]" followed by the values when there are at most 64.
  std::string to_string() const;

 private:
  HostArray(DType dtype, Shape shape);
  void check_type(DType requested) const;
  std::span<const std::byte> deferred_bytes() const;  // fetched once, then kept

  DType dtype_;
  Shape shape_;
  detail::Bytes bytes_;  // the array's own, empty while borrowed or deferred
  // Borrowed bytes (borrow()): where they are, how many (also a deferred array's count), and
  // what keeps them alive.
  const std::byte* lent_ = nullptr;
  size_t lent_size_ = 0;
  std::shared_ptr<const void> lender_;
  std::shared_ptr<const detail::DeferredBytes> deferred_;  // deferred(): the source and bytes
};

template <typename T>
HostArray HostArray::from_vector(const std::vector<T>& values, Shape shape) {
  HostArray out(dtype_of<T>(), std::move(shape));
  if (static_cast<int64_t>(values.size()) != out.size()) {
    throw InvalidArgument("HostArray::from_vector: " + std::to_string(values.size()) +
                          " values for a shape of " + std::to_string(out.size()) + " elements");
  }
  auto dst = out.mutable_data<T>();
  for (size_t i = 0; i < values.size(); ++i) dst[i] = values[i];
  return out;
}

template <typename T>
std::span<const T> HostArray::data() const {
  check_type(dtype_of<T>());
  return {reinterpret_cast<const T*>(bytes().data()), static_cast<size_t>(size())};
}

template <typename T>
std::span<T> HostArray::mutable_data() {
  check_type(dtype_of<T>());
  return {reinterpret_cast<T*>(mutable_bytes().data()), static_cast<size_t>(size())};
}

}  // namespace spmd
