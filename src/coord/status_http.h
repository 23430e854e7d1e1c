// The live view as a small read-only web page, served by the coordination service when asked
// for (ServiceOptions::status_http_address; Options::status_http / SPMD_STATUS_HTTP).
//
//   GET /             the page: a table of every process that refreshes itself every second and
//                     marks in red the processes that others wait for while they are not waiting
//                     themselves (the one everyone waits for is the culprit of a hang)
//   GET /status.json  the table as JSON (status_query.h's status_json)
//
// When the job has an auth token, both need ?token=<the job's token>; the service prints the
// page's address with it when it starts. A request line that is not METHOD TARGET HTTP/VERSION
// gets 400, a method other than GET 405. HTTP/1.1 with one request per connection; a request is
// at most 8 KiB and must arrive within 5 s; at most 16 connections are served at once, and one
// beyond them is answered 503. Without a token the page warns on start that it is open, and
// answers 403 to a Host header naming a domain other than localhost and this machine's name
// (an IP address is fine): another site's page that rebinds its domain to this address cannot
// read it. status.json is built at most once a second, however many viewers ask, and the page
// asks again a second after its last answer, never before it arrives. Runs on the event loop
// it is given: the service gives it one of its own, on a thread of its own, so that building
// status.json (300 ms at 16384 processes) never delays the service's answers.
// Open to tools/: spmd-coordinator serves the live view's page.
#pragma once

#include <asio.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace spmd {

class StatusHttpServer {
 public:
  // Binds `address` ("127.0.0.1:8080"; port 0 picks a free one). Throws spmd::Error naming the
  // address when it cannot. `json` makes the table; it runs on `io`'s thread.
  StatusHttpServer(asio::io_context& io, const std::string& address, std::string auth_token,
                   std::function<std::string()> json);
  ~StatusHttpServer();
  StatusHttpServer(const StatusHttpServer&) = delete;
  StatusHttpServer& operator=(const StatusHttpServer&) = delete;

  uint16_t port() const { return port_; }
  // "http://127.0.0.1:8080/?token=…", for the log line.
  std::string url() const;

  // Accepting starts here and stops at stop(); both on `io`'s thread or before it runs.
  void start();
  void stop();

 private:
  struct Exchange;
  void accept();
  void read(const std::shared_ptr<Exchange>& x);
  void answer(const std::shared_ptr<Exchange>& x);
  // Answers 503 to a connection beyond the 16 served, keeping nothing of it.
  static void refuse_busy(asio::ip::tcp::socket& socket);
  // Whether a request with this Host header (nullopt: none) may be answered.
  bool host_allowed(const std::optional<std::string>& host) const;
  // An answer to a request: its head (status line and headers), and a body of its own where it
  // is shared by many (status.json's), else in `head` too.
  struct Answer {
    std::shared_ptr<const std::string> head;
    std::shared_ptr<const std::string> body;
    static Answer of(std::string whole);
  };
  Answer respond(const std::string& request_line) const;
  // status.json's answer, built at most once a second and shared by every viewer in between:
  // one buffer however many write it.
  Answer table_answer() const;

  asio::io_context& io_;
  asio::ip::tcp::acceptor acceptor_;
  std::string host_;
  uint16_t port_ = 0;
  std::string token_;
  std::function<std::string()> json_;
  mutable Answer json_answer_;
  mutable std::chrono::steady_clock::time_point json_built_at_;
  int open_ = 0;
};

// SPMD_STATUS_HTTP's and --status-http's value as an address: a port alone means 127.0.0.1 (this
// host only); "" stays "" (no page). Throws InvalidArgument naming `what` when it is malformed.
std::string status_page_address(const std::string& given, const std::string& what);

// The page itself (HTML, CSS and script in one), exposed for tests.
const std::string& status_page_html();

}  // namespace spmd
