// The per-epoch global order: a keyed Feistel network on the smallest even number of bits that
// covers n, with cycle walking to stay inside [0, n). A Feistel network is a bijection for any
// round function, and walking (re-applying it until the value falls below n) restricts a
// bijection of [0, 2^k) to one of [0, n); since 2^k < 4n, a walk takes under 4 steps on average.
#include <fmt/format.h>

#include <bit>

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

int64_t shuffled_index(int64_t position, int64_t n, uint64_t seed, int64_t epoch) {
  if (position < 0 || position >= n) {
    throw InvalidArgument(fmt::format("shuffled_index: position {} outside [0, {})", position, n));
  }
  if (n <= 2) return n == 2 ? (position ^ static_cast<int64_t>(mix(seed ^ mix(epoch)) & 1)) : 0;
  int bits = static_cast<int>(std::bit_width(static_cast<uint64_t>(n - 1)));
  bits += bits & 1;
  const int half = bits / 2;
  const uint64_t mask = (uint64_t{1} << half) - 1;
  const uint64_t key = mix(seed ^ mix(static_cast<uint64_t>(epoch) + 0x632be59bd9b4e019ull));
  uint64_t x = static_cast<uint64_t>(position);
  do {
    uint64_t left = x >> half;
    uint64_t right = x & mask;
    for (int r = 0; r < kRounds; ++r) {
      const uint64_t f = mix(key ^ (right * 0x100000001b3ull) ^ static_cast<uint64_t>(r)) & mask;
      const uint64_t next = left ^ f;
      left = right;
      right = next;
    }
    x = (left << half) | right;
  } while (x >= static_cast<uint64_t>(n));
  return static_cast<int64_t>(x);
}

}  // namespace spmd::data
