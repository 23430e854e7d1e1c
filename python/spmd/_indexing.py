"""NumPy indexing on Arrays and traced values, as jax.Array's __getitem__ and .at[] take it:
integers, slices (any step), None, Ellipsis and one integer array (or list) of indices. A static
index out of range is NumPy's IndexError, where JAX clamps it without a word (a traced index
array cannot be checked, and is clamped as JAX's). Each
index becomes static slices, reshapes and at most one take (spmd.numpy's), so gradients flow as
JAX's do through those. x.at[idx].set/add/multiply/min/max/get take the same indices without an
integer array: the update is placed into x's shape by padding and selected in."""
import builtins
import operator

import numpy as np

from . import _spmd
from . import numpy as jnp
from ._core import Array, Tensor


def _is_int(x):
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def _is_index_array(x):
    if isinstance(x, (list, tuple)):
        return True
    if isinstance(x, (np.ndarray, Array, Tensor)):
        kind = np.dtype(x.dtype).kind if not str(x.dtype) == "bfloat16" else "f"
        if kind == "b":
            raise IndexError("boolean mask indexing gives a shape that depends on the values, "
                             "which a compiled program cannot have; use spmd.numpy.where")
        if kind not in "iu":
            raise IndexError(f"Indexer must have integer or boolean type, got indexer with type "
                             f"{x.dtype}")
        return True
    return False


def _expand(index, rank):
    """The index as a tuple with Ellipsis expanded to full slices (None kept)."""
    if not isinstance(index, tuple):
        index = (index,)
    if builtins.sum(1 for i in index if i is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    used = builtins.sum(1 for i in index if i is not None and i is not Ellipsis)
    if used > rank:
        raise IndexError(f"Too many indices: {rank}-dimensional array, but {used} were indexed")
    out = []
    for i in index:
        if i is Ellipsis:
            out.extend([slice(None)] * (rank - used))
        else:
            out.append(i)
    if not builtins.any(i is Ellipsis for i in index):
        out.extend([slice(None)] * (rank - used))
    return out


def getitem(x, index):
    """x[index] (jax.Array.__getitem__ for the index kinds this module takes)."""
    shape = tuple(x.shape)
    parts = _expand(index, len(shape))
    arrays = [i for i, p in enumerate(parts) if _is_index_array(p)]
    if len(arrays) > 1:
        raise NotImplementedError("spmd: indexing with more than one integer array (NumPy's "
                                  "advanced indexing) is not supported; index one axis at a time")
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
    y = _slice(x, tuple(start), tuple(stop))
    for axis, st in enumerate(step):
        if st != 1:
            y = _strided(y, axis, st)
    kept = [s for s, k in zip(_shape_after(start, stop, step), keep) if k]
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


def _checked(index, n, dim):
    """A static index counted from the end when negative; one out of range is NumPy's
    IndexError (JAX clamps it without a word, and spmd refuses what would answer wrongly)."""
    i = operator.index(index)
    if not -n <= i < n:
        raise IndexError(f"index {i} is out of bounds for axis {dim} with size {n} (JAX would "
                         "clamp it into the axis without a word)")
    return i % n


def _shape_after(start, stop, step):
    return [len(range(0, hi - lo, abs(st))) if hi > lo else 0
            for lo, hi, st in zip(start, stop, step)]


def _slice(x, start, stop):
    from ._numpy_composed import _slice as s
    return s(x, start, stop)


def _strided(y, axis, st):
    """Every |st|-th element along `axis` (reversed for a negative step): a take of static
    indices."""
    idx = np.arange(0, y.shape[axis], abs(st), dtype=np.int32)
    return jnp.take(y, idx if st > 0 else idx[::-1].copy(), axis=axis, mode="clip")


class _At:
    """x.at: x.at[idx] is an _AtIndex."""

    def __init__(self, x):
        self._x = x

    def __getitem__(self, index):
        return _AtIndex(self._x, index)


class _AtIndex:
    """jax's _IndexUpdateRef for static integers, slices of step 1, Ellipsis and None-free
    indices: set, add, multiply (mul), min, max, get; and add at an integer array indexing the
    leading axis of a floating array (a scatter-add: repeated indices add up, indices out of
    range are dropped, as JAX's)."""

    def __init__(self, x, index):
        self._x, self._index = x, index

    def get(self, **kwargs):
        return getitem(self._x, self._index)

    def _region(self):
        shape = tuple(self._x.shape)
        parts = _expand(self._index, len(shape))
        start, stop, region = [], [], []
        for dim, (p, n) in enumerate(zip(parts, shape)):
            if p is None or _is_index_array(p):
                raise NotImplementedError("spmd: .at[] with None or an integer array is not "
                                          "supported here (static integers and slices are; "
                                          ".add takes an integer array on the leading axis)")
            if _is_int(p):
                i = operator.index(p)
                if not -n <= i < n:
                    raise IndexError(f"index {i} is out of bounds for axis {dim} with size {n}")
                start.append(i % n), stop.append(i % n + 1)
            elif isinstance(p, slice):
                lo, hi, st = p.indices(n)
                if st != 1:
                    raise NotImplementedError("spmd: .at[] with a slice step other than 1 is "
                                              "not supported")
                start.append(lo), stop.append(builtins.max(hi, lo))
                region.append(builtins.max(hi, lo) - lo)
            else:
                raise IndexError(f"invalid index for .at[]: {p!r}")
        return start, stop, parts

    def _placed(self, values, fill):
        """(values broadcast to the indexed region and padded with `fill` to x's shape, the mask
        of the region)."""
        x = self._x
        shape = tuple(x.shape)
        start, stop, parts = self._region()
        region = [hi - lo for lo, hi in zip(start, stop)]
        dropped = [i for i, p in enumerate(parts) if _is_int(p)]
        kept = [s for i, s in enumerate(region) if i not in dropped]
        v = jnp.astype(jnp.broadcast_to(values, tuple(kept)), x.dtype)
        v = jnp.reshape(v, tuple(region))
        mask = jnp.ones(tuple(region), bool)
        for axis, (lo, hi, n) in enumerate(zip(start, stop, shape)):
            v = _pad(v, axis, lo, n - hi, fill)
            mask = _pad(mask, axis, lo, n - hi, False)
        return v, mask

    def set(self, values, **kwargs):
        v, mask = self._placed(values, 0)
        return jnp.where(mask, v, self._x)

    def _leading_index_array(self):
        """The integer array indexing the leading axis, when the index is one (alone, or
        followed by whole slices and Ellipsis); else None."""
        parts = self._index if isinstance(self._index, tuple) else (self._index,)
        if not parts or isinstance(parts[0], tuple) or not _is_index_array(parts[0]):
            return None
        rest = parts[1:]
        if not all(p is Ellipsis or (isinstance(p, slice) and p == slice(None)) for p in rest):
            return None
        return np.asarray(parts[0]) if isinstance(parts[0], list) else parts[0]

    def add(self, values, **kwargs):
        indices = self._leading_index_array()
        if indices is not None:  # a scatter-add (numpy.add_at); dropped out of range, as JAX's
            if not isinstance(values, (Array, Tensor)):
                values = jnp.asarray(values, dtype=self._x.dtype)
            return _add_at(self._x, indices, values)
        v, _ = self._placed(values, 0)
        return self._x + v

    def multiply(self, values, **kwargs):
        v, _ = self._placed(values, 1)
        return self._x * v

    mul = multiply

    def min(self, values, **kwargs):  # noqa: A003 - jax's name
        v, mask = self._placed(values, 0)
        return jnp.where(mask, jnp.minimum(self._x, v), self._x)

    def max(self, values, **kwargs):  # noqa: A003
        v, mask = self._placed(values, 0)
        return jnp.where(mask, jnp.maximum(self._x, v), self._x)


_add_at = jnp._op(lambda a, i, v: _spmd.tnp.add_at(a, i, v), arrays=(0, 1, 2))
_add_at.public_name = "spmd.Array.at[].add"


def _pad(v, axis, before, after, fill):
    """v with `before` and `after` elements of `fill` around it along `axis`."""
    pieces = []
    shape = list(v.shape)
    if before:
        pieces.append(jnp.full(tuple(shape[:axis] + [before] + shape[axis + 1:]), fill,
                               v.dtype))
    pieces.append(v)
    if after:
        pieces.append(jnp.full(tuple(shape[:axis] + [after] + shape[axis + 1:]), fill, v.dtype))
    return pieces[0] if len(pieces) == 1 else jnp.concatenate(pieces, axis=axis)


def at(x):
    return _At(x)
