// Moving a value between layouts inside the per-device program: pending sums first (psum, or
// psum_scatter when the target splits a dimension over exactly those axes), then dimensions
// whose split moves to another dimension (all_to_all), then gathers, then the dimensions that
// only become split (each device keeps its part: no communication).
#include <fmt/format.h>

#include <algorithm>

#include "jit/ops/padding.h"
#include "jit/partitioner.h"

namespace spmd::compiler {

int Partitioner::emit(Step step) {
  step.output = new_slot();
  result_.steps.push_back(std::move(step));
  return result_.steps.back().output;
}

int Partitioner::fill_padding(int value, int slot, const Layout& layout,
                              const std::vector<int>& dims, PaddingFill fill) {
  const Op& op = program_.ops[static_cast<size_t>(value)];
  for (int d : padded_dims(op.shape, layout, mesh_, dims)) {
    const auto i = static_cast<size_t>(d);
    Step s{.kind = StepKind::kCompute,
           .operation = make_operation<FillPaddingOp>(d, op.shape[i],
                                                      axis_names(layout.dims[i], mesh_), fill),
           .inputs = {slot},
           .dtype = op.dtype};
    s.shape = local(op.shape, layout);
    slot = emit(std::move(s));
  }
  return slot;
}

int Partitioner::reshard(int value, int slot, Layout cur, const Layout& to) {
  const Op& op = program_.ops[static_cast<size_t>(value)];
  auto step = [&](StepKind kind, std::vector<int> axes, int dim, int dim2 = -1) {
    Step s{.kind = kind, .inputs = {slot}, .dtype = op.dtype, .axes = std::move(axes)};
    s.dim = dim;
    s.dim2 = dim2;
    s.shape = local(op.shape, cur);
    slot = emit(std::move(s));
  };
  const size_t rank = cur.dims.size();
  if (!cur.partial.empty()) {
    const std::vector<int> axes = std::exchange(cur.partial, {});
    int scatter = -1;
    for (size_t d = 0; d < rank && scatter < 0; ++d) {
      if (cur.dims[d].empty() && to.dims[d] == axes) scatter = static_cast<int>(d);
    }
    if (scatter >= 0) cur.dims[static_cast<size_t>(scatter)] = axes;
    step(scatter >= 0 ? StepKind::kPsumScatter : StepKind::kPsum, axes, scatter);
  }
  for (size_t d = 0; d < rank; ++d) {
    if (cur.dims[d].empty() || cur.dims[d] == to.dims[d]) continue;
    const std::vector<int> axes = cur.dims[d];
    int target = -1;
    for (size_t e = 0; e < rank && to.dims[d].empty(); ++e) {
      if (e != d && cur.dims[e].empty() && to.dims[e] == axes) target = static_cast<int>(e);
    }
    cur.dims[d].clear();
    if (target >= 0) {
      cur.dims[static_cast<size_t>(target)] = axes;
      step(StepKind::kAllToAll, axes, target, static_cast<int>(d));
    } else {
      step(StepKind::kAllGather, axes, static_cast<int>(d));
    }
  }
  for (size_t d = 0; d < rank; ++d) {
    if (!cur.dims[d].empty() || to.dims[d].empty()) continue;
    cur.dims[d] = to.dims[d];
    step(StepKind::kLocalSlice, to.dims[d], static_cast<int>(d));
  }
  return slot;
}

int Partitioner::materialize(int value, const Layout& want) {
  const Op& op = program_.ops[static_cast<size_t>(value)];
  std::vector<int> inputs;
  if (lazy_[static_cast<size_t>(value)]) inputs = lazy_[static_cast<size_t>(value)](*this, want);
  Step s{.kind = StepKind::kCompute,
         .operation = op.operation,
         .inputs = std::move(inputs),
         .dtype = op.dtype};
  s.shape = local(op.shape, want);
  const int slot = emit(std::move(s));
  versions_[static_cast<size_t>(value)].emplace_back(want, slot);
  return slot;
}

int Partitioner::slot_with(int value, const Layout& want) {
  auto& versions = versions_[static_cast<size_t>(value)];
  for (const auto& [layout, slot] : versions) {
    if (layout == want) return slot;
  }
  if (versions.empty()) return materialize(value, want.settled());
  const int slot = reshard(value, versions.front().second, versions.front().first, want);
  versions.emplace_back(want, slot);
  return slot;
}

int Partitioner::emit_compute(int value, std::vector<int> inputs, const Layout& out,
                              const std::shared_ptr<const Operation>& local_operation) {
  const Op& op = program_.ops[static_cast<size_t>(value)];
  Step s{.kind = StepKind::kCompute,
         .operation = local_operation ? local_operation : op.operation,
         .inputs = std::move(inputs),
         .dtype = op.dtype};
  s.shape = local(op.shape, out);
  return emit(std::move(s));
}

bool overlaps(const std::vector<int>& axes, const std::set<int>& used) {
  return std::any_of(axes.begin(), axes.end(), [&](int a) { return used.count(a) != 0; });
}

int Partitioner::emit_collective(StepKind kind, int slot, int value, const Layout& layout,
                                 std::vector<int> axes, int dim) {
  const Op& op = program_.ops[static_cast<size_t>(value)];
  Step s{.kind = kind, .inputs = {slot}, .dtype = op.dtype, .axes = std::move(axes), .dim = dim};
  s.shape = local(op.shape, layout);
  return emit(std::move(s));
}

}  // namespace spmd::compiler
