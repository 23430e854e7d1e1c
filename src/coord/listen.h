// Opening the coordination service's listening socket.
#pragma once

#include <asio.hpp>
#include <cstdint>
#include <string>

namespace spmd {

// Opens, binds and listens `acceptor` on `bind_address` ("host:port"; "[::]" is every interface,
// IPv4 too, "0.0.0.0" every IPv4 one; port 0 picks a free port) and returns the port. Tries each
// address the host resolves to. Throws InvalidArgument for a malformed address and spmd::Error
// naming the address and the reason when nothing can be bound.
uint16_t listen_on(asio::ip::tcp::acceptor& acceptor, const std::string& bind_address);

}  // namespace spmd
