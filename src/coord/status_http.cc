#include "coord/status_http.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <optional>

#include "coord/address.h"
#include "coord/auth_token.h"
#include "coord/status_query.h"
#include "coord/status_summary.h"
#include "spmd/error.h"

namespace spmd {
namespace {

using asio::ip::tcp;

constexpr size_t kMaxRequestBytes = 8192;
constexpr std::chrono::seconds kRequestDeadline{5};
constexpr int kMaxOpen = 16;
// How long one build of status.json serves every viewer (the page asks once a second).
constexpr std::chrono::milliseconds kJsonLifetime{1000};

// The value of `key` in a query string "a=1&token=xyz", percent-decoding nothing: tokens are
// hex or plain words, and anything else simply does not match.
std::string query_value(const std::string& query, const std::string& key) {
  size_t at = 0;
  while (at <= query.size()) {
    const size_t end = std::min(query.find('&', at), query.size());
    const std::string pair = query.substr(at, end - at);
    if (pair.rfind(key + "=", 0) == 0) return pair.substr(key.size() + 1);
    at = end + 1;
  }
  return "";
}

// The status line and headers of an answer with a body of `length` bytes.
std::string head(int code, const char* reason, const char* type, size_t length) {
  return fmt::format(
      "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nCache-Control: no-store\r\n"
      "X-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n",
      code, reason, type, length);
}

std::string http(int code, const char* reason, const char* type, const std::string& body) {
  return head(code, reason, type, body.size()) + body;
}

// The value of header `name` (lower case) in a request's head, trimmed; nullopt when absent.
std::optional<std::string> header_value(const std::string& request, const std::string& name) {
  size_t at = request.find("\r\n");
  while (at != std::string::npos && at + 2 < request.size()) {
    const size_t start = at + 2;
    const size_t end = request.find("\r\n", start);
    const std::string line = request.substr(start, end == std::string::npos ? end : end - start);
    const size_t colon = line.find(':');
    std::string key = line.substr(0, colon);
    std::transform(key.begin(), key.end(), key.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (colon != std::string::npos && key == name) {
      const size_t first = line.find_first_not_of(" \t", colon + 1);
      const size_t last = line.find_last_not_of(" \t");
      return first == std::string::npos ? "" : line.substr(first, last - first + 1);
    }
    at = end;
  }
  return std::nullopt;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// The name in a Host header: "127.0.0.1:8080" gives "127.0.0.1", "[::1]:8080" gives "::1".
std::string host_name(const std::string& host) {
  if (!host.empty() && host.front() == '[') return host.substr(1, host.find(']') - 1);
  const size_t colon = host.find(':');
  return colon != std::string::npos && host.find(':', colon + 1) == std::string::npos
             ? host.substr(0, colon)
             : host;
}

}  // namespace

bool StatusHttpServer::host_allowed(const std::optional<std::string>& host) const {
  // With a token, the token protects the page. Without one, a Host that names a domain (other
  // than localhost and this machine's own name) is refused: a page of another site that
  // rebinds its domain to this address would send it. A request without Host is no browser's.
  if (!token_.empty() || !host) return true;
  const std::string name = lower(host_name(*host));
  asio::error_code ec;
  asio::ip::make_address(name, ec);
  if (!ec || name == "localhost") return true;
  std::array<char, 256> own{};
  return gethostname(own.data(), own.size() - 1) == 0 && name == lower(own.data());
}

struct StatusHttpServer::Exchange {
  explicit Exchange(tcp::socket s, asio::io_context& io) : socket(std::move(s)), timer(io) {}
  tcp::socket socket;
  asio::steady_timer timer;
  std::string request;
  // Shared: status.json's answer is one buffer for every viewer while it is fresh.
  StatusHttpServer::Answer response;
};

std::string status_page_address(const std::string& given, const std::string& what) {
  if (given.empty()) return "";
  std::string address = given.find(':') == std::string::npos ? "127.0.0.1:" + given : given;
  parse_host_port(address, what, true);
  return address;
}

StatusHttpServer::StatusHttpServer(asio::io_context& io, const std::string& address,
                                   std::string auth_token, TableSource table)
    : io_(io), acceptor_(io), token_(std::move(auth_token)), table_(std::move(table)) {
  const HostPort hp = parse_host_port(address, "the status page's address", true);
  asio::error_code ec;
  const auto ip = asio::ip::make_address(hp.host, ec);
  if (ec) {
    throw InvalidArgument(
        fmt::format("the status page's address '{}' must be an IP address and "
                    "port, like 127.0.0.1:8080",
                    address));
  }
  const tcp::endpoint endpoint(ip, hp.port);
  acceptor_.open(endpoint.protocol(), ec);
  if (!ec) acceptor_.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor_.bind(endpoint, ec);
  if (!ec) acceptor_.listen(kMaxOpen, ec);
  if (ec) {
    throw Error(fmt::format("cannot serve the status page on {}: {}", address, ec.message()));
  }
  host_ = hp.host;
  port_ = acceptor_.local_endpoint().port();
}

StatusHttpServer::~StatusHttpServer() = default;

std::string StatusHttpServer::url() const {
  const bool v6 = host_.find(':') != std::string::npos;
  std::string url = fmt::format("http://{}:{}/", v6 ? "[" + host_ + "]" : host_, port_);
  if (!token_.empty()) url += "?token=" + token_;
  return url;
}

void StatusHttpServer::start() {
  if (token_.empty()) {
    spdlog::warn(
        "the status page at {} has no auth token: any local user, and anyone who can reach the "
        "address, can read it (set SPMD_AUTH_TOKEN to require ?token=)",
        url());
  }
  accept();
}

void StatusHttpServer::stop() {
  asio::error_code ignored;
  acceptor_.close(ignored);
}

void StatusHttpServer::accept() {
  acceptor_.async_accept([this](asio::error_code ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted || !acceptor_.is_open()) return;
    if (!ec && open_ >= kMaxOpen) {
      refuse_busy(socket);
    } else if (!ec) {
      ++open_;
      auto x = std::make_shared<Exchange>(std::move(socket), io_);
      x->timer.expires_after(kRequestDeadline);
      x->timer.async_wait([x](asio::error_code e) {
        asio::error_code ignored;
        if (!e) x->socket.close(ignored);  // too slow: the pending read ends with an error
      });
      read(x);
    }
    accept();
  });
}

void StatusHttpServer::read(const std::shared_ptr<Exchange>& x) {
  auto chunk = std::make_shared<std::array<char, 1024>>();
  x->socket.async_read_some(asio::buffer(*chunk), [this, x, chunk](asio::error_code ec, size_t n) {
    if (ec) {
      --open_;
      x->timer.cancel();
      return;
    }
    x->request.append(chunk->data(), n);
    if (x->request.find("\r\n\r\n") != std::string::npos) return answer(x);
    if (x->request.size() >= kMaxRequestBytes) {
      x->request = "TOO LARGE";
      return answer(x);
    }
    read(x);
  });
}

void StatusHttpServer::refuse_busy(tcp::socket& socket) {
  // Best effort and stateless: a short answer that fits the socket's buffer, then close.
  static const std::string busy = http(503, "Service Unavailable", "text/plain",
                                       "the status page serves 16 connections at once; retry\n");
  asio::error_code ignored;
  socket.non_blocking(true, ignored);
  socket.write_some(asio::buffer(busy), ignored);
  socket.close(ignored);
}

void StatusHttpServer::answer(const std::shared_ptr<Exchange>& x) {
  const std::string line = x->request.substr(0, x->request.find("\r\n"));
  if (line != "TOO LARGE" && !host_allowed(header_value(x->request, "host"))) {
    x->response = Answer::of(http(403, "Forbidden", "text/plain",
                                  "this status page answers requests for its own address only "
                                  "(Host: an IP address, localhost or this machine's name)\n"));
  } else {
    x->response = respond(line);
  }
  const std::array<asio::const_buffer, 2> parts = {
      asio::buffer(*x->response.head),
      x->response.body ? asio::buffer(*x->response.body) : asio::const_buffer()};
  asio::async_write(x->socket, parts, [this, x](asio::error_code, size_t) {
    --open_;
    x->timer.cancel();
    asio::error_code ignored;
    x->socket.shutdown(tcp::socket::shutdown_both, ignored);
    x->socket.close(ignored);
  });
}

StatusHttpServer::Answer StatusHttpServer::Answer::of(std::string whole) {
  return {std::make_shared<const std::string>(std::move(whole)), nullptr};
}

std::shared_ptr<const wire::StatusTable> StatusHttpServer::current_table() const {
  const auto now = std::chrono::steady_clock::now();
  if (!table_taken_ || now - table_at_ >= kJsonLifetime) {
    table_cache_ = nullptr;  // freed before the next is taken
    std::optional<wire::StatusTable> table = table_();
    if (table) table_cache_ = std::make_shared<const wire::StatusTable>(std::move(*table));
    table_at_ = now;
    table_taken_ = true;
  }
  return table_cache_;
}

StatusHttpServer::Answer StatusHttpServer::json_answer(
    Cached& cache, std::string (*make)(const wire::StatusTable&)) const {
  const auto now = std::chrono::steady_clock::now();
  if (!cache.answer.head || now - cache.built_at >= kJsonLifetime) {
    cache.answer = {};  // what viewers still write stays theirs; the rest is freed first
    const auto table = current_table();
    auto body = std::make_shared<const std::string>(
        table ? make(*table)
              : R"({"error": "the coordination service did not hand over its table in time"})");
    cache.answer.head =
        std::make_shared<const std::string>(head(200, "OK", "application/json", body->size()));
    cache.answer.body = std::move(body);
    cache.built_at = now;
  }
  return cache.answer;
}

StatusHttpServer::Answer StatusHttpServer::respond(const std::string& request_line) const {
  if (request_line == "TOO LARGE") {
    return Answer::of(
        http(431, "Request Header Fields Too Large", "text/plain", "request too large\n"));
  }
  // "GET /status.json?token=x HTTP/1.1": a method, a target and a version, one space apart.
  const size_t sp1 = request_line.find(' ');
  const size_t sp2 = request_line.rfind(' ');
  if (sp1 == std::string::npos || sp2 <= sp1 + 1 ||
      request_line.compare(sp2 + 1, 5, "HTTP/") != 0 || request_line.find(' ', sp1 + 1) != sp2) {
    return Answer::of(
        http(400, "Bad Request", "text/plain",
             "a request line is METHOD TARGET HTTP/VERSION, as GET /status.json HTTP/1.1\n"));
  }
  if (request_line.substr(0, sp1) != "GET") {
    return Answer::of(http(405, "Method Not Allowed", "text/plain", "only GET is served\n"));
  }
  const std::string target = request_line.substr(sp1 + 1, sp2 - sp1 - 1);
  const size_t q = target.find('?');
  const std::string path = target.substr(0, q);
  const std::string query = q == std::string::npos ? "" : target.substr(q + 1);
  if (!token_.empty() && !tokens_equal(query_value(query, "token"), token_)) {
    return Answer::of(
        http(403, "Forbidden", "text/plain",
             "this job's status needs ?token=<the job's auth token (SPMD_AUTH_TOKEN)>\n"));
  }
  if (path == "/") {
    return Answer::of(http(200, "OK", "text/html; charset=utf-8", status_page_html()));
  }
  if (path == "/status.json") return json_answer(full_, status_json);
  if (path == "/summary.json") return json_answer(summary_, status_summary_json);
  return Answer::of(http(404, "Not Found", "text/plain",
                         "not found: /, /summary.json and /status.json are served\n"));
}

}  // namespace spmd
