"""spmd.errors: spmd's exception classes. Error derives from RuntimeError, InvalidArgument also
from ValueError, DTypeError also from TypeError and OverflowError also from Python's
OverflowError; each class keeps the C++ message (what was
expected, what was found, what to do)."""
from ._spmd import errors as _errors

Error = _errors.Error
InvalidArgument = _errors.InvalidArgument
ShardingTypeError = _errors.ShardingTypeError
DTypeError = _errors.DTypeError
OverflowError = _errors.OverflowError  # noqa: A001 (JAX raises the builtin's class)
DeadlineExceeded = _errors.DeadlineExceeded
PeerFailure = _errors.PeerFailure
CollectiveMismatch = _errors.CollectiveMismatch
FailedPrecondition = _errors.FailedPrecondition
AlreadyExists = _errors.AlreadyExists
PermissionDenied = _errors.PermissionDenied
ResourceExhausted = _errors.ResourceExhausted
