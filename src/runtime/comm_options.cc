#include "runtime/comm_options.h"

#include <fmt/format.h>

#include <bit>
#include <cstdlib>
#include <string>

#include "spmd/error.h"

namespace spmd {

namespace {

CommOptions::Transport read_transport(const EnvReader& env) {
  const std::string v = env.get("SPMD_TRANSPORT").value_or("");
  if (v.empty() || v == "auto" || v == "shm") return CommOptions::Transport::kAuto;
  if (v == "tcp") return CommOptions::Transport::kTcp;
  throw InvalidArgument(fmt::format(
      "SPMD_TRANSPORT={:?} is not a transport: use tcp (force TCP, even on one host) or auto "
      "(shared memory within a host, TCP across hosts; the default)",
      v));
}

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

CommOptions read_comm_options(const EnvReader& env) {
  CommOptions o;
  o.transport = read_transport(env);
  const auto streams = env.get("SPMD_TCP_STREAMS");
  if (streams && !streams->empty()) {
    o.tcp_streams = parse_int(*streams, "SPMD_TCP_STREAMS", 1, 16);
  }
  o.shm_ring_bytes = read_ring_bytes(env, o.shm_ring_bytes);
  o.shm_single_copy = env.get("SPMD_SHM_SINGLE_COPY").value_or("") == "1";
  o.collective_timeout = read_collective_timeout(env);
  return o;
}

}  // namespace spmd
