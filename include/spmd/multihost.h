// spmd::multihost — the multihost utilities (jax.experimental.multihost_utils): synchronising
// processes, gathering and broadcasting host data, and converting between host-local and global
// arrays.
//
// Every function here is collective: all processes of the cluster call it, in the same order.
// Thread-safe in the sense that concurrent calls from different threads of one process are
// matched in the order they reach the collectives engine; call them from one thread.
#pragma once

#include <chrono>
#include <string>

#include "spmd/array.h"
#include "spmd/host_array.h"
#include "spmd/mesh.h"
#include "spmd/partition_spec.h"

namespace spmd::multihost {

// Returns once every process has called sync_global_devices with the same `name`. Throws
// InvalidArgument in every process when the names differ, naming both names and processes, and
// DeadlineExceeded when some process has not arrived within `timeout`.
void sync_global_devices(const std::string& name,
                         std::chrono::milliseconds timeout = std::chrono::minutes(5));

// The global value of `array` on every process, as one host array of the array's shape (the
// same with one process as with many). `tiled` does not apply to global arrays (as in JAX).
HostArray process_allgather(const Array& array);

// Every process's `local` (equal shapes and dtypes): stacked along a new leading axis of size
// process_count() when `tiled` is false, concatenated along axis 0 when true. Throws
// CollectiveMismatch when the processes' shapes differ.
HostArray process_allgather(const HostArray& local, bool tiled = false);

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

}  // namespace spmd::multihost
