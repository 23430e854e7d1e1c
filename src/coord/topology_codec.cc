#include "coord/topology_codec.h"

#include <fmt/format.h>
#include <zstd.h>

#include "coord/frame.h"

namespace spmd {

namespace {

// zstd's level 3, its default: the topology compresses in well under a millisecond per 10^4
// processes, once per cluster.
constexpr int kZstdLevel = 3;

std::variant<wire::Topology, std::string> restore_pids(wire::Topology topology) {
  if (topology.pid_delta_size() == 0) return topology;
  if (topology.pid_size() != 0 || topology.pid_delta_size() != topology.host_index_size()) {
    return fmt::format("the topology has {} pid deltas for {} processes", topology.pid_delta_size(),
                       topology.host_index_size());
  }
  int64_t pid = 0;
  topology.mutable_pid()->Reserve(topology.pid_delta_size());
  for (int64_t delta : topology.pid_delta()) {
    pid += delta;  // wraps like the encoder's subtraction, whatever the deltas are
    topology.add_pid(pid);
  }
  topology.clear_pid_delta();
  return topology;
}

}  // namespace

void pack_topology(wire::Topology topology, wire::ServerMessage& msg) {
  int64_t previous = 0;
  topology.mutable_pid_delta()->Reserve(topology.pid_size());
  for (int64_t pid : topology.pid()) {
    topology.add_pid_delta(pid - previous);
    previous = pid;
  }
  topology.clear_pid();
  const std::string plain = topology.SerializeAsString();
  std::string packed(ZSTD_compressBound(plain.size()), '\0');
  const size_t n =
      ZSTD_compress(packed.data(), packed.size(), plain.data(), plain.size(), kZstdLevel);
  // Compressing into a buffer of ZSTD_compressBound bytes cannot fail.
  packed.resize(ZSTD_isError(n) ? 0 : n);
  msg.set_topology_bytes(plain.size());
  msg.set_topology_zstd(std::move(packed));
}

std::variant<wire::Topology, std::string> unpack_topology(const wire::ServerMessage& msg) {
  if (msg.body_case() != wire::ServerMessage::kTopologyZstd) return restore_pids(msg.topology());
  const uint64_t size = msg.topology_bytes();
  if (size > kMaxFrameBytes) {
    return fmt::format("the topology claims {} bytes, more than the {} a frame may hold", size,
                       kMaxFrameBytes);
  }
  const std::string& packed = msg.topology_zstd();
  const unsigned long long content = ZSTD_getFrameContentSize(packed.data(), packed.size());
  if (content != size) return std::string("the compressed topology's size does not match");
  std::string plain(size, '\0');
  const size_t n = ZSTD_decompress(plain.data(), plain.size(), packed.data(), packed.size());
  if (ZSTD_isError(n) || n != size) {
    return fmt::format("the compressed topology does not decompress: {}",
                       ZSTD_isError(n) ? ZSTD_getErrorName(n) : "short");
  }
  wire::Topology topology;
  if (!topology.ParseFromString(plain)) return std::string("the topology does not parse");
  return restore_pids(std::move(topology));
}

}  // namespace spmd
