// XLA's algebraic simplifier where it changes JAX's values, on a traced program before it is
// lowered: jax.jit hands XLA the differentiated program, and XLA rewrites parts of it before they
// run, so a rewrite that moves a value at an edge (an overflow, a subnormal) is part of what JAX
// computes. Only rewrites read from JAX 0.10.2's compiled programs are here; each says where it
// matters.
#pragma once

#include "jit/program.h"

namespace spmd::compiler {

// `program` with these rewrites; values and the ops' order are kept, so value i is still op i
// (an op a rewrite no longer reads stays, and the partitioner drops it where nothing reads it):
// - sqrt(x * x) of a float x is |x| (XLA's HandleSqrt), and so is sqrt(reshape(x * x)) where
//   nothing else reads the reshapes (XLA moves reshapes past element-wise ops first): the
//   reshapes then read x. jnp.linalg.norm over an axis of one element, sqrt(sum(x * x)) with the
//   sum reshaped away (lax.h: reduce), is |x| where x * x overflows or underflows: JAX's norm of
//   [3e38] is 3e38, not inf.
// After autodiff, so a derivative is the derivative of what was written (JAX's grad of
// sqrt(x * x) at 0 is NaN; of |x| it would be 0).
Program simplified_like_xla(const Program& program);

}  // namespace spmd::compiler
