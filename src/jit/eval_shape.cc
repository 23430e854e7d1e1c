// spmd::eval_shape (spmd/eval_shape.h): the function traced on parameters of the given types, as
// jit traces it (jit.cc's trace_program), and the trace dropped: no partitioning, no kernels.
#include "spmd/eval_shape.h"

#include <fmt/format.h>

#include <memory>
#include <optional>
#include <vector>

#include "jit/layout.h"
#include "jit/operation.h"
#include "jit/ops/parameter.h"
#include "jit/sharding_in_types.h"
#include "jit/trace.h"
#include "spmd/error.h"
#include "spmd/mesh_context.h"
#include "spmd/runtime.h"

namespace spmd {
namespace {

// The mesh of the inputs that name one (all the same), else this process's first device.
Mesh mesh_of(const std::vector<ShapeDtypeStruct>& inputs) {
  const NamedSharding* first = nullptr;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].sharding) continue;
    if (first == nullptr) {
      first = &*inputs[i].sharding;
    } else if (!(inputs[i].sharding->mesh() == first->mesh())) {
      throw InvalidArgument(fmt::format(
          "eval_shape: input {} is laid out as {}, on another mesh than an earlier input's {}", i,
          inputs[i].sharding->to_string(), first->to_string()));
    }
  }
  if (first != nullptr) return first->mesh();
  const std::vector<Device> local = local_devices();
  if (local.empty()) throw InvalidArgument("eval_shape: this process has no devices");
  return Mesh({local.front()}, {"device"});
}

}  // namespace

std::vector<ShapeDtypeStruct> eval_shape(
    const std::function<std::vector<Tensor>(std::vector<Tensor>&)>& fn,
    const std::vector<ShapeDtypeStruct>& inputs) {
  const Mesh mesh = mesh_of(inputs);
  auto trace = std::make_shared<compiler::Trace>(mesh);
  const compiler::TraceScope scope(trace);
  std::optional<MeshScope> mesh_scope;
  if (!get_mesh()) mesh_scope.emplace(mesh);
  std::vector<Tensor> params;
  for (size_t i = 0; i < inputs.size(); ++i) {
    for (const int64_t d : inputs[i].shape) {
      if (d < 0) {
        throw InvalidArgument(fmt::format("eval_shape: input {} has a negative dimension ({})", i,
                                          fmt::join(inputs[i].shape, ", ")));
      }
    }
    const NamedSharding sharding = inputs[i].sharding.value_or(NamedSharding(mesh, P()));
    compiler::layout_of(sharding, inputs[i].shape.size());  // checks the rank and the splits
    params.push_back(
        trace->apply(compiler::make_operation<compiler::ParameterOp>(
                         static_cast<int>(i), compiler::ValueType{inputs[i].dtype, inputs[i].shape},
                         std::make_shared<const NamedSharding>(sharding)),
                     {}));
  }
  trace->program().parameters = static_cast<int>(inputs.size());
  std::vector<ShapeDtypeStruct> types;
  for (const Tensor& t : fn(params)) {
    if (compiler::trace_of("eval_shape: the function's result", {&t}) != trace) {
      throw InvalidArgument("eval_shape: the function returned a Tensor of another trace");
    }
    // The sharding in the result's type: on a mesh of Auto axes it names none (JAX's None).
    const NamedSharding sharding = t.sharding();
    const bool typed = compiler::has_explicit_axes(sharding.mesh());
    types.push_back({t.shape(), t.dtype(), typed ? std::optional(sharding) : std::nullopt});
  }
  return types;
}

}  // namespace spmd
