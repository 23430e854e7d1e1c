// The per-epoch global order: a keyed Feistel network on the smallest even number of bits that
// covers n, with cycle walking to stay inside [0, n). A Feistel network is a bijection for any
// round function, and walking (re-applying it until the value falls below n) restricts a
// bijection of [0, 2^k) to one of [0, n); since 2^k < 4n, a walk takes under 4 steps on average.
#include "data/shuffle.h"

#include <fmt/format.h>

#include <bit>
#include <span>

#include "spmd/data_loader.h"
#include "spmd/error.h"

namespace spmd::data {
namespace {

// Four rounds make the order look random enough for SGD (and are cheap); the key mixes the seed
// and the epoch so that every epoch has its own order.
constexpr int kRounds = 4;

uint64_t mix(uint64_t x) {  // splitmix64's finaliser
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace

Shuffle::Shuffle(int64_t n, uint64_t seed, int64_t epoch)
    : n_(n), key_(mix(seed ^ mix(static_cast<uint64_t>(epoch) + 0x632be59bd9b4e019ull))) {
  if (n <= 2) {
    key_ = mix(seed ^ mix(static_cast<uint64_t>(epoch))) & 1;  // two records: swapped or not
    return;
  }
  int bits = static_cast<int>(std::bit_width(static_cast<uint64_t>(n - 1)));
  bits += bits & 1;
  half_ = bits / 2;
  mask_ = (uint64_t{1} << half_) - 1;
}

uint64_t Shuffle::pass(uint64_t x) const {
  uint64_t left = x >> half_;
  uint64_t right = x & mask_;
  for (int r = 0; r < kRounds; ++r) {
    const uint64_t f = mix(key_ ^ (right * 0x100000001b3ull) ^ static_cast<uint64_t>(r)) & mask_;
    const uint64_t next = left ^ f;
    left = right;
    right = next;
  }
  return (left << half_) | right;
}

int64_t Shuffle::walk(uint64_t x) const {
  while (x >= static_cast<uint64_t>(n_)) x = pass(x);
  return static_cast<int64_t>(x);
}

int64_t Shuffle::operator()(int64_t position) const {
  if (n_ <= 2) return n_ == 2 ? (position ^ static_cast<int64_t>(key_)) : 0;
  return walk(pass(static_cast<uint64_t>(position)));
}

void Shuffle::fill(int64_t first, int64_t stride, std::span<int64_t> out) const {
  constexpr size_t kLanes = 4;
  size_t k = 0;
  if (n_ > 2) {
    for (; k + kLanes <= out.size(); k += kLanes) {
      // pass() on four positions at once: their rounds are independent chains of multiplies.
      uint64_t left[kLanes], right[kLanes];
      for (size_t j = 0; j < kLanes; ++j) {
        const auto x = static_cast<uint64_t>(first + static_cast<int64_t>(k + j) * stride);
        left[j] = x >> half_;
        right[j] = x & mask_;
      }
      for (int r = 0; r < kRounds; ++r) {
        for (size_t j = 0; j < kLanes; ++j) {
          const uint64_t f =
              mix(key_ ^ (right[j] * 0x100000001b3ull) ^ static_cast<uint64_t>(r)) & mask_;
          const uint64_t next = left[j] ^ f;
          left[j] = right[j];
          right[j] = next;
        }
      }
      for (size_t j = 0; j < kLanes; ++j) out[k + j] = walk((left[j] << half_) | right[j]);
    }
  }
  for (; k < out.size(); ++k) out[k] = (*this)(first + static_cast<int64_t>(k) * stride);
}

int64_t shuffled_index(int64_t position, int64_t n, uint64_t seed, int64_t epoch) {
  if (position < 0 || position >= n) {
    throw InvalidArgument(fmt::format("shuffled_index: position {} outside [0, {})", position, n));
  }
  return Shuffle(n, seed, epoch)(position);
}

}  // namespace spmd::data
