// Filling an uneven split's padding (padding.h).
#include "jit/ops/padding.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <limits>

#include "jit/local_program.h"
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

Block FillPaddingOp::run(const KernelContext& device, const Step& step,
                         std::span<const Block> in) const {
  const Block& x = in[0];
  const auto d = static_cast<size_t>(dim);
  const int64_t length = x.shape()[d];
  const int64_t valid = std::clamp<int64_t>(size - axis_index(AxisEntry(axes)) * length, 0, length);
  if (valid == length) return x;
  Shape head = x.shape(), tail = x.shape();
  head[d] = valid;
  tail[d] = length - valid;
  const size_t element = dtype_size(step.dtype);
  Block kept = device.allocate(step.dtype, head);
  device.backend.slice(element, x.bytes().data(), x.shape(), std::vector<int64_t>(head.size(), 0),
                       head, kept.mutable_bytes().data());
  Block filler = device.allocate(step.dtype, tail);
  fill_with(device.backend, step.dtype, fill, filler.mutable_bytes().data(), filler.size());
  Block out = device.allocate(step.dtype, x.shape());
  const std::byte* parts[] = {kept.bytes().data(), filler.bytes().data()};
  const Shape shapes[] = {head, tail};
  device.backend.concatenate(element, parts, shapes, dim, out.mutable_bytes().data());
  return out;
}

}  // namespace spmd::compiler
