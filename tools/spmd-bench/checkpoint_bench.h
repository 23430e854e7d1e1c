// spmd-bench checkpoint: saving and restoring a sharded float32 array across N processes, beside
// a plain sequential write and read of the same bytes to the same disk, in the same run.
// spmd-bench checkpoint --orbax: restoring an Orbax checkpoint (Orbax's defaults: OCDBT, Zarr v2,
// zstd) that Orbax wrote in JAX, with spmd and with Orbax's own restore, interleaved, in one
// process of `devices` CPU devices (orbax_bench_worker.py).
#pragma once

#include <cstddef>
#include <string>

namespace spmd::bench {

struct CheckpointBenchOptions {
  int processes = 2;
  size_t bytes = size_t{1} << 30;  // the global array
  int iterations = 3;
  std::string dir;  // where to write; default: a fresh directory under /tmp
  std::string compression = "none";
  bool json = false;
  bool orbax = false;  // --orbax: the Orbax restore comparison instead
  int devices = 2;     // --orbax: CPU devices of the one process, for spmd and for JAX alike
  int leaves = 8;      // --orbax: how many leaves the bytes are split into
};

int run_checkpoint_bench(const CheckpointBenchOptions& options);
int run_checkpoint_worker(const CheckpointBenchOptions& options);
int run_orbax_restore_bench(const CheckpointBenchOptions& options);

}  // namespace spmd::bench
