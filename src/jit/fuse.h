// Fusion of element-wise chains in a per-device program: steps whose results only feed the next
// element-wise step of the same size become one kFused step, which the executor hands to the
// backend as one chain (kernels/chain.h: blocks of at most 512 elements, intermediates in L1), so
// a chain such as a * b + c reads its inputs and writes its result once instead of writing and
// re-reading every intermediate.
#pragma once

#include <cstdint>
#include <optional>

#include "jit/local_program.h"

namespace spmd::compiler {

// How a chain reads a broadcast from `from` to `to` in place (kernels/chain.h): element i of the
// result is element (i / repeat) % period of the operand. There is one where the operand's
// dimensions other than 1, aligned at the right, are one unbroken run of the result's (a bias
// row, a column of row maxima, a scalar: period 1); nothing otherwise.
struct BroadcastRead {
  int64_t period = 1, repeat = 1;
};
std::optional<BroadcastRead> broadcast_read(const Shape& from, const Shape& to);

// Rewrites `local` in place (before its last uses are marked). A broadcast read by nothing but
// one step of a chain joins the chain where a chain can read it in place in runs of at least
// kMinBroadcastRun elements (or it is a scalar's): the chain reads its operand, and the
// broadcast is never written. One-element steps chain too, and a scalar chain read by nothing
// but one larger chain joins it (Adam's bias corrections ride in its update): each element
// computes its steps, which the CPU's chain computes once a call (kernels/chain_hoist.h) and a
// GPU thread once before its elements (kernels/scalar_chain.h). No chain passes
// kernels::kMaxChainSteps steps or kMaxChainInputs inputs (a broadcast read in place counts as
// one); a longer run of element-wise steps becomes several chains.
void fuse_elementwise(LocalProgram& local);

// After fuse_elementwise: a float32 or float64 reduction of the result of an element-wise step
// or chain read by nothing else becomes one kFusedReduce step, in which the backend reduces the
// reduction's last axis as the chain makes its values (kernels/chain.h: run_chain_reduce_axis):
// - over the last axis, the chain runs a few rows at a time and each row is reduced while it is
//   in cache, so sum(exp(x), axis=-1) reads x once and writes only the sums (rows longer than
//   kMaxFusedRow elements are left apart: their buffer would leave the cache);
// - over an earlier axis, with at least kMinFusedColumns elements after it, the chain makes each
//   row's columns a slab at a time, added into the slab's sums, so a bias gradient's
//   sum(dy * mask, 0) never writes dy * mask.
// The other axes are reduced after, as before. Values are unchanged.
void fuse_reductions(LocalProgram& local);

// After fuse_reductions: a float32 or float64 psum of at least 64 KiB read by nothing but one
// element-wise step or chain of the same size and dtype, whose other inputs hold the same values on
// every device along the psum's axes (LocalProgram::varying) and are whole-size or single elements
// (a scalar's broadcast included), becomes one kPsumThen step at the chain's place: the all-reduce
// applies the chain to each range of the sum while it is in cache (compute/psum_then.h), so the
// devices of a process compute it once between them, and each process only its share of the
// elements, instead of every device reading the sum back and computing the whole chain. A
// data-parallel step's gradient all-reduce and its SGD update are the case: p - lr * psum(g).
// Values are unchanged: every element is the chain of the same sum and operands.
void fuse_psum_chains(LocalProgram& local);

}  // namespace spmd::compiler
