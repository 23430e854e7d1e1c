// The device seam's CUDA implementation (kernels/backend.h): each method is this folder's kernel
// of the same name on the calling thread's GPU (gpu_scope.h), queued on its stream. Pointers are
// that GPU's device memory; memory(id) is MemorySpace::device(id).
//
// Every method but one is the GPU's: chain, convert, fill, iota, reduce, argmax, broadcast,
// transpose, slice, concatenate, random_bits, random_permute, matmul, cumsum, cumprod,
// search_sorted, top_k and take. random_sample (JAX's samplers, which repeat XLA's CPU code
// operation for operation) is not yet ported: it throws spmd::Error saying so. The runtime does not
// yet make GPU devices, so backend_for("gpu") is not this backend yet; tests/gpu calls it directly.
#pragma once

#include "kernels/backend.h"

namespace spmd::kernels::cuda {

const Backend& cuda_backend();

}  // namespace spmd::kernels::cuda
