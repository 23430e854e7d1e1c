#include "coord/address.h"

#include <gtest/gtest.h>

#include "spmd/error.h"

namespace spmd {
namespace {

TEST(Address, ParsesIpv4Ipv6AndNames) {
  auto a = parse_host_port("10.0.0.1:1234", "x");
  EXPECT_EQ(a.host, "10.0.0.1");
  EXPECT_EQ(a.port, 1234);
  auto b = parse_host_port("[fe80::1]:99", "x");
  EXPECT_EQ(b.host, "fe80::1");
  EXPECT_EQ(b.port, 99);
  EXPECT_EQ(b.to_string(), "[fe80::1]:99");
  auto c = parse_host_port("node001:65535", "x");
  EXPECT_EQ(c.host, "node001");
  EXPECT_EQ(c.port, 65535);
}

TEST(Address, RejectsMalformedAddressesNamingTheArgument) {
  for (const char* bad : {"", "host", "host:", ":80", "host:99999", "host:12x", "::1:80", "[::1]80",
                          "[::1", "host:0"}) {
    try {
      parse_host_port(bad, "coordinator_address");
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("coordinator_address"), std::string::npos);
      EXPECT_NE(std::string(e.what()).find(std::string("'") + bad + "'"), std::string::npos);
    }
  }
}

TEST(Address, PortZeroOnlyWhereAllowed) {
  EXPECT_EQ(parse_host_port("[::]:0", "bind", true).port, 0);
  EXPECT_THROW(parse_host_port("[::]:0", "bind"), InvalidArgument);
}

}  // namespace
}  // namespace spmd
