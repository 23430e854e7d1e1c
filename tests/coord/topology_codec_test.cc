// The topology's compact wire form: pid deltas and zstd, and hostile answers refused.
#include "coord/topology_codec.h"

#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>
#include <zstd.h>

#include "coord/frame.h"

namespace spmd {
namespace {

wire::Topology cluster(int n) {
  wire::Topology t;
  t.add_platforms("cpu");
  for (int p = 0; p < n; ++p) {
    if (p % 4 == 0) {
      auto* h = t.add_hosts();
      h->set_host_id("node" + std::to_string(p / 4));
      h->set_hostname(h->host_id());
    }
    t.add_host_index(p / 4);
    t.add_pid(p % 4 == 0 ? 4000000 - p * 977 : t.pid(p - 1) + 2);  // up and down
    t.add_device_count(2);
    for (int d = 0; d < 2; ++d) {
      t.add_local_hardware_id(d);
      t.add_platform_index(0);
    }
  }
  return t;
}

TEST(TopologyCodec, TheTopologyComesBackExactlyAndSmaller) {
  const wire::Topology t = cluster(4096);
  wire::ServerMessage msg;
  pack_topology(t, msg);
  EXPECT_LT(msg.topology_zstd().size() * 4, t.ByteSizeLong());
  auto back = unpack_topology(msg);
  ASSERT_TRUE(std::holds_alternative<wire::Topology>(back)) << std::get<std::string>(back);
  EXPECT_TRUE(
      google::protobuf::util::MessageDifferencer::Equals(std::get<wire::Topology>(back), t));
}

TEST(TopologyCodec, APlainTopologyIsAcceptedAsItIs) {
  wire::ServerMessage msg;
  *msg.mutable_topology() = cluster(8);
  auto back = unpack_topology(msg);
  ASSERT_TRUE(std::holds_alternative<wire::Topology>(back));
  EXPECT_EQ(std::get<wire::Topology>(back).pid(3), cluster(8).pid(3));
}

std::string error_of(const wire::ServerMessage& msg) {
  auto r = unpack_topology(msg);
  return std::holds_alternative<std::string>(r) ? std::get<std::string>(r) : "";
}

TEST(TopologyCodec, AClaimedSizeAboveAFrameIsRefusedBeforeAllocating) {
  wire::ServerMessage msg;
  pack_topology(cluster(8), msg);
  msg.set_topology_bytes(uint64_t{1} << 40);
  EXPECT_NE(error_of(msg).find("more than"), std::string::npos);
}

TEST(TopologyCodec, BytesThatAreNotTheDeclaredZstdFrameAreRefused) {
  wire::ServerMessage msg;
  pack_topology(cluster(8), msg);
  wire::ServerMessage wrong_size = msg;
  wrong_size.set_topology_bytes(msg.topology_bytes() + 1);
  EXPECT_NE(error_of(wrong_size), "");
  wire::ServerMessage garbage = msg;
  garbage.set_topology_zstd("not zstd at all");
  EXPECT_NE(error_of(garbage), "");
  wire::ServerMessage truncated = msg;
  truncated.set_topology_zstd(msg.topology_zstd().substr(0, msg.topology_zstd().size() / 2));
  EXPECT_NE(error_of(truncated), "");
}

TEST(TopologyCodec, PidDeltasThatDoNotMatchTheProcessCountAreRefused) {
  wire::Topology t = cluster(8);
  t.clear_pid();
  t.add_pid_delta(5);  // one delta for eight processes
  wire::ServerMessage msg;
  *msg.mutable_topology() = t;
  EXPECT_NE(error_of(msg).find("pid deltas"), std::string::npos);
}

}  // namespace
}  // namespace spmd
