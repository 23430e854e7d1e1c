// spmd-bench train: one training step of a two-layer MLP (forward, backward, Adam), in the same
// run:
// - jit: spmd::jit of value_and_grad and optim::adam (the partitioner reduces the gradients),
//   beside the same step written by hand with shard_map, the block operations and pmean; steps
//   per second over data parallelism on all processes;
// - scaling: the jit step's samples per second on all processes (the batch split over them)
//   beside process 0 alone on the whole batch, with the others waiting at a barrier;
// - compile: the train step's trace and partition time (lower() on a new jit), its first call,
//   its second call and the median of calls 3 to 100 (the cache at work);
// - --platform gpu: both on GPUs (README, "GPUs"), the same rows;
// - with JAX (--impls spmd,jax, the default): the same data-parallel step with JAX and Optax on
//   as many processes, from the same parameters and batch (jax_worker.py train), interleaved
//   over --rounds rounds: the first 10 losses must agree within 1e-4 relative, and the row gives
//   the step's speed ratio.
#pragma once

#include <string>

namespace spmd::bench {

struct TrainBenchOptions {
  int processes = 2;
  int iterations = 7;
  bool json = false;
  std::string impls = "spmd,jax";
  int rounds = 3;
  // "cpu", or "gpu": spmd's processes run with SPMD_PLATFORMS=gpu and JAX's on its CUDA
  // backend (JAX_PLATFORMS=cuda), one process per GPU.
  std::string platform = "cpu";
};

int run_train_bench(const TrainBenchOptions& options);

// The jit step alone on this process's first device, from the same parameters and batch: the
// median seconds per step over `iterations` timings of 5 steps each (spmd-bench python's C++
// side; its Python twin is python_bench_worker.py's mlp_step).
double mlp_step_seconds_on_one_device(int iterations);
int run_train_worker(const TrainBenchOptions& options);

}  // namespace spmd::bench
