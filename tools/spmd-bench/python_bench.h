// spmd-bench python: the Python package's costs beside their baselines, in the same run.
// - dispatch: a cached spmd.jit call of x + 1 from Python beside JAX's cached jax.jit call of the
//   same function, both in one Python process (python_bench_worker.py), interleaved;
// - step: train_bench.cc's MLP train step from Python with spmd beside the same step in C++
//   (one device, one process each), fresh processes, interleaved for `rounds` rounds.
// Ratios are reported per round and as the median round's.
#pragma once

namespace spmd::bench {

struct PythonBenchOptions {
  int iterations = 5;
  int rounds = 3;
  bool json = false;
};

int run_python_bench(const PythonBenchOptions& options);
// The C++ side of `step`, in a one-process job of one device.
int run_python_cxx_step_worker(const PythonBenchOptions& options);

}  // namespace spmd::bench
