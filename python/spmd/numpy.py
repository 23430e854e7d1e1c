"""spmd.numpy: jax.numpy's names over spmd::numpy. Inside a traced function each call records
one operation on spmd.Tensors; on Arrays it runs at once, compiled like JAX's eager operations
(one cached jit per operation and static arguments)."""
import builtins as _builtins
import functools as _functools
import inspect as _inspect
import operator as _operator

import numpy as _np

from . import _arguments, _jit, _spmd, _weak
from . import errors as _errors
from ._core import _BFLOAT16, Array, Tensor, _bytes, _check_host
from ._core import device_put as _device_put
from ._core import dtype_name as _dtype_name
from ._core import dtype_of as _dtype_of
from ._core import canonical_name as _canonical_name
from ._core import default_float as _default_float
from ._core import default_int as _default_int

_t = _spmd.tnp


class _ScalarType:
    """jax.numpy's scalar types: a dtype wherever NumPy takes one (np.dtype(jnp.float32)), and a
    constructor: jnp.float32(x) is an Array (a traced value inside jit) of that dtype."""

    def __init__(self, dtype):
        self.dtype = _np.dtype(dtype)
        self.__name__ = _dtype_name(self.dtype)

    def __call__(self, x):
        if isinstance(x, Tensor):
            return _t.astype(x, _canonical_name(self.dtype))
        if isinstance(x, Array):
            return astype(x, self)
        return _device_put(_np.asarray(x).astype(self.dtype))

    def __eq__(self, other):
        try:
            return self.dtype == _np.dtype(other)
        except TypeError:
            return False

    def __hash__(self):
        return hash(self.dtype)

    def __repr__(self):
        return f"spmd.numpy.{self.__name__}"


float32, float16, float64 = (_ScalarType(t) for t in (_np.float32, _np.float16, _np.float64))
int32, int64, uint32, bool_ = (_ScalarType(t) for t in (_np.int32, _np.int64, _np.uint32,
                                                          _np.bool_))
bfloat16 = _ScalarType(_BFLOAT16)
ndarray = Array


def _is_traced(*xs):
    return _builtins.any(isinstance(x, Tensor) for x in xs)


def _is_scalar(x):
    return isinstance(x, (_builtins.bool, int, float))


_ARRAY = object()  # marks an Array's place among an eager call's arguments


@_functools.lru_cache(maxsize=None)
def _eager(fn, pattern, statics, public_name):
    """fn compiled for arguments laid out as `pattern`: Arrays where it says _ARRAY, else a
    (type, value) pair of a static value; keyword arguments `statics`. Its errors name
    `public_name` (spmd.numpy.add), the function the user called."""
    def call(*arrays):
        it = iter(arrays)
        args = [next(it) if p is _ARRAY else p[1] for p in pattern]
        return fn(*args, **{k: v[1] for k, v in statics})
    call.__name__ = call.__qualname__ = public_name
    jitted = _jit.jit(call)
    jitted._what = public_name
    return jitted


def _static(x):
    """A static argument as a cache key: its type beside its value, so that 2, 2.0 and True
    (equal in Python) trace apart; a list (a shape) as a tuple."""
    return type(x), tuple(x) if isinstance(x, list) else x


def _op(fn, arrays=None):
    """`fn` on Tensors as it is; on Arrays through a cached jit (other arguments static; NumPy
    data and Python scalars in an array's place become Arrays, as JAX's operations take them).
    `arrays`: the positions of fn's array arguments (by default those without a default), each
    checked as jax.numpy checks them; a wrong static argument is a TypeError naming the public
    function (_name_ops gives each its name)."""
    signature = _inspect.signature(fn)
    params = list(signature.parameters.values())
    if arrays is None:
        arrays = tuple(i for i, p in enumerate(params)
                       if p.default is p.empty and
                       p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))
    names = {params[i].name for i in arrays}
    required = len([p for p in params if p.default is p.empty])  # (sum is jnp.sum here)
    known = {p.name for p in params}

    @_functools.wraps(fn)
    def wrapped(*xs, **statics):
        if len(xs) < required or len(xs) > len(params) or statics.keys() - known:
            _check_binds(wrapped.public_name, signature, xs, statics)
        if statics and names & statics.keys():  # arrays by keyword: in their places
            bound = signature.bind(*xs, **statics)
            xs, statics = bound.args, bound.kwargs
        _check_arrays(wrapped, xs, statics, arrays, names)
        try:
            return _call(fn, xs, statics, arrays, wrapped.public_name)
        except _spmd.errors.InvalidArgument as error:
            translated = _errors.in_jax_terms(error)
            if translated is error:
                raise
            raise translated from None
        except TypeError as error:
            if not _arguments.is_overload_error(error):
                raise
            raise _arguments.type_error(wrapped.public_name, wrapped.public_name +
                                        str(signature), xs, statics) from None
    wrapped.public_name = "spmd.numpy.<op>"
    return wrapped


def _check_binds(public_name, signature, xs, statics):
    """A call with missing, extra or unknown arguments: Python's TypeError under the public
    name (not the private function's)."""
    try:
        signature.bind(*xs, **statics)
    except TypeError as error:
        raise TypeError(f"{public_name}{signature}: {error}") from None


_PLAIN = frozenset((Array, Tensor, float, int, _builtins.bool))  # array-likes: no check


def _check_arrays(wrapped, xs, statics, arrays, names):
    short = None
    for i in arrays:
        if i < len(xs) and type(xs[i]) not in _PLAIN:
            short = short or wrapped.public_name.rsplit(".", 1)[-1]
            _arguments.check_arraylike(short, xs[i], first=i)
            if isinstance(xs[i], complex):
                raise TypeError(f"{short}: spmd has no complex dtypes (complex64, complex128); "
                                f"got the complex operand {xs[i]!r}")
    if statics:
        for k in names & statics.keys():
            _arguments.check_arraylike(wrapped.public_name.rsplit(".", 1)[-1], statics[k])


def _constants(xs, positions):
    """Inside a trace: the Arrays and NumPy data at `positions` as constants of the program
    (JAX captures them so); Tensors and Python scalars as they are."""
    from ._operators import _traced  # (it imports this module)
    xs = list(xs)
    for i in positions:
        if i < len(xs) and isinstance(xs[i], (Array, _np.ndarray, _np.generic)):
            xs[i] = _traced(xs[i])
    return xs


def _call(fn, xs, statics, arrays, public_name):
    if _is_traced(*xs, *statics.values()):
        xs, weak = _weak.harmonize(_constants(xs, arrays))
        out = fn(*xs, **statics)
        return _weak.mark(out) if weak else out
    xs = [asarray(x) if isinstance(x, (_np.ndarray, _np.generic)) else x for x in xs]
    if not _builtins.any(isinstance(x, Array) for x in xs) and arrays and arrays[0] < len(xs):
        xs[arrays[0]] = asarray(xs[arrays[0]])  # only Python scalars: JAX makes an Array
    if not _builtins.any(isinstance(x, Array) for x in xs):
        return fn(*xs, **statics)
    pattern = tuple(_ARRAY if isinstance(x, Array) else _static(x) for x in xs)
    arrays_in = [x for x in xs if isinstance(x, Array)]
    keywords = tuple(sorted((k, _static(v)) for k, v in statics.items()))
    return _eager(fn, pattern, keywords, public_name)(*arrays_in)


def _name_ops(namespace, module):
    """Gives each _op of a module's namespace its public name, for its error messages."""
    for name, value in namespace.items():
        if getattr(value, "public_name", "").endswith(".<op>"):
            value.public_name = f"{module}.{name}"
            value.__name__ = value.__qualname__ = name


def _axes(axis):
    return _arguments.axis_list(axis)


def _axis(axis):
    return None if axis is None else _operator.index(axis)


# Element-wise: Python's operators give JAX's weak scalars.
add = _op(lambda a, b: a + b)
subtract = _op(lambda a, b: a - b)
multiply = _op(lambda a, b: a * b)
divide = true_divide = _op(lambda a, b: a / b)
power = _op(lambda a, b: a ** b)
negative = _op(lambda a: -a)
maximum = _op(lambda a, b: _t.maximum(b, a) if _is_scalar(a) else _t.maximum(a, b))
minimum = _op(lambda a, b: _t.minimum(b, a) if _is_scalar(a) else _t.minimum(a, b))
exp = _op(lambda a: _t.exp(a))
log = _op(lambda a: _t.log(a))
tanh = _op(lambda a: _t.tanh(a))
sqrt = _op(lambda a: _t.sqrt(a))
abs = _op(lambda a: _t.abs(a))  # noqa: A001 - jax.numpy's name
sign = _op(lambda a: _t.sign(a))
sin = _op(lambda a: _t.sin(a))
tan = _op(lambda a: _t.tan(a))
cos = _op(lambda a: _t.cos(a))
log1p = _op(lambda a: _t.log1p(a))
expm1 = _op(lambda a: _t.expm1(a))
sinh = _op(lambda a: _t.sinh(a))
cosh = _op(lambda a: _t.cosh(a))
arcsinh = _op(lambda a: _t.arcsinh(a))
arccosh = _op(lambda a: _t.arccosh(a))
arctanh = _op(lambda a: _t.arctanh(a))
arctan = _op(lambda a: _t.arctan(a))
arcsin = _op(lambda a: _t.arcsin(a))
arccos = _op(lambda a: _t.arccos(a))
isnan = _op(lambda a: _t.isnan(a))
isfinite = _op(lambda a: _t.isfinite(a))
square = _op(lambda a: a * a)


def _clip(arr, min=None, max=None):  # noqa: A002 - jax.numpy's names
    """jnp.clip: maximum(min, arr), then minimum(max, that), either bound left out when None."""
    if min is not None:
        arr = _t.maximum(arr, min) if _is_scalar(min) else _t.maximum(min, arr)
    if max is not None:
        arr = _t.minimum(arr, max) if _is_scalar(max) else _t.minimum(max, arr)
    return arr


clip = _op(_clip, arrays=(0, 1, 2))
# The comparisons as Python's operators (_operators.py): Python and NumPy scalars either side.
equal = _op(lambda a, b: a == b)
not_equal = _op(lambda a, b: a != b)
less = _op(lambda a, b: a < b)
less_equal = _op(lambda a, b: a <= b)
greater = _op(lambda a, b: a > b)
greater_equal = _op(lambda a, b: a >= b)


# Floor division, remainders, the bitwise and logical operations and rounding (_operators.py
# gives Arrays and Tensors Python's //, %, divmod, &, |, ^, <<, >> and ~ through them).
def _binary(name, reflected=None):
    """_t.<name> of two operands, a Python scalar on either side weak: on the left, through
    the binding's reflected form (`reflected`), or swapped for a commutative operation."""
    fn = getattr(_t, name)
    reverse = getattr(_t, reflected) if reflected else lambda b, a: fn(b, a)

    def apply(a, b):
        return reverse(b, a) if _is_scalar(a) else fn(a, b)
    return apply


def _truth(x):
    return _t.full([], _builtins.bool(x), "bool") if _is_scalar(x) else x


def _divmod(a, b):
    if _is_scalar(a) or _is_scalar(b):
        return floor_divide(a, b), remainder(a, b)
    return _t.divmod(a, b)


floor_divide = _op(_binary("floor_divide", "rfloor_divide"))
remainder = mod = _op(_binary("remainder", "rremainder"))
fmod = _op(_binary("fmod", "rfmod"))
divmod = _op(_divmod)  # noqa: A001 - jax.numpy's name
bitwise_and = _op(_binary("bitwise_and"))
bitwise_or = _op(_binary("bitwise_or"))
bitwise_xor = _op(_binary("bitwise_xor"))
invert = bitwise_not = bitwise_invert = _op(lambda a: _t.invert(a))
left_shift = bitwise_left_shift = _op(_binary("left_shift", "rleft_shift"))
right_shift = bitwise_right_shift = _op(_binary("right_shift", "rright_shift"))
logical_and = _op(lambda a, b: _t.logical_and(_truth(a), _truth(b)))
logical_or = _op(lambda a, b: _t.logical_or(_truth(a), _truth(b)))
logical_xor = _op(lambda a, b: _t.logical_xor(_truth(a), _truth(b)))
logical_not = _op(lambda a: _t.logical_not(a))
floor = _op(lambda a: _t.floor(a))
ceil = _op(lambda a: _t.ceil(a))
trunc = _op(lambda a: _t.trunc(a))
rint = _op(lambda a: _t.rint(a))
round = around = _op(lambda a, decimals=0: _t.round(a, _operator.index(decimals)))  # noqa: A001
def _default_of(x):
    """A Python scalar as a 0-d Tensor of its default dtype (bool, int32 or float32; 64-bit
    ones under x64)."""
    dtype = (_np.bool_ if type(x) is _builtins.bool else _default_int() if type(x) is int else
             _default_float())
    return _t.full([], x, _canonical_name(dtype))


def _where(c, a, b):
    """jnp.where; a Python scalar branch is weak beside the other (the binding's scalar
    overloads), both Python scalars promote as JAX's weak types do."""
    if _is_scalar(c):  # a Python condition: its truth
        c = _t.full([], _builtins.bool(c), "bool")
    if _is_scalar(a) and _is_scalar(b):
        a = _default_of(a)
    return _t.where(c, a, b)


_where_op = _op(_where)
_where_op.public_name = "spmd.numpy.where"


def where(condition, x=None, y=None, /, *, size=None, fill_value=None):
    """jnp.where: x where the condition holds, else y (broadcast together); with neither x nor y,
    the indices of the condition's non-zero elements, nonzero(condition, size, fill_value)."""
    if x is None and y is None:
        _arguments.check_arraylike("where", condition)
        from ._numpy_sets import nonzero
        return nonzero(condition, size=size, fill_value=fill_value)
    if x is None or y is None:
        _arguments.check_arraylike("where", condition, x, y)  # JAX's TypeError for the None
    if size is not None or fill_value is not None:
        raise ValueError("size and fill_value arguments cannot be used in three-term where "
                         "function.")
    return _where_op(condition, x, y)
astype = _op(lambda a, dtype: _t.astype(a, _canonical_name(dtype)), arrays=(0,))


def _over(a, axis):
    """(a, axes) for a reduction over `axis`: None every axis; an empty tuple none, which is
    the reduction over a new axis of one element (the dtype and NaN rules kept, as JAX's)."""
    axes = _axes(axis)
    if axis is not None and not axes:
        return _t.expand_dims(a, 0), [0]
    return a, axes


def _reduction(name):
    fn = getattr(_t, name)

    def reduce(a, axis=None, keepdims=False):
        b, axes = _over(a, axis)
        return fn(b, axes, keepdims and b is a)
    return _op(reduce)


def _var(a, axis=None, dtype=None, ddof=0, keepdims=False, correction=None):
    if correction is not None:
        if ddof != 0:
            raise ValueError("ddof and correction can't be provided simultaneously.")
        ddof = correction
    if dtype is not None:  # computed in the dtype asked for, as jnp.var
        a = _t.astype(a, _canonical_name(dtype))
    b, axes = _over(a, axis)
    return _t.var(b, axes, float(ddof), keepdims and b is a)


var = _op(_var)
std = _op(lambda a, axis=None, dtype=None, ddof=0, keepdims=False, correction=None:
          _t.sqrt(_var(a, axis, dtype, ddof, keepdims, correction)))
sum = _reduction("sum")  # noqa: A001
mean = _reduction("mean")
max = _reduction("max")  # noqa: A001
min = _reduction("min")  # noqa: A001
argmax = _op(lambda a, axis=None, keepdims=False: _keep(_t.argmax(a, _axis(axis)), a, axis,
                                                      keepdims))
argmin = _op(lambda a, axis=None, keepdims=False: _keep(_t.argmin(a, _axis(axis)), a, axis,
                                                      keepdims))


def _keep(out, a, axis, keepdims):
    """An argmax/argmin result with the reduced axis kept at size 1 (every axis for None)."""
    if not keepdims:
        return out
    if axis is None:
        return _t.reshape(out, [1] * len(a.shape))
    return _t.expand_dims(out, _operator.index(axis) % len(a.shape))


all = _reduction("all")  # noqa: A001 - jax.numpy's name
any = _reduction("any")  # noqa: A001
def _cumulative(fn):
    """jnp.cumsum/cumprod: a 0-d array counts as one element of a vector, as in JAX."""
    def scan(a, axis=None):
        if not a.shape:
            a = _t.reshape(a, [1])
        return fn(a, _axis(axis))
    return _op(scan)


cumsum = _cumulative(_t.cumsum)
cumprod = _cumulative(_t.cumprod)


def _sort_arguments(name, kind, order):
    if kind is not None:
        raise TypeError(f"'kind' argument to {name} is not supported. Use stable=True or "
                        "stable=False to specify sort stability.")
    if order is not None:
        raise TypeError(f"'order' argument to {name} is not supported.")


def _sort(a, axis=-1, *, kind=None, order=None, stable=True, descending=False):
    """jnp.sort: always stable (stable=False allows any order of equal elements; this is one)."""
    _sort_arguments("sort", kind, order)
    return _t.sort(a, _axis(axis), _builtins.bool(descending))


def _argsort(a, axis=-1, *, kind=None, order=None, stable=True, descending=False, dtype=None):
    """jnp.argsort: int32 positions, JAX's default integer (int64 under x64) unless `dtype`."""
    _sort_arguments("argsort", kind, order)
    positions = _t.argsort(a, _axis(axis), _builtins.bool(descending))
    want = _canonical_name(_default_int() if dtype is None else dtype)
    return positions if want == "int32" else _t.astype(positions, want)


sort = _op(_sort)
argsort = _op(_argsort)

# Contractions and shapes.
def _dot(a, b):
    """jnp.dot (spmd::numpy::dot's rules); a Python scalar operand multiplies, weak."""
    return a * b if _is_scalar(a) or _is_scalar(b) else _t.dot(a, b)


dot = _op(_dot)
matmul = _op(lambda a, b: _t.matmul(a, b))
einsum = _op(lambda subscripts, a, b: _t.einsum(subscripts, a, b), arrays=(1, 2))
reshape = _op(lambda a, shape: _t.reshape(a, list(_arguments.shape_tuple(shape, "reshape"))),
              arrays=(0,))
transpose = _op(lambda a, axes=None: _t.transpose(a, [] if axes is None else _axes(axes)))
broadcast_to = _op(lambda a, shape: _t.broadcast_to(
    a, list(_arguments.shape_tuple(shape, "broadcast_to"))), arrays=(0,))
def _expand_dims(a, axis):
    """jnp.expand_dims: `axis` an int or a tuple of them, positions in the result."""
    if isinstance(axis, (tuple, list)):
        out = len(a.shape) + len(axis)
        axes = [_operator.index(x) for x in axis]
        places = sorted(x % out if -out <= x < out else x for x in axes)
        if len(set(places)) != len(places):
            raise ValueError(f"expand_dims: repeated axis in {tuple(axes)} for a result of "
                             f"rank {out}")
        for ax in places:
            a = _t.expand_dims(a, ax)
        return a
    return _t.expand_dims(a, _operator.index(axis))


expand_dims = _op(_expand_dims, arrays=(0,))
squeeze = _op(lambda a, axis=None: _t.squeeze(a, _axes(axis)))
swapaxes = _op(lambda a, axis1, axis2: _t.swapaxes(a, _operator.index(axis1),
                                                   _operator.index(axis2)), arrays=(0,))
moveaxis = _op(lambda a, source, destination: _t.moveaxis(a, _operator.index(source),
                                                          _operator.index(destination)),
               arrays=(0,))


def _concatenate(*xs, axis):
    return _t.concatenate(list(xs), axis)


def _stack(*xs, axis):
    return _t.stack(list(xs), axis)


def _joined(name, fn, arrays, axis):
    """fn (_concatenate or _stack) of a sequence of arrays along `axis`, under jnp's `name`."""
    if isinstance(arrays, (Array, Tensor, _np.ndarray)) or not hasattr(arrays, "__iter__"):
        raise TypeError(f"{name}: a sequence of arrays expected, got "
                        f"{type(arrays).__name__}")
    arrays = list(arrays)
    _arguments.check_arraylike(name, *arrays)
    if axis is None:  # jnp's: every array flattened, then joined
        arrays, axis = [reshape(x, (-1,)) for x in arrays], 0
    axis = _operator.index(axis)
    if _is_traced(*arrays):
        return fn(*_constants(arrays, range(len(arrays))), axis=axis)
    arrays = [x if isinstance(x, Array) else asarray(x) for x in arrays]
    return _eager(fn, (_ARRAY,) * len(arrays), (("axis", _static(axis)),),
                  f"spmd.numpy.{name}")(*arrays)


def concatenate(arrays, axis=0):
    """jnp.concatenate: a sequence of arrays joined along `axis`."""
    try:
        return _joined("concatenate", _concatenate, arrays, axis)
    except _spmd.errors.InvalidArgument as error:
        raise _errors.in_jax_terms(error) from None


def stack(arrays, axis=0):
    """jnp.stack: arrays of one shape joined along a new axis `axis`."""
    if axis is None:
        raise TypeError("stack: axis must be an integer, not None")
    try:
        return _joined("stack", _stack, arrays, axis)
    except _spmd.errors.InvalidArgument as error:
        raise _errors.in_jax_terms(error) from None


def full(shape, fill_value, dtype=None):
    """jax.numpy.full: `fill_value` everywhere; of its own dtype when `dtype` is None (a NumPy
    scalar's or an array's, canonical; a Python bool, int or float the default of its kind); an
    array fill_value is broadcast to `shape`."""
    shape = list(_arguments.shape_tuple(shape, "full"))
    if _builtins.any(d < 0 for d in shape):
        raise _errors.ShapeError(f"full: shape must have every element be nonnegative, got "
                                 f"{tuple(shape)}")
    if isinstance(fill_value, (Tensor, Array, list, tuple)) or _np.ndim(fill_value) > 0:
        values = asarray(fill_value) if dtype is None else asarray(fill_value, dtype)
        return broadcast_to(values, tuple(shape))
    if not isinstance(fill_value, (_builtins.bool, int, float, _np.number, _np.bool_)):
        kind = getattr(_np.asarray(fill_value), "dtype", None)
        if kind is None or kind.kind not in "biuf":
            raise TypeError(f"full: fill_value {fill_value!r} is not a valid array value; only "
                            "numbers are supported")
    if dtype is None:
        dtype = (_np.bool_ if isinstance(fill_value, _builtins.bool) else
                 _default_float() if isinstance(fill_value, float) else
                 _default_int() if isinstance(fill_value, int) else _np.asarray(fill_value).dtype)
    name = _canonical_name(dtype)
    if _jit.tracing():  # JAX folds the constant with NumPy's cast
        if isinstance(fill_value, float) and _np.dtype(_dtype_of(name)).kind in "iu":
            with _np.errstate(invalid="ignore", over="ignore"):
                fill_value = int(_np.array(fill_value).astype(_dtype_of(name)))
        return _t.full(shape, fill_value, name)
    fill_value = _saturated(fill_value, _dtype_of(name))
    return _device_put(_np.full(shape, fill_value, dtype=_dtype_of(name)))


def _saturated(value, dtype):
    """A Python float fill value for an integer dtype as JAX converts it eagerly (XLA's
    conversion): truncated toward zero and held to the dtype's range, NaN 0; any other value as
    it is (a NumPy scalar is cast as NumPy casts it, as JAX does, and under jit JAX folds every
    fill with NumPy's cast)."""
    if _np.dtype(dtype).kind not in "iu" or not isinstance(value, float):
        return value
    v = float(value)
    if v != v:
        return 0
    info = _np.iinfo(dtype)
    if v >= info.max:
        return int(info.max)
    return int(info.min) if v <= info.min else int(v)


def zeros(shape, dtype=None):
    return full(shape, 0, _default_float() if dtype is None else dtype)


def ones(shape, dtype=None):
    return full(shape, 1, _default_float() if dtype is None else dtype)


def arange(start, stop=None, step=None, dtype=None):
    """jnp.arange of concrete numbers: arange(stop) and arange(0, stop) an iota of ceil(stop)
    elements, any other start or step NumPy's arange as a constant, as JAX builds them; the
    dtype, when not given, that of the arguments (an int the default integer, a float the
    default float)."""
    given = [x for x in (start, stop, step) if x is not None]
    for x in given:
        if isinstance(x, (Array, Tensor)):
            raise TypeError("spmd.numpy.arange: start, stop and step must be concrete numbers "
                            f"(got {type(x).__name__}), as jnp.arange's must be")
    name = _canonical_name(_np.result_type(*given) if dtype is None else dtype)
    if stop is None and step is None:
        start, stop = 0, start
    if step is None and start == 0:
        count = _builtins.max(int(_np.ceil(stop)), 0)
        if _jit.tracing():
            return _t.arange(count, name)
        return _device_put(_np.arange(count, dtype=_dtype_of(name)))
    host = _np.arange(start, stop, step, dtype=_dtype_of(name))
    if _jit.tracing():
        return _t.constant(*_bytes(host))
    return _device_put(host)


def asarray(a, dtype=None, copy=None):
    """jnp.asarray: an Array of `a` (an Array or Tensor as it is; host data on this process's
    first device, uncommitted, viewing a NumPy array's memory unless copy=True, as on JAX's
    CPU)."""
    if isinstance(a, (Array, Tensor)):  # immutable: a copy would be indistinguishable
        return a if dtype is None else astype(a, dtype)
    host = _np.asarray(a) if dtype is None else _np.asarray(a, dtype=_np.dtype(dtype))
    _check_host(a, host)  # Python ints beyond the default integer, object dtypes: JAX's errors
    return _device_put(host, may_alias=not copy)


def from_dlpack(x, device=None, copy=None):
    """jnp.from_dlpack: any object with __dlpack__ (a NumPy array, a JAX or PyTorch CPU tensor)
    as an Array, viewing its memory unless copy=True (placed as device_put places it)."""
    if not hasattr(x, "__dlpack__"):
        raise TypeError(f"from_dlpack: an object with __dlpack__ (a NumPy array, a JAX or "
                        f"PyTorch CPU tensor) expected, got {type(x).__name__}")
    host = _np.from_dlpack(x, copy=copy)
    return _device_put(host, device, may_alias=not copy)


def array(object, dtype=None, copy=True):  # noqa: A002 (NumPy's and JAX's name)
    """jnp.array: as asarray, but a copy unless copy=False."""
    return asarray(object, dtype=dtype, copy=copy)


def _check_arraylike_one(name, a):
    if type(a) not in _PLAIN:
        _arguments.check_arraylike(name, a)


from ._numpy_composed import *  # noqa: E402,F401,F403 - composed as jax.numpy composes them
from ._numpy_extra import *  # noqa: E402,F401,F403 - constants, dtypes, aliases, compositions
from ._reductions import *  # noqa: E402,F401,F403 - where=, initial=, dtype=, out=
from ._numpy_statistics import *  # noqa: E402,F401,F403 - quantile, percentile, median
from ._numpy_histograms import *  # noqa: E402,F401,F403 - bincount, histogram
from ._numpy_sets import *  # noqa: E402,F401,F403 - nonzero, unique, lexsort
from ._numpy_placement import *  # noqa: E402,F401,F403 - put, fill_diagonal, ix_, acos
from ._numpy_vectorize import *  # noqa: E402,F401,F403 - vectorize, apply_along_axis
from ._numpy_float_bits import *  # noqa: E402,F401,F403 - frexp, spacing
from ._numpy_convolve import *  # noqa: E402,F401,F403 - convolve, correlate
from ._numpy_partition import *  # noqa: E402,F401,F403 - partition, argpartition
from ._numpy_polynomials import *  # noqa: E402,F401,F403 - polyadd, polyder, polydiv
from . import _linalg as linalg  # noqa: E402 - jnp.linalg's factorizations

# Python's operators on Arrays and Tensors: _operators.py.


_name_ops(globals(), "spmd.numpy")
