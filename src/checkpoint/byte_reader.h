// Reading a binary format field by field without trusting it: every read is bounds-checked, and a
// short or malformed field throws spmd::Error naming the file, what was being read and the byte
// offset (TensorStore's OCDBT encodings, Zarr v3's shard index).
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>

#include "spmd/error.h"

namespace spmd::checkpoint {

class ByteReader {
 public:
  // Reads `bytes`, which must outlive the reader; `where` names them in errors ("the B+tree node
  // at d/1f…+120").
  ByteReader(std::span<const char> bytes, std::string where)
      : bytes_(bytes), where_(std::move(where)) {}

  size_t offset() const { return at_; }
  size_t remaining() const { return bytes_.size() - at_; }
  bool at_end() const { return at_ == bytes_.size(); }
  const std::string& where() const { return where_; }

  // Throws the error this reader reports: `what` at the current offset.
  [[noreturn]] void fail(std::string_view what) const {
    throw Error(fmt::format("checkpoint: {} is malformed at byte {}: {}", where_, at_, what));
  }

  std::span<const char> bytes(size_t n, std::string_view field) {
    if (n > remaining()) {
      fail(fmt::format("{} needs {} bytes, {} remain", field, n, remaining()));
    }
    const auto out = bytes_.subspan(at_, n);
    at_ += n;
    return out;
  }
  std::string_view text(size_t n, std::string_view field) {
    const auto b = bytes(n, field);
    return {b.data(), b.size()};
  }
  uint8_t u8(std::string_view field) { return static_cast<uint8_t>(bytes(1, field)[0]); }
  uint32_t u32be(std::string_view field) {
    const auto b = bytes(4, field);
    uint32_t v = 0;
    for (char c : b) v = (v << 8) | static_cast<uint8_t>(c);
    return v;
  }
  uint32_t u32le(std::string_view field) { return static_cast<uint32_t>(little(4, field)); }
  uint64_t u64le(std::string_view field) { return little(8, field); }
  // An unsigned LEB128 varint of at most 64 bits (at most 10 bytes, no bits beyond the 64th).
  uint64_t varint(std::string_view field) {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      const uint8_t b = u8(field);
      if (shift == 63 && b > 1) fail(fmt::format("{} overflows 64 bits", field));
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return v;
    }
    fail(fmt::format("{} is a varint longer than 10 bytes", field));
  }
  // A varint that must be at most `max` (a count or length the rest of the data must hold).
  uint64_t varint_at_most(uint64_t max, std::string_view field) {
    const uint64_t v = varint(field);
    if (v > max) fail(fmt::format("{} is {}, more than {}", field, v, max));
    return v;
  }

 private:
  uint64_t little(size_t n, std::string_view field) {
    const auto b = bytes(n, field);
    uint64_t v = 0;
    for (size_t i = n; i > 0; --i) v = (v << 8) | static_cast<uint8_t>(b[i - 1]);
    return v;
  }

  std::span<const char> bytes_;
  std::string where_;
  size_t at_ = 0;
};

}  // namespace spmd::checkpoint
