// Threefry-2x32 (Random123's), inline: the hash behind random_bits.cc and random_samplers.cc,
// compiled into their loops so that a loop over elements vectorises instead of making one call
// per element. Internal to kernels/ (it needs Random123's headers); others call
// random_bits.h's threefry_2x32.
#pragma once

#include <Random123/threefry.h>

#include <array>
#include <cstdint>

namespace spmd::kernels {

// Threefry-2x32, 20 rounds, of one counter.
[[gnu::always_inline]] inline std::array<uint32_t, 2> threefry(std::array<uint32_t, 2> key,
                                                               std::array<uint32_t, 2> counter) {
  r123::Threefry2x32 rng;  // stateless; its operator() is not const
  const r123::Threefry2x32::ctr_type c = {{counter[0], counter[1]}};
  const r123::Threefry2x32::key_type k = {{key[0], key[1]}};
  const r123::Threefry2x32::ctr_type y = rng(c, k);
  return {y.v[0], y.v[1]};
}

// The hash of flat index `i` under `key`: the counter (i >> 32, i & 0xffffffff), as JAX's
// partitionable mode counts.
[[gnu::always_inline]] inline std::array<uint32_t, 2> hash_index(std::array<uint32_t, 2> key,
                                                                 uint64_t i) {
  return threefry(key, {static_cast<uint32_t>(i >> 32), static_cast<uint32_t>(i)});
}

}  // namespace spmd::kernels
