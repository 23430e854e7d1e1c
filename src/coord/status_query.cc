#include "coord/status_query.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <asio.hpp>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "coord/address.h"
#include "coord/connection.h"
#include "coord/frame.h"
#include "coord/status.h"
#include "coord/status_board.h"
#include "coord/terminal_text.h"
#include "spmd/error.h"

namespace spmd {
namespace {

using asio::ip::tcp;

std::string seconds(int64_t ms) {
  if (ms < 0) return "-";
  return fmt::format("{:.1f} s", static_cast<double>(ms) / 1000);
}

using Clock = std::chrono::steady_clock;

struct Attempt {
  std::optional<Status> outcome;  // set once an answer came
  wire::ServerMessage answer;
  std::string failure = "no answer";
  bool connected = false;
  bool refused = false;  // the connection attempt was refused
};

// Refusals in a row that end the query: nothing listens there. Fewer are retried: on one host,
// a flood of connections that end unaccepted can get a new one refused now and then.
constexpr int kRefusalsMeaningGone = 5;

// One connection, one query, until the answer, a close or `until`.
Attempt ask_once(const tcp::resolver::results_type& endpoints, const std::string& auth_token,
                 Clock::time_point until) {
  asio::io_context io;
  Attempt a;
  std::shared_ptr<FramedConnection> conn;
  tcp::socket socket(io);
  asio::async_connect(socket, endpoints, [&](asio::error_code e, const tcp::endpoint&) {
    if (e) {
      a.failure = "cannot connect: " + e.message();
      a.refused = e == asio::error::connection_refused;
      return;
    }
    a.connected = true;
    conn = std::make_shared<FramedConnection>(std::move(socket));
    conn->start(
        [&](std::string_view payload) {
          if (!a.answer.ParseFromArray(payload.data(), static_cast<int>(payload.size()))) {
            a.outcome = Status{StatusCode::kInternal, "an undecodable answer"};
          } else {
            a.outcome = status_of(a.answer);
          }
          conn->close("answered");
        },
        [&](const std::string& reason) { a.failure = reason; });
    wire::ClientMessage msg;
    msg.set_request_id(1);
    msg.mutable_status()->set_auth_token(auth_token);
    conn->send(std::make_shared<const std::string>(encode_message_frame(msg)));
  });
  io.run_until(until);
  if (conn) conn->close("done");
  io.restart();
  io.poll();  // lets the close finish while `a` and `conn` still exist
  return a;
}

}  // namespace

// A connection closed before its answer is made again (the service drops the oldest connections
// that have not authenticated when strangers crowd its port: admission.h), and so is a refused
// one: up to kRefusalsMeaningGone in a row while no connection was accepted (a wrong address or
// a job that has ended fails fast), and until the deadline once one was (a live service whose
// queue a flood fills refuses some connections for seconds).
wire::StatusTable query_status(const std::string& address, const std::string& auth_token,
                               std::chrono::milliseconds timeout) {
  const HostPort hp = parse_host_port(address, "the coordinator address");
  const Clock::time_point until = Clock::now() + timeout;
  asio::io_context resolving;
  tcp::resolver resolver(resolving);
  asio::error_code ec;
  const auto endpoints = resolver.resolve(hp.host, std::to_string(hp.port), ec);
  if (ec) throw InvalidArgument(fmt::format("cannot resolve {}: {}", address, ec.message()));
  Attempt a;
  int closed = 0;
  int refused = 0;  // in a row
  constexpr auto kQuick = std::chrono::milliseconds(20);
  for (auto delay = kQuick;; delay = std::min(2 * delay, decltype(delay)(500))) {
    a = ask_once(endpoints, auth_token, until);
    if (a.outcome || Clock::now() + delay >= until) break;
    if (a.connected) {
      ++closed;
      refused = 0;
    } else if (!a.refused || (closed == 0 && ++refused >= kRefusalsMeaningGone)) {
      break;
    } else if (closed > 0) {
      // A live service's full queue: a slot frees for a moment after each burst it accepts, and
      // a flood refills it within milliseconds, so ask again soon rather than later.
      delay = kQuick / 2;
    }
    std::this_thread::sleep_for(delay);
  }
  if (!a.outcome) {
    throw DeadlineExceeded(fmt::format(
        "the coordination service at {} gave no status within {} ms ({}{}); is the job running, "
        "and is this its address?",
        address, timeout.count(), a.failure,
        closed > 0 ? fmt::format(", after it closed {} connection{} unanswered", closed,
                                 closed == 1 ? "" : "s")
                   : ""));
  }
  if (!a.outcome->ok()) throw_status(*a.outcome);
  return a.answer.status_table();
}

std::string status_text(const wire::StatusTable& table) {
  std::string out =
      fmt::format("{:>7}  {:<14}  {:<16}  {:>8}  {:<44}  {:>9}  {:>9}  {}\n", "process", "state",
                  "host", "pid", "call", "since", "heard", "waited for by");
  // Hostnames and calls are the processes' words (a key or barrier name is any bytes): escaped
  // and cut to their columns, so that none can clear the screen or forge a row.
  for (const auto& row : table.processes()) {
    out += fmt::format("{:>7}  {:<14}  {:<16}  {:>8}  {:<44}  {:>9}  {:>9}  {}\n", row.process_id(),
                       StatusBoard::state_name(row.state()), terminal_safe(row.hostname(), 32),
                       row.pid(), terminal_safe(row.call(), 88), seconds(row.since_ms()),
                       seconds(row.heartbeat_age_ms()),
                       row.waited_for_by() > 0 ? std::to_string(row.waited_for_by()) : "");
  }
  for (const auto& row : table.processes()) {
    if (row.waited_for_by() > 0 && row.state() != wire::PROCESS_BLOCKED) {
      out += fmt::format("{} processes wait for it: {}\n", row.waited_for_by(),
                         terminal_safe(StatusBoard::describe(row), 400));
    }
  }
  return out;
}

void append_json_string(std::string& out, const std::string& text) {
  out += nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void append_status_row_json(std::string& out, const wire::ProcessStatus& row) {
  auto to = std::back_inserter(out);
  out += R"({"call":)";
  append_json_string(out, row.call());
  out += R"(,"detail":)";
  append_json_string(out, row.detail());
  fmt::format_to(to, R"(,"heartbeat_age_ms":{},"host":)", row.heartbeat_age_ms());
  append_json_string(out, row.hostname());
  fmt::format_to(to, R"(,"pid":{},"process":{},"since_ms":{},"state":)", row.pid(),
                 row.process_id(), row.since_ms());
  append_json_string(out, std::string(StatusBoard::state_name(row.state())));
  out += R"(,"summary":)";
  append_json_string(out, StatusBoard::describe(row));
  fmt::format_to(to, R"(,"waited_for_by":{},"waiting_for":[{}]}})", row.waited_for_by(),
                 fmt::join(row.waiting_for(), ","));
}

// Written straight into one string, row by row, keys in the order nlohmann::json sorts them: a
// tree of values for 16384 rows cost the service tens of MiB more while it was built.
std::string status_json(const wire::StatusTable& table) {
  std::string out;
  out.reserve(64 + static_cast<size_t>(table.processes_size()) * 320);
  fmt::format_to(std::back_inserter(out), R"({{"num_processes":{},"processes":[)",
                 table.num_processes());
  for (int i = 0; i < table.processes_size(); ++i) {
    if (i > 0) out += ',';
    append_status_row_json(out, table.processes(i));
  }
  out += "]}";
  return out;
}

}  // namespace spmd
