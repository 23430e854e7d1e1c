// Counter-based random bits: Threefry-2x32 with 20 rounds (Random123, D. E. Shaw Research),
// the hash behind JAX's default PRNG, laid out as JAX's partitionable mode lays it out
// (jax_threefry_partitionable, the default since JAX 0.5). Element i of an array, i its row-major
// flat index in the whole array, hashes the counter (i >> 32, i & 0xffffffff) under the key, so
// any block of the array is computed from its own indices alone: a device makes its shard without
// the rest and without communication. Pure; thread-safe.
// Open to lib/: the random family's attributes name the kinds of bits.
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

// JAX's bits of one hash: `bits`-wide (8, 16, 32 as y0 ^ y1 truncated; 64 as y0 << 32 | y1).
inline uint64_t bits_of(std::array<uint32_t, 2> y, int bits) {
  if (bits == 64) return uint64_t{y[0]} << 32 | y[1];
  return (y[0] ^ y[1]) & (bits == 32 ? 0xffffffffu : (1u << bits) - 1);
}

// Calls row(first, j, n) for each row of the block's last dimension, in order: the row holds
// the n consecutive flat indices first, first + 1, … (offset included) and is elements j … j + n
// of the block, row-major.
template <typename Row>
void for_each_row(const RandomBlock& b, Row&& row) {
  const size_t rank = b.shape.size();
  const int64_t n = rank == 0 ? 1 : b.extent[rank - 1];
  const int64_t rows = n == 0 ? 0 : shape_size(b.extent) / n;
  std::vector<int64_t> at(rank, 0);  // the row's index within the block (last entry unused)
  for (int64_t r = 0; r < rows; ++r) {
    uint64_t first = 0;
    for (size_t d = 0; d < rank; ++d) {
      first = first * static_cast<uint64_t>(b.shape[d]) +
              static_cast<uint64_t>(b.start[d] + (d + 1 < rank ? at[d] : 0));
    }
    row(first + b.offset, r * n, n);
    // The next row: the index over all but the last dimension, counted like an odometer.
    for (size_t d = rank > 0 ? rank - 1 : 0; d > 0; --d) {
      if (++at[d - 1] < b.extent[d - 1]) break;
      at[d - 1] = 0;
    }
  }
}

}  // namespace spmd::kernels
