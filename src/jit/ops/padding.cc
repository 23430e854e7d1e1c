// Filling an uneven split's padding (padding.h).
#include "jit/ops/padding.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <limits>

#include "spmd/error.h"
#include "spmd/named_collectives.h"

namespace spmd::compiler {
namespace {

constexpr const char* kFillNames[] = {"zero", "lowest", "highest"};

// `n` elements of `dtype` at `out`, each `fill`'s value: infinities for floats, and for integers
// the exact extreme, converted from a 64-bit integer (a double cannot hold int64's largest).
void fill_with(const kernels::Backend& backend, DType dtype, PaddingFill fill, std::byte* out,
               int64_t n) {
  if (fill == PaddingFill::kZero || dtype == DType::kBool) {
    return backend.fill(dtype, fill == PaddingFill::kHighest ? 1.0 : 0.0, out, n);
  }
  const bool low = fill == PaddingFill::kLowest;
  if (is_floating(dtype)) {
    const double inf = std::numeric_limits<double>::infinity();
    return backend.fill(dtype, low ? -inf : inf, out, n);
  }
  if (dtype == DType::kUInt64) {
    const uint64_t v = low ? 0 : std::numeric_limits<uint64_t>::max();
    return backend.convert(DType::kUInt64, dtype, {reinterpret_cast<const std::byte*>(&v), 1}, out,
                           n);
  }
  int64_t v = 0;
  switch (dtype) {
    case DType::kInt8:
      v = low ? INT8_MIN : INT8_MAX;
      break;
    case DType::kInt16:
      v = low ? INT16_MIN : INT16_MAX;
      break;
    case DType::kInt32:
      v = low ? INT32_MIN : INT32_MAX;
      break;
    case DType::kUInt8:
      v = low ? 0 : UINT8_MAX;
      break;
    case DType::kUInt16:
      v = low ? 0 : UINT16_MAX;
      break;
    case DType::kUInt32:
      v = low ? 0 : int64_t{UINT32_MAX};
      break;
    default:
      v = low ? INT64_MIN : INT64_MAX;
  }
  backend.convert(DType::kInt64, dtype, {reinterpret_cast<const std::byte*>(&v), 1}, out, n);
}

}  // namespace

Block trimmed(const KernelContext& device, Block x, const Shape& shape) {
  if (x.shape() == shape) return x;
  Block out = device.allocate(x.dtype(), shape);
  device.backend.slice(dtype_size(x.dtype()), x.bytes().data(), x.shape(),
                       std::vector<int64_t>(shape.size(), 0), shape, out.mutable_bytes().data());
  return out;
}

Block padded(const KernelContext& device, Block x, int dim, int64_t length, PaddingFill fill) {
  const auto d = static_cast<size_t>(dim);
  if (x.shape()[d] == length) return x;
  Shape tail = x.shape(), whole = x.shape();
  tail[d] = length - x.shape()[d];
  whole[d] = length;
  Block filler = device.allocate(x.dtype(), tail);
  fill_with(device.backend, x.dtype(), fill, filler.mutable_bytes().data(), filler.size());
  Block out = device.allocate(x.dtype(), whole);
  const std::byte* parts[] = {x.bytes().data(), filler.bytes().data()};
  const Shape shapes[] = {x.shape(), tail};
  device.backend.concatenate(dtype_size(x.dtype()), parts, shapes, dim, out.mutable_bytes().data());
  return out;
}

std::string FillPaddingOp::attributes() const {
  return fmt::format("dim={} size={} axes={} value={}", dim, size, fmt::join(axes, ","),
                     kFillNames[static_cast<int>(fill)]);
}

ValueType FillPaddingOp::result_type(std::span<const ValueType> operands) const {
  check_operand_count(name(), operands, 1);
  return operands[0];
}

void FillPaddingOp::partition(Partitioner& /*p*/, int /*value*/, const Op& /*op*/) const {
  throw InvalidArgument("fill_padding: a per-device step, not an operation of a traced program");
}

Block FillPaddingOp::run(const KernelContext& device, const Step& /*step*/,
                         std::span<const Block> in) const {
  const auto d = static_cast<size_t>(dim);
  const int64_t length = in[0].shape()[d];
  const int64_t valid = std::clamp<int64_t>(size - axis_index(AxisEntry(axes)) * length, 0, length);
  Shape kept = in[0].shape();
  kept[d] = valid;
  return padded(device, trimmed(device, in[0], kept), dim, length, fill);
}

}  // namespace spmd::compiler
