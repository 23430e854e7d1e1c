#include "coord/listen.h"

#include <fmt/format.h>
#include <sys/socket.h>

#include <optional>
#include <variant>

#include "coord/address.h"
#include "spmd/error.h"

namespace spmd {

namespace {

using tcp = asio::ip::tcp;
using reuse_port = asio::detail::socket_option::boolean<SOL_SOCKET, SO_REUSEPORT>;

std::vector<tcp::endpoint> endpoints_of(asio::io_context& io, const HostPort& hp,
                                        const std::string& bind_address) {
  std::vector<tcp::endpoint> endpoints;
  if (hp.host == "::" || hp.host == "0.0.0.0") {
    if (hp.host == "::") endpoints.emplace_back(asio::ip::address_v6::any(), hp.port);
    endpoints.emplace_back(asio::ip::address_v4::any(), hp.port);
    return endpoints;
  }
  asio::error_code ec;
  tcp::resolver resolver(io);
  auto results = resolver.resolve(hp.host, std::to_string(hp.port), ec);
  if (ec) {
    throw Error(fmt::format("the coordination service cannot resolve its bind address '{}': {}",
                            bind_address, ec.message()));
  }
  for (const auto& r : results) endpoints.push_back(r.endpoint());
  return endpoints;
}

// Opens and binds one socket (listening when `listen`); the error, if any.
asio::error_code open_one(tcp::acceptor& a, const tcp::endpoint& ep, bool shared, bool listen) {
  asio::error_code ec;
  a.open(ep.protocol(), ec);
  if (ec) return ec;
  if (ep.address().is_v6()) a.set_option(asio::ip::v6_only(false), ec);
  a.set_option(tcp::acceptor::reuse_address(true), ec);
  if (shared) a.set_option(reuse_port(true), ec);
  a.bind(ep, ec);
  if (!ec && listen) a.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) a.close();
  return ec;
}

// The sockets on one endpoint, or the error of the first that failed.
std::variant<std::vector<tcp::acceptor>, asio::error_code> listen_group(asio::io_context& io,
                                                                        tcp::endpoint ep,
                                                                        int count) {
  if (ep.port() != 0) {
    // Someone already on this port, sharing or not, makes a plain bind fail: refuse as before.
    tcp::acceptor probe(io);
    if (auto ec = open_one(probe, ep, false, false)) return ec;
  }
  std::vector<tcp::acceptor> group;
  for (int i = 0; i < count; ++i) {
    tcp::acceptor& a = group.emplace_back(io);
    if (auto ec = open_one(a, ep, count > 1, true)) return ec;
    ep.port(a.local_endpoint().port());  // port 0: the others join the port the first got
  }
  return group;
}

}  // namespace

std::vector<tcp::acceptor> listen_on(asio::io_context& io, const std::string& bind_address,
                                     int count) {
  const HostPort hp = parse_host_port(bind_address, "coordinator_bind_address", true);
  std::string last_error = "no address to bind";
  for (const auto& ep : endpoints_of(io, hp, bind_address)) {
    auto group = listen_group(io, ep, std::max(1, count));
    if (auto* sockets = std::get_if<std::vector<tcp::acceptor>>(&group)) return std::move(*sockets);
    last_error = std::get<asio::error_code>(group).message();
  }
  throw Error(fmt::format(
      "the coordination service cannot listen on {}: {}. If another process (or an earlier run) "
      "holds the port, choose another port in coordinator_address",
      bind_address, last_error));
}

}  // namespace spmd
