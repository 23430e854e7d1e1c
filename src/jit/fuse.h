// Fusion of element-wise chains in a per-device program: steps whose results only feed the next
// element-wise step of the same size become one kFused step, which the executor hands to the
// backend as one chain (kernels/chain.h: blocks of at most 512 elements, intermediates in L1), so
// a chain such as a * b + c reads its inputs and writes its result once instead of writing and
// re-reading every intermediate.
#pragma once

#include "jit/local_program.h"

namespace spmd::compiler {

// Rewrites `local` in place (before its last uses are marked).
void fuse_elementwise(LocalProgram& local);

}  // namespace spmd::compiler
