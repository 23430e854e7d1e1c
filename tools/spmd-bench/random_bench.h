// spmd-bench random: spmd::random's samplers beside their baselines, in the same run.
// - sharded: `elements` float32 normals under jit, split over the job's processes (one device
//   each), beside process 0 generating its share alone while the others wait: the split costs
//   nothing when the ratio is about 1 (no communication, each device computes only its block);
// - against JAX: the same normals on one device, spmd's jit beside JAX's (jax.random.normal under
//   jax.jit, from the build tree's virtual environment), one fresh process each, interleaved for
//   `rounds` rounds; the median round's ratio is reported.
#pragma once

#include <cstdint>
#include <string>

namespace spmd::bench {

struct RandomBenchOptions {
  int processes = 2;
  int64_t elements = int64_t{64} << 20;
  int iterations = 5;
  int rounds = 5;
  bool json = false;
  // Internal: which part a worker runs ("sharded" or "single").
  std::string mode = "sharded";
};

int run_random_bench(const RandomBenchOptions& options);
int run_random_worker(const RandomBenchOptions& options);

}  // namespace spmd::bench
