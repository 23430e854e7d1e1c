"""spmd.numpy: jax.numpy's names over spmd::numpy. Inside a traced function each call records
one operation on spmd.Tensors; on Arrays it runs at once, compiled like JAX's eager operations
(one cached jit per operation and static arguments)."""
import functools

import numpy as _np

from . import _jit, _spmd
from ._core import _BFLOAT16, Array, Tensor, device_put, dtype_name, dtype_of
from ._core import canonical_name as _canonical_name
from ._core import default_float as _default_float
from ._core import default_int as _default_int

_t = _spmd.tnp


class _ScalarType:
    """jax.numpy's scalar types: a dtype wherever NumPy takes one (np.dtype(jnp.float32)), and a
    constructor: jnp.float32(x) is an Array (a traced value inside jit) of that dtype."""

    def __init__(self, dtype):
        self.dtype = _np.dtype(dtype)
        self.__name__ = dtype_name(self.dtype)

    def __call__(self, x):
        if isinstance(x, Tensor):
            return _t.astype(x, _canonical_name(self.dtype))
        if isinstance(x, Array):
            return astype(x, self)
        return device_put(_np.asarray(x).astype(self.dtype))

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
    return any(isinstance(x, Tensor) for x in xs)


def _is_scalar(x):
    return isinstance(x, (bool, int, float))


_ARRAY = object()  # marks an Array's place among an eager call's arguments


@functools.lru_cache(maxsize=None)
def _eager(fn, pattern, statics):
    """fn compiled for arguments laid out as `pattern`: Arrays where it says _ARRAY, else a
    (type, value) pair of a static value; keyword arguments `statics`."""
    def call(*arrays):
        it = iter(arrays)
        args = [next(it) if p is _ARRAY else p[1] for p in pattern]
        return fn(*args, **{k: v[1] for k, v in statics})
    return _jit.jit(call)


def _static(x):
    """A static argument as a cache key: its type beside its value, so that 2, 2.0 and True
    (equal in Python) trace apart; a list (a shape) as a tuple."""
    return type(x), tuple(x) if isinstance(x, list) else x


def _op(fn):
    """`fn` on Tensors as it is; on Arrays through a cached jit (other arguments static; NumPy
    data beside an Array becomes an Array, as JAX's operations take it)."""
    @functools.wraps(fn)
    def wrapped(*xs, **statics):
        if _is_traced(*xs) or not any(isinstance(x, Array) for x in xs):
            return fn(*xs, **statics)
        xs = [asarray(x) if isinstance(x, (_np.ndarray, _np.generic)) else x for x in xs]
        pattern = tuple(_ARRAY if isinstance(x, Array) else _static(x) for x in xs)
        arrays = [x for x in xs if isinstance(x, Array)]
        keywords = tuple(sorted((k, _static(v)) for k, v in statics.items()))
        return _eager(fn, pattern, keywords)(*arrays)
    return wrapped


def _axes(axis):
    if axis is None:
        return []
    return [axis] if isinstance(axis, int) else list(axis)


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
# The comparisons as Python's operators (_operators.py): Python and NumPy scalars either side.
equal = _op(lambda a, b: a == b)
not_equal = _op(lambda a, b: a != b)
less = _op(lambda a, b: a < b)
less_equal = _op(lambda a, b: a <= b)
greater = _op(lambda a, b: a > b)
greater_equal = _op(lambda a, b: a >= b)
where = _op(lambda c, a, b: _t.where(c, a, b))
astype = _op(lambda a, dtype: _t.astype(a, _canonical_name(dtype)))


def _reduction(name):
    fn = getattr(_t, name)
    return _op(lambda a, axis=None, keepdims=False: fn(a, _axes(axis), keepdims))


def _var(a, axis=None, dtype=None, ddof=0, keepdims=False, correction=None):
    if correction is not None:
        if ddof != 0:
            raise ValueError("ddof and correction can't be provided simultaneously.")
        ddof = correction
    if dtype is not None:  # computed in the dtype asked for, as jnp.var
        a = _t.astype(a, _canonical_name(dtype))
    return _t.var(a, _axes(axis), float(ddof), keepdims)


var = _op(_var)
std = _op(lambda a, axis=None, dtype=None, ddof=0, keepdims=False, correction=None:
          _t.sqrt(_var(a, axis, dtype, ddof, keepdims, correction)))
sum = _reduction("sum")  # noqa: A001
mean = _reduction("mean")
max = _reduction("max")  # noqa: A001
min = _reduction("min")  # noqa: A001
argmax = _op(lambda a, axis=None: _t.argmax(a, axis))
cumsum = _op(lambda a, axis=None: _t.cumsum(a, axis))
cumprod = _op(lambda a, axis=None: _t.cumprod(a, axis))

# Contractions and shapes.
dot = _op(lambda a, b: _t.dot(a, b))
matmul = _op(lambda a, b: _t.matmul(a, b))
einsum = _op(lambda subscripts, a, b: _t.einsum(subscripts, a, b))
reshape = _op(lambda a, shape: _t.reshape(a, [shape] if isinstance(shape, int) else list(shape)))
transpose = _op(lambda a, axes=None: _t.transpose(a, [] if axes is None else list(axes)))
broadcast_to = _op(lambda a, shape: _t.broadcast_to(a, list(shape)))
expand_dims = _op(lambda a, axis: _t.expand_dims(a, axis))
squeeze = _op(lambda a, axis=None: _t.squeeze(a, _axes(axis)))


def _concatenate(*xs, axis):
    return _t.concatenate(list(xs), axis)


def concatenate(arrays, axis=0):
    if _is_traced(*arrays):
        return _t.concatenate(list(arrays), axis)
    return _eager(_concatenate, (_ARRAY,) * len(arrays), (("axis", axis),))(*arrays)


def full(shape, fill_value, dtype=None):
    shape = [shape] if isinstance(shape, int) else list(shape)
    if dtype is None:
        dtype = (_np.bool_ if isinstance(fill_value, bool) else
                 _default_float() if isinstance(fill_value, float) else _default_int())
    name = _canonical_name(dtype)
    if _jit.tracing():
        return _t.full(shape, fill_value, name)
    return device_put(_np.full(shape, fill_value, dtype=dtype_of(name)))


def zeros(shape, dtype=None):
    return full(shape, 0, _default_float() if dtype is None else dtype)


def ones(shape, dtype=None):
    return full(shape, 1, _default_float() if dtype is None else dtype)


def arange(stop, dtype=None):
    name = _canonical_name(_default_int() if dtype is None else dtype)
    if _jit.tracing():
        return _t.arange(stop, name)
    return device_put(_np.arange(stop, dtype=dtype_of(name)))


def asarray(a, dtype=None, copy=None):
    """jnp.asarray: an Array of `a` (an Array or Tensor as it is; host data on this process's
    first device, uncommitted, viewing a NumPy array's memory unless copy=True, as on JAX's
    CPU)."""
    if isinstance(a, (Array, Tensor)):  # immutable: a copy would be indistinguishable
        return a if dtype is None else astype(a, dtype)
    host = _np.asarray(a) if dtype is None else _np.asarray(a, dtype=_np.dtype(dtype))
    return device_put(host, may_alias=not copy)


def from_dlpack(x, device=None, copy=None):
    """jnp.from_dlpack: any object with __dlpack__ (a NumPy array, a JAX or PyTorch CPU tensor)
    as an Array, viewing its memory unless copy=True (placed as device_put places it)."""
    host = _np.from_dlpack(x, copy=copy)
    return device_put(host, device, may_alias=not copy)


def array(object, dtype=None, copy=True):  # noqa: A002 (NumPy's and JAX's name)
    """jnp.array: as asarray, but a copy unless copy=False."""
    return asarray(object, dtype=dtype, copy=copy)


# Python's operators on Arrays and Tensors: _operators.py.

