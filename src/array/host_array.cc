#include "spmd/host_array.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>

#include "array/box_copy.h"

namespace spmd {
namespace {

// The box's start and extent; throws when it does not fit `shape`.
void box_of(const Shape& shape, const Index& index, std::vector<int64_t>& start,
            std::vector<int64_t>& extent) {
  if (index.size() != shape.size()) {
    throw InvalidArgument(fmt::format("the index {} has rank {}, the array rank {}",
                                      index_to_string(index), index.size(), shape.size()));
  }
  for (size_t d = 0; d < shape.size(); ++d) {
    const Slice& s = index[d];
    if (s.start < 0 || s.stop < s.start || s.stop > shape[d]) {
      throw InvalidArgument(fmt::format("the index {} does not fit an array of shape ({})",
                                        index_to_string(index), fmt::join(shape, ", ")));
    }
    start.push_back(s.start);
    extent.push_back(s.size());
  }
}

template <typename T>
std::string format_values(const HostArray& a) {
  std::vector<std::string> parts;
  for (const auto& v : a.data<T>()) {
    if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>) {
      parts.push_back(fmt::format("{}", to_float(v)));
    } else if constexpr (std::is_same_v<T, int8_t> || std::is_same_v<T, uint8_t>) {
      parts.push_back(fmt::format("{}", static_cast<int>(v)));
    } else {
      parts.push_back(fmt::format("{}", v));
    }
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

// True when a box of `extent` is whole rows of the leading dimension (every other dimension
// whole), so that its elements are one contiguous run.
bool whole_rows(const Shape& shape, const std::vector<int64_t>& extent) {
  return std::equal(shape.begin() + (shape.empty() ? 0 : 1), shape.end(),
                    extent.begin() + (extent.empty() ? 0 : 1), extent.end());
}

void check_dimensions(const Shape& shape) {
  for (int64_t d : shape) {
    if (d < 0) {
      throw InvalidArgument(
          fmt::format("array dimensions must not be negative: ({})", fmt::join(shape, ", ")));
    }
  }
}

// The bytes an array of `shape` and `dtype` needs; InvalidArgument naming both when they pass
// int64 (shape_size has refused an element count beyond it).
size_t checked_bytes(const Shape& shape, DType dtype) {
  int64_t bytes = 0;
  if (__builtin_mul_overflow(shape_size(shape), static_cast<int64_t>(dtype_size(dtype)), &bytes)) {
    throw InvalidArgument(
        fmt::format("a {}[{}] array needs more bytes than int64 can count; no memory can hold it",
                    dtype_name(dtype), fmt::join(shape, ", ")));
  }
  return static_cast<size_t>(bytes);
}

}  // namespace

namespace detail {

class DeferredBytes {
 public:
  DeferredBytes(std::shared_ptr<const DeferredSource> source, size_t size)
      : source_(std::move(source)), size_(size) {}

  std::span<const std::byte> get() const {
    std::call_once(fetched_, [this] {
      Bytes bytes(size_);
      source_->fetch(bytes);
      bytes_ = std::move(bytes);
    });
    return bytes_;
  }
  const DeferredSource* source() const { return source_.get(); }

 private:
  std::shared_ptr<const DeferredSource> source_;
  size_t size_;
  mutable std::once_flag fetched_;  // unset again when fetch throws
  mutable Bytes bytes_;             // written once, under fetched_
};

}  // namespace detail

HostArray::HostArray() : HostArray(DType::kFloat32, {0}) {}

HostArray::HostArray(DType dtype, Shape shape) : dtype_(dtype), shape_(std::move(shape)) {
  check_dimensions(shape_);
  bytes_.resize(checked_bytes(shape_, dtype_));
}

HostArray HostArray::zeros(DType dtype, Shape shape) {
  HostArray out(dtype, std::move(shape));
  std::memset(out.bytes_.data(), 0, out.bytes_.size());
  return out;
}

HostArray HostArray::uninitialized(DType dtype, Shape shape) {
  return HostArray(dtype, std::move(shape));
}

HostArray HostArray::borrow(DType dtype, Shape shape, std::span<const std::byte> bytes,
                            std::shared_ptr<const void> owner) {
  check_dimensions(shape);
  if (static_cast<size_t>(shape_size(shape)) * dtype_size(dtype) != bytes.size()) {
    throw InvalidArgument(fmt::format("HostArray::borrow: {} bytes for a {}[{}] array",
                                      bytes.size(), dtype_name(dtype), fmt::join(shape, ", ")));
  }
  HostArray out(dtype, {0});
  out.shape_ = std::move(shape);
  if (bytes.empty()) return out;  // nothing to view
  out.lent_ = bytes.data();
  out.lent_size_ = bytes.size();
  out.lender_ = std::move(owner);
  return out;
}

HostArray HostArray::deferred(DType dtype, Shape shape,
                              std::shared_ptr<const DeferredSource> source) {
  check_dimensions(shape);
  HostArray out(dtype, {0});
  out.lent_size_ = checked_bytes(shape, dtype);
  out.shape_ = std::move(shape);
  out.deferred_ = std::make_shared<const detail::DeferredBytes>(std::move(source), out.lent_size_);
  return out;
}

const DeferredSource* HostArray::deferred_source() const {
  return deferred_ ? deferred_->source() : nullptr;
}

std::span<const std::byte> HostArray::deferred_bytes() const { return deferred_->get(); }

std::span<std::byte> HostArray::mutable_bytes() {
  if (deferred_) {
    const std::span<const std::byte> from = deferred_->get();
    bytes_.assign(from.begin(), from.end());
    deferred_.reset();
    lent_size_ = 0;
  }
  if (lent_ != nullptr) {
    bytes_.assign(lent_, lent_ + lent_size_);
    lent_ = nullptr;
    lent_size_ = 0;
    lender_.reset();
  }
  return bytes_;
}

int64_t HostArray::size() const { return shape_size(shape_); }

void HostArray::check_type(DType requested) const {
  if (requested != dtype_) {
    throw InvalidArgument(
        fmt::format("this HostArray holds {}, not {}", dtype_name(dtype_), dtype_name(requested)));
  }
}

void HostArray::reshape(Shape shape) { shape_ = reshaped(shape_, std::move(shape)); }

HostArray HostArray::slice(const Index& index) const {
  std::vector<int64_t> start;
  std::vector<int64_t> extent;
  box_of(shape_, index, start, extent);
  if ((lent_ != nullptr || deferred_) && whole_rows(shape_, extent) && nbytes() > 0) {
    // Contiguous: a view of the same bytes (a deferred array's, fetched now).
    const size_t row = shape_.empty() ? nbytes() : nbytes() / static_cast<size_t>(shape_[0]);
    const size_t first = start.empty() ? 0 : static_cast<size_t>(start[0]);
    const size_t size = static_cast<size_t>(shape_size(extent)) * dtype_size(dtype_);
    const std::shared_ptr<const void> owner =
        deferred_ ? std::shared_ptr<const void>(deferred_) : lender_;
    return borrow(dtype_, extent, {bytes().data() + first * row, size}, owner);
  }
  HostArray out(dtype_, extent);
  copy_box(bytes().data(), shape_, start, out.bytes_.data(), extent,
           std::vector<int64_t>(extent.size(), 0), extent, dtype_size(dtype_));
  return out;
}

void HostArray::assign(const Index& index, const HostArray& block) {
  std::vector<int64_t> start;
  std::vector<int64_t> extent;
  box_of(shape_, index, start, extent);
  if (block.dtype_ != dtype_ || block.shape_ != extent) {
    throw InvalidArgument(fmt::format("cannot write a {}[{}] block into the box {} of a {} array",
                                      dtype_name(block.dtype_), fmt::join(block.shape_, ", "),
                                      index_to_string(index), dtype_name(dtype_)));
  }
  copy_box(block.bytes().data(), block.shape_, std::vector<int64_t>(extent.size(), 0),
           mutable_bytes().data(), shape_, start, extent, dtype_size(dtype_));
}

bool HostArray::operator==(const HostArray& other) const {
  const auto a = bytes();
  const auto b = other.bytes();
  return dtype_ == other.dtype_ && shape_ == other.shape_ &&
         std::equal(a.begin(), a.end(), b.begin(), b.end());
}

std::string HostArray::to_string() const {
  std::string out = fmt::format("{}[{}]", dtype_name(dtype_), fmt::join(shape_, ", "));
  if (size() > 64) return out;
  std::string values;
  switch (dtype_) {
    case DType::kBool:
      values = format_values<bool>(*this);
      break;
    case DType::kInt8:
      values = format_values<int8_t>(*this);
      break;
    case DType::kInt16:
      values = format_values<int16_t>(*this);
      break;
    case DType::kInt32:
      values = format_values<int32_t>(*this);
      break;
    case DType::kInt64:
      values = format_values<int64_t>(*this);
      break;
    case DType::kUInt8:
      values = format_values<uint8_t>(*this);
      break;
    case DType::kUInt16:
      values = format_values<uint16_t>(*this);
      break;
    case DType::kUInt32:
      values = format_values<uint32_t>(*this);
      break;
    case DType::kUInt64:
      values = format_values<uint64_t>(*this);
      break;
    case DType::kFloat16:
      values = format_values<float16>(*this);
      break;
    case DType::kBFloat16:
      values = format_values<bfloat16>(*this);
      break;
    case DType::kFloat32:
      values = format_values<float>(*this);
      break;
    case DType::kFloat64:
      values = format_values<double>(*this);
      break;
  }
  return out + " [" + values + "]";
}

}  // namespace spmd
