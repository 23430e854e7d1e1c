// Block: a shape and dtype over elements that are owned (shared, copied on write) or viewed.
#include "spmd/block.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstring>

namespace spmd {

Block::Block() : Block(HostArray()) {}

Block::Block(HostArray data)
    : dtype_(data.dtype()),
      shape_(data.shape()),
      owner_(std::make_shared<HostArray>(std::move(data))),
      data_(owner_->bytes().data()) {}

Block::Block(std::shared_ptr<HostArray> owner, DType dtype, Shape shape, const std::byte* data)
    : dtype_(dtype), shape_(std::move(shape)), owner_(std::move(owner)), data_(data) {}

Block Block::view(DType dtype, Shape shape, const std::byte* data) {
  for (int64_t d : shape) {
    if (d < 0) {
      throw InvalidArgument(
          fmt::format("block dimensions must not be negative: ({})", fmt::join(shape, ", ")));
    }
  }
  return Block(nullptr, dtype, std::move(shape), data);
}

Block Block::zeros(DType dtype, Shape shape) {
  return Block(HostArray::zeros(dtype, std::move(shape)));
}

Block Block::uninitialized(DType dtype, Shape shape) {
  return Block(HostArray::uninitialized(dtype, std::move(shape)));
}

int64_t Block::size() const { return shape_size(shape_); }

std::span<std::byte> Block::mutable_bytes() {
  if (!owner_ || owner_.use_count() > 1) *this = copy();
  return {const_cast<std::byte*>(data_), nbytes()};  // NOLINT: owned exclusively, so writable
}

Block Block::reshape(Shape shape) const {
  return Block(owner_, dtype_, reshaped(shape_, std::move(shape)), data_);
}

Block Block::copy() const {
  HostArray out = HostArray::uninitialized(dtype_, shape_);
  if (nbytes() > 0) std::memcpy(out.mutable_bytes().data(), data_, nbytes());
  return Block(std::move(out));
}

HostArray Block::to_host() const& { return copy().to_host(); }

HostArray Block::to_host() && {
  if (!owner_ || owner_.use_count() > 1 || owner_->bytes().data() != data_) {
    return copy().to_host();
  }
  HostArray out = std::move(*owner_);
  owner_.reset();
  data_ = nullptr;
  out.reshape(shape_);
  return out;
}

bool Block::operator==(const Block& other) const {
  return dtype_ == other.dtype_ && shape_ == other.shape_ &&
         (nbytes() == 0 || std::memcmp(data_, other.data_, nbytes()) == 0);
}

std::string Block::to_string() const { return copy().to_host().to_string(); }

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

}  // namespace spmd
