// The collectives engine's settings: read from the environment once per runtime session — at
// initialize(), where a bad value is reported before any collective runs, or at the first
// collective of a process that runs alone — and handed to the engine in CommHandles. The engine
// itself reads no environment variable.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>

#include "cluster/env_reader.h"

namespace spmd {

struct CommOptions {
  // SPMD_TRANSPORT: auto (shared memory within a host, TCP across hosts) or tcp (TCP
  // everywhere, even on one host).
  enum class Transport { kAuto, kTcp };
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

// Reads the settings. Throws InvalidArgument naming the variable, its value and what is expected.
CommOptions read_comm_options(const EnvReader& env);

}  // namespace spmd
