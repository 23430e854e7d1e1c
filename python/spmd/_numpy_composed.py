"""jax.numpy's functions that jax.numpy itself composes of others: creation (the *_like family,
linspace, eye), shapes (split, tile, repeat, ravel), products (outer, tensordot), take,
nan_to_num. Each is composed here exactly as jax/_src/numpy composes it, of spmd.numpy's
functions on traced values, so its rounding is JAX's; spmd.numpy re-exports them. And prod:
spmd::numpy::prod (a reduction of the core's own) behind jnp.prod's dtype argument."""
import builtins
import operator

import numpy as np

from . import _arguments, _jit, _spmd
from . import numpy as jnp
from ._core import Array, Tensor, _bytes
from ._core import canonical_name as _canonical_name
from ._core import default_float as _default_float

_t = _spmd.tnp
_op = jnp._op


# --- creation ---

def _like(fill):
    def like(a, dtype=None, shape=None):
        jnp._check_arraylike_one(like.__name__, a)
        dtype = a.dtype if dtype is None and hasattr(a, "dtype") else (
            dtype if dtype is not None else np.asarray(a).dtype)
        shape = np.shape(a) if shape is None else shape
        return jnp.full(shape, fill, dtype)
    return like


zeros_like = _like(0)
ones_like = _like(1)
empty_like = _like(0)  # JAX's empty arrays are zeros
zeros_like.__name__, ones_like.__name__, empty_like.__name__ = "zeros_like", "ones_like", \
    "empty_like"


def full_like(a, fill_value, dtype=None, shape=None):
    """jnp.full_like: fill_value in a's shape and dtype (or the ones given)."""
    jnp._check_arraylike_one("full_like", a)
    dtype = a.dtype if dtype is None and hasattr(a, "dtype") else (
        dtype if dtype is not None else np.asarray(a).dtype)
    return jnp.full(np.shape(a) if shape is None else shape, fill_value, dtype)


def empty(shape, dtype=None):
    return jnp.zeros(shape, dtype)


def _inexact(dtype):
    d = np.dtype(dtype)
    return d if d.kind == "f" or d.name == "bfloat16" else np.dtype(_default_float())


def _linspace_traced(start, stop, num, endpoint, dtype, computation):
    """JAX's _linspace for scalar bounds: start * (1 - step) + stop * step, step = iota / div in
    the computation dtype, the stop appended when `endpoint`; floored for an integer dtype."""
    name = _canonical_name(computation)
    start, stop = _t.astype(start, name), _t.astype(stop, name)
    div = (num - 1) if endpoint else num
    if num > 1:
        # As XLA's simplifier rewrites JAX's start * (1 - iota / div) + stop * (iota / div):
        # the division a product by the reciprocal, and stop's product reassociated to
        # iota * (stop * reciprocal); and as LLVM contracts the last addition with that product
        # into one rounding (_linspace_host's fused step). The same operations, for the same
        # rounding: linspace(-2.421833, 2.3835921, 11)'s second value was an ulp off JAX's.
        from ._fused import fma
        inverse = _t.full([], float(np.asarray(1, computation) / np.asarray(div, computation)),
                          name)
        iota = _t.astype(_t.arange(div, "int32"), name)
        head = _t.reshape(start, [1]) * (1 - iota * inverse)
        out = fma(iota, _t.broadcast_to(_t.reshape(stop * inverse, [1]), [div]), head)
        if endpoint:
            out = _t.concatenate([out, _t.reshape(stop, [1])], 0)
    elif num == 1:
        out = _t.reshape(start, [1])
    else:
        out = _t.full([0], 0, name)
    if np.dtype(dtype).kind in "iu":
        out = _t.floor(out)
    return _t.astype(out, _canonical_name(dtype))


def _linspace_fn(start, stop, num=50, endpoint=True, dtype=None):
    return _linspace_traced(start, stop, num, endpoint, dtype, _inexact(dtype))


_linspace = _op(_linspace_fn, arrays=(0, 1))


def _linspace_host(start, stop, num, endpoint, dtype):
    """JAX's float32 linspace of host bounds as XLA's CPU code computes it: the last addition
    fused with the product before it (iota * (stop * c) + start * (1 - iota * c), one rounding),
    which spmd's element-wise operations have no primitive for. The fused step is exact in
    float64 (a product of two float32 values is exact there) and rounds once to float32."""
    div = (num - 1) if endpoint else num
    if num > 1:
        c = np.float32(1) / np.float32(div)
        iota = np.arange(div, dtype=np.float32)
        head = start * (np.float32(1) - iota * c)
        out = (iota.astype(np.float64) * np.float64(stop * c) +
               head.astype(np.float64)).astype(np.float32)
        if endpoint:
            out = np.concatenate([out, [stop]]).astype(np.float32)
    elif num == 1:
        out = np.array([start], np.float32)
    else:
        out = np.zeros([0], np.float32)
    if dtype.kind in "iu":
        out = np.floor(out)
    return out.astype(jnp._dtype_of(_canonical_name(dtype)))


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    """jnp.linspace for scalar start and stop (JAX's formula, so its values to the bit)."""
    num = operator.index(num)
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    if retstep or axis != 0 or np.ndim(start) or np.ndim(stop):
        raise NotImplementedError("spmd.numpy.linspace: scalar start and stop, axis=0, no "
                                  "retstep (array bounds are not yet supported)")
    if dtype is None:
        kinds = [None if isinstance(x, (int, float, bool)) else
                 np.dtype(x.dtype) if hasattr(x, "dtype") else np.asarray(x).dtype
                 for x in (start, stop)]  # a traced bound's dtype from its type
        dtype = next((k for k in kinds if k is not None and k.kind == "f"), None) or \
            _default_float()
    dtype = np.dtype(dtype)
    computation = _inexact(dtype)
    if computation == np.float32 and not _jit.tracing() and \
            not isinstance(start, (Array, Tensor)) and not isinstance(stop, (Array, Tensor)):
        return jnp.asarray(_linspace_host(np.float32(start), np.float32(stop), num,
                                          bool(endpoint), dtype))
    if not isinstance(start, Tensor):
        start = jnp.asarray(start, computation)
    if not isinstance(stop, Tensor):
        stop = jnp.asarray(stop, computation)
    return _linspace(start, stop, num=num, endpoint=bool(endpoint), dtype=dtype)


def eye(N, M=None, k=0, dtype=None):  # noqa: N803 - jax.numpy's names
    """jnp.eye: ones on the k-th diagonal of an N x M array."""
    n = operator.index(N)
    m = n if M is None else operator.index(M)
    k = operator.index(k)
    if n < 0 or m < 0:
        raise ValueError(f"negative dimensions are not allowed, got {n} and {m}")
    dtype = _default_float() if dtype is None else dtype
    host = np.eye(n, m, k, dtype=np.dtype(jnp._dtype_of(_canonical_name(dtype))))
    if _jit.tracing():
        return _t.constant(*_bytes(host))
    return jnp.asarray(host)


def identity(n, dtype=None):
    return eye(n, dtype=dtype)


# --- shapes ---

ravel = _op(lambda a: _t.reshape(a, [-1]))


def _split_points(n, sections, name):
    if isinstance(sections, (int, np.integer)):
        sections = operator.index(sections)
        if sections <= 0 or n % sections:
            raise ValueError("array split does not result in an equal division" if sections > 0
                             else f"{name}: number sections must be larger than 0.")
        step = n // sections
        return [i * step for i in range(1, sections)]
    return [operator.index(i) for i in sections]


def split(ary, indices_or_sections, axis=0):
    """jnp.split: equal sections (an int) or the pieces between the given indices."""
    jnp._check_arraylike_one("split", ary)
    a = ary if isinstance(ary, (Array, Tensor)) else jnp.asarray(ary)
    axis = operator.index(axis)
    rank = len(a.shape)
    if not -rank <= axis < rank:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {rank}")
    axis %= rank
    n = a.shape[axis]
    points = [0] + _split_points(n, indices_or_sections, "split") + [n]
    pieces = []
    for lo, hi in zip(points[:-1], points[1:]):
        lo, hi = builtins.min(builtins.max(lo if lo >= 0 else lo + n, 0), n), \
            builtins.min(builtins.max(hi if hi >= 0 else hi + n, 0), n)
        start = [0] * rank
        stop = list(a.shape)
        start[axis], stop[axis] = lo, builtins.max(hi, lo)
        pieces.append(_slice(a, tuple(start), tuple(stop)))
    return pieces


_slice = _op(lambda a, start, stop: _t.slice(a, list(start), list(stop)), arrays=(0,))


def _tile(a, reps):
    reps = (reps,) if isinstance(reps, (int, np.integer)) else tuple(reps)
    rank = builtins.max(len(a.shape), len(reps))
    shape = (1,) * (rank - len(a.shape)) + tuple(a.shape)
    reps = (1,) * (rank - len(reps)) + reps
    x = _t.reshape(a, list(shape))
    # Each dimension d of size s becomes (reps[d], s), broadcast, then merged.
    wide = []
    for r, s in zip(reps, shape):
        wide += [r, s]
    x = _t.reshape(x, [v for s in shape for v in (1, s)])
    x = _t.broadcast_to(x, wide)
    return _t.reshape(x, [r * s for r, s in zip(reps, shape)])


tile = _op(_tile, arrays=(0,))


def _repeat(a, repeats, axis=None):
    if not isinstance(repeats, (int, np.integer)):
        raise NotImplementedError("spmd.numpy.repeat: an integer `repeats` (an array of them "
                                  "is not yet supported)")
    repeats = operator.index(repeats)
    if axis is None:
        a, axis = _t.reshape(a, [-1]), 0
    axis = operator.index(axis) % builtins.max(len(a.shape), 1)
    shape = list(a.shape)
    x = _t.expand_dims(a, axis + 1)
    x = _t.broadcast_to(x, shape[:axis + 1] + [repeats] + shape[axis + 1:])
    return _t.reshape(x, shape[:axis] + [shape[axis] * repeats] + shape[axis + 1:])


repeat = _op(_repeat, arrays=(0,))


# --- products and reductions ---

def _outer(a, b):
    return _t.reshape(a, [-1, 1]) * _t.reshape(b, [1, -1])


outer = _op(_outer)


def _tensordot(a, b, axes=2):
    if isinstance(axes, (int, np.integer)):
        n = operator.index(axes)
        left, right = list(range(len(a.shape) - n, len(a.shape))), list(range(n))
    else:
        left, right = ([operator.index(x)] if isinstance(x, (int, np.integer)) else
                       [operator.index(i) for i in x] for x in axes)
    letters = iter("abcdefghijklmnopqrstuvwxyz")
    sa = [next(letters) for _ in a.shape]
    sb = [next(letters) for _ in b.shape]
    for i, j in zip(left, right):
        sb[j] = sa[i]
    out = [c for k, c in enumerate(sa) if k not in {i % len(sa) for i in left}] + \
        [c for k, c in enumerate(sb) if k not in {j % len(sb) for j in right}]
    return _t.einsum(f"{''.join(sa)},{''.join(sb)}->{''.join(out)}", a, b)


_tensordot_op = _op(_tensordot, arrays=(0, 1))


def tensordot(a, b, axes=2):
    """jnp.tensordot: a's last `axes` dimensions (an int) or the listed ones against b's."""
    if not isinstance(axes, (int, np.integer)):
        axes = tuple(operator.index(x) if isinstance(x, (int, np.integer)) else
                     tuple(operator.index(i) for i in x) for x in axes)
    return _tensordot_op(a, b, axes=axes)


def _nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    if not (x.dtype.kind == "f" or x.dtype.name == "bfloat16"):
        return x
    info = np.finfo(x.dtype) if x.dtype.kind == "f" else None
    big = float(info.max) if info is not None else 3.3895313892515355e38
    posinf = big if posinf is None else posinf
    neginf = -big if neginf is None else neginf
    out = _t.where(_t.isnan(x), float(nan), x)
    out = _t.where(_t.equal(out, float("inf")), float(posinf), out)
    return _t.where(_t.equal(out, float("-inf")), float(neginf), out)


nan_to_num = _op(_nan_to_num, arrays=(0,))


def _take(a, indices, axis=None, mode=None):
    """jnp.take (spmd::numpy::take): mode "fill", JAX's default, or "clip" (an index counted
    from the end once, then clamped into the axis, as indexing with [] does)."""
    if mode not in (None, "fill", "clip"):
        raise NotImplementedError(f"spmd.numpy.take: mode={mode!r} ('fill', JAX's default, and "
                                  "'clip' are supported)")
    if mode == "clip":
        if axis is None:
            a, axis = _t.reshape(a, [-1]), 0
        return _t.take_clipped(a, indices, operator.index(axis))
    return _t.take(a, indices, None if axis is None else operator.index(axis))


take = _op(_take, arrays=(0, 1))


def _prod(a, axis=None, dtype=None, keepdims=False):
    """jnp.prod: spmd::numpy::prod over `axis` (bool and narrow integers in 32 bits, half types
    in float32 and rounded once), after a cast to `dtype` where one is given; axis=() is the
    product over a new axis of one element, as jnp.sum's."""
    if dtype is not None:
        a = _t.astype(a, _canonical_name(dtype))
    axes = _arguments.axis_list(axis)
    if axis is not None and not axes:
        return _t.prod(_t.expand_dims(a, 0), [0], False)
    return _t.prod(a, axes, keepdims)


prod = _op(_prod, arrays=(0,))


def ndim(a):
    return len(np.shape(a))


def shape(a):
    return tuple(np.shape(a))


def size(a, axis=None):
    s = np.shape(a)
    return int(np.prod(s, dtype=np.int64)) if axis is None else s[axis]


__all__ = ["empty", "empty_like", "eye", "full_like", "identity", "linspace", "ndim",
           "nan_to_num", "ones_like", "outer", "prod", "ravel", "repeat", "shape", "size",
           "split", "take", "tensordot", "tile", "zeros_like"]


# --- padding and gathers along an axis ---

def _pad_widths(pad_width, rank):
    """np.pad's pad_width as one (before, after) pair per axis."""
    widths = np.asarray(pad_width, dtype=object)
    if widths.ndim == 0:
        widths = np.full((rank, 2), widths.item(), dtype=object)
    elif widths.shape == (1,) or widths.shape == (2,):
        widths = np.broadcast_to(widths.reshape(1, -1), (rank, 2)) if widths.shape == (2,) \
            else np.full((rank, 2), widths[0], dtype=object)
    elif widths.shape == (1, 2):
        widths = np.broadcast_to(widths, (rank, 2))
    if widths.shape != (rank, 2):
        raise ValueError(f"jnp.pad: pad_width with shape {np.shape(pad_width)} does not fit an "
                         f"array of rank {rank}")
    out = [(operator.index(b), operator.index(a)) for b, a in widths]
    if builtins.any(b < 0 or a < 0 for b, a in out):
        raise ValueError(f"index can't contain negative values, got {pad_width}")
    return out


def _pad(array, pad_width, mode="constant", constant_values=0):
    if mode != "constant":
        raise NotImplementedError(f"spmd.numpy.pad: mode={mode!r} (only 'constant' is "
                                  "supported)")
    if not isinstance(constant_values, (bool, int, float)):
        raise NotImplementedError("spmd.numpy.pad: a scalar constant_values only")
    out = array
    name = _canonical_name(array.dtype)
    for axis, (before, after) in enumerate(_pad_widths(pad_width, len(array.shape))):
        pieces = []
        shape = list(out.shape)
        if before:
            pieces.append(_t.full(shape[:axis] + [before] + shape[axis + 1:], constant_values,
                                  name))
        pieces.append(out)
        if after:
            pieces.append(_t.full(shape[:axis] + [after] + shape[axis + 1:], constant_values,
                                  name))
        if len(pieces) > 1:
            out = _t.concatenate(pieces, axis)
    return out


_pad_op = _op(_pad, arrays=(0,))


def pad(array, pad_width, mode="constant", **kwargs):
    """jnp.pad in its "constant" mode: each axis grown by (before, after) elements of
    constant_values (0 by default)."""
    if not isinstance(pad_width, (int, np.integer)):
        pad_width = tuple(tuple(p) if isinstance(p, (list, tuple, np.ndarray)) else p
                          for p in np.asarray(pad_width, dtype=object).tolist()) \
            if np.ndim(pad_width) else int(pad_width)
    return _pad_op(array, pad_width, mode=mode, **kwargs)


def _take_along_axis(arr, indices, axis):
    """jnp.take_along_axis in its default mode ("fill"): arr's elements at `indices` along
    `axis`, the other dimensions broadcast between the two. One take of the flattened array."""
    if axis is None:
        arr, axis = _t.reshape(arr, [-1]), 0
    rank = len(arr.shape)
    if len(indices.shape) != rank:
        raise ValueError(f"indices and arr must have the same number of dimensions; "
                         f"{len(indices.shape)} vs. {rank}")
    axis = operator.index(axis)
    if not -rank <= axis < rank:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {rank}")
    axis %= rank
    n = arr.shape[axis]
    outer = [builtins.max(a, b) for d, (a, b) in enumerate(zip(arr.shape, indices.shape))
             if d != axis]
    k = indices.shape[axis]
    a = _t.moveaxis(arr, axis, -1)
    i = _t.moveaxis(_t.astype(indices, "int32"), axis, -1)
    a = _t.broadcast_to(a, outer + [n])
    i = _t.broadcast_to(i, outer + [k])
    rows = int(np.prod(outer, dtype=np.int64))
    i = _t.reshape(i, [rows, k])
    i = _t.where(_t.less(i, 0), i + n, i)
    inside = _t.logical_and(_t.greater_equal(i, 0), _t.less(i, n))
    offsets = _t.reshape(_t.arange(rows, "int32"), [rows, 1]) * n
    flat = _t.where(inside, i + offsets, rows * n)  # out of range: one past the end, filled
    out = _t.take(_t.reshape(a, [-1]), flat, 0)
    return _t.moveaxis(_t.reshape(out, outer + [k]), -1, axis)


take_along_axis = _op(_take_along_axis, arrays=(0, 1))
__all__ += ["pad", "take_along_axis"]


def unwrap(p, discont=None, axis=-1, period=2 * np.pi):
    """jnp.unwrap: p with each jump along `axis` larger than `discont` (period / 2 by default)
    replaced by its equivalent modulo `period`, JAX's composition (diff, mod, a cumulative sum of
    the corrections)."""
    _arguments.check_arraylike("unwrap", p)
    dtype = jnp.result_type(p, period)
    p, period = jnp.asarray(p, dtype), jnp.asarray(period, dtype)
    axis = operator.index(axis)
    if p.shape[axis] == 0:
        return p
    if discont is None:
        discont = period / 2
    integer = jnp.issubdtype(dtype, jnp.integer)
    interval = period // 2 if integer else period / 2
    dd = jnp.diff(p, axis=axis)
    ddmod = jnp.mod(dd + interval, period) - interval
    ddmod = jnp.where((ddmod == -interval) & (dd > 0), interval, ddmod)
    correction = jnp.where(jnp.abs(dd) < discont, 0, ddmod - dd)
    n = p.shape[axis]
    first = jnp.take(p, jnp.arange(1), axis=axis)
    rest = jnp.take(p, jnp.arange(1, n), axis=axis) + jnp.cumsum(correction, axis=axis)
    return jnp.concatenate((first, rest), axis=axis)


def trim_zeros(filt, trim="fb", axis=None):
    """jnp.trim_zeros: filt without its leading ('f') and trailing ('b') all-zero slices along
    each axis of `axis` (every axis by default). The result's shape depends on the values, so
    filt must be concrete (JAX's ConcretizationTypeError under jit)."""
    _arguments.check_arraylike("trim_zeros", filt)
    x = _arguments.concrete(filt, "the `filt` argument of trim_zeros(), whose values decide the "
                            "result's shape")
    axes = range(x.ndim) if axis is None else \
        [operator.index(a) % x.ndim for a in (axis if isinstance(axis, (tuple, list)) else [axis])]
    if not axes:
        return jnp.asarray(filt)
    if not isinstance(trim, str):  # JAX's AttributeError from trim.lower()
        raise TypeError(f"trim_zeros: trim must be a string of 'f' (front) and 'b' (back), not "
                        f"{trim!r}")
    trim = trim.lower()
    if "f" not in trim and "b" not in trim:
        return jnp.asarray(filt)
    index = [slice(None)] * x.ndim
    for ax in set(axes):
        kept = np.any(x != 0, axis=tuple(i for i in range(x.ndim) if i != ax))
        if not kept.any():
            index[ax] = slice(0, 0)
            continue
        start = int(np.argmax(kept)) if "f" in trim else None
        stop = x.shape[ax] - int(np.argmax(kept[::-1])) if "b" in trim else None
        index[ax] = slice(start, stop)
    return jnp.asarray(filt)[tuple(index)]


__all__ += ["trim_zeros", "unwrap"]
