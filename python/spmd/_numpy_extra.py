"""jax.numpy's constants, dtype helpers, aliases and small compositions of spmd.numpy's
functions, each as jax.numpy defines it (spmd.numpy re-exports them)."""
import builtins
import operator

import numpy as np

from . import _arguments
from . import numpy as jnp
from ._core import _BFLOAT16, Array, Tensor, _bytes
from ._core import canonical_name as _canonical_name
from ._core import default_float as _default_float
from ._core import default_int as _default_int
from ._weak import _target as _weak_target

_t = jnp._t
_spmd = jnp._spmd
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
    """jnp.issubdtype: NumPy's, with bfloat16 a floating type, as JAX has it (NumPy sees an
    opaque ml_dtypes type)."""
    if _is_bfloat16(arg1):
        if isinstance(arg2, type) and issubclass(np.floating, arg2):
            return True  # np.floating, np.inexact, np.number, np.generic
        return _is_bfloat16(arg2)
    return np.issubdtype(arg1, arg2)


def _is_bfloat16(x):
    try:
        return _BFLOAT16 is not None and np.dtype(x) == _BFLOAT16
    except TypeError:
        return False


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
# JAX's: log(x) times 1 / log(10) rounded to the dtype (log(x) / log(10) was an ulp off in 80% of
# float32 values).
log10 = _op(lambda a: _t.log(a) * _t.full([], 0.4342944819032518, _inexact_name(a)))
deg2rad = radians = _op(lambda a: _float(a) * (np.pi / 180))
rad2deg = degrees = _op(lambda a: _float(a) * (180 / np.pi))
reciprocal = _op(lambda a: 1 / _float(a))


def _float(a):
    return a if a.dtype.kind == "f" or a.dtype == _BFLOAT16 else _t.astype(a, _inexact_name(a))


def _inexact_name(a):
    return _canonical_name(_inexact_of(a))


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


def _flip_axes(axis, ndim):
    """flip's axes as JAX checks them: each within the rank, counted from the end when negative,
    none twice (flipping an axis twice, or every axis through a repeated one, was answered)."""
    if axis is None:
        return list(range(ndim))
    axes = [operator.index(x) for x in np.atleast_1d(axis)]
    for a in axes:
        if not -ndim <= a < ndim:
            raise ValueError(f"axis {a} is out of bounds for array of dimension {ndim}")
    axes = [a % ndim for a in axes]
    if len(set(axes)) != len(axes):
        raise TypeError(f"rev dimensions must be unique, got {tuple(axes)}.")
    return axes


def _flip(m, axis=None):
    axes = _flip_axes(axis, len(m.shape))
    if not axes:
        return m
    # Every axis reversed at once, in one pass with no index array (lax.rev's reversal).
    shape = list(m.shape)
    start = [n - 1 if i in axes and n > 0 else 0 for i, n in enumerate(shape)]
    step = [-1 if i in axes else 1 for i in range(len(shape))]
    return _t.strided_slice(m, start, step, shape)


flip = _op(_flip, arrays=(0,))


def _strided_box(a, start, step, extent):
    return _t.strided_slice(a, [int(s) for s in start], [int(s) for s in step],
                            [int(e) for e in extent])


# The box whose element i is a[start + i * step] per dimension (the C++ jnp::strided_slice): a
# static index with steps (_indexing.py) in one pass. Private: JAX's namespace has no such name.
_strided_slice = _op(_strided_box, arrays=(0,))


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


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """jnp.geomspace for scalar start and stop: JAX's composition, sign(start) times
    logspace(log10(start / sign), log10(stop / sign)) in the inexact dtype, then dtype."""
    if np.ndim(start) or np.ndim(stop) or axis != 0:
        raise NotImplementedError("spmd.numpy.geomspace: scalar start and stop, axis=0 (array "
                                  "bounds are not yet supported)")
    if dtype is None:
        dtype = jnp.result_type(start, stop)
        if not jnp.issubdtype(dtype, jnp.inexact):
            dtype = jnp.float32
    computation = jnp.float64 if np.dtype(dtype) == np.float64 else jnp.float32
    start = jnp.astype(jnp.asarray(start), computation)
    stop = jnp.astype(jnp.asarray(stop), computation)
    sign = jnp.sign(start)
    res = sign * logspace(jnp.log10(start / sign), jnp.log10(stop / sign), num,
                          endpoint=endpoint, base=10.0, dtype=computation)
    return jnp.astype(res, dtype)


def _integers(name, x1, x2):
    """|x1| and |x2| in their promoted integer dtype (a Python int weak, as in JAX), else JAX's
    ValueError."""
    dtype = jnp.result_type(x1, x2)
    if not jnp.issubdtype(dtype, jnp.integer):
        raise ValueError(f"Arguments to jax.numpy.{name} must be integers.")
    return jnp.abs(jnp.asarray(x1, dtype)), jnp.abs(jnp.asarray(x2, dtype))


def _euclid(xs):
    """One step of JAX's gcd loop on every element: (b, a mod b) where b is not zero, then the
    larger first; a finished element (b zero) stays as it is. Divides by 1 where b is zero (that
    result is not used): spmd refuses an integer division by zero, where XLA's remainder gives
    the dividend."""
    from . import lax
    a, b = xs
    more = b != 0
    a, b = jnp.where(more, b, a), jnp.where(more, lax.rem(a, jnp.where(more, b, 1)), 0)
    swap = a < b
    return jnp.where(swap, b, a), jnp.where(swap, a, b)


def gcd(x1, x2):
    """jnp.gcd: the greatest common divisor of |x1| and |x2| (integers, broadcast), by JAX's
    Euclid loop on all elements until every remainder is zero; gcd(0, 0) is 0.

    Two differences, where JAX's loop would not end or cannot run here:
    - the magnitudes are taken in the unsigned type of the same width: |INT_MIN| wraps to
      INT_MIN in the signed one, and JAX's loop then never ends (gcd(-2**31, 6) hangs it);
      here it is 2**31's gcd, cast back, as NumPy's is;
    - traced (under jit), the loop runs Lamé's bound of steps (5 per decimal digit of the
      dtype's largest value, and one to order the pair), since spmd's programs have no loops
      of unknown length: a finished element's step leaves it as it is, so the values are the
      early-exit loop's."""
    from . import lax
    a, b = jnp.broadcast_arrays(*_integers("gcd", x1, x2))
    dtype = np.dtype(a.dtype)
    if jnp.issubdtype(dtype, jnp.signedinteger):
        unsigned = np.dtype(f"uint{dtype.itemsize * 8}")
        a, b = jnp.astype(a, unsigned), jnp.astype(b, unsigned)
    if isinstance(a, Tensor):
        pair = (a, b)
        for _ in range(5 * len(str(np.iinfo(dtype).max)) + 1):
            pair = _euclid(pair)
        out = pair[0]
    else:
        out = lax.while_loop(lambda xs: jnp.any(xs[1] != 0), _euclid, (a, b))[0]
    return jnp.astype(out, dtype)


def lcm(x1, x2):
    """jnp.lcm: |x1| * (|x2| // gcd), 0 where the gcd is 0; wraps on overflow as JAX's does."""
    a, b = _integers("lcm", x1, x2)
    d = gcd(a, b)
    zero = d == 0
    return jnp.where(zero, 0, a * jnp.floor_divide(b, jnp.where(zero, 1, d)))


def _extrapolates(name, side):
    if isinstance(side, str):
        if side != "extrapolate":
            raise ValueError(f"the only valid string value of `{name}` is 'extrapolate', but "
                             f"got: {side!r}")
        return True
    return False


def interp(x, xp, fp, left=None, right=None, period=None):
    """jnp.interp: the piecewise-linear interpolant through (xp, fp) at x (xp increasing),
    fp[0] and fp[-1] beyond the ends (or left, right; 'extrapolate' continues the end
    segments), or periodic with `period`; JAX's composition, step for step (its one multiply-add
    fused, as XLA fuses it), jitted as JAX jits it (a string or None static)."""
    if period is not None and np.ndim(period) != 0:
        raise ValueError(f"period must be a scalar; got {period}")
    static = tuple(name for name, v in (("left", left), ("right", right), ("period", period))
                   if v is None or isinstance(v, str))
    return _jitted_interp(static)(x, xp, fp, left=left, right=right, period=period)


_INTERPS = {}


def _jitted_interp(static):
    if static not in _INTERPS:
        from ._jit import jit
        _INTERPS[static] = jit(_interp, static_argnames=static)
    return _INTERPS[static]


def _interp(x, xp, fp, left, right, period):
    _arguments.check_arraylike("interp", x, xp, fp)
    if np.shape(xp) != np.shape(fp) or np.ndim(xp) != 1:
        raise ValueError("xp and fp must be one-dimensional arrays of equal size")
    inexact = jnp.result_type(x, xp, float)
    x, xp = jnp.astype(jnp.asarray(x), inexact), jnp.astype(jnp.asarray(xp), inexact)
    fp = jnp.astype(jnp.asarray(fp), jnp.result_type(fp, float))
    extrapolate_left = _extrapolates("left", left)
    extrapolate_right = _extrapolates("right", right)
    if period is not None:
        period = jnp.abs(period)
        x, xp = x % period, xp % period
        order = jnp.argsort(xp, stable=True)
        xp, fp = xp[order], fp[order]
        xp = jnp.concatenate([xp[-1:] - period, xp, xp[:1] + period])
        fp = jnp.concatenate([fp[-1:], fp, fp[:1]])
    i = jnp.clip(jnp.searchsorted(xp, x, side="right"), 1, xp.shape[0] - 1)
    df = fp[i] - fp[i - 1]
    dx = xp[i] - xp[i - 1]
    delta = x - xp[i - 1]
    epsilon = np.spacing(np.finfo(np.dtype(xp.dtype)).eps)
    dx0 = jnp.abs(dx) <= epsilon  # no NaN gradient where dx is tiny
    # XLA fuses the multiply-add of fp[i - 1] + (delta / dx) * df, and so does this.
    from ._fused import fma
    f = jnp.where(dx0, fp[i - 1], fma(delta / jnp.where(dx0, 1, dx), df, fp[i - 1]))
    if not extrapolate_left and period is None:
        f = jnp.where(x < xp[0], fp[0] if left is None else left, f)
    if not extrapolate_right and period is None:
        f = jnp.where(x > xp[-1], fp[-1] if right is None else right, f)
    return f


def copy(a, order=None):
    """jnp.copy: a new array of a's values."""
    _arguments.check_arraylike("copy", a)
    if order is not None and order != "K":
        raise NotImplementedError("Only implemented for order='K'")
    return jnp.array(a, copy=True)


# --- more reductions, differences and products ---

def _nanmean(a, axis=None, keepdims=False):
    """jnp.nanmean: nansum over the count of non-NaN elements (a plain mean for integers)."""
    if not (a.dtype.kind == "f" or a.dtype == _BFLOAT16):
        b, axes = jnp._over(a, axis)
        return _t.mean(b, axes, keepdims and b is a)
    b, axes = jnp._over(a, axis)
    count = _t.sum(_t.logical_not(_t.isnan(b)), axes, keepdims and b is a)
    total = _t.sum(_t.where(_t.isnan(b), 0.0, b), axes, keepdims and b is a)
    return total / _t.astype(count, _inexact_name(a))


nanmean = _op(_nanmean)


def _nan_arg(name):
    fn = getattr(_t, name)
    fill = -np.inf if name == "argmax" else np.inf

    def arg(a, axis=None, keepdims=False):
        """jnp.nanargmax/nanargmin: the arg of the others, NaN ignored (-1 where all are)."""
        if not (a.dtype.kind == "f" or a.dtype == _BFLOAT16):
            return jnp._keep(fn(a, jnp._axis(axis)), a, axis, keepdims)
        nan = _t.isnan(a)
        out = fn(_t.where(nan, fill, a), jnp._axis(axis))
        b, axes = jnp._over(nan, axis)
        all_nan = _t.all(b, axes, False)
        return jnp._keep(_t.where(all_nan, -1, out), a, axis, keepdims)
    return _op(arg)


nanargmax = _nan_arg("argmax")
nanargmin = _nan_arg("argmin")


def _diff(a, n=1, axis=-1):
    """jnp.diff: a[1:] - a[:-1] along `axis`, n times."""
    axis = operator.index(axis) % len(a.shape)
    for _ in range(operator.index(n)):
        size = a.shape[axis]
        hi = [0] * len(a.shape)
        lo_stop = list(a.shape)
        hi[axis] = 1
        lo_stop[axis] = builtins.max(size - 1, 0)
        a = _t.slice(a, hi, list(a.shape)) - _t.slice(a, [0] * len(a.shape), lo_stop)
    return a


diff = _op(_diff, arrays=(0,))


def ediff1d(ary, to_end=None, to_begin=None):
    out = jnp.diff(jnp.ravel(ary))
    parts = ([jnp.ravel(jnp.asarray(to_begin, out.dtype))] if to_begin is not None else []) + \
        [out] + ([jnp.ravel(jnp.asarray(to_end, out.dtype))] if to_end is not None else [])
    return jnp.concatenate(parts) if len(parts) > 1 else out


def cumulative_sum(x, axis=None, dtype=None, include_initial=False):
    """jnp.cumulative_sum: cumsum along `axis` (needed beyond rank 1), a leading 0 when
    include_initial."""
    return _cumulative(jnp.cumsum, 0, "cumulative_sum", x, axis, dtype, include_initial)


def cumulative_prod(x, axis=None, dtype=None, include_initial=False):
    return _cumulative(jnp.cumprod, 1, "cumulative_prod", x, axis, dtype, include_initial)


def _cumulative(fn, initial, name, x, axis, dtype, include_initial):
    if np.ndim(x) == 0:
        raise ValueError(f"The input must be non-scalar to take a cumulative operation, but "
                         f"got {x!r}.")
    if axis is None:
        if np.ndim(x) > 1:
            raise ValueError(f"The input array has rank {np.ndim(x)}, however axis was not set "
                             "to an explicit value. The axis argument is only optional for "
                             "one-dimensional arrays.")
        axis = 0
    x = jnp.asarray(x) if not isinstance(x, (Array, Tensor)) else x
    if dtype is not None:
        x = jnp.astype(x, dtype)
    out = fn(x, axis=axis)
    if include_initial:
        shape = list(np.shape(out))
        shape[axis] = 1
        out = jnp.concatenate([jnp.full(tuple(shape), initial, out.dtype), out], axis=axis)
    return out


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """jnp.trapezoid: the trapezoid rule along `axis`, spacing dx or the sample points x."""
    y = jnp.moveaxis(jnp.asarray(y) if not isinstance(y, (Array, Tensor)) else y, axis, -1)
    if x is not None:
        dx = jnp.diff(x) if np.ndim(x) == 1 else jnp.diff(jnp.moveaxis(x, axis, -1), axis=-1)
    n = np.shape(y)[-1]
    pairs = jnp.add(jnp.take(y, np.arange(1, n), axis=-1),
                    jnp.take(y, np.arange(0, builtins.max(n - 1, 0)), axis=-1))
    return jnp.multiply(0.5, jnp.sum(jnp.multiply(dx, pairs), axis=-1))


def polyval(p, x):
    """jnp.polyval: Horner's rule, y = y * x + p[i], as JAX's loop computes it."""
    p = jnp.asarray(p) if not isinstance(p, (Array, Tensor)) else p
    y = jnp.zeros_like(x * p[0]) if not isinstance(x, Tensor) else x * 0
    for i in range(np.shape(p)[0]):
        y = y * x + p[i]
    return y


def modf(x):
    """jnp.modf: (x - trunc(x), trunc(x))."""
    whole = jnp.trunc(x)
    return jnp.subtract(x, whole), whole


def vecdot(x1, x2, axis=-1):
    return jnp.sum(jnp.multiply(x1, x2), axis=axis)


def matvec(x1, x2):
    return jnp.squeeze(jnp.matmul(x1, jnp.expand_dims(x2, -1)), -1)


def vecmat(x1, x2):
    return jnp.squeeze(jnp.matmul(jnp.expand_dims(x1, -2), x2), -2)


def append(arr, values, axis=None):
    if axis is None:
        return jnp.concatenate([jnp.ravel(arr), jnp.ravel(values)])
    return jnp.concatenate([arr, values], axis=axis)


# --- real arrays' complex views (spmd has no complex dtypes) ---
real = _op(lambda a: a)
conj = conjugate = _op(lambda a: a)
imag = _op(lambda a: _t.full(list(a.shape), 0, a.dtype.name if a.dtype != _BFLOAT16
                             else "bfloat16"))
isreal = _op(lambda a: _t.full(list(a.shape), True, "bool"))
iscomplex = _op(lambda a: _t.full(list(a.shape), False, "bool"))


def isrealobj(x):
    return not iscomplexobj(x)


def iscomplexobj(x):
    return np.dtype(getattr(x, "dtype", None) or np.asarray(x).dtype).kind == "c"


# --- static index helpers (NumPy's, as JAX takes them) ---
s_, index_exp = np.s_, np.index_exp


def tril_indices(n, k=0, m=None):
    return tuple(jnp.asarray(i.astype(np.int32)) for i in np.tril_indices(n, k, m))


def triu_indices(n, k=0, m=None):
    return tuple(jnp.asarray(i.astype(np.int32)) for i in np.triu_indices(n, k, m))


def tril_indices_from(arr, k=0):
    return tril_indices(np.shape(arr)[-2], k, np.shape(arr)[-1])


def triu_indices_from(arr, k=0):
    return triu_indices(np.shape(arr)[-2], k, np.shape(arr)[-1])


def diag_indices(n, ndim=2):
    return tuple(jnp.asarray(i.astype(np.int32)) for i in np.diag_indices(n, ndim))


def diag_indices_from(arr):
    return diag_indices(np.shape(arr)[0], np.ndim(arr))


def indices(dimensions, dtype=None, sparse=False):
    out = np.indices(dimensions, dtype=np.int32 if dtype is None else np.dtype(dtype),
                     sparse=sparse)
    return tuple(jnp.asarray(o) for o in out) if sparse else jnp.asarray(out)


def unravel_index(indices, shape):
    """jnp.unravel_index: the coordinates of flat indices in `shape` (negative ones counted
    from the end, as JAX's; out of range clipped)."""
    size = int(np.prod(shape, dtype=np.int64))
    i = jnp.asarray(indices) if not isinstance(indices, (Array, Tensor)) else indices
    i = jnp.clip(jnp.where(i < 0, i + size, i), 0, builtins.max(size - 1, 0))
    out = []
    for dim in reversed(shape):
        out.append(i % dim)
        i = i // dim
    return tuple(reversed(out))


def result_type(*args):
    """jnp.result_type of dtypes, arrays and Python scalars: JAX's promotion (promote_types)
    over the dtypes and arrays, with a Python int or float weak, as in JAX: it takes the other
    operands' dtype where its kind joins theirs (an int beside any number type but bool, a float
    beside a floating type), else its kind's default dtype (int32 or float32, 64 with x64). Of
    Python scalars alone, the default dtype of the highest kind among them. A Python bool is
    strong (bool), as in JAX."""
    strong, weak = [], []
    for a in args:
        if isinstance(a, (builtins.int, builtins.float)) and not isinstance(a, builtins.bool):
            default = _default_float() if isinstance(a, builtins.float) else _default_int()
            weak.append(np.dtype(default))
        elif isinstance(a, (type, np.dtype, str)) or a is _BFLOAT16:
            strong.append(a)
        else:
            strong.append(getattr(a, "dtype", None) or np.asarray(a).dtype)
    if not strong:
        return max(weak, key=lambda d: d.kind == "f")
    out = np.dtype(strong[0]) if strong[0] is not _BFLOAT16 else strong[0]
    for d in strong[1:]:
        out = promote_types(out, d)
    for w in weak:
        out = _weak_target(out, w)
    return out


def can_cast(from_, to, casting="safe"):
    return np.can_cast(from_, to, casting=casting)


# --- more of jax.numpy's compositions (each as JAX writes it) ---

fmax = _op(lambda x1, x2: _t.where(_t.logical_or(_t.greater(x1, x2), _t.isnan(x2)), x1, x2))
fmin = _op(lambda x1, x2: _t.where(_t.logical_or(_t.less(x1, x2), _t.isnan(x2)), x1, x2))


def _beside(value, other):
    """A Python scalar operand traced beside the array `other`: weak, so in other's floating
    dtype (JAX's promote_args_inexact); an array stays as it is."""
    if isinstance(value, (builtins.int, builtins.float)):
        return _t.full([], builtins.float(value), _inexact_name(other))
    return value


def _logaddexp(x1, x2):
    """JAX's: max + log1p(exp(-|x1 - x2|)), or x1 + x2 where that difference is NaN. The max is
    a select of x1 where x1 >= x2 (the same value once the logarithm is added), so that at
    x1 == x2 each operand's derivative is 1/2, as JAX's custom JVP gives it (a balanced max with
    |x|'s derivative 1 at 0 gave 0 and 1)."""
    x1, x2 = _beside(x1, x2), _beside(x2, x1)
    x1, x2 = _float(x1), _float(x2)
    amax = _t.where(_t.greater_equal(x1, x2), x1, x2)
    delta = x1 - x2
    return _t.where(_t.isnan(delta), x1 + x2, amax + _t.log1p(_t.exp(-_t.abs(delta))))


logaddexp = _op(_logaddexp)


def _sinc(x):
    """JAX's: sin(πx) / (πx), 1 at 0."""
    x = _float(x)
    zero = _t.equal(x, 0)
    pi_x = x * np.pi
    safe = _t.where(zero, 1.0, pi_x)
    return _t.where(zero, 1.0, _t.sin(safe) / safe)


sinc = _op(_sinc)


_PYTHON_SCALARS = (type(True), type(0), type(0.0))  # (bool is jnp.bool here)


def _floats_beside(x1, x2):
    """x1 and x2 as floating Tensors: a Python scalar (weak) in the other's floating dtype."""
    if type(x1) in _PYTHON_SCALARS:
        x2 = _float(x2)
        return _t.full([], float(x1), _canonical_name(x2.dtype)), x2
    if type(x2) in _PYTHON_SCALARS:
        x1 = _float(x1)
        return x1, _t.full([], float(x2), _canonical_name(x1.dtype))
    return _float(x1), _float(x2)


def _hypot(x1, x2):
    """JAX's: the larger magnitude times sqrt(1 + (smaller / larger)²); inf where either is."""
    x1, x2 = (_t.abs(x) for x in _floats_beside(x1, x2))
    inf = _t.logical_or(_t.equal(x1, np.inf), _t.equal(x2, np.inf))
    x1, x2 = _t.maximum(x1, x2), _t.minimum(x1, x2)
    zero = _t.equal(x1, 0)
    ratio = x2 / _t.where(zero, 1.0, x1)
    x = _t.where(zero, x1, x1 * _t.sqrt(1 + ratio * ratio))
    return _t.where(inf, np.inf, x)


hypot = _op(_hypot)


def _arctan2(x1, x2):
    """jnp.arctan2: the C library's atan2 (what XLA's CPU backend calls) of both operands
    promoted to a float; a Python scalar is weak beside the other."""
    return _t.arctan2(_beside(x1, x2), _beside(x2, x1))


arctan2 = _op(_arctan2)


def _nextafter(x1, x2):
    """jnp.nextafter: the float next to x1 toward x2, by its bits (XLA's NextAfter): x2 where
    the two are equal, NaN where either is; from a zero the smallest subnormal of x2's sign; a
    step toward zero from the smallest subnormal reaches a zero of x1's sign. Both promoted to a
    float (a Python scalar weak beside the other)."""
    x1, x2 = _beside(x1, x2), _beside(x2, x1)
    name = _canonical_name(_inexact_of_dtype(promote_types(x1.dtype, x2.dtype)))
    a, b = _t.astype(x1, name), _t.astype(x2, name)
    width = np.dtype(_BFLOAT16 if name == "bfloat16" else name).itemsize * 8
    bits = "int%d" % width
    ia, ib = _t.bitcast_convert_type(a, bits), _t.bitcast_convert_type(b, bits)
    magnitude = (1 << (width - 1)) - 1
    ma, mb = ia & magnitude, ib & magnitude
    away = _t.logical_or(ma > mb, (ia ^ ib) < 0)  # a step down in magnitude (or across zero)
    stepped = _t.where(away, ia - 1, ia + 1)
    from_zero = (ib & ~magnitude) | 1  # the smallest subnormal with b's sign
    result = _t.bitcast_convert_type(_t.where(ma == 0, from_zero, stepped), name)
    result = _t.where(a == b, b, result)
    value = _t.where(_t.logical_or(_t.isnan(a), _t.isnan(b)), np.nan, result)
    return _spmd.with_vjp("nextafter", [a, b], value, _no_nextafter_derivative)


def _no_nextafter_derivative(inputs, g):
    """JAX defines no derivative for nextafter; grad through it is its NotImplementedError, not
    the derivative of the bit arithmetic above."""
    raise NotImplementedError("Differentiation rule for 'nextafter' not implemented")


nextafter = _op(_nextafter)


def _signbit(x):
    """Whether x's sign bit is set: x < 0, or a zero whose reciprocal is -inf (-0). A NaN's sign
    bit cannot be read without a bit cast, which spmd lacks: False for every NaN."""
    if not (x.dtype.kind == "f" or x.dtype == _BFLOAT16):
        return _t.less(x, 0) if x.dtype.kind == "i" else _t.full(list(x.shape), False, "bool")
    negative_zero = _t.logical_and(_t.equal(x, 0), _t.less(1 / x, 0))
    return _t.logical_or(_t.less(x, 0), negative_zero)


signbit = _op(_signbit)
copysign = _op(lambda x1, x2: _t.where(_signbit(_float(x2)), -_t.abs(_float(x1)),
                                       _t.abs(_float(x1))))
float_power = _op(lambda x1, x2: _t.power(_t.astype(x1, _float_name()),
                                          _t.astype(x2, _float_name())))


def _float_name():
    return _canonical_name(np.float64)


def _nan_filled(name, fill):
    fn = getattr(_t, name)

    def reduce(a, axis=None):
        if a.dtype.kind == "f" or a.dtype == _BFLOAT16:
            a = _t.where(_t.isnan(a), fill, a)
        return fn(_t.reshape(a, [-1]) if axis is None else a, 0 if axis is None else
                  operator.index(axis))
    return _op(reduce)


nancumsum = _nan_filled("cumsum", 0.0)
nancumprod = _nan_filled("cumprod", 1.0)


def nanprod(a, axis=None, keepdims=False):
    a = jnp.asarray(a) if not isinstance(a, (Array, Tensor)) else a
    if np.dtype(a.dtype).kind == "f" or a.dtype == _BFLOAT16:
        a = jnp.where(jnp.isnan(a), 1.0, a)
    return jnp.prod(a, axis=axis, keepdims=keepdims)


def nanvar(a, axis=None, ddof=0, keepdims=False):
    """jnp.nanvar: the mean squared deviation from the nanmean over the non-NaN elements,
    divided by their count less ddof."""
    a = jnp.asarray(a) if not isinstance(a, (Array, Tensor)) else a
    mean = nanmean(a, axis=axis, keepdims=True)
    centered = jnp.where(jnp.isnan(a), 0.0, a - mean)
    count = jnp.sum(jnp.logical_not(jnp.isnan(a)), axis=axis, keepdims=keepdims)
    total = jnp.sum(centered * centered, axis=axis, keepdims=keepdims)
    return total / jnp.maximum(jnp.astype(count, total.dtype) - ddof, 0)


def nanstd(a, axis=None, ddof=0, keepdims=False):
    return jnp.sqrt(nanvar(a, axis=axis, ddof=ddof, keepdims=keepdims))


# --- shapes ---

def rollaxis(a, axis, start=0):
    rank = np.ndim(a)
    axis = operator.index(axis) % rank
    start = operator.index(start)
    start = start + rank if start < 0 else start
    if axis < start:
        start -= 1
    return jnp.moveaxis(a, axis, start)


def rot90(m, k=1, axes=(0, 1)):
    """jnp.rot90: k quarter turns in the plane of `axes`, from the first towards the second."""
    k = operator.index(k) % 4
    a0, a1 = axes
    if k == 0:
        return jnp.asarray(m) if not isinstance(m, (Array, Tensor)) else m
    if k == 2:
        return flip(flip(m, a0), a1)
    perm = list(range(np.ndim(m)))
    perm[a0 % len(perm)], perm[a1 % len(perm)] = perm[a1 % len(perm)], perm[a0 % len(perm)]
    return jnp.transpose(flip(m, a1), perm) if k == 1 else flip(jnp.transpose(m, perm), a1)


def resize(a, new_shape):
    """jnp.resize: a's elements repeated cyclically into new_shape."""
    shape = (new_shape,) if isinstance(new_shape, (int, np.integer)) else tuple(new_shape)
    flat = jnp.ravel(a)
    size = int(np.prod(shape, dtype=np.int64))
    n = np.shape(flat)[0]
    if n == 0:
        return jnp.zeros(shape, flat.dtype)
    return jnp.reshape(jnp.take(flat, np.arange(size) % n), shape)


def delete(arr, obj, axis=None):
    """jnp.delete of static indices (an int, a slice or a sequence of ints)."""
    a = jnp.ravel(arr) if axis is None else arr
    axis = 0 if axis is None else operator.index(axis)
    n = np.shape(a)[axis]
    drop = np.arange(n)[obj] if isinstance(obj, slice) else np.atleast_1d(obj)
    keep = np.setdiff1d(np.arange(n), np.asarray(drop) % n if n else drop)
    return jnp.take(a, keep.astype(np.int32), axis=axis)


def choose(a, choices, mode="raise"):
    """jnp.choose: choices[a] element by element (a's values must be in range)."""
    if mode != "raise":
        raise NotImplementedError("spmd.numpy.choose: mode='raise' only")
    out = choices[-1]
    for k in range(len(choices) - 2, -1, -1):
        out = jnp.where(jnp.equal(a, k), choices[k], out)
    return out


def isin(element, test_elements, invert=False):
    """jnp.isin: whether each element equals one of test_elements (compared all against all)."""
    e = jnp.asarray(element) if not isinstance(element, (Array, Tensor)) else element
    t = jnp.ravel(test_elements)
    out = jnp.any(jnp.equal(jnp.expand_dims(e, -1), t), axis=-1)
    return jnp.logical_not(out) if invert else out


_searchsorted = _op(lambda a, v, side: _t.searchsorted(a, v, side), arrays=(0, 1))
_SEARCH_METHODS = ("scan", "scan_unrolled", "sort", "compare_all")


def searchsorted(a, v, side="left", sorter=None, *, method="scan"):
    """jnp.searchsorted: the int32 insertion index of each element of v into the ascending
    rank-1 a (a[sorter] with a sorter), side 'left' or 'right', in JAX's sort order (-0 equals
    0, NaN after every number). Every method gives the same indices; spmd has one binary search,
    as JAX's 'scan'."""
    if side not in ("left", "right"):
        raise ValueError(f"{side!r} is an invalid value for keyword 'side'. Expected one of "
                         "['left', 'right']")
    if method not in _SEARCH_METHODS:
        raise ValueError(f"{method!r} is an invalid value for keyword 'method'. Expected one "
                         f"of {list(_SEARCH_METHODS)}")
    if sorter is not None:
        a = jnp.take(a, sorter)
    if np.ndim(a) != 1:
        raise ValueError("a should be 1-dimensional")
    if type(v) in _PYTHON_SCALARS:  # weak: a's dtype where it can
        v = jnp.asarray(v, dtype=jnp.result_type(a, v))
    return _searchsorted(a, v, side)


def digitize(x, bins, right=False, *, method=None):
    """jnp.digitize: the bin of each element of x among the monotonic edges `bins` (increasing
    or decreasing), through searchsorted, as JAX composes it."""
    if np.ndim(bins) != 1:
        raise ValueError(f"digitize: bins must be a 1-dimensional array; got bins={bins!r}")
    if np.shape(bins)[0] == 0:
        return jnp.zeros_like(x, dtype=jnp.int32)
    side = "right" if not right else "left"
    kwds = {} if method is None else {"method": method}
    reverse = jnp.flip(bins, 0)
    return jnp.where(jnp.asarray(bins)[-1] >= jnp.asarray(bins)[0],
                     searchsorted(bins, x, side=side, **kwds),
                     np.shape(bins)[0] - searchsorted(reverse, x, side=side, **kwds))


def array_equiv(a1, a2):
    try:
        shape = np.broadcast_shapes(np.shape(a1), np.shape(a2))
    except ValueError:
        return jnp.asarray(False)
    return jnp.all(jnp.equal(jnp.broadcast_to(a1, shape), jnp.broadcast_to(a2, shape)))


def block(arrays):
    """jnp.block: nested lists of arrays joined, the innermost along the last axis."""
    def depth(x):
        return 1 + depth(x[0]) if isinstance(x, list) and x else 0
    levels = depth(arrays)

    def join(x, level):
        if not isinstance(x, list):
            return x
        parts = [join(p, level + 1) for p in x]
        rank = builtins.max(levels, builtins.max(np.ndim(p) for p in parts))
        parts = [jnp.reshape(p, (1,) * (rank - np.ndim(p)) + tuple(np.shape(p))) for p in parts]
        return jnp.concatenate(parts, axis=level - levels)
    return join(arrays, 0)


# --- host constructors and NumPy's printing and files ---

def frombuffer(buffer, dtype=float, count=-1, offset=0):
    return jnp.asarray(np.frombuffer(buffer, dtype=np.dtype(dtype), count=count, offset=offset))


def fromiter(*args, **kwargs):
    """Refused, as JAX refuses it (an iterable may be consumed by a traced function)."""
    raise NotImplementedError("jnp.fromiter() is not implemented because it may be non-pure; "
                              "use spmd.numpy.asarray(np.fromiter(...)) instead")


def fromfunction(function, shape, *, dtype=float, **kwargs):
    grids = [jnp.asarray(g) for g in np.indices(shape, dtype=np.dtype(dtype))]
    return function(*grids, **kwargs)


def save(file, arr, allow_pickle=True):
    np.save(file, np.asarray(arr), allow_pickle=allow_pickle)


def load(file, *args, **kwargs):
    out = np.load(file, *args, **kwargs)
    return jnp.asarray(out) if isinstance(out, np.ndarray) else out


get_printoptions, set_printoptions, printoptions = (np.get_printoptions, np.set_printoptions,
                                                    np.printoptions)
character, flexible, object_ = np.character, np.flexible, np.object_
complexfloating = np.complexfloating
ComplexWarning = getattr(np.exceptions, "ComplexWarning", Warning)


def isdtype(dtype, kind):
    """jnp.isdtype (the array API's): `kind` a dtype, a kind name ('bool', 'signed integer',
    'unsigned integer', 'integral', 'real floating', 'complex floating', 'numeric') or a
    tuple of them; bfloat16 is a real floating type."""
    d = np.dtype(dtype)
    kinds = kind if isinstance(kind, tuple) else (kind,)
    floating_ = d.kind == "f" or d == _BFLOAT16
    table = {"bool": d.kind == "b", "signed integer": d.kind == "i",
             "unsigned integer": d.kind == "u", "integral": d.kind in "iu",
             "real floating": floating_, "complex floating": d.kind == "c",
             "numeric": d.kind in "iuc" or floating_}
    for k in kinds:
        if isinstance(k, str):
            if k not in table:
                raise ValueError(f"Unrecognized data type kind: {k!r}.")
            if table[k]:
                return True
        elif d == np.dtype(k):
            return True
    return False


class _Grid:
    """jnp.mgrid and ogrid: NumPy's index grids as Arrays."""

    def __init__(self, grid):
        self._grid = grid

    def __getitem__(self, key):
        out = self._grid[key]
        if isinstance(out, (list, tuple)):
            return [jnp.asarray(_canonical_host(o)) for o in out]
        return jnp.asarray(_canonical_host(out))


def _canonical_host(x):
    x = np.asarray(x)
    return x.astype(np.int32) if x.dtype == np.int64 else \
        x.astype(np.float32) if x.dtype == np.float64 else x


class _Concatenator:
    """jnp.r_ and c_: NumPy's index-expression concatenation of host data, as an Array."""

    def __init__(self, concatenator):
        self._c = concatenator

    def __getitem__(self, key):
        key = key if isinstance(key, tuple) else (key,)
        host = tuple(np.asarray(k) if isinstance(k, (Array, Tensor)) else k for k in key)
        return jnp.asarray(_canonical_host(self._c[host]))


mgrid, ogrid = _Grid(np.mgrid), _Grid(np.ogrid)
r_, c_ = _Concatenator(np.r_), _Concatenator(np.c_)


# --- a fourth batch: exponentials, windows, polynomials and statistics ---

exp2 = _op(lambda a: _t.rpower(_float(a), 2.0))  # 2 ** x, the C library's pow


def _logaddexp2(x1, x2):
    """JAX's: max + log1p(2^-|x1 - x2|) / ln 2, or x1 + x2 where that difference is NaN."""
    x1, x2 = _beside(x1, x2), _beside(x2, x1)  # a Python scalar beside the other (logaddexp's)
    x1, x2 = _float(x1), _float(x2)
    amax = _t.maximum(x1, x2)
    delta = x1 - x2
    tail = _t.log1p(_t.rpower(-_t.abs(delta), 2.0)) * float(1 / np.log(2))
    return _t.where(_t.isnan(delta), x1 + x2, amax + tail)


logaddexp2 = _op(_logaddexp2)


# The real cube root: one C++ op (kernels::Unary::kCbrt), the C library's as XLA's CPU code
# calls it, so its values are JAX's bit for bit.
cbrt = _op(lambda a: _t.cbrt(a))


def _window(M, formula):
    from ._core import default_float
    m = operator.index(M)
    if m <= 1:
        return jnp.ones((builtins.max(m, 0),), default_float())
    n = jnp.arange(m, dtype=default_float())
    return formula(n, m)


def hamming(M):
    return _window(M, lambda n, m: 0.54 - 0.46 * jnp.cos(2 * np.pi * n / (m - 1)))


def hanning(M):
    return _window(M, lambda n, m: 0.5 * (1 - jnp.cos(2 * np.pi * n / (m - 1))))


def blackman(M):
    return _window(M, lambda n, m: 0.42 - 0.5 * jnp.cos(2 * np.pi * n / (m - 1)) +
                   0.08 * jnp.cos(4 * np.pi * n / (m - 1)))


def bartlett(M):
    return _window(M, lambda n, m: 1 - jnp.abs(2 * n + 1 - m) / (m - 1))


def vander(x, N=None, increasing=False):  # noqa: N803 - jax.numpy's name
    """jnp.vander: the powers of x, highest first unless increasing."""
    x = jnp.asarray(x) if not isinstance(x, (Array, Tensor)) else x
    if len(x.shape) != 1:
        raise ValueError("x must be a one-dimensional array")
    n = x.shape[0] if N is None else operator.index(N)
    if n < 0:
        raise ValueError("N must be nonnegative")
    powers = np.arange(n)[::-1] if not increasing else np.arange(n)
    iota = jnp.asarray(powers.astype(_host_dtype(x.dtype)))
    return jnp.power(jnp.expand_dims(x, -1), iota)


def _host_dtype(dtype):
    d = np.dtype(dtype)
    return d if d != _BFLOAT16 else np.float32


def angle(z, deg=False):
    """jnp.angle of a real array: π for a negative value or -0, 0 otherwise, NaN kept."""
    z = jnp.asarray(z) if not isinstance(z, (Array, Tensor)) else z
    out = jnp.where(signbit(z), np.pi, 0.0)
    out = jnp.astype(out, _inexact_of(z))
    out = jnp.where(jnp.isnan(z), z, out) if np.dtype(z.dtype).kind == "f" else out
    return out * (180 / np.pi) if deg else out


def _inexact_of_dtype(d):
    """d when it is a floating dtype, else the default float."""
    d = np.dtype(d)
    return d if d.kind == "f" or d == _BFLOAT16 else np.dtype(_default_float())


def _inexact_of(z):
    """z's dtype when it is floating, else the default float (JAX's promote_args_inexact)."""
    d = np.dtype(z.dtype)
    return d if d.kind == "f" or d == _BFLOAT16 else np.dtype(_default_float())


def ldexp(x1, x2):
    """jnp.ldexp: x1 * 2**x2 (two steps where 2**x2 alone would overflow or flush)."""
    x2 = jnp.asarray(x2) if not isinstance(x2, (Array, Tensor)) else x2
    x1 = jnp.asarray(x1) if not isinstance(x1, (Array, Tensor)) else x1
    d = _inexact_of(x1)
    half = jnp.floor_divide(x2, 2)
    return jnp.astype(x1, d) * jnp.power(2.0, jnp.astype(half, d)) * \
        jnp.power(2.0, jnp.astype(x2 - half, d))


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """jnp.cross of 3-vectors along the last axes."""
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = jnp.moveaxis(a, axisa, -1), jnp.moveaxis(b, axisb, -1)
    if np.shape(a)[-1] != 3 or np.shape(b)[-1] != 3:
        raise ValueError("spmd.numpy.cross: vectors of 3 components only")
    a0, a1, a2 = (jnp.take(a, np.int32(k), axis=-1) for k in range(3))
    b0, b1, b2 = (jnp.take(b, np.int32(k), axis=-1) for k in range(3))
    out = jnp.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)
    return jnp.moveaxis(out, -1, axisc)


def cov(m, y=None, rowvar=True, bias=False, ddof=None):
    """jnp.cov without weights: the rows (columns if not rowvar) as variables."""
    x = atleast_2d(m)
    if not rowvar and np.shape(x)[0] != 1:
        x = jnp.transpose(x)
    if y is not None:
        y = atleast_2d(y)
        if not rowvar and np.shape(y)[0] != 1:
            y = jnp.transpose(y)
        x = jnp.concatenate([x, y], axis=0)
    x = jnp.astype(x, _inexact_of(x))
    ddof = (0 if bias else 1) if ddof is None else ddof
    n = np.shape(x)[1]
    centered = x - jnp.mean(x, axis=1, keepdims=True)
    return jnp.squeeze(jnp.matmul(centered, jnp.transpose(centered)) / (n - ddof))


def corrcoef(x, y=None, rowvar=True):
    c = cov(x, y, rowvar)
    if np.ndim(c) == 0:
        return c / c
    d = jnp.diagonal(c)
    std = jnp.sqrt(d)
    return jnp.clip(c / jnp.expand_dims(std, 1) / jnp.expand_dims(std, 0), -1, 1)


def gradient(f, *varargs, axis=None, edge_order=1):
    """jnp.gradient with unit or scalar spacing: central differences inside, one-sided ones at
    the edges (edge_order 1)."""
    f = jnp.asarray(f) if not isinstance(f, (Array, Tensor)) else f
    rank = len(f.shape)
    axes = list(range(rank)) if axis is None else [operator.index(a) % rank
                                                   for a in np.atleast_1d(axis)]
    spacing = list(varargs) if varargs else [1.0] * len(axes)
    if len(spacing) == 1 and len(axes) > 1:
        spacing = spacing * len(axes)
    if edge_order != 1 or any(np.ndim(h) for h in spacing):
        raise NotImplementedError("spmd.numpy.gradient: scalar spacings and edge_order=1 only")
    out = []
    for ax, h in zip(axes, spacing):
        n = f.shape[ax]
        if n < 2:
            raise ValueError("Shape of array too small to calculate a numerical gradient, at "
                             "least (edge_order + 1) elements are required.")
        take = lambda idx: jnp.take(f, np.asarray(idx, np.int32), axis=ax)  # noqa: E731
        inner = (take(range(2, n)) - take(range(0, n - 2))) / (2.0 * h)
        first = (take([1]) - take([0])) / h
        last = (take([n - 1]) - take([n - 2])) / h
        out.append(jnp.concatenate([first, inner, last], axis=ax))
    return out[0] if len(out) == 1 else out


def insert(arr, obj, values, axis=None):
    """jnp.insert of values before one static index."""
    a = jnp.ravel(arr) if axis is None else arr
    axis = 0 if axis is None else operator.index(axis) % np.ndim(a)
    n = np.shape(a)[axis]
    if not isinstance(obj, (int, np.integer)):
        raise NotImplementedError("spmd.numpy.insert: one integer index only")
    k = operator.index(obj)
    if not -n <= k <= n:
        raise IndexError(f"index {k} is out of bounds for axis {axis} with size {n}")
    k %= n + 1
    shape = list(np.shape(a))
    shape[axis] = 1
    v = jnp.astype(jnp.broadcast_to(values, tuple(shape)) if np.ndim(values) <= 1
                   else values, a.dtype)
    head = jnp.take(a, np.arange(0, k, dtype=np.int32), axis=axis)
    tail = jnp.take(a, np.arange(k, n, dtype=np.int32), axis=axis)
    return jnp.concatenate([head, v, tail], axis=axis)


__all__ = [n for n in dir() if not n.startswith("_") and n not in (
    "builtins", "operator", "np", "jnp", "Array", "Tensor")]
