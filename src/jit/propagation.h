// Sharding propagation as JAX's compiler runs it before partitioning: Shardy's op-priority
// propagation with its aggressive strategy, over the traced program. jit gives its outputs the
// layouts this finds (partition.cc), so that an output's sharding is the one jax.jit gives the
// same program; partition()'s forward rules still choose how each value is computed.
//
// The schedule (Shardy's op_priority_propagation.cc), each round to a fixed point over a worklist
// in program order (a changed value's defining operation and users come back next):
//   0. element-wise operations, reshapes and transposes whose operands have one use each;
//   1. the same whatever their uses;
//   2. every operation along its pass-through factors, broadcasts only from result to operand;
//   3. along every factor, broadcasts still only backward;
//   4. everything, both ways.
// Parameters keep their layouts (closed, as jax.jit lowers in_shardings), a sharding constraint's
// result takes its sharding (and its operand too, when nothing else names one for it), and a
// given out layout is pushed to its value before and after each round.
#pragma once

#include <optional>
#include <vector>

#include "jit/layout.h"
#include "jit/program.h"
#include "spmd/mesh.h"

namespace spmd::compiler {

// Per value of `program`, the layout propagation gives it (no pending sums; replicated for a
// value it never reaches). nullopt where JAX would decide otherwise or this cannot follow it: a
// mesh with Explicit axes (types decide there), or a live operation with operands and no factor
// rule (Operation::factor_rule). The parameters' layouts and the outputs' asked ones are the
// program's own (program.h).
std::optional<std::vector<Layout>> propagate_like_jax(const Program& program, const Mesh& mesh);

}  // namespace spmd::compiler
