// The topology on the wire: every process receives the whole of it when the cluster forms, so
// the service sends N copies of something of size O(N). At 16384 processes the plain columns
// (about 8 bytes a process) made 2 GiB of loopback copies and dominated initialisation.
//
// pack_topology() replaces the pid column by zigzag deltas (processes started one after another
// on a host have nearby pids) and compresses the serialized message with zstd: the runs of host
// indices, device counts and platforms of a regular cluster compress to almost nothing. It is
// done once per cluster; unpack_topology() undoes it in each process.
// Open to tools/: spmd-bench coordinator measures the topology encoding.
#pragma once

#include <string>
#include <variant>

#include "protocol.pb.h"

namespace spmd {

// Puts `topology` into the registration answer `msg` (topology_zstd and topology_bytes).
void pack_topology(wire::Topology topology, wire::ServerMessage& msg);

// The topology of a registration answer with the pid column restored, or an error: a declared
// size above kMaxFrameBytes (checked before any allocation), bytes that are not one zstd frame
// of exactly the declared size, a message that does not parse, or a pid_delta column whose
// length differs from the process count. An answer with a plain `topology` is returned as is.
std::variant<wire::Topology, std::string> unpack_topology(const wire::ServerMessage& msg);

}  // namespace spmd
