#include "checkpoint/crc32c.h"

#include <array>

namespace spmd::checkpoint {
namespace {

// The reflected Castagnoli polynomial.
constexpr uint32_t kPolynomial = 0x82f63b78;

constexpr std::array<uint32_t, 256> make_table() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) != 0 ? (c >> 1) ^ kPolynomial : c >> 1;
    table[i] = c;
  }
  return table;
}

constexpr std::array<uint32_t, 256> kTable = make_table();

}  // namespace

uint32_t crc32c(std::span<const char> bytes) {
  uint32_t c = 0xffffffff;
  for (char b : bytes) c = kTable[(c ^ static_cast<uint8_t>(b)) & 0xff] ^ (c >> 8);
  return c ^ 0xffffffff;
}

}  // namespace spmd::checkpoint
