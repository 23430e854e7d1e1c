#include "runtime/comm_options.h"

#include <fmt/format.h>

#include <bit>
#include <cstdlib>
#include <string>

#include "spmd/error.h"

namespace spmd {

namespace {

size_t read_ring_bytes(const EnvReader& env, size_t fallback) {
  const auto raw = env.get("SPMD_SHM_RING_BYTES");
  if (!raw || raw->empty()) return fallback;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(raw->c_str(), &end, 10);
  if (end == raw->c_str() || *end != '\0' || v < 4096 || v > (1ULL << 30) ||
      !std::has_single_bit(v)) {
    throw InvalidArgument(
        fmt::format("SPMD_SHM_RING_BYTES={:?} must be a power of two between 4096 and 2^30", *raw));
  }
  return v;
}

// A switch: unset or empty gives `fallback`, else "0" or "1".
bool read_switch(const EnvReader& env, const char* name, bool fallback) {
  const auto raw = env.get(name);
  if (!raw || raw->empty()) return fallback;
  if (*raw != "0" && *raw != "1") {
    throw InvalidArgument(fmt::format("{}={:?} must be 0 or 1", name, *raw));
  }
  return *raw == "1";
}

std::optional<std::chrono::nanoseconds> read_collective_timeout(const EnvReader& env) {
  const auto raw = env.get("SPMD_COLLECTIVE_TIMEOUT");
  if (!raw || raw->empty()) return CommOptions::kDefaultCollectiveTimeout;
  char* end = nullptr;
  const double seconds = std::strtod(raw->c_str(), &end);
  if (end == raw->c_str() || *end != '\0' || !(seconds >= 0) || seconds > 1e7) {
    throw InvalidArgument(fmt::format(
        "SPMD_COLLECTIVE_TIMEOUT={:?} is not a number of seconds (e.g. 30 or 2.5; 0 waits "
        "without limit; unset: 600)",
        *raw));
  }
  if (seconds == 0) return std::nullopt;
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
      std::chrono::duration<double>(seconds));
}

}  // namespace

bool ucx_in_build() {
#ifdef SPMD_HAVE_UCX
  return true;
#else
  return false;
#endif
}

CommOptions::Transport parse_transport(const std::string& name, const std::string& source,
                                       bool ucx_available) {
  using T = CommOptions::Transport;
  T t = T::kAuto;
  if (name.empty() || name == "auto" || name == "shm") {
    t = T::kAuto;
  } else if (name == "shm+tcp") {
    t = T::kShmTcp;
  } else if (name == "shm+ucx") {
    t = T::kShmUcx;
  } else if (name == "tcp") {
    t = T::kTcp;
  } else if (name == "ucx") {
    t = T::kUcx;
  } else {
    throw InvalidArgument(fmt::format(
        "{}={:?} is not a transport: use auto (the default: shared memory within a host; "
        "across hosts UCX over a fabric when there is one, else TCP), shm+tcp, shm+ucx (shared "
        "memory within a host, TCP or UCX across), tcp or ucx (one of them everywhere)",
        source, name));
  }
  if (CommOptions::ucx_required(t) && !ucx_available) {
    throw InvalidArgument(fmt::format(
        "{}={}: this build of spmd has no UCX transport (libucx-dev was not found when it was "
        "built); install libucx-dev (apt install libucx-dev) and rebuild, or use auto, shm+tcp "
        "or tcp",
        source, name));
  }
  return t;
}

const char* transport_name(CommOptions::Transport t) {
  switch (t) {
    case CommOptions::Transport::kShmTcp:
      return "shm+tcp";
    case CommOptions::Transport::kShmUcx:
      return "shm+ucx";
    case CommOptions::Transport::kTcp:
      return "tcp";
    case CommOptions::Transport::kUcx:
      return "ucx";
    case CommOptions::Transport::kAuto:
      break;
  }
  return "auto";
}

CommOptions read_comm_options(const EnvReader& env, bool ucx_available) {
  CommOptions o;
  o.transport =
      parse_transport(env.get("SPMD_TRANSPORT").value_or(""), "SPMD_TRANSPORT", ucx_available);
  const auto streams = env.get("SPMD_TCP_STREAMS");
  if (streams && !streams->empty()) {
    o.tcp_streams = parse_int(*streams, "SPMD_TCP_STREAMS", 1, 16);
  }
  o.shm_ring_bytes = read_ring_bytes(env, o.shm_ring_bytes);
  o.shm_single_copy = env.get("SPMD_SHM_SINGLE_COPY").value_or("") == "1";
  o.shm_map_buffers = read_switch(env, "SPMD_SHM_MAP_BUFFERS", o.shm_map_buffers);
  o.collective_timeout = read_collective_timeout(env);
  return o;
}

}  // namespace spmd
