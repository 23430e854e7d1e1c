#include "coord/frame.h"

#include <gtest/gtest.h>

namespace spmd {
namespace {

FrameHeader header_from(const std::string& bytes) {
  FrameHeader h{};
  std::copy(bytes.begin(), bytes.begin() + kFrameHeaderBytes, h.begin());
  return h;
}

TEST(Frame, RoundTripsThePayloadLength) {
  const std::string frame = encode_frame("hello");
  ASSERT_EQ(frame.size(), kFrameHeaderBytes + 5);
  auto decoded = decode_frame_header(header_from(frame));
  ASSERT_TRUE(std::holds_alternative<uint32_t>(decoded));
  EXPECT_EQ(std::get<uint32_t>(decoded), 5u);
  EXPECT_EQ(frame.substr(kFrameHeaderBytes), "hello");
}

TEST(Frame, RejectsGarbageMagic) {
  FrameHeader h = encode_frame_header(1);
  h[0] = 'G';
  auto decoded = decode_frame_header(h);
  ASSERT_TRUE(std::holds_alternative<FrameError>(decoded));
  EXPECT_NE(std::get<FrameError>(decoded).reason.find("magic"), std::string::npos);
}

TEST(Frame, RejectsAnotherProtocolVersionNamingBoth) {
  FrameHeader h = encode_frame_header(1);
  h[5] = static_cast<uint8_t>(kProtocolVersion + 1);
  auto decoded = decode_frame_header(h);
  ASSERT_TRUE(std::holds_alternative<FrameError>(decoded));
  const std::string& reason = std::get<FrameError>(decoded).reason;
  EXPECT_NE(reason.find("protocol version " + std::to_string(kProtocolVersion + 1)),
            std::string::npos);
  EXPECT_NE(reason.find("speaks version " + std::to_string(kProtocolVersion)), std::string::npos);
}

TEST(Frame, RejectsOversizedLengthBeforeReadingIt) {
  auto decoded = decode_frame_header(encode_frame_header(kMaxFrameBytes + 1));
  ASSERT_TRUE(std::holds_alternative<FrameError>(decoded));
  EXPECT_NE(std::get<FrameError>(decoded).reason.find("exceeds"), std::string::npos);
  EXPECT_TRUE(
      std::holds_alternative<uint32_t>(decode_frame_header(encode_frame_header(kMaxFrameBytes))));
}

TEST(Frame, RejectsNonZeroReservedBytes) {
  FrameHeader h = encode_frame_header(1);
  h[7] = 1;
  EXPECT_TRUE(std::holds_alternative<FrameError>(decode_frame_header(h)));
}

}  // namespace
}  // namespace spmd
