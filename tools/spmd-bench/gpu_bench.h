// spmd-bench gpu: the CUDA backend's kernels beside their baselines on the same GPU, the same
// buffers and the same stream, in one run (issue "GPUs", its performance targets):
// - a (size × size) · (size × size) bfloat16 matmul through spmd (kernels/cuda/matmul.h) beside
//   cuBLAS's cublasGemmEx called directly: TFLOP/s and the ratio (target ≥ 0.9);
// - the fused a * b + c over `elements` float32 (one chain, kernels/cuda/chain.h) beside a
//   device-to-device copy of one operand: bandwidth counting bytes read plus written, and the
//   ratio (target ≥ 0.8);
// - the host's microseconds per call of small operations (a 4-byte memset, a fill kernel, an
//   allocation and its free, a 65,536-element chain, a 128³ float32 product through spmd and
//   through cuBLAS), each the median of 15 rounds of 100 calls queued (fewer than fill CUDA's
//   launch queue, so the host's cost, not the GPU's): what a step of many small operations pays
//   when its GPU waits;
// - what CUDA graphs would save such a step: 5 of those products and 30 of those chains queued
//   one launch at a time, beside the same captured once into a graph and replayed, captured
//   again into an update of it every call, and replayed after every chain node's parameters
//   are set again; host µs per step, and the step's time on the stream, direct and as a graph.
// Each measurement is the median of `iterations` calls timed with CUDA events, taken in turns
// (spmd, baseline, spmd, …) after a warm-up; inputs are random, never zeros; each result is
// checked against the baseline's or the host's before timing. (The host rows time only the
// host's side, over zeroed buffers.) Built when the CUDA backend is.
#pragma once

#include <cstdint>

namespace spmd::bench {

struct GpuBenchOptions {
  int64_t matmul_size = 8192;
  int64_t elements = int64_t{256} << 20;
  int iterations = 20;
  int gpu = 0;
  bool json = false;
};

int run_gpu_bench(const GpuBenchOptions& options);

}  // namespace spmd::bench
