// The device seam's CUDA implementation (kernels/backend.h): each method is this folder's kernel
// of the same name on the calling thread's GPU (gpu_scope.h), queued on its stream. Pointers are
// that GPU's device memory; memory(id) is MemorySpace::device(id).
//
// Every method runs on the GPU: chain, convert, fill, iota, reduce, argmax, broadcast,
// transpose, slice, concatenate, random_bits, random_permute, matmul, cumsum, cumprod,
// search_sorted, top_k, take, scatter_add and sort, except JAX's samplers (random_sample, gamma,
// poisson: they repeat XLA's CPU code operation for operation) and the factorizations (cholesky,
// qr), which the CPU computes on host copies (host_fallback.h), bit for bit as on CPU devices.
// Its memory is the GPUs' (device_memory.h): blocks from each GPU's pool, copies as copy_plan.h
// plans them, and each device thread bound to its GPU. The runtime loads this library as the GPU
// platform's plugin (plugin.cc), which makes it backend_for("gpu").
#pragma once

#include "kernels/backend.h"

namespace spmd::kernels::cuda {

const Backend& cuda_backend();

}  // namespace spmd::kernels::cuda
