// Opening the coordination service's listening sockets.
#pragma once

#include <asio.hpp>
#include <cstdint>
#include <string>
#include <vector>

namespace spmd {

// Opens `count` listening sockets on `bind_address` ("host:port"; "[::]" is every interface,
// IPv4 too, "0.0.0.0" every IPv4 one; port 0 picks a free port), all on the same port, and
// returns them.
//
// Why several: each listening socket's queue of connections not yet accepted holds at most
// net.core.somaxconn (4096 on Debian). When more processes than that connect at once, the
// kernel drops the rest's SYNs and each of them waits out a 1, 3, 7 s retransmission. With
// count > 1 the sockets share the port by SO_REUSEPORT and the kernel spreads new connections
// over them, so the queues add up. SO_REUSEPORT only lets sockets of the same user join, and a
// port already bound by anyone (reuse or not) is refused as before: the port is checked with a
// plain bind first.
//
// Tries each address the host resolves to. Throws InvalidArgument for a malformed address and
// spmd::Error naming the address and the reason when nothing can be bound.
std::vector<asio::ip::tcp::acceptor> listen_on(asio::io_context& io,
                                               const std::string& bind_address, int count);

}  // namespace spmd
