// vmap's calls (spmd/vmap.h): the checks JAX makes of in_axes and out_axes, the slices fn is traced
// on, and its results batched by the replay of batching.h.
#include "spmd/vmap.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>

#include "jit/batching.h"
#include "jit/lax.h"
#include "jit/program.h"
#include "jit/trace.h"
#include "spmd/error.h"

namespace spmd::detail {

using compiler::Batched;

struct VmapCall::State {
  std::shared_ptr<compiler::Trace> trace;
  int first = 0;     // the first value fn records
  int64_t size = 0;  // the number of slices
  std::map<int, Batched> batched;
};

namespace {

// `axis` of a value of rank `rank` (negative from the end), or InvalidArgument naming `what`.
int checked_axis(const std::string& what, int axis, int rank, const Tensor& t) {
  if (axis < -rank || axis >= rank) {
    throw InvalidArgument(fmt::format("vmap: {} of type {} has no axis {} to map over{}", what,
                                      compiler::type_text(t.dtype(), t.shape()), axis,
                                      rank == 0 ? " (a rank-0 value cannot be mapped)" : ""));
  }
  return axis < 0 ? axis + rank : axis;
}

// The slices' common size, or InvalidArgument naming every mapped leaf's.
int64_t common_size(const std::vector<Tensor>& leaves, const std::vector<int>& axes,
                    const std::vector<std::string>& labels) {
  std::vector<std::string> sizes;
  int64_t size = -1;
  bool same = true;
  for (size_t i = 0; i < leaves.size(); ++i) {
    if (axes[i] < 0) continue;
    const int64_t n = leaves[i].shape()[static_cast<size_t>(axes[i])];
    same = same && (size < 0 || n == size);
    size = size < 0 ? n : size;
    sizes.push_back(fmt::format("{} has size {} along axis {}", labels[i], n, axes[i]));
  }
  if (size < 0) {
    throw InvalidArgument(
        "vmap: no argument is mapped (every in_axes entry is std::nullopt); map at least one");
  }
  if (!same) {
    throw InvalidArgument(
        fmt::format("vmap: the mapped axes have different sizes: {}", fmt::join(sizes, "; ")));
  }
  return size;
}

}  // namespace

std::optional<int> vmap_in_axis(const VmapAxes& in_axes, size_t index, size_t count) {
  if (in_axes.size() == 1) return in_axes[0];
  if (in_axes.size() != count) {
    throw InvalidArgument(fmt::format(
        "vmap: in_axes has {} entries for {} arguments (give one per argument, or one for all)",
        in_axes.size(), count));
  }
  return in_axes[index];
}

VmapCall::VmapCall(const std::vector<Tensor>& leaves, const VmapAxes& axes,
                   const std::vector<std::string>& labels)
    : state_(std::make_unique<State>()) {
  for (const Tensor& t : leaves) state_->trace = compiler::trace_of("vmap", {&leaves[0], &t});
  if (!state_->trace) state_->trace = compiler::Trace::current("vmap");
  std::vector<int> at;
  for (size_t i = 0; i < leaves.size(); ++i) {
    at.push_back(axes[i] ? checked_axis(labels[i], *axes[i], leaves[i].ndim(), leaves[i]) : -1);
  }
  state_->size = common_size(leaves, at, labels);
  for (size_t i = 0; i < leaves.size(); ++i) {
    if (at[i] < 0) {
      slices_.push_back(leaves[i]);
      continue;
    }
    // A stand-in of the slice's type: only its type is read, and nothing lowers it.
    Shape shape = leaves[i].shape();
    shape.erase(shape.begin() + at[i]);
    const Tensor slice =
        compiler::lax::full(compiler::Trace::current("vmap"), shape, leaves[i].dtype(), 0);
    state_->batched.emplace(slice.value(), Batched{leaves[i], at[i]});
    slices_.push_back(slice);
  }
  state_->first = static_cast<int>(state_->trace->program().ops.size());
}

VmapCall::~VmapCall() = default;

std::vector<Tensor> VmapCall::results(const std::vector<Tensor>& outs, const VmapAxes& out_axes) {
  if (out_axes.size() != 1 && out_axes.size() != outs.size()) {
    throw InvalidArgument(fmt::format(
        "vmap: out_axes has {} entries for {} result leaves (give one per leaf, or one for all)",
        out_axes.size(), outs.size()));
  }
  std::vector<int> values;
  for (const Tensor& t : outs) {
    if (compiler::trace_of("vmap: the function's result", {&t}) != state_->trace) {
      throw InvalidArgument("vmap: the function returned a Tensor of another trace");
    }
    values.push_back(t.value());
  }
  compiler::batch_values(*state_->trace, state_->first, values, state_->batched, state_->size);
  std::vector<Tensor> results;
  for (size_t i = 0; i < outs.size(); ++i) {
    const std::optional<int> axis = out_axes.size() == 1 ? out_axes[0] : out_axes[i];
    const auto it = state_->batched.find(outs[i].value());
    const Batched out = it != state_->batched.end() ? it->second : Batched{outs[i], {}};
    if (!axis) {
      if (out.dim) {
        throw InvalidArgument(
            fmt::format("vmap: result {} depends on a mapped argument, but its out_axes entry is "
                        "std::nullopt (which asks for one value shared by every slice)",
                        i));
      }
      results.push_back(out.value);
      continue;
    }
    const int rank = outs[i].ndim() + 1;
    const std::string what = fmt::format("result {}", i);
    if (*axis < -rank || *axis >= rank) {
      throw InvalidArgument(
          fmt::format("vmap: out_axes {} is out of range for {} of rank {}", *axis, what, rank));
    }
    results.push_back(compiler::batched_at(out, *axis < 0 ? *axis + rank : *axis, state_->size));
  }
  return results;
}

}  // namespace spmd::detail
