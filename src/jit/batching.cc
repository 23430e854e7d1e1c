// vmap's replay (batching.h) and the helpers the families' batching rules share.
#include "jit/batching.h"

#include <fmt/format.h>

#include <numeric>
#include <utility>

#include "jit/lax.h"
#include "spmd/error.h"

namespace spmd::compiler {

Tensor batched_at(const Batched& b, int dim, int64_t size) {
  if (!b.dim) {
    Shape shape = b.value.shape();
    shape.insert(shape.begin() + dim, size);
    return lax::broadcast(lax::expand_dims(b.value, dim), shape);
  }
  if (*b.dim == dim) return b.value;
  std::vector<int64_t> perm(static_cast<size_t>(b.value.ndim()));
  std::iota(perm.begin(), perm.end(), int64_t{0});
  perm.erase(perm.begin() + *b.dim);
  perm.insert(perm.begin() + dim, *b.dim);
  return lax::transpose(b.value, perm);
}

Tensor batched_first(const Batched& b, int64_t size) { return batched_at(b, 0, size); }

Batched on_slices_first(std::shared_ptr<const Operation> operation, const Batched& x,
                        int64_t size) {
  return {lax::bind(std::move(operation), {batched_first(x, size)}), 0};
}

Tensor per_slice(int64_t size, std::span<const Batched> operands,
                 const std::function<Tensor(const std::vector<Tensor>&)>& fn) {
  std::vector<Tensor> firsts;
  for (const Batched& b : operands) firsts.push_back(b.dim ? batched_first(b, size) : b.value);
  std::vector<Tensor> parts;
  for (int64_t i = 0; i < size; ++i) {
    std::vector<Tensor> slice;
    for (size_t j = 0; j < operands.size(); ++j) {
      if (!operands[j].dim) {
        slice.push_back(firsts[j]);
        continue;
      }
      const Shape shape = firsts[j].shape();
      std::vector<int64_t> start(shape.size(), 0);
      Shape extent = shape;
      start[0] = i;
      extent[0] = 1;
      slice.push_back(lax::reshape(lax::slice(firsts[j], start, extent),
                                   Shape(shape.begin() + 1, shape.end())));
    }
    parts.push_back(lax::expand_dims(fn(slice), 0));
  }
  return lax::concatenate(parts, 0);
}

namespace {

// needed[v - first]: `outputs` or the effects traced since `first` depend on value v
// (first ≤ v < end).
std::vector<bool> needed_values(Trace& trace, int first, int end, const std::vector<int>& outputs) {
  std::vector<bool> needed(static_cast<size_t>(end - first), false);
  for (int out : outputs) {
    if (out >= first && out < end) needed[static_cast<size_t>(out - first)] = true;
  }
  for (int e : trace.program().effects) {
    if (e >= first && e < end) needed[static_cast<size_t>(e - first)] = true;
  }
  for (int v = end - 1; v >= first; --v) {
    if (!needed[static_cast<size_t>(v - first)]) continue;
    for (int in : trace.op(v).inputs) {
      if (in >= first) needed[static_cast<size_t>(in - first)] = true;
    }
  }
  return needed;
}

}  // namespace

void batch_values(Trace& trace, int first, const std::vector<int>& outputs,
                  std::map<int, Batched>& batched, int64_t size) {
  const int end = static_cast<int>(trace.program().ops.size());
  const std::vector<bool> needed = needed_values(trace, first, end, outputs);
  const std::shared_ptr<Trace> self = trace.shared_from_this();
  for (int v = first; v < end; ++v) {
    if (!needed[static_cast<size_t>(v - first)]) continue;
    // A copy: the rule appends to the program, which may move its operations.
    const Op op = trace.op(v);  // NOLINT(performance-unnecessary-copy-initialization)
    std::vector<Batched> operands;
    bool any = false;
    for (int in : op.inputs) {
      const auto it = batched.find(in);
      any = any || it != batched.end();
      operands.push_back(it != batched.end() ? it->second : Batched{Tensor(self, in), {}});
    }
    if (!any) continue;
    batched.emplace(v, op.operation->batch(op, operands, size));
    // An effect traced on one slice: the copies its rule made for every slice stand in its place.
    if (op.operation->has_effect()) std::erase(trace.program().effects, v);
  }
}

}  // namespace spmd::compiler
