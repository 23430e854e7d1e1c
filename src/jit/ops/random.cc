// The random family (random.h).
#include "jit/ops/random.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <utility>

#include "jit/op_registry.h"
#include "jit/partitioner.h"
#include "jit/program.h"
#include "spmd/error.h"
#include "spmd/named_collectives.h"

namespace spmd::compiler {
namespace {

using kernels::RandomBits;

constexpr std::string_view kKindNames[] = {"u8", "u16", "u32", "u64", "keys"};

// Each kind of bits and the dtype it makes (keys: uint32 words).
constexpr std::pair<RandomBits, DType> kDTypes[] = {{RandomBits::k8, DType::kUInt8},
                                                    {RandomBits::k16, DType::kUInt16},
                                                    {RandomBits::k32, DType::kUInt32},
                                                    {RandomBits::k64, DType::kUInt64}};

DType dtype_of(RandomBits kind) {
  for (auto [k, dtype] : kDTypes) {
    if (k == kind) return dtype;
  }
  return DType::kUInt32;  // kKeys
}

}  // namespace

kernels::RandomBits random_bits_kind(std::string_view what, DType dtype) {
  for (auto [kind, t] : kDTypes) {
    if (t == dtype) return kind;
  }
  throw InvalidArgument(fmt::format(
      "{}: the dtype must be an unsigned integer type (uint8, uint16, uint32, uint64), not {}",
      what, dtype_name(dtype)));
}

std::string RandomBitsOp::attributes() const {
  std::string s = fmt::format("bits={}", kKindNames[static_cast<int>(kind)]);
  bool split_at_all = false;
  std::vector<std::string> dims;
  for (const auto& axes : split) {
    split_at_all = split_at_all || !axes.empty();
    dims.push_back(axes.empty()       ? "_"
                   : axes.size() == 1 ? axes[0]
                                      : fmt::format("({})", fmt::join(axes, ",")));
  }
  if (split_at_all) s += fmt::format(" blocks=[{}]", fmt::join(dims, ","));
  return s;
}

ValueType RandomBitsOp::result_type(std::span<const ValueType> operands) const {
  const bool key =
      !operands.empty() && operands[0].dtype == DType::kUInt32 && operands[0].shape == Shape{2};
  const bool offset =
      operands.size() < 2 || (operands[1].dtype == DType::kUInt32 && operands[1].shape.empty());
  if (!key || !offset || operands.size() > 2) {
    throw InvalidArgument(fmt::format(
        "random_bits: takes one raw key, uint32[2], and optionally an offset, uint32[]{}",
        operands.empty() ? "" : ", not " + type_text(operands[0].dtype, operands[0].shape)));
  }
  for (int64_t d : shape) {
    if (d < 0)
      throw InvalidArgument(
          fmt::format("random_bits: shape ({}) has a negative dimension", fmt::join(shape, ", ")));
  }
  Shape out = shape;
  if (kind == RandomBits::kKeys) out.push_back(2);
  return {dtype_of(kind), out};
}

// The key is whole on every device; the result takes the split a later use asks for (none
// otherwise), and each device's step knows the mesh axes of its block's position.
void RandomBitsOp::partition(Partitioner& p, int value, const Op& op) const {
  Layout out = p.hint(value) ? p.hint(value)->settled() : Layout::replicated(op.shape.size());
  if (kind == RandomBits::kKeys) out.dims.back().clear();  // a key's two words stay together
  std::vector<std::vector<std::string>> axes;
  for (size_t d = 0; d < shape.size(); ++d) axes.push_back(axis_names(out.dims[d], p.mesh()));
  std::vector<int> operands = {p.slot_with(op.inputs[0], Layout::replicated(1))};
  if (op.inputs.size() > 1) operands.push_back(p.slot_with(op.inputs[1], Layout::replicated(0)));
  p.compute(value, std::move(operands), out,
            make_operation<RandomBitsOp>(kind, shape, std::move(axes)));
}

Block RandomBitsOp::run(const KernelContext& device, const Step& step,
                        std::span<const Block> in) const {
  const auto key = in[0].data<uint32_t>();
  kernels::RandomBlock block{.key = {key[0], key[1]}, .shape = shape};
  if (in.size() > 1) block.offset = in[1].data<uint32_t>()[0];
  block.extent.assign(step.shape.begin(), step.shape.begin() + static_cast<int64_t>(shape.size()));
  for (size_t d = 0; d < shape.size(); ++d) {
    const bool whole = d >= split.size() || split[d].empty();
    block.start.push_back(whole ? 0 : axis_index(AxisEntry(split[d])) * block.extent[d]);
  }
  Block out = device.allocate(step.dtype, step.shape);
  device.backend.random_bits(kind, block, out.mutable_bytes().data());
  return out;
}

namespace {

const OperationRegistration random_bits_op("random_bits", [](const AttributeReader& r) {
  const std::string& bits = r.text("bits");
  for (int k = 0; k < static_cast<int>(std::size(kKindNames)); ++k) {
    if (bits != kKindNames[k]) continue;
    Shape shape = r.result().shape;
    if (static_cast<RandomBits>(k) == RandomBits::kKeys && !shape.empty()) shape.pop_back();
    return make_operation<RandomBitsOp>(static_cast<RandomBits>(k), shape);
  }
  throw InvalidArgument("random_bits: bits=" + bits + " is none of u8, u16, u32, u64, keys");
});

}  // namespace
}  // namespace spmd::compiler
