// Setting up a group's TCP links: a listener per process, connections from each higher
// position to each lower one, and a 32-byte handshake that names the group, both positions and a
// nonce the acceptor published through the coordination service (so only cluster members, who
// can read it, get in). Anything else that connects — a port scanner, a stale job, garbage — is
// logged and dropped while the wait for the real peers goes on.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace spmd {

class CoordClient;

struct Handshake {
  uint32_t magic = 0x544d5053;  // "SPMT"
  uint32_t version = 1;
  uint64_t group = 0;
  uint32_t from = 0;  // the connecting position
  uint32_t to = 0;    // the accepting position
  uint64_t nonce = 0;
  uint32_t stream = 0;   // which of the pair's connections this is
  uint32_t streams = 1;  // how many connections the pair uses
};
static_assert(sizeof(Handshake) == 40, "the handshake is part of the wire format");

class DataListener {
 public:
  // Listens on `address` (an IP literal), port chosen by the kernel. Throws spmd::Error.
  explicit DataListener(const std::string& address);
  ~DataListener();
  DataListener(const DataListener&) = delete;
  DataListener& operator=(const DataListener&) = delete;

  // "ip:port", with IPv6 addresses in brackets.
  const std::string& endpoint() const { return endpoint_; }
  int fd() const { return fd_; }

 private:
  int fd_ = -1;
  std::string endpoint_;
};

// Accepts `streams` valid connections from each position in `from`, for group `group` at
// position `self` with `nonce`; returns the connected sockets by position, in stream order. Throws
// DeadlineExceeded at `deadline` naming the positions that never connected, PeerFailure when
// `coord` reports the cluster aborted. Invalid connections count in `rejected` (may be null).
std::map<int, std::vector<int>> accept_peers(DataListener& listener, uint64_t group, int self,
                                             uint64_t nonce, const std::set<int>& from, int streams,
                                             std::chrono::steady_clock::time_point deadline,
                                             const CoordClient* coord, int* rejected = nullptr);

// Connects to `endpoint` ("ip:port") and sends `hello`; returns the socket. Retries refused
// connections until `deadline`. Throws spmd::Error naming the endpoint.
int connect_peer(const std::string& endpoint, const Handshake& hello,
                 std::chrono::steady_clock::time_point deadline);

}  // namespace spmd
