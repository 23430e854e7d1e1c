// Steps a per-device program need not run, dropped before fusion (fuse.h) so that the chains on
// either side of them fuse and every chain reads each value once: XLA's common-subexpression
// pass and its removal of custom calls' identity wrappers, on spmd's steps.
#pragma once

#include "jit/local_program.h"

namespace spmd::compiler {

// Rewrites `local` in place, before fusion and before its last uses are marked:
// - a step whose operation passes its operand on (Operation::passes_operand_on: custom_vjp) is
//   dropped, and what read its slot reads the operand's;
// - a compute step that computes what an earlier one does (Operation::computes_same_as, on the
//   same slots, with the same local type, axes and dimensions) is dropped, and what read its slot
//   reads the earlier one's: jnp's compositions repeat operations (norm.logcdf's erfc of one
//   value twice, the same scalar constants many times) that cost a pass over memory, or a chain's
//   input, each.
// Values are unchanged. Two outputs may then name one slot, or an output a parameter's slot, as
// jit(lambda x: (x, x)) already makes them.
void drop_redundant_steps(LocalProgram& local);

}  // namespace spmd::compiler
