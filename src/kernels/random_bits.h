// Counter-based random bits: Threefry-2x32 with 20 rounds (Random123, D. E. Shaw Research),
// the hash behind JAX's default PRNG, laid out as JAX's partitionable mode lays it out
// (jax_threefry_partitionable, the default since JAX 0.5). Element i of an array, i its row-major
// flat index in the whole array, hashes the counter (i >> 32, i & 0xffffffff) under the key, so
// any block of the array is computed from its own indices alone: a device makes its shard without
// the rest and without communication. Pure; thread-safe.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "spmd/shape.h"

namespace spmd::kernels {

// What each element's hash (y0, y1) becomes.
enum class RandomBits : uint8_t {
  k8,    // uint8:  y0 ^ y1, truncated (as JAX converts)
  k16,   // uint16: y0 ^ y1, truncated
  k32,   // uint32: y0 ^ y1
  k64,   // uint64: y0 << 32 | y1
  kKeys  // two uint32 per element, y0 then y1: a new key (jax.random.split)
};

// A block of the array: `start` and `extent` per dimension of `shape` (the array's shape, for
// kKeys without the trailing 2). `offset` is added to every flat index (fold_in's data is the
// index of a one-element block).
struct RandomBlock {
  std::array<uint32_t, 2> key{};
  Shape shape;
  std::vector<int64_t> start;
  Shape extent;
  uint64_t offset = 0;
};

// Writes the block's elements, row-major, at `out`.
void random_bits(RandomBits kind, const RandomBlock& block, std::byte* out);

// Threefry-2x32, 20 rounds, of one counter.
std::array<uint32_t, 2> threefry_2x32(std::array<uint32_t, 2> key, std::array<uint32_t, 2> counter);

}  // namespace spmd::kernels
