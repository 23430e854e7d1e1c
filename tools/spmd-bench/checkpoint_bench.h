// spmd-bench checkpoint: saving and restoring a sharded float32 array across N processes, beside
// a plain sequential write and read of the same bytes to the same disk, in the same run.
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
};

int run_checkpoint_bench(const CheckpointBenchOptions& options);
int run_checkpoint_worker(const CheckpointBenchOptions& options);

}  // namespace spmd::bench
