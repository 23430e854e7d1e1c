// One launch of the random-bits kernel (random_bits.cu), for random_bits.cc. Private to
// src/kernels/cuda.
#pragma once

#include <cuda_runtime_api.h>

#include <array>
#include <cstddef>
#include <cstdint>

#include "kernels/random_bits.h"
#include "kernels/strided_copy.h"

namespace spmd::kernels::cuda {

// `indices` maps element j of the block (its "from" offset, strided_copy.h) to its flat index in
// the whole array, offset included. Returns cudaGetLastError().
cudaError_t launch_random_bits(RandomBits kind, std::array<uint32_t, 2> key,
                               const StridedCopy& indices, std::byte* out, int blocks,
                               cudaStream_t stream);

}  // namespace spmd::kernels::cuda
