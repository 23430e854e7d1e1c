// vmap's machinery (spmd/vmap.h), as JAX's batching interpreter: the function is traced once on
// one slice of each mapped argument, then every recorded operation that depends on a slice is
// replayed through its batching rule (Operation::batch, one per family in src/jit/ops/), which
// appends the same computation over all slices to the trace. Operations that depend on no slice
// (closed-over values, constants, keys shared by all slices) stay as they are. The slices stand
// in for the mapped arguments only while tracing; the partitioner never lowers them, nor anything
// computed from them alone.
// Open to lib/: a library's operations state their batching rules, as ops/ do.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <vector>

#include "jit/operation.h"
#include "jit/trace.h"

namespace spmd::compiler {

// The slices of `b` along a new or moved dimension `dim` of its value: a batched value with its
// batch dimension moved there, an unbatched one broadcast to `size` slices.
Tensor batched_at(const Batched& b, int dim, int64_t size);
// batched_at(b, 0, size): what most rules start from.
Tensor batched_first(const Batched& b, int64_t size);
// The rule of most one-operand kinds: `operation` (the same kind, its attributes shifted past a
// leading batch dimension) applied to `x`'s slices moved first; the result's batch is first.
Batched on_slices_first(std::shared_ptr<const Operation> operation, const Batched& x, int64_t size);
// The rule of kinds whose kernel takes one slice (top_k, permutation by one key, take of batched
// operands): `fn` on each slice of the batched operands (the unbatched ones whole), the results
// stacked along a new first dimension. Requires size > 0.
Tensor per_slice(int64_t size, std::span<const Batched> operands,
                 const std::function<Tensor(const std::vector<Tensor>&)>& fn);

// Replays the values of `trace` from `first` on that `outputs` depend on: each one with a batched
// operand (in `batched`, which holds the slices' values on entry) through its batching rule,
// recording its batched value in `batched`. Throws InvalidArgument from a rule.
void batch_values(Trace& trace, int first, const std::vector<int>& outputs,
                  std::map<int, Batched>& batched, int64_t size);

}  // namespace spmd::compiler
