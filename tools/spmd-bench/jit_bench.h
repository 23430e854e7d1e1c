// spmd-bench jit: spmd::jit beside the same work done without it, in the same run:
// - dispatch: a cached call of `x + 1` on 16 floats on one device, beside a direct call of the
//   same kernel (with its output allocation);
// - contraction: a (2048 × 2048) · (2048 × 2048) float32 matmul split by rows over the
//   processes, beside OpenBLAS on the same per-device blocks;
// - fusion: `a * b + c` over 16 Mi float32 on one device, beside a hand-written single loop;
// - shard_map step: seed 002's data-parallel step written with lax::shard_map under jit (grad
//   inside, pmean), with check_vma and without: a fresh jit's first call (the trace, and the
//   program found in the process's compile cache) and a cached call;
// - mlp: a two-layer MLP forward, data-parallel and Megatron-style, beside the same computation
//   written with shard_map and the named collectives;
// - with JAX (--impls spmd,jax, the default): the same dispatch, matmul, fusion and MLP forwards
//   with JAX from the build's venv on as many processes (jax_worker.py jit), interleaved with
//   spmd's over --rounds rounds; the row gives each ratio's rounds and median.
#pragma once

#include <string>

namespace spmd::bench {

struct JitBenchOptions {
  int processes = 2;
  int iterations = 7;
  bool json = false;
  std::string impls = "spmd,jax";  // spmd alone, or spmd beside JAX
  int rounds = 3;
};

int run_jit_bench(const JitBenchOptions& options);
int run_jit_worker(const JitBenchOptions& options);

}  // namespace spmd::bench
