// psum followed by an element-wise function of the sum, in the all-reduce's own pass
// (Communicator::all_reduce_then): what jit runs for a psum whose only reader is an element-wise
// chain of values every device along the axes holds alike, such as a data-parallel step's
// gradient all-reduce and the SGD update after it (jit/fuse.h: fuse_psum_chains). The devices of
// a process compute the chain once between them, and each process on its share of the elements.
#pragma once

#include "spmd/block.h"
#include "spmd/communicator.h"
#include "spmd/named_collectives.h"

namespace spmd {

// then(sum) for sum = psum(x, axes), as a block of x's dtype and shape: `then` reads elements
// [first, first + n) of the sum at `reduced` and writes its values for them at `out`
// (AllReduceEpilogue's contract: element-wise, the same values on every device along the axes).
// A host block of a dtype other than bool reduced over more than one device runs it inside the
// all-reduce; anything else (one device, a device block, bool) takes psum() and then `then` over
// the whole sum, on the calling thread. Throws what psum throws.
Block psum_then(Block x, const AxisEntry& axes, const AllReduceEpilogue& then);

}  // namespace spmd
