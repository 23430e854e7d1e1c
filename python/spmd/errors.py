"""spmd.errors: spmd's exception classes. Error derives from RuntimeError, InvalidArgument also
from ValueError, DTypeError also from TypeError and OverflowError also from Python's
OverflowError; each class keeps the C++ message (what was
expected, what was found, what to do). The Tracer*ConversionError classes are JAX's, raised where
a traced value is used as a concrete Python value."""
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


# A traced value used where Python needs a concrete one, under JAX's names (jax.errors), each a
# TypeError as JAX's are: its value is not known while the function is traced.
class ConcretizationTypeError(TypeError):
    """A traced value where a concrete Python value is needed (int(x), float(x) inside jit)."""


class TracerBoolConversionError(ConcretizationTypeError):
    """A traced value's truth asked for: `if x > 0:`, `x and y`, bool(x) inside jit."""


class TracerIntegerConversionError(TypeError):
    """A traced value used as a Python integer: an index, range(x), a shape."""


class TracerArrayConversionError(TypeError):
    """A traced value given to NumPy (np.asarray(x) inside jit)."""
