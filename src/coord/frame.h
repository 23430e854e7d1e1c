// Framing of coordination messages on a byte stream.
//
// A frame is a 12-byte header followed by `length` payload bytes:
//   bytes 0-3   magic "SPMD"
//   bytes 4-5   protocol version, big-endian (kProtocolVersion)
//   bytes 6-7   reserved, must be zero
//   bytes 8-11  payload length, big-endian, at most kMaxFrameBytes
// The header is validated field by field before any payload is read, so a peer that sends
// garbage, an oversized length or another protocol version is refused before it costs memory.
// Pure functions; thread-safe.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

namespace spmd {

// 2: a live-view row's state is the enum ProcessState (field 11), no longer a string (field 4):
// a version-1 spmd-status would read every state as empty, so the versions refuse each other.
inline constexpr uint16_t kProtocolVersion = 2;
inline constexpr size_t kFrameHeaderBytes = 12;
// Large enough for the topology of tens of thousands of processes and for sizeable key-value
// entries; small enough that a hostile length cannot make the service allocate much.
inline constexpr uint32_t kMaxFrameBytes = 64u << 20;
// What a connection that has not registered may send in one frame: a registration (token, host
// id, hostname, the process's devices) is far smaller. A stranger's declared length beyond it is
// refused before any byte of its payload is buffered.
inline constexpr uint32_t kMaxRegistrationFrameBytes = 64u << 10;

using FrameHeader = std::array<uint8_t, kFrameHeaderBytes>;

// Returns the header of a frame carrying `payload_bytes` bytes.
FrameHeader encode_frame_header(uint32_t payload_bytes);

// Returns header + payload as one buffer. `payload` must be at most kMaxFrameBytes long.
std::string encode_frame(std::string_view payload);

// Returns header + the serialized `message` (any protobuf message) as one buffer, serializing
// straight into it.
template <typename Message>
std::string encode_message_frame(const Message& message) {
  const size_t size = message.ByteSizeLong();
  std::string out(kFrameHeaderBytes + size, '\0');
  const FrameHeader h = encode_frame_header(static_cast<uint32_t>(size));
  std::copy(h.begin(), h.end(), out.begin());
  message.SerializeWithCachedSizesToArray(reinterpret_cast<uint8_t*>(out.data()) +
                                          kFrameHeaderBytes);
  return out;
}

// The payload length of a valid header, or the reason the header is invalid.
struct FrameError {
  std::string reason;
};
std::variant<uint32_t, FrameError> decode_frame_header(const FrameHeader& header);

}  // namespace spmd
