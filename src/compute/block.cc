// Block: a shape and dtype over elements that are owned (shared, copied on write) or viewed, in
// host memory or one device's (through that memory's kernel backend).
#include "spmd/block.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstring>

#include "kernels/backend.h"
#include "kernels/layout.h"

namespace spmd {

// A view of no elements: nothing to allocate but the shape (jit's program slots start so).
Block::Block() : shape_{0} {}

Block::Block(HostArray data) : dtype_(data.dtype()), shape_(data.shape()) {
  auto owner = std::make_shared<HostArray>(std::move(data));
  host_owner_ = owner.get();
  data_ = owner->bytes().data();
  owner_ = std::move(owner);
}

Block::Block(std::shared_ptr<void> owner, HostArray* host_owner, DType dtype, Shape shape,
             const std::byte* data, MemorySpace memory)
    : dtype_(dtype),
      shape_(std::move(shape)),
      owner_(std::move(owner)),
      host_owner_(host_owner),
      data_(data),
      memory_(memory) {}

Block Block::view(DType dtype, Shape shape, const std::byte* data) {
  for (int64_t d : shape) {
    if (d < 0) {
      throw InvalidArgument(
          fmt::format("block dimensions must not be negative: ({})", fmt::join(shape, ", ")));
    }
  }
  return Block(nullptr, nullptr, dtype, std::move(shape), data, MemorySpace::host());
}

Block Block::zeros(DType dtype, Shape shape) {
  return Block(HostArray::zeros(dtype, std::move(shape)));
}

Block Block::uninitialized(DType dtype, Shape shape) {
  return Block(HostArray::uninitialized(dtype, std::move(shape)));
}

Block Block::allocate(DType dtype, Shape shape, MemorySpace memory) {
  if (memory == MemorySpace::host()) return uninitialized(dtype, std::move(shape));
  const kernels::Backend& backend = kernels::backend_of(memory);
  const size_t bytes = static_cast<size_t>(shape_size(shape)) * dtype_size(dtype);
  std::shared_ptr<std::byte> elements = backend.allocate(memory, bytes);
  const std::byte* data = elements.get();
  return Block(std::move(elements), nullptr, dtype, std::move(shape), data, memory);
}

int64_t Block::size() const { return shape_size(shape_); }

std::span<std::byte> Block::mutable_bytes() {
  if (!owner_ || owner_.use_count() > 1) *this = copy();
  return {const_cast<std::byte*>(data_), nbytes()};  // NOLINT: owned exclusively, so writable
}

Block Block::reshape(Shape shape) const {
  return Block(owner_, host_owner_, dtype_, reshaped(shape_, std::move(shape)), data_, memory_);
}

Block Block::bitcast(DType dtype, Shape shape) const {
  const auto bytes = static_cast<size_t>(shape_size(shape)) * dtype_size(dtype);
  if (bytes != nbytes()) {
    throw InvalidArgument(fmt::format("bitcast of {} bytes to {}[{}]: {} bytes", nbytes(),
                                      dtype_name(dtype), fmt::join(shape, ", "), bytes));
  }
  // No HostArray owner: to_host() && then copies, rather than move out one typed as before.
  return Block(owner_, nullptr, dtype, std::move(shape), data_, memory_);
}

Block Block::copy() const {
  if (memory_ == MemorySpace::host()) {
    HostArray out = HostArray::uninitialized(dtype_, shape_);
    if (nbytes() > 0) kernels::copy_bytes(data_, nbytes(), out.mutable_bytes().data());
    return Block(std::move(out));
  }
  return to_memory_copy(memory_);
}

Block Block::to_memory(MemorySpace memory) const {
  return memory == memory_ ? *this : to_memory_copy(memory);
}

Block Block::to_memory_copy(MemorySpace memory) const {
  Block out = allocate(dtype_, shape_, memory);
  if (nbytes() > 0) {
    const MemorySpace device = memory_ == MemorySpace::host() ? memory : memory_;
    kernels::backend_of(device).copy(data_, memory_, const_cast<std::byte*>(out.data_),  // NOLINT
                                     memory, nbytes());
  }
  return out;
}

HostArray Block::to_host() const& {
  if (memory_ == MemorySpace::host()) return copy().to_host();
  return to_memory_copy(MemorySpace::host()).to_host();
}

HostArray Block::to_host() && {
  if (host_owner_ == nullptr || owner_.use_count() > 1 || host_owner_->bytes().data() != data_) {
    return static_cast<const Block&>(*this).to_host();
  }
  HostArray out = std::move(*host_owner_);
  owner_.reset();
  host_owner_ = nullptr;
  data_ = nullptr;
  out.reshape(shape_);
  return out;
}

bool Block::operator==(const Block& other) const {
  if (dtype_ != other.dtype_ || shape_ != other.shape_) return false;
  if (nbytes() == 0) return true;
  if (memory_ != MemorySpace::host() || other.memory_ != MemorySpace::host()) {
    return to_memory(MemorySpace::host()) == other.to_memory(MemorySpace::host());
  }
  return std::memcmp(data_, other.data_, nbytes()) == 0;
}

std::string Block::to_string() const { return to_host().to_string(); }

void Block::check_type(DType requested) const {
  if (requested != dtype_) {
    throw InvalidArgument(
        fmt::format("this Block holds {}, not {}", dtype_name(dtype_), dtype_name(requested)));
  }
}

void Block::check_item() const {
  if (size() != 1) {
    throw InvalidArgument(fmt::format("item() needs a block of one element, not {}[{}]",
                                      dtype_name(dtype_), fmt::join(shape_, ", ")));
  }
}

void Block::check_host(const char* what) const {
  if (memory_ == MemorySpace::host()) return;
  throw FailedPrecondition(fmt::format(
      "{}(): this Block's elements ({}[{}]) are in {} memory, which the host does not read; "
      "copy them to the host first (to_host(), or to_memory(MemorySpace::host()))",
      what, dtype_name(dtype_), fmt::join(shape_, ", "), memory_.to_string()));
}

}  // namespace spmd
