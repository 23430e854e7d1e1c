// lax::shard_map, psum and pmean recorded into a trace (traced_shard_map.h): the blocks enter
// through shard_map_in, fn's operations act on local shapes, results leave through shard_map_out
// (the manual family, ops/manual.h).
#include "spmd/traced_shard_map.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <memory>
#include <optional>

#include "jit/lax.h"
#include "jit/layout.h"
#include "jit/manual.h"
#include "jit/ops/manual.h"
#include "jit/ops/parameter.h"
#include "jit/trace.h"
#include "spmd/error.h"

namespace spmd {
namespace compiler {
namespace {

// The shard_map whose function is being traced on this thread.
struct Region {
  std::shared_ptr<Trace> trace;
  const Mesh* mesh = nullptr;
};
thread_local std::optional<Region> current_region;

class RegionScope {
 public:
  explicit RegionScope(Region region) { current_region = std::move(region); }
  ~RegionScope() { current_region.reset(); }
  RegionScope(const RegionScope&) = delete;
  RegionScope& operator=(const RegionScope&) = delete;
};

std::shared_ptr<const NamedSharding> on(const Mesh& mesh, const PartitionSpec& spec) {
  return std::make_shared<const NamedSharding>(mesh, spec);
}

// Every operation fn recorded reads only fn's blocks and what it made from them: fn's blocks are
// values [begin, first); its operations follow them.
void check_closed(const Program& program, size_t begin, size_t first) {
  for (size_t v = first; v < program.ops.size(); ++v) {
    const Op& op = program.ops[v];
    if (op.is<ConstraintOp>() || op.is<ParameterOp>()) {
      throw InvalidArgument(fmt::format(
          "shard_map: the function calls {} on a block; blocks have no global layout to "
          "constrain",
          op_name(op)));
    }
    for (int in : op.inputs) {
      if (static_cast<size_t>(in) >= begin) continue;
      const Op& outside = program.ops[static_cast<size_t>(in)];
      throw InvalidArgument(fmt::format(
          "shard_map: the function uses %{} ({} {}) of the enclosing function; pass it as an "
          "argument with its PartitionSpec",
          in, op_name(outside), type_text(outside.dtype, outside.shape)));
    }
  }
}

}  // namespace

Tensor manual_in(const Tensor& x, const Mesh& mesh, const PartitionSpec& spec) {
  return x.trace()->apply(make_operation<ManualInOp>(on(mesh, spec)), {x.value()});
}

Tensor manual_out(const Tensor& block, const Mesh& mesh, const PartitionSpec& spec) {
  return block.trace()->apply(make_operation<ManualOutOp>(on(mesh, spec)), {block.value()});
}

Tensor axis_sum(const Tensor& block, const Mesh& mesh, const std::vector<int>& axes) {
  if (axes.empty()) return block;
  return block.trace()->apply(make_operation<AxisSumOp>(std::make_shared<const Mesh>(mesh), axes),
                              {block.value()});
}

std::vector<Varying> varying_axes(const Program& program) {
  std::vector<Varying> out(program.ops.size());
  for (size_t v = 0; v < program.ops.size(); ++v) {
    const Op& op = program.ops[v];
    Varying& mine = out[v];
    if (const auto* in = op.as<ManualInOp>()) {
      const NamedSharding& sharding = *in->sharding();
      mine.mesh = &sharding.mesh();
      mine.axes = axis_bits(layout_of(sharding, op.shape.size()).used_axes());
      continue;
    }
    if (op.is<ManualOutOp>()) continue;
    for (int in : op.inputs) {
      const Varying& theirs = out[static_cast<size_t>(in)];
      mine.axes |= theirs.axes;
      if (theirs.mesh) mine.mesh = theirs.mesh;
    }
    if (const auto* sum = op.as<AxisSumOp>()) {
      for (int a : sum->axes) mine.axes &= ~(1ull << a);
    }
  }
  return out;
}

bool in_shard_map_body() { return current_region.has_value(); }

std::vector<int> axis_positions(uint64_t axes) {
  std::vector<int> out;
  for (int a = 0; a < 64; ++a) {
    if (axes & (1ull << a)) out.push_back(a);
  }
  return out;
}

uint64_t axis_bits(const std::vector<int>& positions) {
  uint64_t bits = 0;
  for (int a : positions) bits |= 1ull << a;
  return bits;
}

}  // namespace compiler

namespace lax {
namespace {

// A result varying over an axis its out_spec leaves out would be taken from one device along it
// (JAX's check_vma error).
void check_invariant(uint64_t varies, const Tensor& result, size_t i) {
  const compiler::Op& op = result.trace()->op(result.value());
  const NamedSharding& sharding = *op.operation->sharding();
  const uint64_t used =
      compiler::axis_bits(compiler::layout_of(sharding, op.shape.size()).used_axes());
  const uint64_t missing = varies & ~used;
  if (missing == 0) return;
  const Mesh& mesh = sharding.mesh();
  throw InvalidArgument(fmt::format(
      "shard_map: result {} differs between devices along mesh axes ({}) but its out_spec {} "
      "says it is the same on all of them; psum or pmean it over them, or name them in the spec",
      i, fmt::join(compiler::axis_names(compiler::axis_positions(missing), mesh), ", "),
      sharding.spec().to_string()));
}

// The positions of `axes` in the current shard_map's mesh, for `what` called on `x`.
std::vector<int> region_axes(const char* what, const Tensor& x, const AxisEntry& axes) {
  const auto& region = compiler::current_region;
  if (!region || compiler::trace_of(what, {&x}) != region->trace) {
    throw InvalidArgument(fmt::format(
        "{}: unbound axis name: {} (a collective runs inside a shard_map or pmap function; "
        "under jit alone the partitioner reduces across devices itself)",
        what, fmt::join(axes.axes(), ", ")));
  }
  std::vector<int> positions;
  for (const std::string& name : axes.axes()) {
    const int a = region->mesh->axis_index(name);
    if (std::find(positions.begin(), positions.end(), a) != positions.end()) {
      throw InvalidArgument(fmt::format("{}: the axis '{}' is named twice", what, name));
    }
    positions.push_back(a);
  }
  if (positions.empty()) throw InvalidArgument(fmt::format("{}: no axis named", what));
  return positions;
}

}  // namespace

namespace {

// As JAX's psum: bool counts, in int32.
Tensor summable(const Tensor& x) {
  return x.dtype() == DType::kBool ? compiler::lax::convert_element_type(x, DType::kInt32) : x;
}

}  // namespace

Tensor psum(const Tensor& x, const AxisEntry& axes) {
  const std::vector<int> positions = region_axes("psum", x, axes);
  return compiler::axis_sum(summable(x), *compiler::current_region->mesh, positions);
}

bool in_shard_map_function() { return compiler::in_shard_map_body(); }

Tensor pmean(const Tensor& x, const AxisEntry& axes) {
  const std::vector<int> positions = region_axes("pmean", x, axes);
  const Mesh& mesh = *compiler::current_region->mesh;
  const Tensor sum = compiler::axis_sum(summable(x), mesh, positions);
  return sum / static_cast<double>(compiler::axes_size(positions, mesh));
}

namespace detail {

std::vector<Tensor> traced_shard_map(const Mesh& mesh, const std::vector<PartitionSpec>& in_specs,
                                     const std::vector<PartitionSpec>& out_specs,
                                     const std::vector<Tensor>& args, const Body& body) {
  if (args.size() != in_specs.size()) {
    throw InvalidArgument(
        fmt::format("shard_map: {} arguments for {} in_specs", args.size(), in_specs.size()));
  }
  if (compiler::current_region) {
    throw InvalidArgument("shard_map: a lax::shard_map inside another one's function");
  }
  auto trace = compiler::Trace::current("shard_map");
  for (const Tensor& t : args) compiler::trace_of("shard_map", {&t});
  const size_t begin = trace->program().ops.size();
  std::vector<Tensor> blocks;
  for (size_t i = 0; i < args.size(); ++i) {
    blocks.push_back(compiler::manual_in(args[i], mesh, in_specs[i]));
  }
  std::vector<Tensor> results;
  {
    compiler::RegionScope scope({trace, &mesh});
    results = body(blocks);
  }
  compiler::check_closed(trace->program(), begin, begin + args.size());
  // One out_spec lays out every result, as shard_map.h's eager form.
  const bool one_for_all = out_specs.size() == 1;
  if (results.size() != out_specs.size() && !one_for_all) {
    throw InvalidArgument(
        fmt::format("shard_map: the function returned {} results for {} "
                    "out_specs",
                    results.size(), out_specs.size()));
  }
  const std::vector<compiler::Varying> varying = compiler::varying_axes(trace->program());
  std::vector<Tensor> out;
  for (size_t i = 0; i < results.size(); ++i) {
    if (compiler::trace_of("shard_map", {&results[i]}) != trace ||
        static_cast<size_t>(results[i].value()) < begin) {
      throw InvalidArgument(fmt::format(
          "shard_map: result {} is not a value the function computed from its blocks", i));
    }
    out.push_back(compiler::manual_out(results[i], mesh, out_specs[one_for_all ? 0 : i]));
    check_invariant(varying[static_cast<size_t>(results[i].value())].axes, out.back(), i);
  }
  return out;
}

}  // namespace detail
}  // namespace lax
}  // namespace spmd
