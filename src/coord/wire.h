// Helpers shared by the service and the client over the generated protocol types.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>

#include "coord/status.h"
#include "protocol.pb.h"

namespace spmd {

// A connection's registration is always its request 1, so the service can send the one shared
// topology frame to every process.
inline constexpr uint64_t kRegistrationRequestId = 1;

// How often a process sends heartbeats for a given heartbeat timeout: ten per timeout, so a
// few lost or late ones never look like death; at least every 10 s, at most every 10 ms.
inline std::chrono::milliseconds heartbeat_interval(std::chrono::milliseconds timeout) {
  return std::clamp(timeout / 10, std::chrono::milliseconds(10), std::chrono::milliseconds(10000));
}

// The status an answer carries; unknown codes from the wire become kInternal.
inline Status status_of(const wire::ServerMessage& msg) {
  return Status{status_code_from_wire(msg.code()), msg.message()};
}

}  // namespace spmd
