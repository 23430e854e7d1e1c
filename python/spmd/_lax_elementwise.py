"""jax.lax's element-wise functions over spmd.numpy's, with lax's rules in place of NumPy's: no
type promotion (the operands share one dtype; a Python scalar is its kind's default dtype, a
NumPy array its canonical one), shapes equal up to dimensions of 1 or of rank 0, each function's
accepted dtypes, and XLA's integer division (toward zero). JAX's TypeErrors, named after the
primitive. An integer division or remainder by zero raises InvalidArgument when the program runs,
as spmd.numpy's floor_divide does, where XLA returns -1 (or x) without a word."""
import enum

import numpy as _np

from . import _core
from . import numpy as _numpy

_INT = ("integer",)
_FLOAT = ("floating",)
_NUMBER = ("integer", "floating")
_BITS = ("integer", "bool")


def _kinds_of(dtype):
    d = _np.dtype(dtype)
    if d.name == "bfloat16" or d.kind == "f":
        return {"floating", "number"}
    if d.kind in "iu":
        return {"integer", "number"} | ({"signedinteger"} if d.kind == "i" else set())
    return {"bool"} if d.kind == "b" else set()


def _value(name, x):
    """x as an array: a Python scalar in its kind's default dtype (not weak), a NumPy value in
    its canonical dtype; a list or other object is JAX's TypeError."""
    if isinstance(x, (list, tuple, dict, set, str)) or x is None:
        raise TypeError(f"Error interpreting argument to {name} as a JAX value. The problematic "
                        f"value is of type {type(x)} and was passed to {name}.")
    if hasattr(x, "shape") and hasattr(x, "dtype") and not isinstance(x, (_np.ndarray,
                                                                          _np.generic)):
        return x
    return _numpy.asarray(x)


def _check_kinds(name, arrays, accepted):
    """Each operand's dtype among `accepted` (per position: a tuple of tuples)."""
    for i, (a, kinds) in enumerate(zip(arrays, accepted)):
        if not _kinds_of(a.dtype) & set(kinds):
            what = ", ".join(kinds)
            where = "" if len(arrays) == 1 else f" at position {i}"
            raise TypeError(f"{name} does not accept dtype {_np.dtype(a.dtype).name}{where}. "
                            f"Accepted dtypes{where} are subtypes of {what}.")


def _check_same_dtypes(name, arrays):
    if len({_np.dtype(a.dtype) for a in arrays}) > 1:
        got = ", ".join(_np.dtype(a.dtype).name for a in arrays)
        raise TypeError(f"lax.{name} requires arguments to have the same dtypes, got {got}. "
                        f"(Tip: jnp.{name} is a similar function that does automatic type "
                        "promotion on inputs).")


def _check_shapes(name, arrays):
    shapes = [tuple(a.shape) for a in arrays]
    ranks = {len(s) for s in shapes if s}
    if len(ranks) > 1:
        raise TypeError(f"{name}: arrays must have the same number of dimensions, got {ranks}")
    for dims in zip(*[s for s in shapes if s]):
        if len({d for d in dims if d != 1}) > 1:
            listed = ", ".join(str(s) for s in shapes)
            raise TypeError(f"{name} got incompatible shapes for broadcasting: {listed}.")


def _operands(name, primitive, args, accepted, same_dtype=True):
    arrays = [_value(name, a) for a in args]
    _check_kinds(primitive, arrays, accepted)
    if same_dtype:
        _check_same_dtypes(name, arrays)
    _check_shapes(primitive, arrays)
    return arrays


def _binary(name, fn, kinds, primitive=None):
    def op(x, y):
        a, b = _operands(name, primitive or name, (x, y), (kinds, kinds))
        return fn(a, b)
    op.__name__ = name
    op.__doc__ = f"jax.lax.{name}: element-wise, operands of one dtype (lax's rules)."
    return op


def _unary(name, fn, kinds):
    def op(x):
        (a,) = _operands(name, name, (x,), (kinds,))
        return fn(a)
    op.__name__ = name
    op.__doc__ = f"jax.lax.{name}: element-wise (lax's accepted dtypes)."
    return op


def _is_unsigned(x):
    return _np.dtype(x.dtype).kind == "u"


def _truncating_quotient(x, y):
    """x / y rounded toward zero, as XLA divides integers (the most negative value divided by -1
    is that value). A zero divisor raises InvalidArgument when the program runs (floor_divide's
    check), where XLA would return -1 without a word."""
    q = _numpy.floor_divide(x, y)
    if _is_unsigned(x):
        return q
    inexact = (x - q * y) != 0
    return _numpy.where(inexact & ((x < 0) != (y < 0)), q + 1, q)


def _div(x, y):
    if _np.dtype(x.dtype).kind in "iu":
        return _truncating_quotient(x, y)
    return _numpy.divide(x, y)


def _rem(x, y):
    """C's remainder (the dividend's sign); an integer zero divisor raises, as in _div."""
    if _np.dtype(x.dtype).kind in "iu":
        return x - _truncating_quotient(x, y) * y
    return _numpy.fmod(x, y)


add = _binary("add", _numpy.add, _NUMBER)
sub = _binary("sub", _numpy.subtract, _NUMBER)
mul = _binary("mul", _numpy.multiply, _NUMBER)
div = _binary("div", _div, _NUMBER)
rem = _binary("rem", _rem, _NUMBER)
atan2 = _binary("atan2", _numpy.arctan2, _FLOAT)
nextafter = _binary("nextafter", _numpy.nextafter, _FLOAT)
max = _binary("max", _numpy.maximum, _NUMBER + ("bool",))  # noqa: A001 - jax.lax's name
min = _binary("min", _numpy.minimum, _NUMBER + ("bool",))  # noqa: A001 - jax.lax's name
eq = _binary("eq", _numpy.equal, _NUMBER + ("bool",))
ne = _binary("ne", _numpy.not_equal, _NUMBER + ("bool",))
lt = _binary("lt", _numpy.less, _NUMBER + ("bool",))
le = _binary("le", _numpy.less_equal, _NUMBER + ("bool",))
gt = _binary("gt", _numpy.greater, _NUMBER + ("bool",))
ge = _binary("ge", _numpy.greater_equal, _NUMBER + ("bool",))
bitwise_and = _binary("bitwise_and", _numpy.bitwise_and, _BITS, "and")
bitwise_or = _binary("bitwise_or", _numpy.bitwise_or, _BITS, "or")
bitwise_xor = _binary("bitwise_xor", _numpy.bitwise_xor, _BITS, "xor")
shift_left = _binary("shift_left", _numpy.left_shift, _INT)
shift_right_arithmetic = _binary("shift_right_arithmetic", lambda x, y: _shift_right(x, y, True),
                                 _INT)
shift_right_logical = _binary("shift_right_logical", lambda x, y: _shift_right(x, y, False), _INT)

neg = _unary("neg", _numpy.negative, _NUMBER)
sign = _unary("sign", _numpy.sign, _NUMBER)
floor = _unary("floor", _numpy.floor, _FLOAT)
ceil = _unary("ceil", _numpy.ceil, _FLOAT)
is_finite = _unary("is_finite", _numpy.isfinite, _FLOAT)
exp2 = _unary("exp2", _numpy.exp2, _FLOAT)
bitwise_not = _unary("bitwise_not", _numpy.bitwise_not, _BITS)


def _population_count(x):
    """The set bits of each element, in x's dtype: the classic SWAR count on the bits read as
    unsigned (pairs, then nibbles, then bytes summed), exact for every width."""
    bits = _np.dtype(x.dtype).itemsize * 8
    unsigned = _np.dtype(f"uint{bits}")
    v = _numpy.astype(x, unsigned)

    def pattern(byte):
        return _numpy.asarray(int.from_bytes(bytes([byte]) * (bits // 8), "little"), unsigned)
    v = v - ((v >> 1) & pattern(0x55))
    v = (v & pattern(0x33)) + ((v >> 2) & pattern(0x33))
    v = (v + (v >> 4)) & pattern(0x0F)
    if bits > 8:
        v = (v * pattern(0x01)) >> (bits - 8)  # every byte's count summed into the top byte
    return _numpy.astype(v, x.dtype)


population_count = _unary("population_count", _population_count, _INT)


def abs(x):  # noqa: A001 - jax.lax's name
    """jax.lax.abs: |x| of a signed integer or floating operand (an unsigned one is refused)."""
    (a,) = _operands("abs", "abs", (x,), (("signedinteger", "floating"),))
    return _numpy.abs(a)


def _shift_right(x, y, arithmetic):
    """x >> y: arithmetic keeps the sign (a shift past the width gives 0 or -1), logical shifts
    zeros in (0 past the width), on the same bits whatever the dtype's sign."""
    bits = _np.dtype(x.dtype).itemsize * 8
    past = (y < 0) | (y >= bits)
    if arithmetic:  # on the bits read as signed, an unsigned operand's too
        signed = _np.dtype(f"int{bits}")
        clamped = _numpy.where(past, _numpy.full_like(y, bits - 1), y)
        shifted = _numpy.right_shift(_numpy.astype(x, signed), _numpy.astype(clamped, signed))
        return _numpy.astype(shifted, x.dtype)
    unsigned = _np.dtype(f"uint{bits}")
    ux = _numpy.astype(x, unsigned)
    shifted = _numpy.right_shift(ux, _numpy.astype(_numpy.where(past, 0, y), unsigned))
    return _numpy.where(past, _numpy.zeros_like(x), _numpy.astype(shifted, x.dtype))


def pow(x, y):  # noqa: A001 - jax.lax's name
    """jax.lax.pow: a floating base to a floating or integer exponent of its shape."""
    a, b = _value("pow", x), _value("pow", y)
    _check_kinds("pow", (a, b), (_FLOAT, _NUMBER))
    if _np.dtype(b.dtype).kind == "f" or _np.dtype(b.dtype).name == "bfloat16":
        _check_same_dtypes("pow", (a, b))
    _check_shapes("pow", (a, b))
    return _numpy.power(a, b)


def integer_pow(x, y):
    """jax.lax.integer_pow: x to the Python int y by JAX's square-and-multiply (the same products
    in the same order), 1 / that for y < 0; integers cannot take a negative y."""
    a = _value("integer_pow", x)
    _check_kinds("integer_pow", (a,), (_NUMBER,))
    y = int(y)
    if y < 0 and _np.dtype(a.dtype).kind in "iu":
        dims = ",".join(str(d) for d in a.shape)
        raise TypeError("Integers cannot be raised to negative powers, got "
                        f"integer_pow({_np.dtype(a.dtype).name}[{dims}], {y})")
    if y == 0:
        return _numpy.ones_like(a)
    acc, base, n = None, a, -y if y < 0 else y
    while n > 0:
        if n & 1:
            acc = base if acc is None else _numpy.multiply(acc, base)
        n >>= 1
        if n > 0:
            base = _numpy.multiply(base, base)
    return _numpy.divide(_numpy.ones_like(acc), acc) if y < 0 else acc


def square(x):
    """jax.lax.square: x * x."""
    (a,) = _operands("square", "square", (x,), (_NUMBER,))
    return _numpy.multiply(a, a)


def reciprocal(x):
    """jax.lax.reciprocal: integer_pow(x, -1)."""
    return integer_pow(x, -1)


class RoundingMethod(enum.IntEnum):
    """jax.lax.RoundingMethod: how lax.round breaks ties."""
    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1


def round(x, rounding_method=RoundingMethod.AWAY_FROM_ZERO):  # noqa: A001 - jax.lax's name
    """jax.lax.round: to the nearest integer, ties away from zero or to even."""
    (a,) = _operands("round", "round", (x,), (_FLOAT,))
    if int(rounding_method) == RoundingMethod.TO_NEAREST_EVEN:
        return _numpy.round(a)
    # trunc(x) moved one away from zero where the part cut off is half or more (exact: x - trunc
    # is representable).
    t = _numpy.trunc(a)
    return _numpy.where(_numpy.abs(a - t) >= 0.5, t + _numpy.sign(a), t)


def clamp(min, x, max):  # noqa: A002 - jax.lax's names
    """jax.lax.clamp: x held to [min, max]; min and max of x's shape or scalars, one dtype."""
    lo, a, hi = (_value("clamp", v) for v in (min, x, max))
    _check_same_dtypes("clamp", (lo, a, hi))
    for bound, which in ((lo, "min"), (hi, "max")):
        if tuple(bound.shape) not in ((), tuple(a.shape)):
            raise TypeError(f"clamp requires {which}.shape == operand.shape or {which}.shape == "
                            f"(), got {which}.shape={tuple(bound.shape)}, "
                            f"operand.shape={tuple(a.shape)}.")
    return _numpy.minimum(_numpy.maximum(a, lo), hi)


def select_n(which, *cases):
    """jax.lax.select_n: cases[which] element by element; `which` bool (two cases) or int32,
    scalar or of the cases' shape; the cases of one dtype and shape."""
    if not cases:
        raise ValueError("select_n called with no cases")
    w = _value("select_n", which)
    arrays = [_value("select_n", c) for c in cases]
    kind = _np.dtype(w.dtype).kind
    if kind not in "biu":
        raise TypeError("select `which` must be boolean or integer type, got "
                        f"{_np.dtype(w.dtype).name}.")
    if kind == "b" and len(arrays) > 2:
        raise TypeError("select with boolean `which` cannot have > 2 cases.")
    if len({(tuple(c.shape), _np.dtype(c.dtype)) for c in arrays}) > 1:
        raise TypeError("select cases must have the same shapes and dtypes, got "
                        f"{[(_np.dtype(c.dtype).name, tuple(c.shape)) for c in arrays]}.")
    if tuple(w.shape) not in ((), tuple(arrays[0].shape)):
        raise TypeError("select `which` must be scalar or have the same shape as cases, got "
                        f"`which` shape {tuple(w.shape)} but case shape "
                        f"{tuple(arrays[0].shape)}.")
    out = arrays[0]
    for i, c in enumerate(arrays[1:], start=1):
        out = _numpy.where(w if kind == "b" else w == i, c, out)
    return out


def select(pred, on_true, on_false):
    """jax.lax.select: on_true where pred, else on_false (select_n(pred, on_false, on_true))."""
    p = _value("select", pred)
    if _np.dtype(p.dtype).kind != "b":
        raise TypeError(f"select `which` must be boolean, got {_np.dtype(p.dtype).name}.")
    return select_n(p, on_false, on_true)


def convert_element_type(operand, new_dtype):
    """jax.lax.convert_element_type: operand in new_dtype (jnp's astype: float to integer
    rounds toward zero and saturates, NaN to 0)."""
    return _numpy.astype(_value("convert_element_type", operand), new_dtype)


_bitcast = _numpy._op(lambda a, dtype: _numpy._t.bitcast_convert_type(a, dtype), arrays=(0,))
_bitcast.public_name = "lax.bitcast_convert_type"


def bitcast_convert_type(operand, new_dtype):
    """jax.lax.bitcast_convert_type: operand's bits read as new_dtype (canonical: 64-bit types
    are their 32-bit ones unless x64 is on). A dtype of operand's width keeps the shape; a
    narrower one adds a last dimension of the width ratio (each element's bytes, little-endian);
    a wider one drops operand's last dimension, which must hold one element's bytes. Bool only
    to bool (TypeError), and a last dimension of the wrong size is ValueError, as in JAX."""
    x = _value("bitcast_convert_type", operand)
    new = _core.canonical_dtype(new_dtype)
    old = _np.dtype(x.dtype)
    if (old.kind == "b" or new.kind == "b") and old != new:
        raise TypeError("lax.bitcast_convert_type does not support bool or complex values unless "
                        "the operand and destination types match. Got operand "
                        f"dtype={old.name}, new_dtype={new.name}. Consider using the arr.view() "
                        "method instead.")
    if new.itemsize > old.itemsize:
        last = x.shape[-1] if x.shape else 1
        if last * old.itemsize != new.itemsize:
            raise ValueError(f"Attempting to convert array of shape {tuple(x.shape)} from "
                             f"{old.name} of size {old.itemsize * 8} bits to {new.name} of size "
                             f"{new.itemsize * 8}, bits but {last} * {old.itemsize * 8} != "
                             f"{new.itemsize * 8}")
    return _bitcast(x, _core.dtype_name(new))


__all__ = ["add", "sub", "mul", "div", "rem", "atan2", "nextafter", "max", "min", "eq", "ne", "lt", "le", "gt", "ge",
           "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "shift_left",
           "shift_right_arithmetic", "shift_right_logical", "neg", "sign", "floor", "ceil",
           "is_finite", "exp2", "abs", "pow", "integer_pow", "square", "reciprocal",
           "RoundingMethod", "round", "clamp", "select_n", "select", "convert_element_type",
           "bitcast_convert_type", "population_count"]
