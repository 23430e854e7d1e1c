// The random family (random.h).
#include "lib/random/ops.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdint>
#include <span>
#include <utility>

#include "jit/batching.h"
#include "jit/lax.h"
#include "jit/op_registry.h"
#include "jit/partitioner.h"
#include "jit/program.h"
#include "jit/sharding_in_types.h"
#include "spmd/error.h"
#include "spmd/named_collectives.h"
#include "spmd/numpy.h"

namespace spmd::compiler {
namespace {

// The key (operand 0) and operand 1 whole on every device, and the result too: the kinds whose
// kernel takes the whole operand (a permutation, a rejection sampler's loops).
void partition_key_and_whole(Partitioner& p, int value, const Op& op) {
  const Layout whole = Layout::replicated(op.shape.size());
  p.compute(value,
            {p.slot_with(op.inputs[0], Layout::replicated(1)), p.slot_with(op.inputs[1], whole)},
            whole);
}

namespace jnp = spmd::numpy;
using kernels::Distribution;
using kernels::RandomBits;

constexpr std::string_view kKindNames[] = {"u8", "u16", "u32", "u64", "keys"};

// Each kind of bits and the dtype it makes (keys: uint32 words).
constexpr std::pair<RandomBits, DType> kDTypes[] = {{RandomBits::k8, DType::kUInt8},
                                                    {RandomBits::k16, DType::kUInt16},
                                                    {RandomBits::k32, DType::kUInt32},
                                                    {RandomBits::k64, DType::kUInt64}};

constexpr Distribution kDistributions[] = {
    Distribution::kUniform,   Distribution::kNormal,   Distribution::kTruncatedNormal,
    Distribution::kGumbel,    Distribution::kRandint,  Distribution::kExponential,
    Distribution::kLaplace,   Distribution::kLogistic, Distribution::kCauchy,
    Distribution::kLognormal, Distribution::kErfInv};

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
  Shape keys = batch_shape;
  keys.push_back(2);
  const bool key =
      !operands.empty() && operands[0].dtype == DType::kUInt32 && operands[0].shape == keys;
  bool offset = operands.size() <= 1 + offsets;
  for (size_t i = 1; i < operands.size(); ++i) {
    offset = offset && operands[i].dtype == DType::kUInt32 &&
             (operands[i].shape.empty() || operands[i].shape == batch_shape);
  }
  if (!key || !offset) {
    throw InvalidArgument(fmt::format(
        "{}: takes raw keys, {}{}{}", name(), type_text(DType::kUInt32, keys),
        offsets > 0 ? ", and optionally an offset, uint32[] or one per key" : "",
        operands.empty() ? "" : ", not " + type_text(operands[0].dtype, operands[0].shape)));
  }
  for (int64_t d : shape) {
    if (d < 0) {
      throw InvalidArgument(
          fmt::format("{}: shape ({}) has a negative dimension", name(), fmt::join(shape, ", ")));
    }
  }
}

PartitionSpec RandomOperation::type_spec(std::span<const ValueType> operands,
                                         const ValueType& result, const Mesh& /*mesh*/) const {
  const std::vector<AxisEntry> keys = type_entries(operands[0]);
  std::vector<AxisEntry> out(result.shape.size());
  for (size_t d = 0; d < batch_shape.size(); ++d) out[d] = keys[d];
  return canonical_spec(std::move(out));
}

void RandomOperation::partition(Partitioner& p, int value, const Op& op) const {
  Layout out = p.hint(value) ? p.hint(value)->settled() : Layout::replicated(op.shape.size());
  if (whole_last_dimension()) out.dims.back().clear();
  std::vector<std::vector<std::string>> axes;
  for (size_t d = 0; d < batch_shape.size() + shape.size(); ++d) {
    axes.push_back(axis_names(out.dims[d], p.mesh()));
  }
  std::vector<int> operands = {
      p.slot_with(op.inputs[0], Layout::replicated(batch_shape.size() + 1))};
  if (op.inputs.size() > 1) {
    operands.push_back(
        p.slot_with(op.inputs[1], Layout::replicated(p.op(op.inputs[1]).shape.size())));
  }
  p.compute(value, std::move(operands), out, remade(std::move(axes), batch_shape));
}

Batched RandomOperation::batch(const Op& /*op*/, std::span<const Batched> operands,
                               int64_t size) const {
  Shape batched = batch_shape;
  batched.insert(batched.begin(), size);
  std::vector<Tensor> in = {batched_first(operands[0], size)};
  if (operands.size() > 1) {
    const Batched& offset = operands[1];
    if (!offset.dim && offset.value.ndim() == 0) {
      in.push_back(offset.value);  // one offset for every key
    } else {
      Tensor o = batched_first(offset, size);
      Shape column(batched.size(), 1);  // an offset shared by keys of one slice
      column[0] = size;
      if (o.ndim() < static_cast<int>(batched.size())) {
        o = jnp::broadcast_to(jnp::reshape(o, column), batched);
      }
      in.push_back(o);
    }
  }
  return {lax::bind(remade({}, std::move(batched)), in), 0};
}

namespace {

// The flat index in the whole batch `batch` of the key at position `i` of a device's block of it
// (extents `local`, starting at `start`); key 0 for the padding of an uneven split.
int64_t key_index(int64_t i, const Shape& batch, std::span<const int64_t> local,
                  std::span<const int64_t> start) {
  int64_t flat = 0, stride = 1;
  for (size_t d = batch.size(); d-- > 0;) {
    const int64_t g = start[d] + i % local[d];
    if (g >= batch[d]) return 0;
    i /= local[d];
    flat += g * stride;
    stride *= batch[d];
  }
  return flat;
}

}  // namespace

Block RandomOperation::run(const KernelContext& device, const Step& step,
                           std::span<const Block> in) const {
  const size_t nb = batch_shape.size();
  std::vector<int64_t> start;  // of the device's block, per dimension of the result
  for (size_t d = 0; d < nb + shape.size(); ++d) {
    const bool whole = d >= split.size() || split[d].empty();
    start.push_back(whole ? 0 : axis_index(AxisEntry(split[d])) * step.shape[d]);
  }
  kernels::RandomBlock block{.shape = shape};  // one key's part, reused for every key
  block.start.assign(start.begin() + static_cast<int64_t>(nb), start.end());
  block.extent.assign(step.shape.begin() + static_cast<int64_t>(nb),
                      step.shape.begin() + static_cast<int64_t>(nb + shape.size()));
  const std::span<const int64_t> local(step.shape.data(), nb);
  int64_t count = 1;
  for (int64_t n : local) count *= n;
  Block out = device.allocate(step.dtype, step.shape);
  if (count == 0) return out;
  // The keys and offsets are the kernels' parameters, read here (copied from device memory).
  const Block keys_here = in[0].to_memory(MemorySpace::host());
  const Block offsets_here = in.size() > 1 ? in[1].to_memory(MemorySpace::host()) : Block();
  const auto keys = keys_here.data<uint32_t>();
  const std::span<const uint32_t> offsets =
      in.size() > 1 ? offsets_here.data<uint32_t>() : std::span<const uint32_t>();
  const std::span<std::byte> bytes = out.mutable_bytes();
  const size_t each = bytes.size() / static_cast<size_t>(count);
  for (int64_t i = 0; i < count; ++i) {
    const auto k = static_cast<size_t>(key_index(i, batch_shape, local, start));
    block.key = {keys[2 * k], keys[2 * k + 1]};
    if (!offsets.empty()) block.offset = offsets[offsets.size() == 1 ? 0 : k];
    write(device.backend, block, bytes.data() + static_cast<size_t>(i) * each);
  }
  return out;
}

// RandomBitsOp

std::string RandomBitsOp::attributes() const {
  return fmt::format("bits={}{}", kKindNames[static_cast<int>(kind)], blocks_text());
}

ValueType RandomBitsOp::result_type(std::span<const ValueType> operands) const {
  check_operands(operands, 1);
  Shape out = batch_shape;
  out.insert(out.end(), shape.begin(), shape.end());
  if (kind == RandomBits::kKeys) out.push_back(2);
  return {dtype_of(kind), out};
}

std::shared_ptr<const Operation> RandomBitsOp::remade(std::vector<std::vector<std::string>> split,
                                                      Shape batch_shape) const {
  return make_operation<RandomBitsOp>(kind, shape, std::move(split), std::move(batch_shape));
}

void RandomBitsOp::write(const kernels::Backend& backend, const kernels::RandomBlock& block,
                         std::byte* out) const {
  backend.random_bits(kind, block, out);
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
    case Distribution::kLognormal:
      return fmt::format("sigma={}{}", sampler.a, blocks_text());
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
  Shape out = batch_shape;
  out.insert(out.end(), shape.begin(), shape.end());
  return {sampler.dtype, out};
}

std::shared_ptr<const Operation> RandomSampleOp::remade(std::vector<std::vector<std::string>> split,
                                                        Shape batch_shape) const {
  return make_operation<RandomSampleOp>(sampler, shape, std::move(split), std::move(batch_shape));
}

void RandomSampleOp::write(const kernels::Backend& backend, const kernels::RandomBlock& block,
                           std::byte* out) const {
  backend.random_sample(sampler, block, out);
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
  partition_key_and_whole(p, value, op);
}

Block RandomPermutationOp::run(const KernelContext& device, const Step& step,
                               std::span<const Block> in) const {
  const Block key_here = in[0].to_memory(MemorySpace::host());  // the key words, read here
  const auto key = key_here.data<uint32_t>();
  Block out = device.allocate(step.dtype, step.shape);
  device.backend.random_permute({key[0], key[1]}, dtype_size(step.dtype), in[1].bytes().data(),
                                step.shape, axis, out.mutable_bytes().data());
  return out;
}

Batched RandomPermutationOp::batch(const Op& /*op*/, std::span<const Batched> operands,
                                   int64_t size) const {
  if (!operands[0].dim) {
    return {lax::bind(make_operation<RandomPermutationOp>(axis + 1),
                      {operands[0].value, batched_first(operands[1], size)}),
            0};
  }
  if (size == 0) return {batched_first(operands[1], size), 0};
  const auto by_one_key = make_operation<RandomPermutationOp>(axis);
  return {per_slice(size, operands,
                    [&](const std::vector<Tensor>& t) { return lax::bind(by_one_key, t); }),
          0};
}

// RandomGammaOp

std::string RandomGammaOp::attributes() const {
  switch (form) {
    case kernels::GammaForm::kSample:
      return "log_space=0";
    case kernels::GammaForm::kLog:
      return "log_space=1";
    case kernels::GammaForm::kLogAsYnn:
      return "log_space=1, ynn_log=1";
  }
  return "";
}

ValueType RandomGammaOp::result_type(std::span<const ValueType> operands) const {
  check_operand_count(name(), operands, 2);
  if (operands[0].dtype != DType::kUInt32 || operands[0].shape != Shape{2}) {
    throw InvalidArgument(fmt::format("random_gamma: the key must be uint32[2], not {}",
                                      type_text(operands[0].dtype, operands[0].shape)));
  }
  if (operands[1].dtype != DType::kFloat32) {
    throw InvalidArgument(fmt::format("random_gamma: a must be float32, not {}",
                                      type_text(operands[1].dtype, operands[1].shape)));
  }
  if (shape_size(operands[1].shape) > int64_t{UINT32_MAX}) {
    throw InvalidArgument(fmt::format("random_gamma: {} elements; it samples at most 2^32 - 1",
                                      shape_size(operands[1].shape)));
  }
  return operands[1];
}

void RandomGammaOp::partition(Partitioner& p, int value, const Op& op) const {
  partition_key_and_whole(p, value, op);
}

Block RandomGammaOp::run(const KernelContext& device, const Step& step,
                         std::span<const Block> in) const {
  Block out = device.allocate(step.dtype, step.shape);
  device.backend.random_gamma(reinterpret_cast<const uint32_t*>(in[0].bytes().data()),
                              reinterpret_cast<const float*>(in[1].bytes().data()), out.size(),
                              form, reinterpret_cast<float*>(out.mutable_bytes().data()));
  return out;
}

Batched RandomGammaOp::batch(const Op& /*op*/, std::span<const Batched> operands,
                             int64_t size) const {
  if (size == 0) return {batched_first(operands[1], size), 0};
  const auto one = make_operation<RandomGammaOp>(form);
  return {
      per_slice(size, operands, [&](const std::vector<Tensor>& t) { return lax::bind(one, t); }),
      0};
}

// YnnSoftmaxOp

ValueType YnnSoftmaxOp::result_type(std::span<const ValueType> operands) const {
  check_operand_count(name(), operands, 1);
  if (operands[0].dtype != DType::kFloat32 || operands[0].shape.empty()) {
    throw InvalidArgument(fmt::format("random_ynn_softmax: x must be float32 with an axis, not {}",
                                      type_text(operands[0].dtype, operands[0].shape)));
  }
  return operands[0];
}

void YnnSoftmaxOp::partition(Partitioner& p, int value, const Op& op) const {
  const Layout whole = Layout::replicated(op.shape.size());
  p.compute(value, {p.slot_with(op.inputs[0], whole)}, whole);
}

Block YnnSoftmaxOp::run(const KernelContext& device, const Step& step,
                        std::span<const Block> in) const {
  Block out = device.allocate(step.dtype, step.shape);
  const int64_t k = step.shape.back();
  device.backend.ynn_softmax_rows(reinterpret_cast<const float*>(in[0].bytes().data()),
                                  k == 0 ? 0 : shape_size(step.shape) / k, k,
                                  reinterpret_cast<float*>(out.mutable_bytes().data()));
  return out;
}

Batched YnnSoftmaxOp::batch(const Op& op, std::span<const Batched> operands, int64_t size) const {
  return {lax::bind(op.operation, {batched_first(operands[0], size)}), 0};
}

// YnnPowerSumOp

ValueType YnnPowerSumOp::result_type(std::span<const ValueType> operands) const {
  check_operand_count(name(), operands, 2);
  if (operands[0].dtype != DType::kFloat32 || operands[0].shape.empty() ||
      operands[1].dtype != DType::kFloat32 || !operands[1].shape.empty()) {
    throw InvalidArgument(fmt::format(
        "random_ynn_power_sum: g must be float32 with an axis and p a float32 scalar, not {} and "
        "{}",
        type_text(operands[0].dtype, operands[0].shape),
        type_text(operands[1].dtype, operands[1].shape)));
  }
  Shape rows = operands[0].shape;
  rows.pop_back();
  return {DType::kFloat32, rows};
}

void YnnPowerSumOp::partition(Partitioner& p, int value, const Op& op) const {
  const Layout whole = Layout::replicated(op.shape.size());
  p.compute(value,
            {p.slot_with(op.inputs[0], Layout::replicated(op.shape.size() + 1)),
             p.slot_with(op.inputs[1], Layout::replicated(0))},
            whole);
}

Block YnnPowerSumOp::run(const KernelContext& device, const Step& step,
                         std::span<const Block> in) const {
  Block out = device.allocate(step.dtype, step.shape);
  const Shape& g = in[0].shape();
  device.backend.ynn_power_sum_rows(reinterpret_cast<const float*>(in[0].bytes().data()),
                                    shape_size(step.shape), g.back(),
                                    reinterpret_cast<const float*>(in[1].bytes().data()),
                                    reinterpret_cast<float*>(out.mutable_bytes().data()));
  return out;
}

Batched YnnPowerSumOp::batch(const Op& op, std::span<const Batched> operands, int64_t size) const {
  if (!operands[1].dim) {
    return {lax::bind(op.operation, {batched_first(operands[0], size), operands[1].value}), 0};
  }
  if (size == 0)
    return {lax::bind(op.operation,
                      {batched_first(operands[0], size), numpy::zeros({}, DType::kFloat32)}),
            0};
  return {per_slice(size, operands,
                    [&](const std::vector<Tensor>& t) { return lax::bind(op.operation, t); }),
          0};
}

// RandomPoissonOp

ValueType RandomPoissonOp::result_type(std::span<const ValueType> operands) const {
  check_operand_count(name(), operands, 2);
  if (operands[0].dtype != DType::kUInt32 || operands[0].shape != Shape{2} ||
      operands[1].dtype != DType::kFloat32) {
    throw InvalidArgument(
        fmt::format("random_poisson: wants a key uint32[2] and float32 rates, not {} and {}",
                    type_text(operands[0].dtype, operands[0].shape),
                    type_text(operands[1].dtype, operands[1].shape)));
  }
  return {DType::kInt32, operands[1].shape};
}

void RandomPoissonOp::partition(Partitioner& p, int value, const Op& op) const {
  partition_key_and_whole(p, value, op);
}

Block RandomPoissonOp::run(const KernelContext& device, const Step& step,
                           std::span<const Block> in) const {
  Block out = device.allocate(step.dtype, step.shape);
  device.backend.random_poisson(reinterpret_cast<const uint32_t*>(in[0].bytes().data()),
                                reinterpret_cast<const float*>(in[1].bytes().data()), out.size(),
                                reinterpret_cast<int32_t*>(out.mutable_bytes().data()));
  return out;
}

Batched RandomPoissonOp::batch(const Op& /*op*/, std::span<const Batched> operands,
                               int64_t size) const {
  if (size == 0)
    return {lax::convert_element_type(batched_first(operands[1], size), DType::kInt32), 0};
  const auto one = make_operation<RandomPoissonOp>();
  return {
      per_slice(size, operands, [&](const std::vector<Tensor>& t) { return lax::bind(one, t); }),
      0};
}

namespace {

// The keys' batch (their shape without the last dimension) and the rest of the result's shape.
std::pair<Shape, Shape> batch_and_sample(const AttributeReader& r) {
  Shape batch;
  if (!r.operands().empty() && !r.operands()[0].shape.empty()) {
    batch = r.operands()[0].shape;
    batch.pop_back();
  }
  const Shape& result = r.result().shape;
  if (batch.size() > result.size()) return {batch, {}};  // result_type refuses it
  return {batch, Shape(result.begin() + static_cast<int64_t>(batch.size()), result.end())};
}

const OperationRegistration random_bits_op("random_bits", [](const AttributeReader& r) {
  const std::string& bits = r.text("bits");
  for (int k = 0; k < static_cast<int>(std::size(kKindNames)); ++k) {
    if (bits != kKindNames[k]) continue;
    auto [batch, shape] = batch_and_sample(r);
    if (static_cast<RandomBits>(k) == RandomBits::kKeys && !shape.empty()) shape.pop_back();
    return make_operation<RandomBitsOp>(static_cast<RandomBits>(k), shape,
                                        std::vector<std::vector<std::string>>{}, batch);
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
  } else if (d == Distribution::kLognormal) {
    s.a = r.number("sigma");
  } else if (d == Distribution::kRandint) {
    s.low = r.integer("minval");
    s.high = r.integer("maxval");
    s.high_past_range = r.has("past_range") && r.integer("past_range") != 0;
  }
  auto [batch, shape] = batch_and_sample(r);
  return make_operation<RandomSampleOp>(s, shape, std::vector<std::vector<std::string>>{}, batch);
}

const OperationRegistration random_permutation_op("random_permutation",
                                                  [](const AttributeReader& r) {
                                                    return make_operation<RandomPermutationOp>(
                                                        static_cast<int>(r.integer("axis")));
                                                  });

const OperationRegistration random_poisson_op("random_poisson", [](const AttributeReader&) {
  return make_operation<RandomPoissonOp>();
});

const OperationRegistration random_gamma_op("random_gamma", [](const AttributeReader& r) {
  if (r.integer("log_space") == 0)
    return make_operation<RandomGammaOp>(kernels::GammaForm::kSample);
  const bool ynn = r.has("ynn_log") && r.integer("ynn_log") != 0;
  return make_operation<RandomGammaOp>(ynn ? kernels::GammaForm::kLogAsYnn
                                           : kernels::GammaForm::kLog);
});

const OperationRegistration random_ynn_softmax_op("random_ynn_softmax", [](const AttributeReader&) {
  return make_operation<YnnSoftmaxOp>();
});

const OperationRegistration random_ynn_power_sum_op("random_ynn_power_sum",
                                                    [](const AttributeReader&) {
                                                      return make_operation<YnnPowerSumOp>();
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
