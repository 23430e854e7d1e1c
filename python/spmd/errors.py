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


class TypePromotionError(ValueError):
    """JAX's jax.dtypes.TypePromotionError: a value that would not cast safely to the dtype
    asked for (a float32 parameter of a float16 sampler)."""


# InvalidArgument raised by an operation's checks, in the type JAX raises for the same mistake
# (its message unchanged): an axis out of range is JAX's IndexError, operand shapes an operation
# cannot take its TypeError. Both stay InvalidArgument (and so ValueError) for spmd's own code.
class AxisError(InvalidArgument, IndexError):
    """An axis out of range for an operand's rank."""


class ShapeError(InvalidArgument, TypeError):
    """Operand shapes (or dtypes) an operation cannot take: a permutation that is not one,
    contracting sizes that differ, arrays that do not concatenate, a negative dimension."""


_AXIS = ("out of range", "out of bounds")
_SHAPE = ("not a permutation", "does not match", "contracting dimensions", " has sizes ",
          "cannot reshape", "negative dimension", "nonnegative", "of different ranks",
          "must have the same shape")


def in_jax_terms(error):
    """`error` (an InvalidArgument) as the AxisError or ShapeError JAX's type calls for, or
    itself."""
    text = str(error)
    if type(error) is InvalidArgument:
        if any(p in text for p in _AXIS):
            return AxisError(text)
        if any(p in text for p in _SHAPE):
            return ShapeError(text)
    return error


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
