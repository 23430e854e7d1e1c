// spmd-bench reshard: device_put of a row-sharded float32 array to column sharding over N
// processes, beside an all_to_all moving the same bytes, in the same run.
#pragma once

#include <cstddef>

namespace spmd::bench {

struct ReshardBenchOptions {
  int processes = 2;
  size_t bytes = size_t{256} << 20;  // the global array
  int iterations = 5;
  bool json = false;
};

int run_reshard_bench(const ReshardBenchOptions& options);
int run_reshard_worker(const ReshardBenchOptions& options);

}  // namespace spmd::bench
