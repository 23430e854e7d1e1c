"""spmd.errors: spmd's exception classes. Error derives from RuntimeError, InvalidArgument also
from ValueError and DTypeError also from TypeError; each class keeps the C++ message (what was
expected, what was found, what to do)."""
from ._spmd import errors as _errors

Error = _errors.Error
InvalidArgument = _errors.InvalidArgument
ShardingTypeError = _errors.ShardingTypeError
DTypeError = _errors.DTypeError
DeadlineExceeded = _errors.DeadlineExceeded
PeerFailure = _errors.PeerFailure
CollectiveMismatch = _errors.CollectiveMismatch
FailedPrecondition = _errors.FailedPrecondition
AlreadyExists = _errors.AlreadyExists
PermissionDenied = _errors.PermissionDenied
