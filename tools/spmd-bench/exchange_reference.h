// The machine's ceiling for any transport that copies through shared memory: two processes, each
// copying its buffer into a ring in shared memory while copying the other's out of the other
// ring, both directions at once, in pieces of 256 KiB (rings of 1 MiB, as spmd's). Nothing but
// memcpy and two counters per ring: no framing, no reduction, no collective.
//
// An all-reduce over two processes sends and receives its whole buffer's worth per process
// (busbw = bytes / time), so with two copies per byte — into the ring and out of it, as spmd's
// rings and Open MPI's vader do — its bus bandwidth cannot pass this exchange's bandwidth per
// direction. The single-thread memcpy reference is the other scale: a copy within one core.
#pragma once

#include <vector>

#include "spmd-bench/collective_sweep.h"
#include "spmd-bench/result_row.h"

namespace spmd::bench {

// One row per size ("exchange", impl "reference", link "shm"): the median time for both
// processes to move `bytes` each way, buffers rotated through 64 MiB or more as the
// collectives' are. The processes are forked, pinned to CPUs 0 and 1 when `bind`, and killed
// when they make no progress for 10 seconds (the row is then absent, and a line on stderr says
// why).
std::vector<ResultRow> exchange_reference(const SweepOptions& s, bool bind);

}  // namespace spmd::bench
