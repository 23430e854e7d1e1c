"""x.at[index]: jax.Array's indexed updates (set, add, subtract, multiply, divide, power, min,
max, apply) and get, for every index x[index] takes: integers, slices of any step, None, Ellipsis,
integer arrays and concrete boolean masks. As JAX's scatter: x and the values promote, the
update applies in that dtype and the result has x's dtype; values broadcast to x[index].shape;
updates at a repeated position apply one after another in their order (set's last stays); an
index outside its axis is dropped (mode "fill"/"drop", the default) or clamped ("clip"). Three
routes, one answer: static integers and slices of step 1 place the values by padding and select
them in (element-wise, so a sharded x stays sharded); an integer array on the leading axis
followed by whole slices scatters whole rows; anything else scatters into the flattened x at
the positions _index_positions works out."""
import builtins
import operator

import numpy as np

from . import _spmd
from . import numpy as jnp
from ._core import Array, Tensor
from ._index_positions import expand, is_index_array, is_int, positions
from ._indexing import getitem

_MODES = {None: "drop", "fill": "drop", "drop": "drop", "promise_in_bounds": "drop",
          "clip": "clip"}


def _mode(mode):
    name = getattr(mode, "name", mode)
    name = name.lower() if isinstance(name, str) else name
    name = {"fill_or_drop": "fill"}.get(name, name)
    if name not in _MODES:
        raise ValueError(f'Unknown gather mode "{mode}"')
    return _MODES[name]


class _At:
    """x.at: x.at[idx] is an _AtIndex."""

    def __init__(self, x):
        self._x = x

    def __getitem__(self, index):
        return _AtIndex(self._x, index)


class _AtIndex:
    """jax's _IndexUpdateRef."""

    def __init__(self, x, index):
        self._x, self._index = x, index

    def __repr__(self):
        return f"_IndexUpdateRef({self._x!r}, {self._index!r})"

    def get(self, *, indices_are_sorted=False, unique_indices=False, mode=None, fill_value=None,
            out_sharding=None, wrap_negative_indices=True):
        if mode is None and fill_value is None and wrap_negative_indices:
            return getitem(self._x, self._index)
        x = self._x
        where = positions(tuple(x.shape), self._index, mode=_mode(mode),
                          wrap_negative=wrap_negative_indices)
        flat = jnp.reshape(where.flat, (-1,))
        taken = jnp.reshape(jnp.take(jnp.reshape(x, (-1,)), flat, mode="clip"), where.shape)
        if where.inside is None:
            return taken
        fill = _default_fill(x.dtype) if fill_value is None else fill_value
        return jnp.where(where.inside, taken, jnp.asarray(fill, dtype=x.dtype))

    def set(self, values, **kwargs):  # noqa: A003 - jax's name
        return self._update("set", values, **kwargs)

    def add(self, values, **kwargs):
        return self._update("add", values, **kwargs)

    def subtract(self, values, **kwargs):
        return self._update("add", values, negate=True, **kwargs)

    def multiply(self, values, **kwargs):
        return self._update("multiply", values, **kwargs)

    mul = multiply

    def divide(self, values, **kwargs):
        ones = _AtIndex(jnp.ones_like(self._x), self._index)
        return jnp.divide(self._x, ones._update("multiply", values, **kwargs))

    def power(self, values, **kwargs):
        ones = _AtIndex(jnp.ones_like(self._x), self._index)
        return jnp.power(self._x, ones._update("multiply", values, **kwargs))

    def min(self, values, **kwargs):  # noqa: A003 - jax's name
        return self._update("min", values, **kwargs)

    def max(self, values, **kwargs):  # noqa: A003
        return self._update("max", values, **kwargs)

    def apply(self, func, *, indices_are_sorted=False, unique_indices=False, mode=None,
              wrap_negative_indices=True):
        """func (element-wise, unary) applied at the indexed elements, once per time each is
        indexed, as JAX's scatter_apply: round k applies it where an element is indexed k
        times or more. The indices must be static (their repeats decide the rounds)."""
        x = self._x
        shape = tuple(x.shape)
        where = positions(shape, self._index, mode=_mode(mode),
                          wrap_negative=wrap_negative_indices)
        if where.traced:
            raise NotImplementedError("spmd: x.at[idx].apply takes static indices (NumPy "
                                      "arrays, lists, integers, slices): a traced index's "
                                      "repeats are not known while tracing")
        size = int(np.prod(shape, dtype=np.int64))
        flat = np.asarray(where.flat).reshape(-1)
        counts = np.bincount(flat[flat < size], minlength=size)
        out = jnp.reshape(x, (-1,))
        for k in range(1, int(counts.max(initial=0)) + 1):
            out = jnp.where(counts >= k, jnp.astype(func(out), x.dtype), out)
        return jnp.reshape(out, shape)

    def _values(self, values):
        """values as JAX's scatter takes them: a Python int that x's integer dtype holds takes
        that dtype; anything else becomes an array (a Python scalar weakly typed)."""
        x = self._x
        if isinstance(values, (Array, Tensor)):
            return values
        kind = np.dtype(str(x.dtype)).kind if str(x.dtype) != "bfloat16" else "f"
        if is_int(values) and kind in "iu":
            info = np.iinfo(np.dtype(str(x.dtype)))
            if info.min <= values <= info.max:
                return jnp.asarray(values, dtype=x.dtype)
        return values

    def _update(self, how, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
                out_sharding=None, wrap_negative_indices=True, negate=False):
        x = self._x
        mode = _mode(mode)
        values = self._values(values)
        dtype = jnp.result_type(x, values)
        if how in ("add", "multiply") and np.dtype(str(dtype)) == np.bool_:
            name = "sub" if negate else "add" if how == "add" else "mul"
            raise TypeError(f"{name} does not accept dtype bool at position 0. Accepted dtypes "
                            "at position 0 are subtypes of integer, floating, complexfloating.")
        values = jnp.asarray(values, dtype=dtype)
        if negate:  # x - v as x + (-v): the same in every dtype, integers wrapping alike
            values = jnp.negative(values)
        parts = expand(self._index, len(x.shape))
        basic = _basic_region(parts, tuple(x.shape), mode, wrap_negative_indices)
        if basic is not None:
            return _dense(how, x, values, basic, dtype) if basic else x
        rows = _leading_rows(parts)
        if rows is not None:
            if not wrap_negative_indices:  # a negative index is then out of range, not wrapped
                xp = np if isinstance(rows, np.ndarray) else jnp
                n = x.shape[0]
                rows = xp.clip(rows, 0, n - 1) if mode == "clip" else xp.where(rows < 0, n, rows)
            return _update_at(x, rows, values, how, mode == "clip", unique_indices)
        where = positions(tuple(x.shape), tuple(parts), mode=mode,
                          wrap_negative=wrap_negative_indices)
        flat_values = jnp.reshape(jnp.broadcast_to(values, where.shape), (-1,))
        out = _update_at(jnp.reshape(x, (-1,)), jnp.reshape(where.flat, (-1,)), flat_values, how,
                         False, unique_indices)
        return jnp.reshape(out, tuple(x.shape))


_update_at = jnp._op(lambda a, i, v, how, clip, unique:
                     _spmd.tnp.update_at(a, i, v, how, clip, unique), arrays=(0, 1, 2))
_update_at.public_name = "spmd.Array.at[]"


def _default_fill(dtype):
    """JAX's fill for an index out of range: NaN, the lowest signed and the highest unsigned
    integer, True."""
    name = str(dtype)
    if name == "bfloat16" or np.dtype(name).kind == "f":
        return np.nan
    if np.dtype(name).kind == "b":
        return True
    info = np.iinfo(np.dtype(name))
    return info.min if info.min < 0 else info.max


def _basic_region(parts, shape, mode, wrap):
    """For an index of static integers, slices of step 1 and no None: [(start, stop, kept)] per
    axis, [] when an integer lies outside its axis and the update drops; None for other
    indices."""
    region = []
    for p, n in zip(parts, shape):
        if is_int(p):
            i = operator.index(p)
            if i < 0 and wrap:
                i += n
            if not 0 <= i < n:
                if mode != "clip":
                    return []
                i = builtins.min(builtins.max(i, 0), n - 1)
            region.append((i, i + 1, False))
        elif isinstance(p, slice) and p.indices(n)[2] == 1:
            lo, hi, _ = p.indices(n)
            region.append((lo, builtins.max(hi, lo), True))
        else:
            return None
    return region


def _dense(how, x, values, region, dtype):
    """The update of a basic region: the values padded to x's shape and selected in, computed in
    `dtype` and returned in x's."""
    shape = tuple(x.shape)
    extent = [hi - lo for lo, hi, _ in region]
    kept = tuple(e for e, (_, _, keep) in zip(extent, region) if keep)
    v = jnp.reshape(jnp.broadcast_to(values, kept), tuple(extent))
    mask = jnp.ones(tuple(extent), bool)
    for axis, ((lo, hi, _), n) in enumerate(zip(region, shape)):
        v = _pad(v, axis, lo, n - hi, 0)
        mask = _pad(mask, axis, lo, n - hi, False)
    xc = jnp.astype(x, dtype)
    combined = {"set": lambda: v, "add": lambda: xc + v, "multiply": lambda: xc * v,
                "min": lambda: jnp.minimum(xc, v), "max": lambda: jnp.maximum(xc, v)}[how]()
    return jnp.astype(jnp.where(mask, combined, xc), x.dtype)


def _leading_rows(parts):
    """The integer array indexing the leading axis, when the rest of the index is whole
    slices; else None."""
    if not parts or not is_index_array(parts[0]) or is_int(parts[0]):
        return None
    if not builtins.all(isinstance(p, slice) and p == slice(None) for p in parts[1:]):
        return None
    return parts[0] if isinstance(parts[0], (Array, Tensor)) else np.asarray(parts[0])


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
