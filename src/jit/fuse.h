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

// After fuse_elementwise: a float32 or float64 reduction over axes that include the last one,
// of the result of an element-wise step or chain read by nothing else, becomes one kFusedReduce
// step: the backend runs the chain a few rows at a time and reduces each row while it is in
// cache (kernels/chain.h: run_chain_reduce), so sum(exp(x), axis=-1) reads x once and writes
// only the sums; the other axes are reduced after, as before. Values are unchanged. Rows longer
// than kMaxFusedRow elements are left apart (their buffer would leave the cache).
void fuse_reductions(LocalProgram& local);

}  // namespace spmd::compiler
