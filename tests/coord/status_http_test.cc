// coord/status_http.h over a real socket: what each kind of request line gets back (issue 56,
// deliverable 5: a line without an HTTP version is 400, not 405).
#include "coord/status_http.h"

#include <gtest/gtest.h>

#include <asio.hpp>
#include <string>
#include <thread>

namespace spmd {
namespace {

using asio::ip::tcp;

// The status line the server answers `request` with.
std::string status_line_for(uint16_t port, const std::string& request) {
  asio::io_context io;
  tcp::socket socket(io);
  socket.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
  asio::write(socket, asio::buffer(request));
  std::string answer;
  asio::error_code ec;
  asio::read(socket, asio::dynamic_buffer(answer), ec);  // until the server closes
  return answer.substr(0, answer.find("\r\n"));
}

TEST(StatusHttp, EachRequestLineGetsItsStatus) {
  asio::io_context io;
  StatusHttpServer server(io, "127.0.0.1:0", "", [] { return std::string("{}"); });
  server.start();
  auto guard = asio::make_work_guard(io);
  std::thread loop([&] { io.run(); });
  const uint16_t port = server.port();
  EXPECT_EQ(status_line_for(port, "GET /status.json HTTP/1.1\r\n\r\n"), "HTTP/1.1 200 OK");
  EXPECT_EQ(status_line_for(port, "GET /status.json\r\n\r\n"), "HTTP/1.1 400 Bad Request");
  EXPECT_EQ(status_line_for(port, "GET /a b HTTP/1.1\r\n\r\n"), "HTTP/1.1 400 Bad Request");
  EXPECT_EQ(status_line_for(port, "GET /status.json SPDY/3\r\n\r\n"), "HTTP/1.1 400 Bad Request");
  EXPECT_EQ(status_line_for(port, "POST / HTTP/1.1\r\n\r\n"), "HTTP/1.1 405 Method Not Allowed");
  EXPECT_EQ(status_line_for(port, "GET /nothing HTTP/1.1\r\n\r\n"), "HTTP/1.1 404 Not Found");
  asio::post(io, [&] { server.stop(); });
  guard.reset();
  loop.join();
}

}  // namespace
}  // namespace spmd
