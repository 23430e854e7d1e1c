// spmd::multihost — the multihost utilities (jax.experimental.multihost_utils): synchronising
// processes, gathering and broadcasting host data, and converting between host-local and global
// arrays.
//
// Every function here is collective: all processes of the cluster call it, in the same order.
// Thread-safe in the sense that concurrent calls from different threads of one process are
// matched in the order they reach the collectives engine; call them from one thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "spmd/array.h"
#include "spmd/host_array.h"
#include "spmd/mesh.h"
#include "spmd/partition_spec.h"

namespace spmd::multihost {

// Returns once every process has called sync_global_devices with the same `name`. Throws
// InvalidArgument in every process when the names differ, naming both names and processes, and
// DeadlineExceeded when some process has not arrived within `timeout` (default: the job's
// collective timeout, distributed::Options::collective_timeout).
void sync_global_devices(const std::string& name,
                         std::optional<std::chrono::milliseconds> timeout = std::nullopt);

// The global value of `array` on every process, as one host array of the array's shape (the
// same with one process as with many). `tiled` does not apply to global arrays (as in JAX).
HostArray process_allgather(const Array& array);

// Every process's `local` (equal shapes and dtypes): stacked along a new leading axis of size
// process_count() when `tiled` is false, concatenated along axis 0 when true. Throws
// CollectiveMismatch when the processes' shapes differ.
HostArray process_allgather(const HostArray& local, bool tiled = false);

// JAX's multihost_utils.assert_equal: returns when every process passed an equal `value` (dtype,
// shape and bytes, compared by a 64-bit hash); otherwise throws InvalidArgument in every process,
// naming `what` and a process whose value differs from process 0's.
void assert_equal(const HostArray& value, const std::string& what);

// The `in` of the one process passing is_source = true, on every process (the others' `in`
// gives only the shape and dtype, which must match the source's). Throws InvalidArgument in every
// process unless exactly one process is the source.
HostArray broadcast_one_to_all(const HostArray& in, bool is_source);
// is_source = (process_index() == 0), JAX's default.
HostArray broadcast_one_to_all(const HostArray& in);

// The global array whose part on this process is `local`, laid out by NamedSharding(mesh, spec)
// (each dimension split over processes is local × the number of processes along it).
Array host_local_array_to_global_array(const HostArray& local, const Mesh& mesh,
                                       const PartitionSpec& spec);

// This process's part of `array` laid out by NamedSharding(mesh, spec) (resharded there first
// when it is laid out otherwise). Throws InvalidArgument when this process's devices do not cover
// one box of the array.
HostArray global_array_to_host_local_array(const Array& array, const Mesh& mesh,
                                           const PartitionSpec& spec);

// JAX's multihost_utils.reached_preemption_sync_point: true at the one step, the same in every
// process, at which a job that is being preempted should save a checkpoint and stop. Call it
// from every process at every step (with increasing `step`s), after the step's work:
//
//   for (int64_t step = start; step < steps; ++step) {
//     state = train_step(state, loader.next().data);
//     manager.save(step, state);                        // saves at the sync step too (should_save)
//     if (spmd::multihost::reached_preemption_sync_point(step)) break;   // and exit 0
//   }
//
// The first call installs a handler for the preemption signal (distributed::Options::
// preemption_signal, SIGTERM by default); a program that never calls it keeps the signal's
// default action. Once any process has received the signal, the processes agree through the
// coordination service on the first step all of them can still reach — one past the latest step
// at which any of them learnt of it — and every process returns true there, false before.
// Until a signal arrives a call costs one key-value read. A second signal to the same process
// ends it at once (the default action). Calling twice with the same step gives the same answer.
// Running alone, the sync step is the step after the signal. Assumes the steps run in lockstep
// (every step communicates across all processes, as a data-parallel step does); a process found
// past the agreed step throws FailedPrecondition saying so.
bool reached_preemption_sync_point(int64_t step);

}  // namespace spmd::multihost
