// lax::shard_map and its collectives recorded into a trace (traced_shard_map.h): the blocks enter
// through shard_map_in, fn's operations act on local shapes, results leave through shard_map_out
// (the manual family, ops/manual.h and ops/axis_collectives.h). The types of the body's values
// (the axes they vary over) are read from the program when asked (varying_axes).
#include "spmd/traced_shard_map.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <memory>
#include <optional>

#include "jit/lax.h"
#include "jit/layout.h"
#include "jit/manual.h"
#include "jit/ops/axis_collectives.h"
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
  uint64_t manual = 0;  // the axes fn is manual over (bits)
  bool check_vma = true;
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

Tensor manual_in(const Tensor& x, const Mesh& mesh, const PartitionSpec& spec, bool check_vma) {
  return x.trace()->apply(make_operation<ManualInOp>(on(mesh, spec), check_vma), {x.value()});
}

Tensor manual_out(const Tensor& block, const Mesh& mesh, const PartitionSpec& spec,
                  bool check_vma) {
  return block.trace()->apply(make_operation<ManualOutOp>(on(mesh, spec), check_vma),
                              {block.value()});
}

Tensor axis_sum(const Tensor& block, const Mesh& mesh, const std::vector<int>& axes) {
  if (axes.empty()) return block;
  return block.trace()->apply(
      make_operation<AxisReduceOp>(AxisReduceOp::Kind::kSum, std::make_shared<const Mesh>(mesh),
                                   axes),
      {block.value()});
}

Tensor axis_gather(const Tensor& block, const Mesh& mesh, const std::vector<int>& axes, int dim,
                   bool scatter, bool check_vma) {
  return block.trace()->apply(
      make_operation<AxisGatherOp>(scatter, std::make_shared<const Mesh>(mesh), axes, dim,
                                   check_vma),
      {block.value()});
}

Tensor axis_permute(const Tensor& block, const Mesh& mesh, const std::vector<int>& axes,
                    const std::vector<std::pair<int, int>>& perm, bool check_vma) {
  return block.trace()->apply(
      make_operation<AxisPermuteOp>(std::make_shared<const Mesh>(mesh), axes, perm, check_vma),
      {block.value()});
}

uint64_t implicit_vary(const Op& op) {
  const auto* reduce = op.as<AxisReduceOp>();
  return reduce != nullptr ? axis_bits(reduce->axes) : 0;
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
      mine.checked = in->check_vma();
      continue;
    }
    if (op.is<ManualOutOp>()) continue;
    for (int in : op.inputs) {
      const Varying& theirs = out[static_cast<size_t>(in)];
      mine.axes |= theirs.axes;
      mine.checked |= theirs.checked;
      if (theirs.mesh) mine.mesh = theirs.mesh;
    }
    // all_gather, psum_scatter, ppermute, axis_index and pvary: varying over their axes too.
    if (const auto* collective = dynamic_cast<const AxisOperation*>(op.operation.get())) {
      mine.axes |= axis_bits(collective->axes);
      mine.mesh = collective->mesh.get();
      mine.checked |= collective->check_vma;
    }
    if (const auto* reduce = op.as<AxisReduceOp>()) mine.axes &= ~axis_bits(reduce->axes);
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
      "shard_map: result {} varies over mesh axes ({}) but its out_spec {} says it is the same on "
      "all of them; psum or pmean it over them, or name them in the spec (or pass "
      "check_vma=false to take device 0's)",
      i, fmt::join(compiler::axis_names(compiler::axis_positions(missing), mesh), ", "),
      sharding.spec().to_string()));
}

[[noreturn]] void unbound(const char* what, const std::vector<std::string>& names) {
  throw InvalidArgument(fmt::format(
      "{}: unbound axis name: {} (a collective runs inside a shard_map or pmap function; "
      "under jit alone the partitioner reduces across devices itself)",
      what, fmt::join(names, ", ")));
}

// The positions of `axes` in the current shard_map's mesh, for `what` called on `x` (null: on
// no value).
std::vector<int> region_axes(const char* what, const Tensor* x, const AxisEntry& axes) {
  if (!compiler::current_region) unbound(what, axes.axes());
  const compiler::Region& region = *compiler::current_region;
  if (x != nullptr && compiler::trace_of(what, {x}) != region.trace) unbound(what, axes.axes());
  std::vector<int> positions;
  for (const std::string& name : axes.axes()) {
    const int a = region.mesh->axis_index(name);
    if (std::find(positions.begin(), positions.end(), a) != positions.end()) {
      throw InvalidArgument(fmt::format("{}: the axis '{}' is named twice", what, name));
    }
    if ((region.manual & (1ull << a)) == 0) {
      throw InvalidArgument(fmt::format(
          "{}: unbound axis name: {} (the shard_map is manual over ({}) only; add it to "
          "axis_names)",
          what, name,
          fmt::join(compiler::axis_names(compiler::axis_positions(region.manual), *region.mesh),
                    ", ")));
    }
    positions.push_back(a);
  }
  if (positions.empty()) throw InvalidArgument(fmt::format("{}: no axis named", what));
  return positions;
}

// As JAX's psum: bool counts, in int32.
Tensor summable(const Tensor& x) {
  return x.dtype() == DType::kBool ? compiler::lax::convert_element_type(x, DType::kInt32) : x;
}

Tensor reduced(compiler::AxisReduceOp::Kind kind, const char* what, const Tensor& x,
               const AxisEntry& axes) {
  const std::vector<int> positions = region_axes(what, &x, axes);
  return x.trace()->apply(
      compiler::make_operation<compiler::AxisReduceOp>(
          kind, std::make_shared<const Mesh>(*compiler::current_region->mesh), positions),
      {x.value()});
}

// Whether the current shard_map types its values.
bool checks() { return compiler::current_region->check_vma; }

int dimension(const char* what, int axis, size_t rank) {
  const int r = static_cast<int>(rank);
  if (axis < -r || axis >= r)
    throw InvalidArgument(fmt::format("{}: axis {} is out of range for rank {}", what, axis, r));
  return axis < 0 ? axis + r : axis;
}

}  // namespace

Tensor psum(const Tensor& x, const AxisEntry& axes) {
  const std::vector<int> positions = region_axes("psum", &x, axes);
  return compiler::axis_sum(summable(x), *compiler::current_region->mesh, positions);
}

bool in_shard_map_function() { return compiler::in_shard_map_body(); }

std::vector<std::string> varying_axes_of(const Tensor& x) {
  const compiler::Varying type =
      compiler::varying_axes(x.trace()->program())[static_cast<size_t>(x.value())];
  if (!type.checked || type.mesh == nullptr) return {};
  return compiler::axis_names(compiler::axis_positions(type.axes), *type.mesh);
}

Tensor pmean(const Tensor& x, const AxisEntry& axes) {
  const std::vector<int> positions = region_axes("pmean", &x, axes);
  const Mesh& mesh = *compiler::current_region->mesh;
  const Tensor sum = compiler::axis_sum(summable(x), mesh, positions);
  return sum / static_cast<double>(compiler::axes_size(positions, mesh));
}

Tensor pmax(const Tensor& x, const AxisEntry& axes) {
  return reduced(compiler::AxisReduceOp::Kind::kMax, "pmax", x, axes);
}

Tensor pmin(const Tensor& x, const AxisEntry& axes) {
  return reduced(compiler::AxisReduceOp::Kind::kMin, "pmin", x, axes);
}

Tensor all_gather(const Tensor& x, const AxisEntry& axes, int axis, bool tiled) {
  const std::vector<int> positions = region_axes("all_gather", &x, axes);
  const Mesh& mesh = *compiler::current_region->mesh;
  if (tiled) {
    return compiler::axis_gather(x, mesh, positions, dimension("all_gather", axis, x.ndim()), false,
                                 checks());
  }
  const int d = dimension("all_gather", axis, x.ndim() + 1);
  return compiler::axis_gather(compiler::lax::expand_dims(x, d), mesh, positions, d, false,
                               checks());
}

Tensor psum_scatter(const Tensor& x, const AxisEntry& axes, int scatter_dimension, bool tiled) {
  const std::vector<int> positions = region_axes("psum_scatter", &x, axes);
  const Mesh& mesh = *compiler::current_region->mesh;
  const int d = dimension("psum_scatter", scatter_dimension, x.ndim());
  const int64_t n = compiler::axes_size(positions, mesh);
  if (!tiled && x.shape()[static_cast<size_t>(d)] != n) {
    throw InvalidArgument(fmt::format(
        "psum_scatter: dimension {} has size {}, not the {} devices along the axes (tiled=false "
        "scatters one row to each)",
        d, x.shape()[static_cast<size_t>(d)], n));
  }
  Tensor out = compiler::axis_gather(summable(x), mesh, positions, d, true, checks());
  if (tiled) return out;
  Shape shape = out.shape();
  shape.erase(shape.begin() + d);
  return compiler::lax::reshape(out, shape);
}

Tensor ppermute(const Tensor& x, const AxisEntry& axes,
                const std::vector<std::pair<int, int>>& perm) {
  const std::vector<int> positions = region_axes("ppermute", &x, axes);
  const Mesh& mesh = *compiler::current_region->mesh;
  const int64_t n = compiler::axes_size(positions, mesh);
  std::vector<bool> source(static_cast<size_t>(n)), target(static_cast<size_t>(n));
  for (const auto& [from, to] : perm) {
    if (from < 0 || from >= n || to < 0 || to >= n) {
      throw InvalidArgument(fmt::format(
          "ppermute: the pair ({}, {}) names an index outside the {} devices along the axes", from,
          to, n));
    }
    if (source[static_cast<size_t>(from)] || target[static_cast<size_t>(to)]) {
      throw InvalidArgument(fmt::format(
          "ppermute: the pair ({}, {}) repeats a source or a target; perm must be a permutation",
          from, to));
    }
    source[static_cast<size_t>(from)] = target[static_cast<size_t>(to)] = true;
  }
  return compiler::axis_permute(x, mesh, positions, perm, checks());
}

Tensor axis_index(const AxisEntry& axes) {
  const std::vector<int> positions = region_axes("axis_index", nullptr, axes);
  const compiler::Region& region = *compiler::current_region;
  return region.trace->apply(
      compiler::make_operation<compiler::AxisIndexOp>(std::make_shared<const Mesh>(*region.mesh),
                                                      positions, region.check_vma),
      {});
}

Tensor pcast(const Tensor& x, const AxisEntry& axes, const std::string& to) {
  if (to != "varying") {
    throw InvalidArgument(fmt::format(
        "pcast: to='{}' is not supported; spmd has the 'varying' state (the 'reduced' and "
        "'unreduced' states belong to JAX's explicit sharding, which spmd lacks)",
        to));
  }
  const std::vector<int> positions = region_axes("pcast", &x, axes);
  const compiler::Region& region = *compiler::current_region;
  if (!region.check_vma) return x;
  const uint64_t varies =
      compiler::varying_axes(x.trace()->program())[static_cast<size_t>(x.value())].axes;
  const uint64_t already = varies & compiler::axis_bits(positions);
  if (already != 0) {
    throw InvalidArgument(fmt::format(
        "pcast: unsupported pcast from=varying, to='varying': the value already varies over "
        "({}); pcast only the axes it is invariant over",
        fmt::join(compiler::axis_names(compiler::axis_positions(already), *region.mesh), ", ")));
  }
  return x.trace()->apply(compiler::make_operation<compiler::AxisVaryOp>(
                              std::make_shared<const Mesh>(*region.mesh), positions),
                          {x.value()});
}

namespace detail {
namespace {

// The axes fn is manual over.
uint64_t manual_axes(const Mesh& mesh, const ShardMapOptions& options) {
  if (options.axis_names.empty()) return (1ull << mesh.axis_names().size()) - 1;
  uint64_t manual = 0;
  for (const std::string& name : options.axis_names) manual |= 1ull << mesh.axis_index(name);
  return manual;
}

// fn's specs may name no axis it is not manual over.
void check_names_manual(const Mesh& mesh, uint64_t manual, const std::vector<PartitionSpec>& specs,
                        const ShardMapOptions& options) {
  for (const PartitionSpec& spec : specs) {
    for (const AxisEntry& entry : spec.entries()) {
      for (const std::string& name : entry.axes()) {
        if ((manual & (1ull << mesh.axis_index(name))) != 0) continue;
        throw InvalidArgument(fmt::format(
            "shard_map: the spec {} names the axis '{}', which is not in axis_names ({}); "
            "name it there, or leave it out of the specs",
            spec.to_string(), name, fmt::join(options.axis_names, ", ")));
      }
    }
  }
}

}  // namespace

std::vector<Tensor> traced_shard_map(const Mesh& mesh, const std::vector<PartitionSpec>& in_specs,
                                     const std::vector<PartitionSpec>& out_specs,
                                     const std::vector<Tensor>& args, const Body& body,
                                     const ShardMapOptions& options) {
  if (args.size() != in_specs.size()) {
    throw InvalidArgument(
        fmt::format("shard_map: {} arguments for {} in_specs", args.size(), in_specs.size()));
  }
  if (compiler::current_region) {
    throw InvalidArgument("shard_map: a lax::shard_map inside another one's function");
  }
  const uint64_t manual = manual_axes(mesh, options);
  if (!options.check_vma && manual != manual_axes(mesh, {})) {
    throw InvalidArgument(
        "shard_map: check_vma=false with axis_names naming only some of the mesh's axes is not "
        "supported; name every axis, or keep check_vma");
  }
  check_names_manual(mesh, manual, in_specs, options);
  auto trace = compiler::Trace::current("shard_map");
  for (const Tensor& t : args) compiler::trace_of("shard_map", {&t});
  const size_t begin = trace->program().ops.size();
  std::vector<Tensor> blocks;
  for (size_t i = 0; i < args.size(); ++i) {
    blocks.push_back(compiler::manual_in(args[i], mesh, in_specs[i], options.check_vma));
  }
  std::vector<Tensor> results;
  {
    compiler::RegionScope scope({trace, &mesh, manual, options.check_vma});
    results = body(blocks);
  }
  compiler::check_closed(trace->program(), begin, begin + args.size());
  // out_specs is read only now: a caller may fill it in as the function returns (Python's
  // pytree prefixes of the results).
  check_names_manual(mesh, manual, out_specs, options);
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
    out.push_back(
        compiler::manual_out(results[i], mesh, out_specs[one_for_all ? 0 : i], options.check_vma));
    if (options.check_vma)
      check_invariant(varying[static_cast<size_t>(results[i].value())].axes, out.back(), i);
  }
  return out;
}

}  // namespace detail
}  // namespace lax
}  // namespace spmd
