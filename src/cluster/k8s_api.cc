#include "cluster/k8s_api.h"

#include <fmt/format.h>
#include <openssl/ssl.h>

#include <asio.hpp>
#include <asio/ssl.hpp>
#include <memory>

#include "spmd/error.h"

namespace spmd {
namespace {

constexpr size_t kMaxAnswerBytes = size_t{4} << 20;

// One GET over TLS, as a chain of asynchronous steps on its own event loop, so that one deadline
// bounds them all.
struct Exchange {
  asio::io_context io;
  asio::ssl::context tls{asio::ssl::context::tls_client};
  std::unique_ptr<asio::ssl::stream<asio::ip::tcp::socket>> stream;
  asio::ip::tcp::resolver resolver{io};
  std::string request;
  std::string answer;
  std::string failure;  // set by the step that failed
  bool done = false;

  void fail(const std::string& step, const asio::error_code& ec) {
    failure = fmt::format("{}: {}", step, ec.message());
  }
};

bool is_ip(const std::string& host) {
  asio::error_code ec;
  asio::ip::make_address(host, ec);
  return !ec;
}

// "HTTP/1.0 403 Forbidden" → 403; 0 when the status line is not one.
int status_of(const std::string& answer) {
  if (answer.rfind("HTTP/", 0) != 0) return 0;
  const size_t sp = answer.find(' ');
  if (sp == std::string::npos || sp + 4 > answer.size()) return 0;
  try {
    return std::stoi(answer.substr(sp + 1, 3));
  } catch (const std::exception&) {
    return 0;
  }
}

void run(Exchange& x, const K8sApiServer& s) {
  x.resolver.async_resolve(s.host, s.port, [&](const asio::error_code& ec, auto endpoints) {
    if (ec) return x.fail("resolving the API server", ec);
    asio::async_connect(x.stream->lowest_layer(), endpoints, [&](const asio::error_code& ec, auto) {
      if (ec) return x.fail("connecting", ec);
      x.stream->async_handshake(asio::ssl::stream_base::client, [&](const asio::error_code& ec) {
        if (ec) return x.fail("the TLS handshake (is the server's certificate from ca.crt?)", ec);
        asio::async_write(
            *x.stream, asio::buffer(x.request), [&](const asio::error_code& ec, size_t) {
              if (ec) return x.fail("sending the request", ec);
              asio::async_read(
                  *x.stream, asio::dynamic_buffer(x.answer, kMaxAnswerBytes),
                  [&](const asio::error_code& ec, size_t) {
                    // The server closes the connection after an HTTP/1.0 answer; a
                    // TLS stream's truncation at that close is its usual end.
                    if (ec && ec != asio::error::eof && ec != asio::ssl::error::stream_truncated) {
                      return x.fail("reading the answer", ec);
                    }
                    x.done = true;
                  });
            });
      });
    });
  });
}

}  // namespace

std::string k8s_get(const K8sApiServer& s, const std::string& path,
                    std::chrono::milliseconds timeout) {
  const std::string url = fmt::format("https://{}:{}{}", s.host, s.port, path);
  Exchange x;
  asio::error_code ec;
  x.tls.load_verify_file(s.ca_file, ec);
  if (ec) {
    throw Error(fmt::format("Kubernetes: cannot read the service account's CA {}: {}", s.ca_file,
                            ec.message()));
  }
  x.tls.set_verify_mode(asio::ssl::verify_peer);
  x.stream = std::make_unique<asio::ssl::stream<asio::ip::tcp::socket>>(x.io, x.tls);
  x.stream->set_verify_callback(asio::ssl::host_name_verification(s.host));
  if (!is_ip(s.host)) SSL_set_tlsext_host_name(x.stream->native_handle(), s.host.c_str());
  x.request = fmt::format(
      "GET {} HTTP/1.0\r\nHost: {}\r\nAuthorization: Bearer {}\r\nAccept: application/json\r\n"
      "User-Agent: spmd\r\n\r\n",
      path, s.host, s.token);
  run(x, s);
  x.io.run_for(timeout);
  if (!x.failure.empty()) {
    throw Error(fmt::format("Kubernetes: GET {} failed at {}", url, x.failure));
  }
  if (!x.done) {
    throw DeadlineExceeded(fmt::format(
        "Kubernetes: GET {} did not answer within {} ms (is the API server reachable from the "
        "pod?)",
        url, timeout.count()));
  }
  const int status = status_of(x.answer);
  const size_t body = x.answer.find("\r\n\r\n");
  std::string text = body == std::string::npos ? "" : x.answer.substr(body + 4);
  if (status == 401 || status == 403) {
    throw PermissionDenied(fmt::format(
        "Kubernetes: GET {} answered {}: the pod's service account may not read it; grant it "
        "\"get\" on jobs in its namespace (a Role and RoleBinding, as examples/k8s/ has)",
        url, status));
  }
  if (status != 200) {
    throw Error(fmt::format("Kubernetes: GET {} answered {}: {}", url,
                            status == 0 ? std::string("no HTTP status") : std::to_string(status),
                            text.substr(0, 300)));
  }
  return text;
}

}  // namespace spmd
