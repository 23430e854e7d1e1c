#include "coord/listen.h"

#include <fmt/format.h>

#include <vector>

#include "coord/address.h"
#include "spmd/error.h"

namespace spmd {

namespace {

using tcp = asio::ip::tcp;

std::vector<tcp::endpoint> endpoints_of(asio::any_io_executor executor, const HostPort& hp,
                                        const std::string& bind_address) {
  std::vector<tcp::endpoint> endpoints;
  if (hp.host == "::" || hp.host == "0.0.0.0") {
    if (hp.host == "::") endpoints.emplace_back(asio::ip::address_v6::any(), hp.port);
    endpoints.emplace_back(asio::ip::address_v4::any(), hp.port);
    return endpoints;
  }
  asio::error_code ec;
  tcp::resolver resolver(executor);
  auto results = resolver.resolve(hp.host, std::to_string(hp.port), ec);
  if (ec) {
    throw Error(fmt::format("the coordination service cannot resolve its bind address '{}': {}",
                            bind_address, ec.message()));
  }
  for (const auto& r : results) endpoints.push_back(r.endpoint());
  return endpoints;
}

}  // namespace

uint16_t listen_on(tcp::acceptor& acceptor, const std::string& bind_address) {
  const HostPort hp = parse_host_port(bind_address, "coordinator_bind_address", true);
  std::string last_error = "no address to bind";
  for (const auto& ep : endpoints_of(acceptor.get_executor(), hp, bind_address)) {
    asio::error_code ec;
    acceptor.close(ec);
    acceptor.open(ep.protocol(), ec);
    if (ec) {
      last_error = ec.message();
      continue;
    }
    if (ep.address().is_v6()) acceptor.set_option(asio::ip::v6_only(false), ec);
    acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
    acceptor.bind(ep, ec);
    if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
    if (!ec) return acceptor.local_endpoint().port();
    last_error = ec.message();
  }
  throw Error(fmt::format(
      "the coordination service cannot listen on {}: {}. If another process (or an earlier run) "
      "holds the port, choose another port in coordinator_address",
      bind_address, last_error));
}

}  // namespace spmd
