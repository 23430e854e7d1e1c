// jax.random.permutation's shuffle on a GPU (kernels/random_samplers.h's random_permute): the
// same rounds of a stable sort by fresh 32-bit keys, the key split before each (computed on the
// host, as the CPU's), the keys the device's random bits and the sort CUB's stable radix sort;
// then the array gathered along the axis in that order. Equal to the CPU's bit for bit. Queued
// on the GPU's stream, with temporary memory (about 16 bytes per element of the axis) from its
// pool; the call returns. Throws InvalidArgument for an axis of 2^31 or more elements.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "kernels/cuda/gpu_context.h"
#include "spmd/shape.h"

namespace spmd::kernels::cuda {

void random_permute(GpuContext& gpu, std::array<uint32_t, 2> key, size_t element_size,
                    const std::byte* in, const Shape& shape, int axis, std::byte* out);

}  // namespace spmd::kernels::cuda
