// The live view as a small read-only web page, served by the coordination service when asked
// for (ServiceOptions::status_http_address; Options::status_http / SPMD_STATUS_HTTP).
//
//   GET /              the page, refreshing itself every second: first the processes that others
//                      wait for while they are not waiting themselves (the one everyone waits for
//                      is the culprit of a hang), marked in red; then, in a job of up to 64
//                      processes, a row per process; in a larger one, a row per group of
//                      processes alike (same state and call) with their count and ranges
//   GET /summary.json  what the page shows (status_summary.h): kilobytes at any job size
//   GET /status.json   the whole table as JSON (status_query.h's status_json)
//
// When the job has an auth token, both need ?token=<the job's token>; the service prints the
// page's address with it when it starts. A request line that is not METHOD TARGET HTTP/VERSION
// gets 400, a method other than GET 405. HTTP/1.1 with one request per connection; a request is
// at most 8 KiB and must arrive within 5 s; at most 16 connections are served at once, and one
// beyond them is answered 503. Without a token the page warns on start that it is open, and
// answers 403 to a Host header naming a domain other than localhost and this machine's name
// (an IP address is fine): another site's page that rebinds its domain to this address cannot
// read it. The table is taken, and each JSON built from it, at most once a second however many
// viewers ask, and the page asks again a second after its last answer, never before it arrives.
// Runs on the event loop it is given: the service gives it one of its own, on a thread of its
// own, so that building the JSON (35-50 ms for status.json at 16384 processes) never delays the
// service's answers.
// Open to tools/: spmd-coordinator serves the live view's page.
#pragma once

#include <asio.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "coord/wire.h"

namespace spmd {

class StatusHttpServer {
 public:
  // Binds `address` ("127.0.0.1:8080"; port 0 picks a free one). Throws spmd::Error naming the
  // address when it cannot. `table` takes the live view's table (nullopt when it could not be had
  // in time: the JSON then says so); it runs on `io`'s thread.
  using TableSource = std::function<std::optional<wire::StatusTable>()>;
  StatusHttpServer(asio::io_context& io, const std::string& address, std::string auth_token,
                   TableSource table);
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
  // A JSON answer (status.json's or summary.json's), built at most once a second from a table
  // taken at most once a second, and shared by every viewer in between: one buffer however many
  // write it.
  struct Cached {
    Answer answer;
    std::chrono::steady_clock::time_point built_at;
  };
  Answer json_answer(Cached& cache, std::string (*make)(const wire::StatusTable&)) const;
  std::shared_ptr<const wire::StatusTable> current_table() const;

  asio::io_context& io_;
  asio::ip::tcp::acceptor acceptor_;
  std::string host_;
  uint16_t port_ = 0;
  std::string token_;
  TableSource table_;
  mutable std::shared_ptr<const wire::StatusTable> table_cache_;  // null: none had in time
  mutable std::chrono::steady_clock::time_point table_at_;
  mutable bool table_taken_ = false;
  mutable Cached full_;
  mutable Cached summary_;
  int open_ = 0;
};

// SPMD_STATUS_HTTP's and --status-http's value as an address: a port alone means 127.0.0.1 (this
// host only); "" stays "" (no page). Throws InvalidArgument naming `what` when it is malformed.
std::string status_page_address(const std::string& given, const std::string& what);

// The page itself (HTML, CSS and script in one), exposed for tests.
const std::string& status_page_html();

}  // namespace spmd
