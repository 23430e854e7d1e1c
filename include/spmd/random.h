// spmd::random — JAX's random numbers (jax.random), bit for bit: the Threefry-2x32 PRNG, JAX's
// default, in its partitionable mode (jax_threefry_partitionable, on by default since JAX 0.5).
//
// Keys are raw keys as jax.random.PRNGKey makes them: uint32[2] Arrays, or Tensors inside jit.
// Every function is a pure function of the key: the same key gives the same values on every
// process, so seed 002's `PRNGKey(42)` initialises the same parameters everywhere, and
// `PRNGKey(42 + process_index())` gives each process its own stream.
//
// Under jit, bits are computed where they are used: with a sharded result (out_shardings or
// lax::with_sharding_constraint), each device computes only its own shard's values, without
// communication, and they equal the unsharded values whatever the sharding. Outside jit the
// functions on Arrays run at once on the key's device, like spmd::numpy's (numpy_eager.h).
//
// Equal to JAX's output, bit for bit: PRNGKey, split, fold_in and bits (checked against JAX
// itself by tests/jit/random_jax_test.py, and against Random123's known answers).
#pragma once

#include <cstdint>

#include "spmd/array.h"
#include "spmd/dtype.h"
#include "spmd/shape.h"
#include "spmd/tensor.h"

namespace spmd::random {

// A raw key for `seed` (jax.random.PRNGKey), on this process's first local device: uint32[2]
// [0, seed] for a seed in int32's range (a negative one as its two's complement), JAX's default
// 32-bit mode; [seed >> 32, seed & 0xffffffff] beyond it, as JAX's 64-bit mode makes them.
// Inside jit, pass keys in as arguments.
Array PRNGKey(int64_t seed);

// `num` new keys from `key` (jax.random.split): uint32[num, 2]. Throws InvalidArgument for a key
// that is not uint32[2] or a negative `num`.
Tensor split(const Tensor& key, int64_t num = 2);
Array split(const Array& key, int64_t num = 2);

// A new key from `key` and `data` (jax.random.fold_in); equal to split(key, n)[data] for any
// n > data. The data is a value, not part of the program: folding in a loop's step number runs
// one compiled program for every step. A Tensor `data` is a scalar of an integer dtype, taken as
// uint32 (as JAX converts it).
Tensor fold_in(const Tensor& key, const Tensor& data);
Tensor fold_in(const Tensor& key, uint32_t data);
Array fold_in(const Array& key, uint32_t data);

// Uniformly random bits of `shape` (jax.random.bits); `dtype` uint8, uint16, uint32 (the
// default) or uint64, else InvalidArgument.
Tensor bits(const Tensor& key, const Shape& shape = {}, DType dtype = DType::kUInt32);
Array bits(const Array& key, const Shape& shape = {}, DType dtype = DType::kUInt32);

}  // namespace spmd::random
