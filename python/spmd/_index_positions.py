"""Where a NumPy index lands in a flattened array: the flat position of every element x[index]
selects, laid out in the shape x[index] has. NumPy's rules, as JAX follows them: integer arrays
and integers broadcast together, their dimensions in place when they are adjacent in the index
and first otherwise; slices of any step; None; Ellipsis; a concrete boolean mask as its
nonzero(). What x.at[index] scatters to and what x[index] with several index arrays gathers
from. A static index is worked out with NumPy; one holding a traced integer array with
spmd.numpy, so that it is part of the program."""
import builtins
import operator
from typing import NamedTuple

import numpy as np

from . import numpy as jnp
from ._core import Array, Tensor


class Positions(NamedTuple):
    flat: object  # integers of `shape`: positions in x.reshape(-1); `x.size` where dropped
    shape: tuple  # x[index].shape
    inside: object  # bool of `shape`, whether every index lies in its axis; None when all do
    traced: bool  # flat and inside are traced values (else NumPy arrays)


def _dtype_kind(x):
    name = str(x.dtype)
    return "f" if name == "bfloat16" else np.dtype(name).kind


def is_int(x):
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def is_index_array(x):
    """Whether `x` is an integer index array (a list, a NumPy array, an Array or a traced value);
    IndexError for an array of another kind."""
    if isinstance(x, (list, tuple)):
        return True
    if isinstance(x, (np.ndarray, Array, Tensor)):
        kind = _dtype_kind(x)
        if kind == "b":
            raise IndexError("boolean mask indexing gives a shape that depends on the values, "
                             "which a compiled program cannot have; use spmd.numpy.where")
        if kind not in "iu":
            raise IndexError(f"Indexer must have integer or boolean type, got indexer with type "
                             f"{x.dtype}")
        return True
    return False


def _bool_mask(p):
    """p's nonzero() when p is a concrete boolean mask of rank >= 1, else None. A traced mask is
    JAX's IndexError: its shape would depend on its values."""
    if isinstance(p, Tensor) and _dtype_kind(p) == "b":
        raise IndexError(f"Array boolean indices must be concrete; got bool{list(p.shape)}. "
                         "A compiled program's shapes cannot depend on values: use "
                         "spmd.numpy.where")
    if isinstance(p, list) and p and builtins.all(isinstance(e, (bool, np.bool_)) for e in p):
        p = np.asarray(p)
    if isinstance(p, (np.ndarray, Array)) and _dtype_kind(p) == "b" and len(p.shape) > 0:
        return np.nonzero(np.asarray(p))
    return None


def expand(index, rank):
    """The index as a tuple: boolean masks replaced by their nonzero() index arrays, Ellipsis
    expanded to whole slices, None kept."""
    if isinstance(index, list):
        raise TypeError("Using a non-tuple sequence for multidimensional indexing is not "
                        "allowed; use `arr[array(seq)]` instead of `arr[seq]`. See "
                        "https://github.com/jax-ml/jax/issues/4564 for more information.")
    parts = []
    for p in index if isinstance(index, tuple) else (index,):
        mask = _bool_mask(p)
        parts.extend(mask if mask is not None else (p,))
    if builtins.sum(1 for i in parts if i is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    used = builtins.sum(1 for i in parts if i is not None and i is not Ellipsis)
    if used > rank:
        raise IndexError(f"Too many indices: {rank}-dimensional array, but {used} were indexed")
    out = []
    for i in parts:
        out.extend([slice(None)] * (rank - used) if i is Ellipsis else [i])
    if not builtins.any(i is Ellipsis for i in parts):
        out.extend([slice(None)] * (rank - used))
    return out


def _layout(parts, shape, advanced, b_shape):
    """x[index]'s shape and, per part, the result dimension its coordinates go to (the first of
    the broadcast dimensions for the advanced parts)."""
    contiguous = builtins.all(b - a == 1 for a, b in zip(advanced, advanced[1:]))
    result, at, axis = [], {}, 0
    b_at = 0 if advanced and not contiguous else None
    if b_at == 0:
        result.extend(b_shape)
    for k, p in enumerate(parts):
        if p is None:
            result.append(1)
            continue
        if k in advanced:
            if b_at is None:
                b_at = len(result)
                result.extend(b_shape)
            at[k] = b_at
        else:
            if not isinstance(p, slice):
                raise IndexError(f"only integers, slices (`:`), ellipsis (`...`), None and "
                                 f"integer or boolean arrays are valid indices, got {p!r}")
            at[k] = len(result)
            result.append(len(range(*p.indices(shape[axis]))))
        axis += 1
    return tuple(result), at


def _placed(xp, a, dim, rank):
    """`a` with its dimensions at dim, dim + 1, … of a rank-`rank` array, ones elsewhere."""
    a_shape = tuple(a.shape)
    return xp.reshape(a, (1,) * dim + a_shape + (1,) * (rank - dim - len(a_shape)))


def positions(shape, index, *, mode="drop", wrap_negative=True):
    """Positions of x[index] for x of `shape`. An index outside its axis (after counting a
    negative one from the end, unless wrap_negative is false) is dropped (mode "drop": its
    position is x.size and `inside` false there), clamped into the axis ("clip") or NumPy's
    IndexError when static ("raise"; a traced one is clamped, as JAX's gather clamps)."""
    shape = tuple(shape)
    parts = expand(index, len(shape))
    advanced = [k for k, p in enumerate(parts) if is_int(p) or is_index_array(p)]
    traced = builtins.any(isinstance(parts[k], Tensor) for k in advanced)
    xp = jnp if traced else np
    arrays = {k: parts[k] if isinstance(parts[k], Tensor) else np.asarray(parts[k])
              for k in advanced}
    for k, a in arrays.items():
        if not isinstance(a, Tensor) and a.dtype.kind not in "iu":
            raise IndexError(f"Indexer must have integer or boolean type, got {parts[k]!r}")
    b_shape = np.broadcast_shapes(*(tuple(a.shape) for a in arrays.values())) if advanced else ()
    result, at = _layout(parts, shape, advanced, b_shape)
    rank, size = len(result), int(np.prod(shape, dtype=np.int64))
    strides = [int(np.prod(shape[d + 1:], dtype=np.int64)) for d in range(len(shape))]
    flat, inside = np.zeros((1,) * rank, np.int64), None
    axis = 0
    for k, p in enumerate(parts):
        if p is None:
            continue
        n = shape[axis]
        if k in arrays:
            a, ok = _normalized(xp, arrays[k], n, axis, mode, wrap_negative, traced)
            coord = _placed(xp, xp.broadcast_to(a, b_shape), at[k], rank)
            if ok is not None:
                ok = _placed(xp, xp.broadcast_to(ok, b_shape), at[k], rank)
                inside = ok if inside is None else xp.logical_and(inside, ok)
        else:
            lo, _, st = p.indices(n)
            count = result[at[k]]
            coord = _placed(np, lo + st * np.arange(count, dtype=np.int64), at[k], rank)
        flat = xp.add(flat, xp.multiply(coord, strides[axis]))
        axis += 1
    flat = xp.broadcast_to(flat, result)
    if inside is not None:
        inside = xp.broadcast_to(inside, result)
        flat = xp.where(inside, flat, size)
    if not traced:
        flat = flat.astype(np.int32 if size < 2**31 else np.int64)
    return Positions(flat, result, inside, traced)


def _normalized(xp, a, n, axis, mode, wrap_negative, traced):
    """(the index array counted from the end where negative and clamped for "clip", the mask of
    those inside the axis or None)."""
    if wrap_negative:
        a = xp.where(a < 0, a + n, a)
    if mode == "clip" or (mode == "raise" and traced):
        return xp.clip(a, 0, n - 1), None
    ok = xp.logical_and(a >= 0, a < n)
    if mode == "raise":
        if not np.all(ok):
            bad = int(np.asarray(a)[~ok].reshape(-1)[0])
            raise IndexError(f"index {bad} is out of bounds for axis {axis} with size {n} (JAX "
                             "would clamp it into the axis without a word)")
        return a, None
    return a, ok


def checked(index, n, dim):
    """A static index counted from the end when negative; one out of range is NumPy's
    IndexError (JAX clamps it without a word, and spmd refuses what would answer wrongly)."""
    i = operator.index(index)
    if not -n <= i < n:
        raise IndexError(f"index {i} is out of bounds for axis {dim} with size {n} (JAX would "
                         "clamp it into the axis without a word)")
    return i % n
