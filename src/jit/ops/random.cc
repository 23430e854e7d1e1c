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

using kernels::Distribution;
using kernels::RandomBits;

constexpr std::string_view kKindNames[] = {"u8", "u16", "u32", "u64", "keys"};

// Each kind of bits and the dtype it makes (keys: uint32 words).
constexpr std::pair<RandomBits, DType> kDTypes[] = {{RandomBits::k8, DType::kUInt8},
                                                    {RandomBits::k16, DType::kUInt16},
                                                    {RandomBits::k32, DType::kUInt32},
                                                    {RandomBits::k64, DType::kUInt64}};

constexpr Distribution kDistributions[] = {Distribution::kUniform, Distribution::kNormal,
                                           Distribution::kTruncatedNormal, Distribution::kGumbel,
                                           Distribution::kRandint};

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

// RandomOperation

std::string RandomOperation::blocks_text() const {
  bool split_at_all = false;
  std::vector<std::string> dims;
  for (const auto& axes : split) {
    split_at_all = split_at_all || !axes.empty();
    dims.push_back(axes.empty()       ? "_"
                   : axes.size() == 1 ? axes[0]
                                      : fmt::format("({})", fmt::join(axes, ",")));
  }
  return split_at_all ? fmt::format(" blocks=[{}]", fmt::join(dims, ",")) : "";
}

void RandomOperation::check_operands(std::span<const ValueType> operands, size_t offsets) const {
  const bool key =
      !operands.empty() && operands[0].dtype == DType::kUInt32 && operands[0].shape == Shape{2};
  bool offset = operands.size() <= 1 + offsets;
  for (size_t i = 1; i < operands.size(); ++i) {
    offset = offset && operands[i].dtype == DType::kUInt32 && operands[i].shape.empty();
  }
  if (!key || !offset) {
    throw InvalidArgument(fmt::format(
        "{}: takes one raw key, uint32[2]{}{}", name(),
        offsets > 0 ? ", and optionally an offset, uint32[]" : "",
        operands.empty() ? "" : ", not " + type_text(operands[0].dtype, operands[0].shape)));
  }
  for (int64_t d : shape) {
    if (d < 0) {
      throw InvalidArgument(
          fmt::format("{}: shape ({}) has a negative dimension", name(), fmt::join(shape, ", ")));
    }
  }
}

void RandomOperation::partition(Partitioner& p, int value, const Op& op) const {
  Layout out = p.hint(value) ? p.hint(value)->settled() : Layout::replicated(op.shape.size());
  if (whole_last_dimension()) out.dims.back().clear();
  std::vector<std::vector<std::string>> axes;
  for (size_t d = 0; d < shape.size(); ++d) axes.push_back(axis_names(out.dims[d], p.mesh()));
  std::vector<int> operands = {p.slot_with(op.inputs[0], Layout::replicated(1))};
  if (op.inputs.size() > 1) operands.push_back(p.slot_with(op.inputs[1], Layout::replicated(0)));
  p.compute(value, std::move(operands), out, with_split(std::move(axes)));
}

kernels::RandomBlock RandomOperation::block(const Step& step, std::span<const Block> in) const {
  const auto key = in[0].data<uint32_t>();
  kernels::RandomBlock block{.key = {key[0], key[1]}, .shape = shape};
  if (in.size() > 1) block.offset = in[1].data<uint32_t>()[0];
  block.extent.assign(step.shape.begin(), step.shape.begin() + static_cast<int64_t>(shape.size()));
  for (size_t d = 0; d < shape.size(); ++d) {
    const bool whole = d >= split.size() || split[d].empty();
    block.start.push_back(whole ? 0 : axis_index(AxisEntry(split[d])) * block.extent[d]);
  }
  return block;
}

// RandomBitsOp

std::string RandomBitsOp::attributes() const {
  return fmt::format("bits={}{}", kKindNames[static_cast<int>(kind)], blocks_text());
}

ValueType RandomBitsOp::result_type(std::span<const ValueType> operands) const {
  check_operands(operands, 1);
  Shape out = shape;
  if (kind == RandomBits::kKeys) out.push_back(2);
  return {dtype_of(kind), out};
}

std::shared_ptr<const Operation> RandomBitsOp::with_split(
    std::vector<std::vector<std::string>> split) const {
  return make_operation<RandomBitsOp>(kind, shape, std::move(split));
}

Block RandomBitsOp::run(const KernelContext& device, const Step& step,
                        std::span<const Block> in) const {
  Block out = device.allocate(step.dtype, step.shape);
  device.backend.random_bits(kind, block(step, in), out.mutable_bytes().data());
  return out;
}

// RandomSampleOp

std::string RandomSampleOp::name() const {
  return fmt::format("random_{}", kernels::distribution_name(sampler.distribution));
}

std::string RandomSampleOp::attributes() const {
  switch (sampler.distribution) {
    case Distribution::kUniform:
      return fmt::format("minval={} maxval={}{}", sampler.a, sampler.b, blocks_text());
    case Distribution::kTruncatedNormal:
      return fmt::format("lower={} upper={}{}", sampler.a, sampler.b, blocks_text());
    case Distribution::kRandint:
      return fmt::format("minval={} maxval={}{}{}", sampler.low, sampler.high,
                         sampler.high_past_range ? " past_range=1" : "", blocks_text());
    default: {
      const std::string blocks = blocks_text();
      return blocks.empty() ? blocks : blocks.substr(1);  // without the leading space
    }
  }
}

ValueType RandomSampleOp::result_type(std::span<const ValueType> operands) const {
  check_operands(operands, 0);
  if (!kernels::supported(sampler)) {
    throw InvalidArgument(
        fmt::format("{}: no sampler for dtype {}", name(), dtype_name(sampler.dtype)));
  }
  return {sampler.dtype, shape};
}

std::shared_ptr<const Operation> RandomSampleOp::with_split(
    std::vector<std::vector<std::string>> split) const {
  return make_operation<RandomSampleOp>(sampler, shape, std::move(split));
}

Block RandomSampleOp::run(const KernelContext& device, const Step& step,
                          std::span<const Block> in) const {
  Block out = device.allocate(step.dtype, step.shape);
  device.backend.random_sample(sampler, block(step, in), out.mutable_bytes().data());
  return out;
}

// RandomPermutationOp

std::string RandomPermutationOp::attributes() const { return fmt::format("axis={}", axis); }

ValueType RandomPermutationOp::result_type(std::span<const ValueType> operands) const {
  check_operand_count(name(), operands, 2);
  if (operands[0].dtype != DType::kUInt32 || operands[0].shape != Shape{2}) {
    throw InvalidArgument(fmt::format("random_permutation: the key must be uint32[2], not {}",
                                      type_text(operands[0].dtype, operands[0].shape)));
  }
  const Shape& x = operands[1].shape;
  if (axis < 0 || axis >= static_cast<int>(x.size())) {
    throw InvalidArgument(fmt::format("random_permutation: axis {} is out of range for {}", axis,
                                      type_text(operands[1].dtype, x)));
  }
  return operands[1];
}

void RandomPermutationOp::partition(Partitioner& p, int value, const Op& op) const {
  const Layout whole = Layout::replicated(op.shape.size());
  p.compute(value,
            {p.slot_with(op.inputs[0], Layout::replicated(1)), p.slot_with(op.inputs[1], whole)},
            whole);
}

Block RandomPermutationOp::run(const KernelContext& device, const Step& step,
                               std::span<const Block> in) const {
  const auto key = in[0].data<uint32_t>();
  Block out = device.allocate(step.dtype, step.shape);
  device.backend.random_permute({key[0], key[1]}, dtype_size(step.dtype), in[1].bytes().data(),
                                step.shape, axis, out.mutable_bytes().data());
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

// One registration per distribution, each reading its own attributes.
std::shared_ptr<const Operation> parse_sample(Distribution d, const AttributeReader& r) {
  kernels::Sampler s{.distribution = d, .dtype = r.result().dtype};
  if (d == Distribution::kUniform) {
    s.a = r.number("minval");
    s.b = r.number("maxval");
  } else if (d == Distribution::kTruncatedNormal) {
    s.a = r.number("lower");
    s.b = r.number("upper");
  } else if (d == Distribution::kRandint) {
    s.low = r.integer("minval");
    s.high = r.integer("maxval");
    s.high_past_range = r.has("past_range") && r.integer("past_range") != 0;
  }
  return make_operation<RandomSampleOp>(s, r.result().shape);
}

const OperationRegistration random_permutation_op("random_permutation",
                                                  [](const AttributeReader& r) {
                                                    return make_operation<RandomPermutationOp>(
                                                        static_cast<int>(r.integer("axis")));
                                                  });

struct SampleRegistrations {
  SampleRegistrations() {
    for (Distribution d : kDistributions) {
      register_operation(fmt::format("random_{}", kernels::distribution_name(d)),
                         [d](const AttributeReader& r) { return parse_sample(d, r); });
    }
  }
} const sample_registrations;

}  // namespace
}  // namespace spmd::compiler
