// The collectives of a shard_map body beyond the reductions (axis_collectives.h). The gather and
// the scatter run as the executor's collective steps; ppermute and axis_index as kernels calling
// the named collectives on the device's thread (named_collectives.h), as the steps do.
#include "jit/ops/axis_collectives.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <charconv>

#include "jit/lax.h"
#include "jit/layout.h"
#include "jit/manual.h"
#include "jit/op_registry.h"
#include "jit/partitioner.h"
#include "spmd/error.h"
#include "spmd/named_collectives.h"

namespace spmd::compiler {
namespace {

AxisEntry names_of(const std::vector<int>& axes, const Mesh& mesh) {
  return AxisEntry(axis_names(axes, mesh));
}

void check_axes(const std::string& what, const std::vector<int>& axes, const Mesh& mesh) {
  for (int a : axes) {
    if (a < 0 || a >= static_cast<int>(mesh.axis_names().size()))
      throw InvalidArgument(fmt::format("{}: the mesh has no axis {}", what, a));
  }
}

// The block of a value that lives on every device as its own (the body's values).
int own_block(Partitioner& p, const Op& op, size_t operand) {
  const int in = op.inputs[operand];
  return p.slot_with(in, Layout::replicated(p.op(in).shape.size()));
}

}  // namespace

std::string AxisOperation::attributes() const {
  return fmt::format("axes={{{}}}{}", fmt::join(axes, ","), check_vma ? "" : " check_vma=false");
}

Batched AxisOperation::batch(const Op& op, std::span<const Batched> operands,
                             int64_t /*size*/) const {
  return {lax::bind(op.operation, {operands[0].value}), operands[0].dim};
}

int64_t AxisOperation::group_size() const { return axes_size(axes, *mesh); }

std::string AxisGatherOp::attributes() const {
  return fmt::format("{} dim={}", AxisOperation::attributes(), dim);
}

ValueType AxisGatherOp::result_type(std::span<const ValueType> operands) const {
  check_operand_count(name(), operands, 1);
  check_axes(name(), axes, *mesh);
  ValueType out = operands[0];
  if (dim < 0 || dim >= static_cast<int>(out.shape.size()))
    throw InvalidArgument(
        fmt::format("{}: dimension {} of a rank-{} block", name(), dim, out.shape.size()));
  int64_t& extent = out.shape[static_cast<size_t>(dim)];
  if (!scatter) {
    extent *= group_size();
  } else if (extent % group_size() != 0) {
    throw InvalidArgument(fmt::format(
        "psum_scatter: dimension {} has size {}, which the {} devices along the axes do not "
        "divide",
        dim, extent, group_size()));
  } else {
    extent /= group_size();
  }
  return out;
}

void AxisGatherOp::partition(Partitioner& p, int value, const Op& op) const {
  const Layout blocks = Layout::replicated(op.shape.size());
  const StepKind step = scatter ? StepKind::kPsumScatter : StepKind::kAllGather;
  p.define(value, p.emit_collective(step, own_block(p, op, 0), value, blocks, axes, dim), blocks);
}

Block AxisGatherOp::run(const KernelContext& /*device*/, const Step& /*step*/,
                        std::span<const Block> /*in*/) const {
  throw InvalidArgument(name() + " runs as a collective step, not a kernel");
}

Cotangents AxisGatherOp::vjp(const Op& /*op*/, const Tensor& /*result*/,
                             std::span<const Tensor> /*operands*/, const Tensor& g) const {
  return {axis_gather(g, *mesh, axes, dim, !scatter, check_vma)};
}

Batched AxisGatherOp::batch(const Op& /*op*/, std::span<const Batched> /*operands*/,
                            int64_t /*size*/) const {
  throw InvalidArgument(fmt::format(
      "vmap: {} of a batched value is not supported; apply vmap inside the shard_map's body "
      "around what does not gather",
      name()));
}

std::string AxisPermuteOp::attributes() const {
  std::vector<std::string> pairs;
  for (const auto& [from, to] : perm) pairs.push_back(fmt::format("{}:{}", from, to));
  return fmt::format("{} perm={{{}}}", AxisOperation::attributes(), fmt::join(pairs, ","));
}

ValueType AxisPermuteOp::result_type(std::span<const ValueType> operands) const {
  check_operand_count("ppermute", operands, 1);
  check_axes("ppermute", axes, *mesh);
  return operands[0];
}

void AxisPermuteOp::partition(Partitioner& p, int value, const Op& op) const {
  p.compute(value, {own_block(p, op, 0)}, Layout::replicated(op.shape.size()));
}

Block AxisPermuteOp::run(const KernelContext& /*device*/, const Step& /*step*/,
                         std::span<const Block> in) const {
  return spmd::ppermute(in[0], names_of(axes, *mesh), perm);
}

Cotangents AxisPermuteOp::vjp(const Op& /*op*/, const Tensor& /*result*/,
                              std::span<const Tensor> /*operands*/, const Tensor& g) const {
  std::vector<std::pair<int, int>> inverse;
  for (const auto& [from, to] : perm) inverse.emplace_back(to, from);
  return {axis_permute(g, *mesh, axes, inverse, check_vma)};
}

ValueType AxisIndexOp::result_type(std::span<const ValueType> operands) const {
  check_operand_count("axis_index", operands, 0);
  check_axes("axis_index", axes, *mesh);
  return {DType::kInt32, Shape{}};
}

void AxisIndexOp::partition(Partitioner& p, int value, const Op& /*op*/) const {
  p.compute(value, {}, Layout::replicated(0));
}

Block AxisIndexOp::run(const KernelContext& device, const Step& /*step*/,
                       std::span<const Block> /*in*/) const {
  const auto index = static_cast<int32_t>(spmd::axis_index(names_of(axes, *mesh)));
  Block out = device.allocate(DType::kInt32, Shape{});
  device.backend.fill(DType::kInt32, index, out.mutable_bytes().data(), 1);
  return out;
}

ValueType AxisVaryOp::result_type(std::span<const ValueType> operands) const {
  check_operand_count("pvary", operands, 1);
  check_axes("pvary", axes, *mesh);
  return operands[0];
}

void AxisVaryOp::partition(Partitioner& p, int value, const Op& op) const {
  p.define(value, own_block(p, op, 0), Layout::replicated(op.shape.size()));
}

Block AxisVaryOp::run(const KernelContext& /*device*/, const Step& /*step*/,
                      std::span<const Block> in) const {
  return in[0];
}

Cotangents AxisVaryOp::vjp(const Op& /*op*/, const Tensor& /*result*/,
                           std::span<const Tensor> /*operands*/, const Tensor& g) const {
  return {g};
}

namespace {

std::shared_ptr<const Mesh> mesh_of(const AttributeReader& r) {
  return std::make_shared<const Mesh>(r.mesh());
}

std::vector<int> axes_of(const AttributeReader& r) {
  const std::vector<int64_t> axes = r.integers("axes");
  return {axes.begin(), axes.end()};
}

// A non-negative axis index written in a program's text; InvalidArgument for anything else.
int index_of(const std::string& text) {
  int value = -1;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 0)
    throw InvalidArgument("ppermute: '" + text + "' in perm is not an axis index");
  return value;
}

// "{0:1,1:0}"
std::vector<std::pair<int, int>> perm_of(const AttributeReader& r) {
  std::vector<std::pair<int, int>> out;
  std::string text = r.text("perm");
  if (text.size() < 2 || text.front() != '{' || text.back() != '}')
    throw InvalidArgument("ppermute: perm is not {source:target,…}: " + text);
  text = text.substr(1, text.size() - 2);
  size_t at = 0;
  while (at < text.size()) {
    const size_t comma = std::min(text.find(',', at), text.size());
    const std::string pair = text.substr(at, comma - at);
    const size_t colon = pair.find(':');
    if (colon == std::string::npos) throw InvalidArgument("ppermute: a pair without ':': " + pair);
    out.emplace_back(index_of(pair.substr(0, colon)), index_of(pair.substr(colon + 1)));
    at = comma + 1;
  }
  return out;
}

const bool axis_collectives_registered = [] {
  for (const bool scatter : {false, true}) {
    register_operation(scatter ? "psum_scatter" : "all_gather",
                       [scatter](const AttributeReader& r) {
                         return make_operation<AxisGatherOp>(scatter, mesh_of(r), axes_of(r),
                                                             static_cast<int>(r.integer("dim")),
                                                             r.boolean("check_vma", true));
                       });
  }
  register_operation("ppermute", [](const AttributeReader& r) {
    return make_operation<AxisPermuteOp>(mesh_of(r), axes_of(r), perm_of(r),
                                         r.boolean("check_vma", true));
  });
  register_operation("axis_index", [](const AttributeReader& r) {
    return make_operation<AxisIndexOp>(mesh_of(r), axes_of(r), r.boolean("check_vma", true));
  });
  register_operation("pvary", [](const AttributeReader& r) {
    return make_operation<AxisVaryOp>(mesh_of(r), axes_of(r), r.boolean("check_vma", true));
  });
  return true;
}();

}  // namespace
}  // namespace spmd::compiler
