// The collectives engine's settings: read from the environment once per runtime session — at
// initialize(), where a bad value is reported before any collective runs, or at the first
// collective of a process that runs alone — and handed to the engine in CommHandles. The engine
// itself reads no environment variable.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>

#include "cluster/env_reader.h"

namespace spmd {

struct CommOptions {
  // SPMD_TRANSPORT or distributed::Options::transport:
  // - auto: shm+ucx when this build has UCX and UCX finds a fabric other than TCP (InfiniBand,
  //   RoCE, …), else shm+tcp;
  // - shm+tcp: spmd's shared memory within a host, spmd's TCP across hosts;
  // - shm+ucx: spmd's shared memory within a host, UCX across hosts (whatever UCX finds);
  // - tcp: spmd's TCP everywhere, even on one host;
  // - ucx: UCX everywhere, even on one host (UCX then picks shared memory itself).
  enum class Transport { kAuto, kShmTcp, kShmUcx, kTcp, kUcx };
  // Whether processes of one host talk through spmd's shared memory.
  static bool shm_within_host(Transport t) { return t != Transport::kTcp && t != Transport::kUcx; }
  // Whether UCX must carry what crosses hosts (auto decides per job).
  static bool ucx_required(Transport t) { return t == Transport::kUcx || t == Transport::kShmUcx; }
  Transport transport = Transport::kAuto;
  // SPMD_TCP_STREAMS (1-16): connections per pair of processes over TCP. More help where one
  // connection's kernel work on one core cannot fill the link; on loopback with few cores they
  // only add overhead.
  int tcp_streams = 1;
  // SPMD_SHM_RING_BYTES (a power of two, 4096-2^30): bytes of each shared-memory ring, one per
  // ordered pair of processes on a host. Large enough that a sender rarely waits for a reader a
  // few chunks behind; small enough that a ring stays in the shared L3 cache while both ends
  // work on it.
  size_t shm_ring_bytes = size_t{1} << 20;
  // SPMD_SHM_SINGLE_COPY=1: large payloads go by reference (process_vm_readv) instead of through
  // the rings. Off by default: on the development machine (2 cores, buffers fresh from memory)
  // the receiver doing every copy, plus pinning the sender's pages and waiting for its
  // acknowledgement, measured slower than the rings, whose two copies run on both cores at once
  // (bench/RESULTS.md). Where reading another process's memory is refused, it stays off.
  bool shm_single_copy = false;
  // SPMD_SHM_MAP_BUFFERS (0 or 1, default 1): payloads of 256 KiB and more that lie in comm
  // memory (spmd/comm_memory.h) go by reference: the receiver maps the sender's buffer once and
  // reduces or copies straight out of it, one copy per byte instead of two. Where taking another
  // process's descriptors is refused (pidfd_getfd: ptrace rules, seccomp), it stays off.
  bool shm_map_buffers = true;
  // SPMD_COLLECTIVE_TIMEOUT (seconds, fractions allowed; 0: no limit), or
  // distributed::Options::collective_timeout: how long a collective, communicator creation, and
  // every other wait for the other processes without a deadline of its own (sync_global_devices,
  // checkpoint commits) wait. Default kDefaultCollectiveTimeout.
  std::optional<std::chrono::nanoseconds> collective_timeout = kDefaultCollectiveTimeout;
  // Ten minutes, PyTorch's process-group default: far longer than a slow training step, a
  // checkpoint of a large model or a straggler's page-cache miss, and far shorter than the
  // hours a job hangs before someone notices.
  static constexpr std::chrono::nanoseconds kDefaultCollectiveTimeout = std::chrono::minutes(10);
};

// Whether this build has the UCX transport (libucx-dev was found when it was built).
bool ucx_in_build();

// Reads the settings. Throws InvalidArgument naming the variable, its value and what is expected,
// and for ucx in a build without UCX (`ucx_available`), saying so.
CommOptions read_comm_options(const EnvReader& env, bool ucx_available = ucx_in_build());

// The transport named `name` ("auto", "shm+tcp", "shm+ucx", "tcp", "ucx"; "" and "shm" mean
// auto); `source` names where it came from in the error (SPMD_TRANSPORT, Options::transport).
CommOptions::Transport parse_transport(const std::string& name, const std::string& source,
                                       bool ucx_available = ucx_in_build());

// The name parse_transport() reads.
const char* transport_name(CommOptions::Transport t);

}  // namespace spmd
