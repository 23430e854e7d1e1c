// The calling device's axis context. A thread-local pointer, the one piece of per-thread state of
// the compute layer: named-axis collectives take no mesh argument (as in JAX), so they find
// theirs here, set by the shard_map that runs them.
#include "compute/axis_context.h"

#include <fmt/format.h>

#include "spmd/error.h"

namespace spmd {
namespace {

thread_local const AxisContext* current = nullptr;  // NOLINT: see the file comment

}  // namespace

const AxisContext& current_axis_context(const char* what) {
  if (current == nullptr) {
    throw InvalidArgument(fmt::format(
        "{} runs only inside the function shard_map or pmap calls for each device (it names "
        "mesh axes, and outside that function there is no mesh); call it from there",
        what));
  }
  return *current;
}

bool in_axis_context() { return current != nullptr; }

AxisContextScope::AxisContextScope(const AxisContext& context) : previous_(current) {
  current = &context;
}

AxisContextScope::~AxisContextScope() { current = previous_; }

ResolvedAxes resolve_axes(const AxisContext& context, const AxisEntry& axes, const char* what) {
  ResolvedAxes out;
  out.dims = context.groups->dims(axes, what);
  out.index = context.groups->index(context.coords, out.dims);
  out.size = context.groups->size(out.dims);
  return out;
}

Communicator axes_communicator(const AxisContext& context, const std::vector<int>& dims) {
  return context.groups->communicator(dims, context.device_id);
}

}  // namespace spmd
