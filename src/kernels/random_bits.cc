#include "kernels/random_bits.h"

#include <Random123/threefry.h>

#include <cstring>

namespace spmd::kernels {
namespace {

// Writes element j of the output from the hash of flat index `index`.
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

// Row by row of the block's last dimension: the flat index of a row's first element, then
// consecutive indices along it.
template <RandomBits kKind>
void fill(const RandomBlock& b, std::byte* out) {
  const size_t rank = b.shape.size();
  const int64_t row = rank == 0 ? 1 : b.extent[rank - 1];
  const int64_t rows = row == 0 ? 0 : shape_size(b.extent) / row;
  std::vector<int64_t> at(rank, 0);  // the row's index within the block (last entry unused)
  for (int64_t r = 0; r < rows; ++r) {
    uint64_t first = 0;
    for (size_t d = 0; d < rank; ++d) {
      first = first * static_cast<uint64_t>(b.shape[d]) +
              static_cast<uint64_t>(b.start[d] + (d + 1 < rank ? at[d] : 0));
    }
    first += b.offset;
    for (int64_t c = 0; c < row; ++c) {
      const uint64_t i = first + static_cast<uint64_t>(c);
      put<kKind>(out, r * row + c,
                 threefry_2x32(b.key, {static_cast<uint32_t>(i >> 32), static_cast<uint32_t>(i)}));
    }
    // The next row: the index over all but the last dimension, counted like an odometer.
    for (size_t d = rank > 0 ? rank - 1 : 0; d > 0; --d) {
      if (++at[d - 1] < b.extent[d - 1]) break;
      at[d - 1] = 0;
    }
  }
}

}  // namespace

std::array<uint32_t, 2> threefry_2x32(std::array<uint32_t, 2> key,
                                      std::array<uint32_t, 2> counter) {
  r123::Threefry2x32 rng;  // stateless; its operator() is not const
  const r123::Threefry2x32::ctr_type c = {{counter[0], counter[1]}};
  const r123::Threefry2x32::key_type k = {{key[0], key[1]}};
  const r123::Threefry2x32::ctr_type y = rng(c, k);
  return {y.v[0], y.v[1]};
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
