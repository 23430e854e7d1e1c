#include "coord/frame.h"

#include <fmt/format.h>

#include <cstring>

namespace spmd {
namespace {

constexpr std::array<uint8_t, 4> kMagic = {'S', 'P', 'M', 'D'};

void put_be16(uint8_t* out, uint16_t v) {
  out[0] = static_cast<uint8_t>(v >> 8);
  out[1] = static_cast<uint8_t>(v);
}

void put_be32(uint8_t* out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out[i] = static_cast<uint8_t>(v >> (24 - 8 * i));
}

uint32_t get_be(const uint8_t* in, int bytes) {
  uint32_t v = 0;
  for (int i = 0; i < bytes; ++i) v = (v << 8) | in[i];
  return v;
}

}  // namespace

FrameHeader encode_frame_header(uint32_t payload_bytes) {
  FrameHeader h{};
  std::memcpy(h.data(), kMagic.data(), kMagic.size());
  put_be16(h.data() + 4, kProtocolVersion);
  put_be16(h.data() + 6, 0);
  put_be32(h.data() + 8, payload_bytes);
  return h;
}

std::string encode_frame(std::string_view payload) {
  FrameHeader h = encode_frame_header(static_cast<uint32_t>(payload.size()));
  std::string out;
  out.reserve(h.size() + payload.size());
  out.append(reinterpret_cast<const char*>(h.data()), h.size());
  out.append(payload);
  return out;
}

std::variant<uint32_t, FrameError> decode_frame_header(const FrameHeader& h) {
  if (std::memcmp(h.data(), kMagic.data(), kMagic.size()) != 0) {
    return FrameError{"bad magic bytes (not an spmd coordination peer)"};
  }
  const uint32_t version = get_be(h.data() + 4, 2);
  if (version != kProtocolVersion) {
    return FrameError{fmt::format(
        "protocol version {} (this build speaks version {}; run the same spmd release everywhere)",
        version, kProtocolVersion)};
  }
  if (get_be(h.data() + 6, 2) != 0) return FrameError{"reserved header bytes are not zero"};
  const uint32_t length = get_be(h.data() + 8, 4);
  if (length > kMaxFrameBytes) {
    return FrameError{
        fmt::format("frame length {} exceeds the limit of {} bytes", length, kMaxFrameBytes)};
  }
  return length;
}

}  // namespace spmd
