// The outcome of a coordination call, as the service reports it and the client rethrows it.
// Codes have the same numbers as wire::Code in protocol.proto.
#pragma once

#include <string>

namespace spmd {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument = 1,
  kDeadlineExceeded = 2,
  kAlreadyExists = 3,
  kFailedPrecondition = 4,
  kPermissionDenied = 5,
  kPeerFailure = 6,
  kInternal = 7,
};

struct Status {
  StatusCode code = StatusCode::kOk;
  std::string message;

  bool ok() const { return code == StatusCode::kOk; }
};

// A code read from the wire; anything unknown becomes kInternal (never trusted as a valid enum).
StatusCode status_code_from_wire(int value);

// Throws the spmd::Error subclass that matches `status.code`. `status` must not be ok.
[[noreturn]] void throw_status(const Status& status);

}  // namespace spmd
