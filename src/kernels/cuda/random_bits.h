// Counter-based random bits on a GPU (kernels/random_bits.h's contract): each element of the
// block hashes its flat index in the whole array with Threefry-2x32 (Random123's, compiled for
// the device), so a GPU's bits are the CPU's and JAX's, bit for bit. One launch; the call
// returns. Throws InvalidArgument for a rank above 8.
#pragma once

#include <cstddef>

#include "kernels/cuda/gpu_context.h"
#include "kernels/random_bits.h"

namespace spmd::kernels::cuda {

void random_bits(GpuContext& gpu, RandomBits kind, const RandomBlock& block, std::byte* out);

}  // namespace spmd::kernels::cuda
