// spmd-bench cores: compute-bound work on every core (issue 51), spmd beside JAX in the same run.
// - ops: issue 51's table on 1 process × 1 CPU device beside JAX's CPU backend in one Python
//   process (cores_bench_worker.py), interleaved, as JAX/spmd speed ratios per round; with this
//   machine's limits measured in the same run (NumPy's all-core sgemm of 2048³, an all-core read
//   of the reductions' bytes) and each row's fraction of them;
// - steps: the MLP step and the transformer block data-parallel on 1 × 1, 1 × 2 devices (the
//   batch split) and 2 processes × 1 device, each as a ratio to 1 × 1's time in its round.
// Ratios are reported per round and as the median round's.
#pragma once

namespace spmd::bench {

struct CoresBenchOptions {
  int iterations = 5;
  int rounds = 2;
  bool json = false;
};

int run_cores_bench(const CoresBenchOptions& options);

}  // namespace spmd::bench
