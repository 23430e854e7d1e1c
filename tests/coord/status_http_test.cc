// coord/status_http.h over a real socket (issue 56, deliverable 5): what each kind of request
// line gets back (a line without an HTTP version is 400, not 405), the Host check of a page
// without a token, and 503 when its connection slots are full.
#include "coord/status_http.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <asio.hpp>
#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

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
  StatusHttpServer server(io, "127.0.0.1:0", "",
                          [] { return std::optional<wire::StatusTable>(wire::StatusTable()); });
  server.start();
  auto guard = asio::make_work_guard(io);
  std::thread loop([&] { io.run(); });
  const uint16_t port = server.port();
  EXPECT_EQ(status_line_for(port, "GET /status.json HTTP/1.1\r\n\r\n"), "HTTP/1.1 200 OK");
  EXPECT_EQ(status_line_for(port, "GET /summary.json HTTP/1.1\r\n\r\n"), "HTTP/1.1 200 OK");
  EXPECT_EQ(status_line_for(port, "GET /status.json\r\n\r\n"), "HTTP/1.1 400 Bad Request");
  EXPECT_EQ(status_line_for(port, "GET /a b HTTP/1.1\r\n\r\n"), "HTTP/1.1 400 Bad Request");
  EXPECT_EQ(status_line_for(port, "GET /status.json SPDY/3\r\n\r\n"), "HTTP/1.1 400 Bad Request");
  EXPECT_EQ(status_line_for(port, "POST / HTTP/1.1\r\n\r\n"), "HTTP/1.1 405 Method Not Allowed");
  EXPECT_EQ(status_line_for(port, "GET /nothing HTTP/1.1\r\n\r\n"), "HTTP/1.1 404 Not Found");
  asio::post(io, [&] { server.stop(); });
  guard.reset();
  loop.join();
}

// A server on its own event loop thread for a test's lifetime; `builds` counts how often it
// made status.json.
class Served {
 public:
  explicit Served(const std::string& token)
      : server_(io_, "127.0.0.1:0", token,
                [this] {
                  ++builds;
                  return std::optional<wire::StatusTable>(wire::StatusTable());
                }),
        guard_(asio::make_work_guard(io_)) {
    server_.start();
    loop_ = std::thread([this] { io_.run(); });
  }
  ~Served() {
    asio::post(io_, [this] { server_.stop(); });
    guard_.reset();
    loop_.join();
  }
  uint16_t port() const { return server_.port(); }
  std::atomic<int> builds{0};

 private:
  asio::io_context io_;
  StatusHttpServer server_;
  asio::executor_work_guard<asio::io_context::executor_type> guard_;
  std::thread loop_;
};

std::string get_with_host(uint16_t port, const std::string& target, const std::string& host) {
  return status_line_for(
      port, "GET " + target + " HTTP/1.1\r\nUser-Agent: test\r\nHost: " + host + "\r\n\r\n");
}

// Without a token, a Host naming another domain is refused (DNS rebinding); with one, the token
// decides.
TEST(StatusHttp, WithoutATokenOnlyItsOwnHostNamesAreAnswered) {
  Served open("");
  const std::string port = std::to_string(open.port());
  for (const std::string& ok : std::vector<std::string>{"127.0.0.1:" + port, "localhost:" + port,
                                                        "LocalHost", "[::1]:" + port, "10.1.2.3"}) {
    EXPECT_EQ(get_with_host(open.port(), "/status.json", ok), "HTTP/1.1 200 OK") << ok;
  }
  char own[256] = {};
  ASSERT_EQ(gethostname(own, sizeof(own) - 1), 0);
  EXPECT_EQ(get_with_host(open.port(), "/", std::string(own) + ":" + port), "HTTP/1.1 200 OK");
  for (const std::string& bad :
       std::vector<std::string>{"evil.example:" + port, "EVIL.example", "localhost.evil.example",
                                std::string(own) + ".evil.example"}) {
    EXPECT_EQ(get_with_host(open.port(), "/status.json", bad), "HTTP/1.1 403 Forbidden") << bad;
  }
  Served locked("t0k3n");
  EXPECT_EQ(get_with_host(locked.port(), "/status.json?token=t0k3n", "evil.example"),
            "HTTP/1.1 200 OK");
  EXPECT_EQ(get_with_host(locked.port(), "/status.json", "127.0.0.1"), "HTTP/1.1 403 Forbidden");
}

// 16 connections held open without a full request fill the page's slots: the next one is
// answered 503, not dropped without a word.
TEST(StatusHttp, AConnectionBeyondTheSlotsGets503) {
  Served page("");
  asio::io_context io;
  std::vector<tcp::socket> held;
  for (int i = 0; i < 16; ++i) {
    held.emplace_back(io);
    held.back().connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), page.port()));
    asio::write(held.back(), asio::buffer(std::string("GET / HTTP/1.1\r\n")));  // unfinished
  }
  // The server accepts the held ones in its own time: ask until the slots are seen full.
  std::string line;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  while (std::chrono::steady_clock::now() < deadline) {
    line = status_line_for(page.port(), "GET /status.json HTTP/1.1\r\n\r\n");
    if (line != "HTTP/1.1 200 OK") break;
  }
  EXPECT_EQ(line, "HTTP/1.1 503 Service Unavailable");
}

// Many viewers asking at once cost one build of the table a second, not one each.
TEST(StatusHttp, StatusJsonIsBuiltOnceASecondForEveryViewer) {
  Served page("");
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 20; ++i) {
    ASSERT_EQ(status_line_for(page.port(), "GET /status.json HTTP/1.1\r\n\r\n"), "HTTP/1.1 200 OK");
  }
  const auto elapsed = std::chrono::steady_clock::now() - start;
  // One build, or one more for each second the 20 requests took.
  EXPECT_LE(page.builds.load(),
            1 + std::chrono::duration_cast<std::chrono::seconds>(elapsed).count() + 1);
  EXPECT_GE(page.builds.load(), 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));  // the lifetime of one build
  const int before = page.builds.load();
  status_line_for(page.port(), "GET /status.json HTTP/1.1\r\n\r\n");
  EXPECT_EQ(page.builds.load(), before + 1);
}

}  // namespace
}  // namespace spmd
