#include "kernels/random_bits.h"

#include <cstring>

#include "kernels/threefry.h"

namespace spmd::kernels {
namespace {

// Writes element j of the output from its hash y.
template <RandomBits kKind>
void put(std::byte* out, int64_t j, std::array<uint32_t, 2> y) {
  if constexpr (kKind == RandomBits::k8) {
    reinterpret_cast<uint8_t*>(out)[j] = static_cast<uint8_t>(y[0] ^ y[1]);
  } else if constexpr (kKind == RandomBits::k16) {
    reinterpret_cast<uint16_t*>(out)[j] = static_cast<uint16_t>(y[0] ^ y[1]);
  } else if constexpr (kKind == RandomBits::k32) {
    reinterpret_cast<uint32_t*>(out)[j] = y[0] ^ y[1];
  } else if constexpr (kKind == RandomBits::k64) {
    reinterpret_cast<uint64_t*>(out)[j] = uint64_t{y[0]} << 32 | y[1];
  } else {
    reinterpret_cast<uint32_t*>(out)[2 * j] = y[0];
    reinterpret_cast<uint32_t*>(out)[2 * j + 1] = y[1];
  }
}

template <RandomBits kKind>
void fill(const RandomBlock& b, std::byte* out) {
  for_each_row(b, [&](uint64_t first, int64_t j, int64_t n) {
    for (int64_t c = 0; c < n; ++c) put<kKind>(out, j + c, hash_index(b.key, first + c));
  });
}

}  // namespace

std::array<uint32_t, 2> threefry_2x32(std::array<uint32_t, 2> key,
                                      std::array<uint32_t, 2> counter) {
  return threefry(key, counter);
}

void random_bits(RandomBits kind, const RandomBlock& block, std::byte* out) {
  switch (kind) {
    case RandomBits::k8:
      return fill<RandomBits::k8>(block, out);
    case RandomBits::k16:
      return fill<RandomBits::k16>(block, out);
    case RandomBits::k32:
      return fill<RandomBits::k32>(block, out);
    case RandomBits::k64:
      return fill<RandomBits::k64>(block, out);
    case RandomBits::kKeys:
      return fill<RandomBits::kKeys>(block, out);
  }
}

}  // namespace spmd::kernels
