"""NumPy indexing on Arrays and traced values, as jax.Array's __getitem__ takes it: integers,
slices (any step), None, Ellipsis, integer arrays (or lists) and concrete boolean masks. A static
index out of range is NumPy's IndexError, where JAX clamps it without a word (a traced index
array cannot be checked, and is clamped as JAX's). With at most one integer array the index
becomes static slices, reshapes and one take (spmd.numpy's); with several (NumPy's advanced
indexing) one take of the flattened array at the positions _index_positions works out. Gradients
flow as JAX's do through those. x.at[] is _at.py's."""
import builtins

import numpy as np

from . import numpy as jnp
from ._core import Tensor
from ._index_positions import checked as _checked
from ._index_positions import expand as _expand
from ._index_positions import is_index_array as _is_index_array
from ._index_positions import is_int as _is_int
from ._index_positions import positions


def getitem(x, index):
    """x[index] (jax.Array.__getitem__ for the index kinds this module takes)."""
    shape = tuple(x.shape)
    parts = _expand(index, len(shape))
    arrays = [i for i, p in enumerate(parts) if _is_index_array(p)]
    if len(arrays) > 1:
        return _gathered(x, parts)
    start, stop, step, keep, dim = [], [], [], [], 0
    out_shape, take_at, new_axes = [], None, []
    for p in parts:
        if p is None:
            new_axes.append(len(out_shape))
            out_shape.append(1)
            continue
        n = shape[dim]
        if _is_int(p):
            start.append(_checked(p, n, dim)), stop.append(start[-1] + 1), step.append(1)
            keep.append(False)
        elif isinstance(p, slice):
            lo, hi, st = p.indices(n)
            count = len(range(lo, hi, st))
            last = lo + (count - 1) * st  # the last element taken
            if not count:
                start.append(0), stop.append(0)
            elif st > 0:
                start.append(lo), stop.append(last + 1)
            else:
                start.append(last), stop.append(lo + 1)
            step.append(st), keep.append(True)
            out_shape.append(count)
        elif _is_index_array(p):
            if not isinstance(p, Tensor):
                for i in np.asarray(p).reshape(-1):
                    _checked(int(i), n, dim)
            start.append(0), stop.append(n), step.append(1), keep.append(True)
            take_at = (len(out_shape), p, dim)
            out_shape.append(None)
        else:
            raise IndexError(f"only integers, slices (`:`), ellipsis (`...`), None and integer "
                             f"arrays are valid indices, got {p!r}")
        dim += 1
    counts = _shape_after(start, stop, step)
    if builtins.any(st != 1 for st in step):
        # One pass reading every step at once (a slice, then a take a stepped axis, copied
        # the window first and read an index constant as large as the result).
        first = [hi - 1 if st < 0 and c else lo for lo, hi, st, c in zip(start, stop, step, counts)]
        y = _stepped(x, first, step, counts)
    else:
        y = _slice(x, tuple(start), tuple(stop))
    kept = [s for s, k in zip(counts, keep) if k]
    y = jnp.reshape(y, tuple(kept))
    if take_at is not None:
        kept_axis = builtins.sum(1 for k in keep[:take_at[2]] if k)
        y = jnp.take(y, take_at[1] if not isinstance(take_at[1], (list, tuple))
                     else np.asarray(take_at[1]), axis=kept_axis, mode="clip")
        index_rank = np.ndim(take_at[1]) if not hasattr(take_at[1], "shape") else \
            len(take_at[1].shape)
    else:
        index_rank = 0
    for pos in new_axes:
        y = jnp.expand_dims(y, pos + (index_rank - 1 if take_at is not None and
                                      pos > take_at[0] else 0))
    return y


def _shape_after(start, stop, step):
    return [len(range(0, hi - lo, abs(st))) if hi > lo else 0
            for lo, hi, st in zip(start, stop, step)]


def _slice(x, start, stop):
    from ._numpy_composed import _slice as s
    return s(x, start, stop)


def _stepped(x, first, step, counts):
    """x's elements first + i * step per dimension, counts of them (the dimensions beyond the
    index's whole)."""
    from ._numpy_extra import _strided_slice as strided_slice
    rank = len(x.shape)
    first = list(first) + [0] * (rank - len(first))
    step = list(step) + [1] * (rank - len(step))
    counts = list(counts) + list(x.shape[len(counts):])
    return strided_slice(x, first, step, counts)


def _gathered(x, parts):
    """x[parts] by one take of the flattened x at the positions the index selects."""
    where = positions(tuple(x.shape), tuple(parts), mode="raise")
    flat = jnp.take(jnp.reshape(x, (-1,)), jnp.reshape(where.flat, (-1,)), mode="clip")
    return jnp.reshape(flat, where.shape)
