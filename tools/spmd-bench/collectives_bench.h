// spmd-bench collectives: spmd's collectives beside Open MPI's, Gloo's and JAX's in the same run,
// each in processes of its own (spmd through spmd-bench's worker mode, MPI through mpirun, Gloo
// through spmd-bench-gloo, JAX through jax_worker.py: jit of shard_map over Gloo), plus a
// single-thread memcpy reference at every size.
#pragma once

#include <string>

namespace spmd::bench {

struct CollectivesBenchOptions {
  int processes = 2;
  std::string ops;    // comma-separated; empty: all
  std::string sizes;  // comma-separated with K/M/G; empty: 8 B … 256 MiB
  // Any of spmd, ucx (spmd over SPMD_TRANSPORT=ucx), mpi, gloo, jax.
  std::string impls = "spmd,mpi,gloo,jax";
  // Where to draw the run's bus bandwidth and latency (plot_collectives.py); empty: no picture.
  std::string plot;
  // "auto"; "tcp": spmd with SPMD_TRANSPORT=tcp, MPI with its tcp BTL; "ucx": impls spmd,ucx
  // unless given — spmd over its own transports beside spmd over UCX.
  std::string transport = "auto";
  // Spread the spmd processes over this many host ids (SPMD_HOST_ID), so that spmd's own rows
  // cross "hosts" over TCP and UCX's connect hosts; 0: one host.
  int hosts = 0;
  double seconds_per_point = 0.3;
  bool json = false;
  // Pin spmd's process i to core i (mod cores), as mpirun binds its ranks by default: the same
  // conditions for both. Unpinned, two spinning processes sometimes share a core here.
  bool bind = true;
  // spmd's buffers in ordinary memory instead of comm memory (spmd/comm_memory.h): payloads
  // between processes then go through the shared-memory rings, two copies per byte.
  bool ordinary_memory = false;
  // Run each op and size for every implementation in turn (fresh processes per point) instead of
  // one whole sweep per implementation.
  bool interleave = false;
  // Run the whole comparison this many times; each row reports its median round (by p50) and
  // the text output adds, per op and size, the spmd / baseline ratio of every round: a ratio of
  // two measurements taken minutes apart on a machine with slow periods says little, one of
  // rows taken side by side, repeated, says more.
  int rounds = 1;
};

// The parent: launches every implementation, prints rows. Returns 0 when every row is correct.
int run_collectives_bench(const CollectivesBenchOptions& options);

// One spmd process (launched by the parent with the SPMD_* environment).
int run_collectives_worker(const CollectivesBenchOptions& options);

}  // namespace spmd::bench
