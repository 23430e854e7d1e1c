"""jax.numpy's constants, dtype helpers, aliases and small compositions of spmd.numpy's
functions, each as jax.numpy defines it (spmd.numpy re-exports them)."""
import builtins
import operator

import numpy as np

from . import numpy as jnp
from ._core import Array, Tensor, _BFLOAT16

_t = jnp._t
_op = jnp._op

# --- constants and dtypes ---
e, pi, inf, nan, euler_gamma = np.e, np.pi, np.inf, np.nan, np.euler_gamma
newaxis = None
int8, int16, uint8, uint16, uint64 = (jnp._ScalarType(t) for t in (np.int8, np.int16, np.uint8,
                                                                     np.uint16, np.uint64))
bool = jnp.bool_  # noqa: A001 - jax.numpy's name
float_, int_, uint = jnp.float64, jnp.int64, uint64  # canonical to 32 bits with x64 off
double, single = jnp.float64, jnp.float32
dtype = np.dtype
generic, number, inexact, floating = np.generic, np.number, np.inexact, np.floating
integer, signedinteger, unsignedinteger = np.integer, np.signedinteger, np.unsignedinteger
iterable = np.iterable


def finfo(dtype):
    import ml_dtypes
    return ml_dtypes.finfo(dtype)


def iinfo(int_type):
    return np.iinfo(int_type)


def promote_types(a, b):
    """jnp.promote_types: JAX's lattice (int32 with float16 is float16, not NumPy's float32), by
    spmd::numpy::promote_types."""
    from ._core import canonical_name, dtype_of
    x = jnp.zeros((), np.dtype(a) if a is not _BFLOAT16 else a)
    y = jnp.zeros((), np.dtype(b) if b is not _BFLOAT16 else b)
    return np.dtype(dtype_of(canonical_name(jnp.add(x, y).dtype)))


def issubdtype(arg1, arg2):
    return np.issubdtype(arg1, arg2)


def isscalar(element):
    """jnp.isscalar: a Python or NumPy scalar, or a rank-0 array."""
    if isinstance(element, (Array, Tensor)):
        return element.shape == ()
    return np.isscalar(element) or (isinstance(element, np.ndarray) and element.ndim == 0)


# --- aliases ---
absolute = jnp.abs
fabs = jnp.abs
amax, amin = jnp.max, jnp.min
concat = jnp.concatenate
pow = jnp.power  # noqa: A001 - jax.numpy's name
permute_dims = jnp.transpose
positive = _op(lambda a: a)


def matrix_transpose(x):
    return jnp.swapaxes(x, -1, -2)


# --- element-wise compositions ---
isinf = _op(lambda a: _t.logical_and(_t.logical_not(_t.isfinite(a)),
                                     _t.logical_not(_t.isnan(a))))
isposinf = _op(lambda a: _t.logical_and(isinf.__wrapped__(a), _t.greater(a, 0)))
isneginf = _op(lambda a: _t.logical_and(isinf.__wrapped__(a), _t.less(a, 0)))
log2 = _op(lambda a: _t.log(a) / _t.log(_t.full([], 2, _inexact_name(a))))
log10 = _op(lambda a: _t.log(a) / _t.log(_t.full([], 10, _inexact_name(a))))
deg2rad = radians = _op(lambda a: _float(a) * (np.pi / 180))
rad2deg = degrees = _op(lambda a: _float(a) * (180 / np.pi))
reciprocal = _op(lambda a: 1 / _float(a))


def _float(a):
    return a if a.dtype.kind == "f" or a.dtype == _BFLOAT16 else _t.astype(a, _inexact_name(a))


def _inexact_name(a):
    from ._core import canonical_name, default_float
    d = np.dtype(a.dtype)
    return canonical_name(d if d.kind == "f" or d == _BFLOAT16 else default_float())


def _heaviside(x1, x2):
    """JAX's: 0 below zero, 1 above, NaN kept, x2 at zero (both promoted to a float)."""
    x1 = _float(x1)
    x2 = _t.astype(x2, _inexact_name(x1)) if isinstance(x2, Tensor) else \
        _t.full([], float(x2), _inexact_name(x1))
    zero, one = _t.full([], 0, _inexact_name(x1)), _t.full([], 1, _inexact_name(x1))
    return _t.where(_t.less(x1, 0), zero,
                    _t.where(_t.greater(x1, 0), one, _t.where(_t.isnan(x1), x1, x2)))


heaviside = _op(_heaviside)


# --- reductions and tests ---

def _count_nonzero(a, axis=None, keepdims=False):
    b, axes = jnp._over(a, axis)
    return _t.sum(_t.astype(b, "bool"), axes, keepdims and b is a)


count_nonzero = _op(_count_nonzero)


def _ptp(a, axis=None, keepdims=False):
    b, axes = jnp._over(a, axis)
    return _t.max(b, axes, keepdims and b is a) - _t.min(b, axes, keepdims and b is a)


ptp = _op(_ptp)


def _isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """jnp.isclose: |a - b| <= atol + rtol |b|, infinities equal only to themselves."""
    diff = _t.abs(a - b)
    close = _t.less_equal(diff, atol + rtol * _t.abs(b))
    finite = _t.logical_and(_t.isfinite(a), _t.isfinite(b))
    same_inf = _t.logical_and(_t.logical_not(finite), _t.equal(a, b))
    out = _t.logical_or(_t.logical_and(finite, close), same_inf)
    if equal_nan:
        out = _t.logical_or(out, _t.logical_and(_t.isnan(a), _t.isnan(b)))
    return out


isclose = _op(_isclose)


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return jnp.all(isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))


def array_equal(a1, a2, equal_nan=False):
    """jnp.array_equal: the same shape and every element equal (NaN to NaN when equal_nan)."""
    if np.shape(a1) != np.shape(a2):
        return jnp.asarray(False)
    eq = jnp.equal(a1, a2)
    if equal_nan:
        eq = jnp.logical_or(eq, jnp.logical_and(jnp.isnan(a1), jnp.isnan(a2)))
    return jnp.all(eq)


def _nan_reduction(name, fill):
    fn = getattr(_t, name)

    def reduce(a, axis=None, keepdims=False):
        b, axes = jnp._over(a, axis)
        if a.dtype.kind == "f" or a.dtype == _BFLOAT16:
            b = _t.where(_t.isnan(b), fill, b)
        return fn(b, axes, keepdims and b is a)
    return _op(reduce)


nansum = _nan_reduction("sum", 0.0)
nanmax = _nan_reduction("max", -np.inf)
nanmin = _nan_reduction("min", np.inf)


def average(a, axis=None, weights=None, returned=False, keepdims=False):
    """jnp.average: the mean, or sum(a * w) / sum(w) over `axis` with weights of a's shape."""
    if weights is None:
        avg = jnp.mean(a, axis=axis, keepdims=keepdims)
        if returned:
            count = np.prod(np.shape(a)) if axis is None else \
                np.prod([np.shape(a)[x] for x in np.atleast_1d(axis)])
            return avg, jnp.full(np.shape(avg), count, avg.dtype)
        return avg
    if np.shape(weights) != np.shape(a):
        raise NotImplementedError("spmd.numpy.average: weights of a's shape only")
    total = jnp.sum(jnp.multiply(a, weights), axis=axis, keepdims=keepdims)
    scale = jnp.sum(jnp.asarray(weights) if not isinstance(weights, Tensor) else weights,
                    axis=axis, keepdims=keepdims)
    avg = total / scale
    return (avg, jnp.broadcast_to(scale, np.shape(avg))) if returned else avg


# --- shapes ---

def atleast_1d(*arys):
    out = [jnp.reshape(a, (1,)) if np.ndim(a) == 0 else jnp.asarray(a) for a in arys]
    return out[0] if len(out) == 1 else out


def atleast_2d(*arys):
    out = []
    for a in arys:
        a = jnp.asarray(a)
        out.append(jnp.reshape(a, (1,) * (2 - a.ndim) + tuple(a.shape)) if a.ndim < 2 else a)
    return out[0] if len(out) == 1 else out


def atleast_3d(*arys):
    out = []
    for a in arys:
        a = jnp.asarray(a)
        if a.ndim == 0:
            a = jnp.reshape(a, (1, 1, 1))
        elif a.ndim == 1:
            a = jnp.reshape(a, (1, a.shape[0], 1))
        elif a.ndim == 2:
            a = jnp.expand_dims(a, 2)
        out.append(a)
    return out[0] if len(out) == 1 else out


def hstack(tup):
    arrs = [atleast_1d(a) for a in tup]
    return jnp.concatenate(arrs, axis=0 if arrs[0].ndim == 1 else 1)


def vstack(tup):
    return jnp.concatenate([atleast_2d(a) for a in tup], axis=0)


def dstack(tup):
    return jnp.concatenate([atleast_3d(a) for a in tup], axis=2)


def column_stack(tup):
    arrs = [jnp.reshape(a, (-1, 1)) if np.ndim(a) < 2 else a for a in tup]
    return jnp.concatenate(arrs, axis=1)


def array_split(ary, indices_or_sections, axis=0):
    """jnp.array_split: like split, but sections need not divide the axis (the first ones one
    longer)."""
    if isinstance(indices_or_sections, (int, np.integer)):
        n = np.shape(ary)[axis]
        k = operator.index(indices_or_sections)
        if k <= 0:
            raise ValueError("number sections must be larger than 0.")
        sizes = [n // k + (1 if i < n % k else 0) for i in range(k)]
        indices_or_sections = list(np.cumsum(sizes)[:-1])
    return jnp.split(ary, indices_or_sections, axis=axis)


def hsplit(ary, indices_or_sections):
    return jnp.split(ary, indices_or_sections, axis=1 if np.ndim(ary) > 1 else 0)


def vsplit(ary, indices_or_sections):
    return jnp.split(ary, indices_or_sections, axis=0)


def dsplit(ary, indices_or_sections):
    return jnp.split(ary, indices_or_sections, axis=2)


def _flip(m, axis=None):
    axes = range(len(m.shape)) if axis is None else \
        [operator.index(x) % len(m.shape) for x in np.atleast_1d(axis)]
    for ax in axes:
        n = m.shape[ax]
        m = _t.take(m, _t.constant(*_bytes(np.arange(n - 1, -1, -1, dtype=np.int32))), ax)
    return m


def _bytes(host):
    from ._core import _bytes as b
    return b(host)


flip = _op(_flip, arrays=(0,))


def fliplr(m):
    return flip(m, 1)


def flipud(m):
    return flip(m, 0)


def _roll(a, shift, axis=None):
    if axis is None:
        return _t.reshape(_roll(_t.reshape(a, [-1]), shift, 0), list(a.shape))
    shifts, axes = np.atleast_1d(shift), np.atleast_1d(axis)
    for s, ax in zip(*np.broadcast_arrays(shifts, axes)):
        ax = operator.index(ax) % len(a.shape)
        n = a.shape[ax]
        if n == 0:
            continue
        s = operator.index(s) % n
        if s:
            idx = (np.arange(n, dtype=np.int32) - s) % n
            a = _t.take(a, _t.constant(*_bytes(idx.astype(np.int32))), ax)
    return a


roll = _op(_roll, arrays=(0,))


def _tri_mask(n, m, k):
    return np.tri(n, m, k, dtype=builtins.bool)


def _tril(m, k=0):
    n, cols = m.shape[-2], m.shape[-1]
    mask = _t.constant(*_bytes(_tri_mask(n, cols, k)))
    return _t.where(mask, m, _t.full([], 0, m.dtype.name if m.dtype != _BFLOAT16 else
                                     "bfloat16"))


def _triu(m, k=0):
    n, cols = m.shape[-2], m.shape[-1]
    mask = _t.constant(*_bytes(~_tri_mask(n, cols, k - 1)))
    return _t.where(mask, m, _t.full([], 0, m.dtype.name if m.dtype != _BFLOAT16 else
                                     "bfloat16"))


tril = _op(_tril, arrays=(0,))
triu = _op(_triu, arrays=(0,))


def tri(N, M=None, k=0, dtype=None):  # noqa: N803 - jax.numpy's names
    from ._core import default_float
    return jnp.asarray(np.tri(N, M, k, dtype=np.dtype(default_float() if dtype is None
                                                      else dtype)))


def _diagonal(a, offset=0, axis1=0, axis2=1):
    """The diagonal of the (axis1, axis2) planes, those axes moved last and replaced by it."""
    rank = len(a.shape)
    a1, a2 = operator.index(axis1) % rank, operator.index(axis2) % rank
    if a1 == a2:
        raise ValueError("axis1 and axis2 cannot be the same")
    a = _t.transpose(a, [d for d in range(rank) if d not in (a1, a2)] + [a1, a2])
    n, m = a.shape[-2], a.shape[-1]
    rows = np.arange(builtins.max(0, -offset), builtins.max(builtins.min(n, m - offset), 0))
    flat = _t.reshape(a, list(a.shape[:-2]) + [n * m])
    idx = (rows * m + rows + offset).astype(np.int32)
    return _t.take(flat, _t.constant(*_bytes(idx)), rank - 2)


diagonal = _op(_diagonal, arrays=(0,))


def trace(a, offset=0, axis1=0, axis2=1, dtype=None):
    out = jnp.sum(diagonal(a, offset, axis1, axis2), axis=-1)
    return out if dtype is None else jnp.astype(out, dtype)


def diag(v, k=0):
    """jnp.diag: a 2-D array's k-th diagonal, or the square array with v on it."""
    if np.ndim(v) == 2:
        return diagonal(v, k)
    if np.ndim(v) != 1:
        raise ValueError("diag input must be 1d or 2d")
    n = np.shape(v)[0] + builtins.abs(k)
    eye = jnp.eye(n, k=k, dtype=bool)
    row = jnp.pad(v, (builtins.max(k, 0), builtins.max(-k, 0)))
    return jnp.where(eye, jnp.reshape(row, (1, n)) if k >= 0 else jnp.reshape(row, (n, 1)),
                     jnp.zeros((), row.dtype))


def inner(a, b):
    return jnp.tensordot(a, b, axes=([-1], [-1])) if np.ndim(a) and np.ndim(b) else a * b


def vdot(a, b):
    return jnp.dot(jnp.ravel(a), jnp.ravel(b))


def kron(a, b):
    a, b = jnp.asarray(a), jnp.asarray(b)
    rank = builtins.max(a.ndim, b.ndim)
    a = jnp.reshape(a, (1,) * (rank - a.ndim) + tuple(a.shape))
    b = jnp.reshape(b, (1,) * (rank - b.ndim) + tuple(b.shape))
    wide_a = jnp.reshape(a, tuple(d for s in a.shape for d in (s, 1)))
    wide_b = jnp.reshape(b, tuple(d for s in b.shape for d in (1, s)))
    return jnp.reshape(wide_a * wide_b, tuple(x * y for x, y in zip(a.shape, b.shape)))


def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    """jnp.meshgrid of 1-D arrays, "xy" or "ij" indexing."""
    if indexing not in ("xy", "ij"):
        raise ValueError(f"Valid values for indexing are 'xy' and 'ij', got {indexing}")
    arrays = [jnp.ravel(x) for x in xi]
    n = len(arrays)
    shapes = [[1] * n for _ in arrays]
    for i, a in enumerate(arrays):
        shapes[i][i] = a.shape[0]
    if indexing == "xy" and n > 1:
        for s in shapes:
            s[0], s[1] = s[1], s[0]
    out = [jnp.reshape(a, tuple(s)) for a, s in zip(arrays, shapes)]
    if sparse:
        return out
    full = tuple(builtins.max(s[d] for s in shapes) for d in range(n))
    return [jnp.broadcast_to(a, full) for a in out]


def broadcast_shapes(*shapes):
    return tuple(np.broadcast_shapes(*shapes))


def broadcast_arrays(*args):
    shape = broadcast_shapes(*(np.shape(a) for a in args))
    return [jnp.broadcast_to(a, shape) for a in args]


def unstack(x, axis=0):
    return [jnp.squeeze(p, axis) for p in jnp.split(x, np.shape(x)[axis], axis=axis)]


def select(condlist, choicelist, default=0):
    """jnp.select: where the first true condition holds, its choice; else default."""
    if len(condlist) != len(choicelist):
        raise ValueError(f"condlist must have length equal to choicelist ({len(condlist)} vs "
                         f"{len(choicelist)})")
    out = default
    for cond, choice in zip(reversed(condlist), reversed(choicelist)):
        out = jnp.where(cond, choice, out)
    return out


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    """jnp.logspace: base ** linspace(start, stop)."""
    return jnp.astype(jnp.power(base, jnp.linspace(start, stop, num, endpoint)),
                      dtype) if dtype is not None else \
        jnp.power(base, jnp.linspace(start, stop, num, endpoint))


__all__ = [n for n in dir() if not n.startswith("_") and n not in (
    "builtins", "operator", "np", "jnp", "Array", "Tensor")]
