"""Arrays and traced values as JAX's arrays under Python's operators: arithmetic, floor division,
remainders, bitwise operations, shifts and comparisons both ways, == and != element-wise, and no
hash (JAX's arrays are unhashable). A traced value asked for its truth, an index, a Python number
or a NumPy array raises JAX's errors (spmd.errors.TracerBoolConversionError, …): its value is not
known while the function is traced. The other operand
may be a Python bool, int or float (weak: the array's dtype where it can, as JAX's), a NumPy
scalar or array, or an spmd Array (strong: its own dtype, canonical under x64; inside a traced
function a constant of the program, as JAX captures it). Anything else (a list, a string, a
complex number, None) is NotImplemented, so Python raises its TypeError, as for JAX's arrays."""
import operator

import numpy as np

from . import _spmd, _weak, errors
from . import numpy as jnp
from ._core import Array, Tensor, _bytes, _host

_t = _spmd.tnp
_WEAK = (bool, int, float)  # exactly these: np.float64 subclasses float but is strong
_NUMERIC_KINDS = "biuf"


def _is_weak(x):
    return type(x) in _WEAK


def _is_host_array(x):
    """Whether x is NumPy data of a dtype spmd has, or an Array (no conversion: a check)."""
    if isinstance(x, Array):
        return True
    if not isinstance(x, (np.ndarray, np.generic)):
        return False
    return x.dtype.kind in _NUMERIC_KINDS or x.dtype.name == "bfloat16"


def _host_operand(x):
    """x as a NumPy array of a dtype spmd has (canonical under x64), or None."""
    return _host(np.asarray(x)) if _is_host_array(x) else None


def _refuse_operand(name, x):
    """JAX's TypeError for a list or tuple operand (== would otherwise fall back to identity);
    a TypeError saying so for a complex one, whose dtypes spmd does not have."""
    if isinstance(x, (list, tuple)):
        raise TypeError(f"{name} requires ndarray or scalar arguments, got {type(x)} at "
                        "position 1.")
    if isinstance(x, complex) or (isinstance(x, (np.ndarray, np.generic)) and
                                  x.dtype.kind == "c"):
        raise TypeError(f"{name}: spmd has no complex dtypes (complex64, complex128); got the "
                        f"complex operand {x!r}")


def _traced(x):
    """The operand beside a Tensor: a Tensor or Python number as it is, host data or an Array as
    a constant Tensor; None when x is no array."""
    if isinstance(x, Tensor) or _is_weak(x):
        return x
    host = _host_operand(x)
    return None if host is None else _t.constant(*_bytes(host))


def _binary(forward, reverse):
    """Tensor methods `forward` and `reverse` over the extension's own, for every operand kind."""
    base_forward, base_reverse = getattr(Tensor, forward), getattr(Tensor, reverse)
    setattr(Tensor, forward, _with_operand(base_forward))
    setattr(Tensor, reverse, _with_operand(
        lambda a, b: base_reverse(a, b) if _is_weak(b) else base_forward(b, a)))


def _comparison(name, function):
    operand = _with_operand(function)

    def compare(a, b):
        _refuse_operand(function.__name__, b)
        return operand(a, b)
    setattr(Tensor, name, compare)


def _with_operand(fn):
    """A Tensor method fn(a, other) for the other operand made traced once (a constant is
    recorded once), NotImplemented for what is no array (a TypeError for a complex number)."""
    def method(a, b):
        other = _traced(b)
        if other is None:
            _refuse_operand("an operator on a traced value", b)
            return NotImplemented
        if not _weak.keys():
            return fn(a, other)
        (a, other), weak = _weak.harmonize([a, other])
        out = fn(a, other)
        return _weak.mark(out) if weak else out
    return method


def _bind_tensor():
    Tensor.__array_priority__ = 100  # NumPy's operators defer to ours, as to JAX's arrays
    Tensor.__pow__ = _with_operand(_t.power)
    Tensor.__rpow__ = _with_operand(
        lambda a, b: _t.rpower(a, b) if _is_weak(b) else _t.power(b, a))
    for forward, reverse in (("__add__", "__radd__"), ("__sub__", "__rsub__"),
                             ("__mul__", "__rmul__"), ("__truediv__", "__rtruediv__")):
        _binary(forward, reverse)
    Tensor.__matmul__ = _with_operand(_t.matmul)
    Tensor.__rmatmul__ = _with_operand(lambda a, b: _t.matmul(b, a))
    for name, fn in (("__eq__", _t.equal), ("__ne__", _t.not_equal), ("__lt__", _t.less),
                     ("__le__", _t.less_equal), ("__gt__", _t.greater),
                     ("__ge__", _t.greater_equal)):
        _comparison(name, fn)
    Tensor.__hash__ = None
    _bind_tensor_integer_operators()
    _bind_tensor_conversions()


# Python's operator -> (spmd::numpy's function, its reflected form: None when commutative).
_INTEGER_OPERATORS = {("__floordiv__", "__rfloordiv__"): ("floor_divide", "rfloor_divide"),
                      ("__mod__", "__rmod__"): ("remainder", "rremainder"),
                      ("__lshift__", "__rlshift__"): ("left_shift", "rleft_shift"),
                      ("__rshift__", "__rrshift__"): ("right_shift", "rright_shift"),
                      ("__and__", "__rand__"): ("bitwise_and", None),
                      ("__or__", "__ror__"): ("bitwise_or", None),
                      ("__xor__", "__rxor__"): ("bitwise_xor", None)}


def _bind_tensor_integer_operators():
    for (forward, reverse), (name, reflected) in _INTEGER_OPERATORS.items():
        fn = getattr(_t, name)
        scalar_first = getattr(_t, reflected) if reflected else fn
        setattr(Tensor, forward, _with_operand(fn))
        setattr(Tensor, reverse, _with_operand(
            lambda a, b, fn=fn, scalar_first=scalar_first:
                scalar_first(a, b) if _is_weak(b) else fn(b, a)))
    Tensor.__divmod__ = _with_operand(lambda a, b: jnp.divmod(a, b))
    Tensor.__rdivmod__ = _with_operand(lambda a, b: jnp.divmod(b, a))
    Tensor.__invert__ = lambda a: _t.invert(a)
    Tensor.__abs__ = lambda a: _t.abs(a)
    Tensor.__pos__ = lambda a: a


_UNKNOWN = "its value is not known while the function is traced (jit, grad, vmap, shard_map)"


def _bind_tensor_conversions():
    """JAX's errors where a traced value is used as a concrete one."""
    def refuse(error, what, hint):
        def method(x, *args, **kwargs):
            raise error(f"{what} of the traced value {x!r}: {_UNKNOWN}. {hint}")
        return method
    Tensor.__bool__ = refuse(
        errors.TracerBoolConversionError, "Attempted boolean conversion",
        "Select with spmd.numpy.where rather than branch on it (if, and, or, not, max), or pass "
        "it as a static argument (static_argnums).")
    Tensor.__index__ = refuse(
        errors.TracerIntegerConversionError, "Attempted use as a Python integer (an index, a "
        "shape, range())", "Pass it as a static argument (static_argnums).")
    for name, kind in (("__int__", "int"), ("__float__", "float"), ("__complex__", "complex")):
        setattr(Tensor, name, refuse(errors.ConcretizationTypeError,
                                     f"Attempted conversion to a Python {kind}",
                                     "Keep it an array, or pass it as a static argument."))
    Tensor.__array__ = refuse(
        errors.TracerArrayConversionError, "Attempted conversion to a NumPy array",
        "Inside a traced function use spmd.numpy's functions on it, not NumPy's.")


def _bind_array():
    """Each operator on Arrays: the same on traced values, run at once (spmd.numpy's eager
    path)."""
    Array.__array_priority__ = 100
    for name, fn in {"__add__": operator.add, "__sub__": operator.sub, "__mul__": operator.mul,
                     "__truediv__": operator.truediv, "__pow__": operator.pow,
                     "__matmul__": operator.matmul, "__eq__": operator.eq,
                     "__ne__": operator.ne, "__lt__": operator.lt, "__le__": operator.le,
                     "__gt__": operator.gt, "__ge__": operator.ge,
                     **_ARRAY_INTEGER_OPERATORS}.items():
        setattr(Array, name, _eager(fn, name, reflected=False))
    for name, fn in {"__radd__": operator.add, "__rsub__": operator.sub,
                     "__rmul__": operator.mul, "__rtruediv__": operator.truediv,
                     "__rpow__": operator.pow, "__rmatmul__": operator.matmul,
                     **{"__r" + k[2:]: fn for k, fn in _ARRAY_INTEGER_OPERATORS.items()}}.items():
        setattr(Array, name, _eager(fn, name, reflected=True))
    Array.__neg__ = lambda a: jnp.negative(a)
    Array.__invert__ = lambda a: jnp.invert(a)
    Array.__abs__ = lambda a: jnp.abs(a)
    Array.__pos__ = lambda a: a
    Array.__hash__ = None


_ARRAY_INTEGER_OPERATORS = {"__floordiv__": operator.floordiv, "__mod__": operator.mod,
                            "__divmod__": divmod, "__lshift__": operator.lshift,
                            "__rshift__": operator.rshift, "__and__": operator.and_,
                            "__or__": operator.or_, "__xor__": operator.xor}


def _eager(fn, name, reflected):
    op = jnp._op(fn)
    op.public_name = f"spmd.Array.{name}"  # what its errors name

    def method(a, b):
        _refuse_operand(fn.__name__, b)
        if not (_is_weak(b) or isinstance(b, Tensor) or _is_host_array(b)):
            return NotImplemented
        return op(b, a) if reflected else op(a, b)
    return method


_bind_tensor()
_bind_array()
