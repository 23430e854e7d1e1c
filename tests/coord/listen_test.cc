// The service's listening sockets: several on one port for large clusters, and a port someone
// else holds refused whatever the count.
#include "coord/listen.h"

#include <gtest/gtest.h>

#include "spmd/error.h"

namespace spmd {
namespace {

TEST(Listen, SeveralListenersShareOnePortAndEachAcceptsConnections) {
  asio::io_context io;
  auto acceptors = listen_on(io, "127.0.0.1:0", 4);
  ASSERT_EQ(acceptors.size(), 4u);
  const auto port = acceptors[0].local_endpoint().port();
  for (auto& a : acceptors) EXPECT_EQ(a.local_endpoint().port(), port);
  // Many connections spread over the listeners; every one is accepted by one of them.
  std::vector<asio::ip::tcp::socket> clients;
  for (int i = 0; i < 64; ++i) {
    clients.emplace_back(io).connect({asio::ip::make_address("127.0.0.1"), port});
  }
  int accepted = 0;
  for (auto& a : acceptors) {
    a.non_blocking(true);
    asio::error_code ec;
    while (true) {
      asio::ip::tcp::socket s(io);
      a.accept(s, ec);
      if (ec) break;
      ++accepted;
    }
  }
  EXPECT_EQ(accepted, 64);
}

TEST(Listen, APortHeldByAnotherSocketIsRefusedEvenWithSharing) {
  asio::io_context io;
  // Another service of the same user, sharing or not, must not be joined silently.
  for (int held_by : {1, 4}) {
    auto holder = listen_on(io, "127.0.0.1:0", held_by);
    const auto port = holder[0].local_endpoint().port();
    for (int count : {1, 4}) {
      try {
        listen_on(io, "127.0.0.1:" + std::to_string(port), count);
        ADD_FAILURE() << "bound a held port (holder " << held_by << ", count " << count << ")";
      } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("cannot listen on 127.0.0.1:"), std::string::npos);
      }
    }
  }
}

}  // namespace
}  // namespace spmd
