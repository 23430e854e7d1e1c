#include "coord/status.h"

#include "spmd/error.h"

namespace spmd {

StatusCode status_code_from_wire(int value) {
  if (value < 0 || value > static_cast<int>(StatusCode::kInternal)) return StatusCode::kInternal;
  return static_cast<StatusCode>(value);
}

void throw_status(const Status& status) {
  switch (status.code) {
    case StatusCode::kInvalidArgument:
      throw InvalidArgument(status.message);
    case StatusCode::kDeadlineExceeded:
      throw DeadlineExceeded(status.message);
    case StatusCode::kAlreadyExists:
      throw AlreadyExists(status.message);
    case StatusCode::kFailedPrecondition:
      throw FailedPrecondition(status.message);
    case StatusCode::kPermissionDenied:
      throw PermissionDenied(status.message);
    case StatusCode::kPeerFailure:
      throw PeerFailure(status.message);
    case StatusCode::kOk:
    case StatusCode::kInternal:
      break;
  }
  throw Error(status.message);
}

}  // namespace spmd
