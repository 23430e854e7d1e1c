// spmd-bench reshard: device_put of a row-sharded float32 array to column sharding over N
// processes, beside an all_to_all moving the same bytes, in the same run; and (--impls spmd,jax,
// the default) beside JAX's device_put of the same array, interleaved over --rounds rounds.
#pragma once

#include <cstddef>
#include <string>

namespace spmd::bench {

struct ReshardBenchOptions {
  int processes = 2;
  size_t bytes = size_t{256} << 20;  // the global array
  int iterations = 5;
  bool json = false;
  std::string impls = "spmd,jax";  // spmd alone, or beside JAX's device_put (jax_worker.py)
  int rounds = 3;
};

int run_reshard_bench(const ReshardBenchOptions& options);
int run_reshard_worker(const ReshardBenchOptions& options);

}  // namespace spmd::bench
