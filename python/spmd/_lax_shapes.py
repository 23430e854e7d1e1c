"""jax.lax's shape functions over spmd.numpy's: broadcasts, reshapes, slices (static and at traced
start indices, which XLA clamps so the window fits), updates of a window, padding with interior
padding and cropping, iotas, fills, cumulative sums and products, argmax and argmin. JAX's
signatures and errors; `out_sharding` and `sharding` are not taken (NotImplementedError)."""
import builtins

import numpy as _np

from . import numpy as _numpy


def _array(x):
    if hasattr(x, "shape") and hasattr(x, "dtype") and not isinstance(x, (_np.ndarray,
                                                                          _np.generic)):
        return x
    return _numpy.asarray(x)


def _no_sharding(name, sharding):
    if sharding is not None:
        raise NotImplementedError(f"spmd: lax.{name} with a sharding is not supported; lay the "
                                  "result out with jax.lax.with_sharding_constraint instead")


def _dims(name, dims, rank):
    dims = tuple(int(d) for d in dims)
    if any(d < 0 or d >= rank for d in dims) or len(set(dims)) != len(dims):
        raise ValueError(f"{name}: dimensions {dims} must be distinct and within the operand's "
                         f"rank {rank}")
    return dims


def broadcast(operand, sizes, *, out_sharding=None):
    """jax.lax.broadcast: `sizes` new leading dimensions."""
    _no_sharding("broadcast", out_sharding)
    x = _array(operand)
    return _numpy.broadcast_to(x, tuple(sizes) + tuple(x.shape))


def broadcast_in_dim(operand, shape, broadcast_dimensions, *, out_sharding=None):
    """jax.lax.broadcast_in_dim: operand's dimension i becomes dimension broadcast_dimensions[i]
    of `shape` (of the same size, or 1), in increasing order."""
    _no_sharding("broadcast_in_dim", out_sharding)
    x = _array(operand)
    shape, dims = tuple(int(s) for s in shape), tuple(int(d) for d in broadcast_dimensions)
    if len(dims) != len(x.shape):
        raise TypeError("broadcast_in_dim broadcast_dimensions must have length equal to operand "
                        f"ndim; got broadcast_dimensions {dims} for operand ndim "
                        f"{len(x.shape)}.")
    if any(d < 0 or d >= len(shape) for d in dims) or list(dims) != sorted(set(dims)):
        raise TypeError("broadcast_in_dim broadcast_dimensions must be strictly increasing and "
                        f"within the result's rank; got broadcast_dimensions {dims}")
    if any(x.shape[i] not in (1, shape[d]) for i, d in enumerate(dims)):
        raise TypeError("broadcast_in_dim operand dimension sizes must either be 1, or be equal "
                        f"to their corresponding dimensions in the target broadcast shape; got "
                        f"operand of shape {tuple(x.shape)}, target broadcast shape {shape}, "
                        f"broadcast_dimensions {dims} ")
    placed = [1] * len(shape)
    for i, d in enumerate(dims):
        placed[d] = x.shape[i]
    return _numpy.broadcast_to(_numpy.reshape(x, tuple(placed)), shape)


def reshape(operand, new_sizes, dimensions=None, *, out_sharding=None):
    """jax.lax.reshape: operand (its dimensions first permuted as `dimensions` says) in row-major
    order as new_sizes."""
    _no_sharding("reshape", out_sharding)
    x = _array(operand)
    new_sizes = tuple(int(s) for s in new_sizes)
    if int(_np.prod(new_sizes)) != int(_np.prod(x.shape)):
        raise ValueError("reshape total size must be unchanged, got new_sizes "
                        f"{new_sizes} (of total size {int(_np.prod(new_sizes))}) for shape "
                        f"{tuple(x.shape)} (of total size {int(_np.prod(x.shape))}).")
    if dimensions is not None:
        x = _numpy.transpose(x, _dims("reshape", dimensions, len(x.shape)))
    return _numpy.reshape(x, new_sizes)


def squeeze(array, dimensions):
    """jax.lax.squeeze: drops `dimensions`, each of size 1 (negative ones count from the end)."""
    x = _array(array)
    rank = len(x.shape)
    dims = tuple(d + rank if d < 0 else d for d in (int(d) for d in dimensions))
    dims = _dims("squeeze", dims, rank)
    if any(x.shape[d] != 1 for d in dims):
        raise ValueError("cannot select an axis to squeeze out which has size not equal to "
                         f"one, got shape={tuple(x.shape)} and dimensions={dims}")
    return _numpy.reshape(x, tuple(s for i, s in enumerate(x.shape) if i not in dims))


def expand_dims(array, dimensions):
    """jax.lax.expand_dims: a dimension of 1 at each of `dimensions` of the result."""
    x = _array(array)
    return _numpy.expand_dims(x, tuple(int(d) for d in dimensions))


def concatenate(operands, dimension):
    """jax.lax.concatenate: along `dimension`, operands of one dtype and rank."""
    arrays = [_array(o) for o in operands]
    if not arrays:
        raise TypeError("concatenate requires a non-empty sequences of arrays")
    if len({_np.dtype(a.dtype) for a in arrays}) > 1:
        raise TypeError("lax.concatenate requires arguments to have the same dtypes, got "
                        f"{', '.join(_np.dtype(a.dtype).name for a in arrays)}.")
    rank = len(arrays[0].shape)
    if not 0 <= int(dimension) < builtins.max(rank, 1) or rank == 0:
        raise TypeError(f"concatenate dimension out of bounds: dimension {dimension} for shapes "
                        f"{', '.join(str(tuple(a.shape)) for a in arrays)}.")
    return _numpy.concatenate(arrays, axis=int(dimension))


def transpose(operand, permutation):
    """jax.lax.transpose: the operand's dimensions in the order `permutation` gives."""
    x = _array(operand)
    perm = tuple(int(p) for p in permutation)
    if sorted(perm) != list(range(len(x.shape))):
        raise TypeError(f"transpose permutation isn't a permutation of operand dimensions, got "
                        f"permutation {perm} for operand shape {tuple(x.shape)}.")
    return _numpy.transpose(x, perm)


def rev(operand, dimensions):
    """jax.lax.rev: reversed along `dimensions`."""
    x = _array(operand)
    dims = _dims("rev", dimensions, len(x.shape))
    return _numpy.flip(x, dims) if dims else x


def slice(operand, start_indices, limit_indices, strides=None):  # noqa: A001 - jax.lax's name
    """jax.lax.slice: the window [start, limit) with `strides`, every bound static and inside."""
    x = _array(operand)
    rank = len(x.shape)
    strides = (1,) * rank if strides is None else tuple(int(s) for s in strides)
    start, limit = tuple(int(s) for s in start_indices), tuple(int(s) for s in limit_indices)
    if not len(start) == len(limit) == len(strides) == rank:
        raise TypeError(f"slice start_indices {start}, limit_indices {limit} and strides "
                        f"{strides} must each have length equal to the operand's rank {rank}")
    for s, e, st, n in zip(start, limit, strides, x.shape):
        if not (0 <= s <= e <= n) or st < 1:
            raise TypeError(f"slice start_indices {start}, limit_indices {limit} and strides "
                            f"{strides} must satisfy 0 <= start <= limit <= {tuple(x.shape)}, "
                            "strides >= 1")
    return x[tuple(builtins.slice(s, e, st) for s, e, st in zip(start, limit, strides))]


def slice_in_dim(operand, start_index, limit_index, stride=1, axis=0):
    """jax.lax.slice_in_dim: slice along one axis (None bounds are the ends; negative ones count
    from the end)."""
    x = _array(operand)
    n = x.shape[axis]
    start = 0 if start_index is None else int(start_index)
    limit = n if limit_index is None else int(limit_index)
    start, limit = start + n if start < 0 else start, limit + n if limit < 0 else limit
    starts, limits, strides = [0] * len(x.shape), list(x.shape), [1] * len(x.shape)
    starts[axis], limits[axis], strides[axis] = start, limit, int(stride)
    return slice(x, starts, limits, strides)


def index_in_dim(operand, index, axis=0, keepdims=True):
    """jax.lax.index_in_dim: element `index` along `axis` (negative counts from the end)."""
    x = _array(operand)
    n = x.shape[axis]
    i = int(index) + n if int(index) < 0 else int(index)
    if not 0 <= i < n:
        raise IndexError(f"index {index} is out of bounds for axis {axis} with size {n}")
    out = slice_in_dim(x, i, i + 1, 1, axis)
    return out if keepdims else _numpy.squeeze(out, axis)


def _starts(name, x, start_indices, sizes, allow_negative_indices):
    """Each axis's start as an int32 scalar: negative counted from the end where allowed, then
    clamped so the window of `sizes` fits (XLA's rule)."""
    rank = len(x.shape)
    if hasattr(start_indices, "shape"):  # one array of the starts
        if len(start_indices.shape) != 1:
            raise TypeError(f"{name}: start_indices as an array must have rank 1, got shape "
                            f"{tuple(start_indices.shape)}")
        starts = [start_indices[i] for i in range(start_indices.shape[0])]
    else:
        starts = list(start_indices)
    if len(starts) != rank:
        raise TypeError(f"{name}: the start indices ({len(starts)}) must be as many as the "
                        f"operand's dimensions ({rank})")
    if any(not 0 <= s <= n for s, n in zip(sizes, x.shape)):
        raise TypeError(f"{name}: slice sizes {tuple(sizes)} must be within the operand's shape "
                        f"{tuple(x.shape)}")
    allow = (allow_negative_indices,) * rank if isinstance(allow_negative_indices, bool) \
        else tuple(allow_negative_indices)
    out = []
    for s, size, n, neg in zip(starts, sizes, x.shape, allow):
        s = _numpy.asarray(s)
        if _np.dtype(s.dtype).kind not in "iu" or len(s.shape):
            raise TypeError(f"{name}: each start index must be an integer scalar, got "
                            f"{_np.dtype(s.dtype).name}{list(s.shape)}")
        s = _numpy.astype(s, _np.int32)
        if neg:
            s = _numpy.where(s < 0, s + n, s)
        out.append(_numpy.clip(s, 0, n - size))
    return out


def dynamic_slice(operand, start_indices, slice_sizes, *, allow_negative_indices=True):
    """jax.lax.dynamic_slice: the window of `slice_sizes` (static) at start indices that may be
    traced, each clamped so the window fits."""
    x = _array(operand)
    sizes = tuple(int(s) for s in slice_sizes)
    if len(sizes) != len(x.shape):
        raise TypeError(f"dynamic_slice: slice_sizes {sizes} must have one size per dimension "
                        f"of the operand's shape {tuple(x.shape)}")
    starts = _starts("dynamic_slice", x, start_indices, sizes, allow_negative_indices)
    for axis, (s, size) in enumerate(zip(starts, sizes)):
        if size != x.shape[axis]:
            x = _numpy.take(x, s + _numpy.arange(size, dtype=_np.int32), axis=axis)
    return x


def dynamic_slice_in_dim(operand, start_index, slice_size, axis=0, *,
                         allow_negative_indices=True):
    """jax.lax.dynamic_slice_in_dim: dynamic_slice along one axis."""
    x = _array(operand)
    starts = [0] * len(x.shape)
    starts[axis] = start_index
    sizes = list(x.shape)
    sizes[axis] = int(slice_size)
    return dynamic_slice(x, starts, sizes, allow_negative_indices=allow_negative_indices)


def dynamic_index_in_dim(operand, index, axis=0, keepdims=True, *, allow_negative_indices=True):
    """jax.lax.dynamic_index_in_dim: element `index` (may be traced) along `axis`."""
    out = dynamic_slice_in_dim(operand, index, 1, axis,
                               allow_negative_indices=allow_negative_indices)
    return out if keepdims else _numpy.squeeze(out, axis)


def dynamic_update_slice(operand, update, start_indices, *, allow_negative_indices=True):
    """jax.lax.dynamic_update_slice: operand with `update` written over the window at start
    indices that may be traced (clamped so it fits); operand and update of one dtype and rank."""
    x, u = _array(operand), _array(update)
    if _np.dtype(x.dtype) != _np.dtype(u.dtype):
        raise TypeError("dynamic_update_slice update must have the same element type as the "
                        f"operand, got {_np.dtype(u.dtype).name} and {_np.dtype(x.dtype).name}")
    if len(u.shape) != len(x.shape):
        raise TypeError(f"dynamic_update_slice update must have the same rank as the operand, "
                        f"got update shape {tuple(u.shape)} for operand shape {tuple(x.shape)}")
    starts = _starts("dynamic_update_slice", x, start_indices, tuple(u.shape),
                     allow_negative_indices)
    if 0 in tuple(u.shape):  # nothing to write (the starts were still checked)
        return x
    inside = None
    for axis, (s, size, n) in enumerate(zip(starts, u.shape, x.shape)):
        # The update spread over the operand's axis: position p reads update element p - start.
        at = _numpy.arange(n, dtype=_np.int32) - s
        u = _numpy.take(u, _numpy.clip(at, 0, builtins.max(size - 1, 0)), axis=axis)
        shape = [1] * len(x.shape)
        shape[axis] = n
        here = _numpy.reshape((at >= 0) & (at < size), shape)
        inside = here if inside is None else inside & here
    return x if inside is None else _numpy.where(inside, u, x)


def dynamic_update_slice_in_dim(operand, update, start_index, axis, *,
                                allow_negative_indices=True):
    """jax.lax.dynamic_update_slice_in_dim: dynamic_update_slice along one axis."""
    x = _array(operand)
    starts = [0] * len(x.shape)
    starts[axis] = start_index
    return dynamic_update_slice(x, update, starts, allow_negative_indices=allow_negative_indices)


def dynamic_update_index_in_dim(operand, update, index, axis, *, allow_negative_indices=True):
    """jax.lax.dynamic_update_index_in_dim: `update` (with or without `axis`) at `index`."""
    x, u = _array(operand), _array(update)
    if len(u.shape) == len(x.shape) - 1:
        u = _numpy.expand_dims(u, axis)
    return dynamic_update_slice_in_dim(x, u, index, axis,
                                       allow_negative_indices=allow_negative_indices)


def pad(operand, padding_value, padding_config):
    """jax.lax.pad: per dimension (low, high, interior): `interior` copies of padding_value
    between elements, then low and high ones at the ends (a negative low or high crops)."""
    x, value = _array(operand), _array(padding_value)
    if len(value.shape) or _np.dtype(value.dtype) != _np.dtype(x.dtype):
        raise TypeError("pad operand and padding_value must be same dtype and padding_value a "
                        f"scalar: got {_np.dtype(x.dtype).name} and "
                        f"{_np.dtype(value.dtype).name}{list(value.shape)}.")
    config = [tuple(int(c) for c in dim) for dim in padding_config]
    if len(config) != len(x.shape) or any(len(c) != 3 or c[2] < 0 for c in config):
        raise ValueError(f"pad: padding_config {config} needs one (low, high, interior) per "
                         f"dimension of {tuple(x.shape)}, interior >= 0")
    for axis, (low, high, interior) in enumerate(config):
        x = _pad_axis(x, value, axis, low, high, interior)
    return x


def _pad_axis(x, value, axis, low, high, interior):
    n = x.shape[axis]
    if interior and n > 1:
        # Each element followed by `interior` fills (the last's dropped): stacked, then flattened.
        moved = _numpy.moveaxis(x, axis, -1)
        fills = _numpy.full(tuple(moved.shape) + (interior,), value, x.dtype)
        woven = _numpy.concatenate([_numpy.expand_dims(moved, -1), fills], axis=-1)
        woven = _numpy.reshape(woven, tuple(moved.shape[:-1]) + (n * (interior + 1),))
        x = _numpy.moveaxis(woven[..., :n + (n - 1) * interior], -1, axis)
        n = x.shape[axis]
    if low < 0 or high < 0:
        start, stop = builtins.max(-low, 0), n - builtins.max(-high, 0)
        if start > stop:
            raise ValueError(f"pad: cropping {-low} and {-high} from a dimension of {n}")
        x = slice_in_dim(x, start, stop, 1, axis)
    parts = []
    for count in (low, None, high):
        if count is None:
            parts.append(x)
        elif count > 0:
            shape = list(x.shape)
            shape[axis] = count
            parts.append(_numpy.full(tuple(shape), value, x.dtype))
    return _numpy.concatenate(parts, axis=axis) if len(parts) > 1 else x


def iota(dtype, size):
    """jax.lax.iota: 0, 1, … size - 1 in `dtype`."""
    return _numpy.arange(int(size), dtype=dtype)


def broadcasted_iota(dtype, shape, dimension, *, out_sharding=None):
    """jax.lax.broadcasted_iota: each element's index along `dimension`, of `shape`."""
    _no_sharding("broadcasted_iota", out_sharding)
    shape = tuple(int(s) for s in shape)
    return broadcast_in_dim(iota(dtype, shape[dimension]), shape, (int(dimension),))


def full(shape, fill_value, dtype=None, *, sharding=None):
    """jax.lax.full: an array of `shape` holding fill_value (a scalar), in dtype or its own."""
    _no_sharding("full", sharding)
    value = _array(fill_value)
    if len(value.shape):
        raise TypeError(f"full must be called with scalar fill_value, got fill_value.shape "
                        f"{tuple(value.shape)}.")
    return _numpy.full(tuple(int(s) for s in shape), value,
                       value.dtype if dtype is None else dtype)


def full_like(x, fill_value, dtype=None, shape=None, sharding=None):
    """jax.lax.full_like: full of x's shape and dtype (or those given)."""
    _no_sharding("full_like", sharding)
    a = _array(x)
    return full(a.shape if shape is None else shape, fill_value, a.dtype if dtype is None
                else dtype)


def _cumulative(name, fn):
    def cumulative(operand, axis=0, reverse=False):
        x = _array(operand)
        if not 0 <= int(axis) < builtins.max(len(x.shape), 1) or not len(x.shape):
            raise ValueError(f"{name}: axis {axis} is out of bounds for an array of rank "
                             f"{len(x.shape)}")
        if reverse:
            return _numpy.flip(fn(_numpy.flip(x, int(axis)), axis=int(axis)), int(axis))
        return fn(x, axis=int(axis))
    cumulative.__name__ = name
    cumulative.__doc__ = f"jax.lax.{name}: along `axis`, from the end with `reverse`."
    return cumulative


cumsum = _cumulative("cumsum", _numpy.cumsum)
cumprod = _cumulative("cumprod", _numpy.cumprod)


def _arg_extreme(name, fn):
    def arg(operand, axis, index_dtype):
        x = _array(operand)
        if _np.dtype(index_dtype).kind not in "iu":
            raise TypeError(f"index_dtype must be an integer type, but got {index_dtype}")
        if not 0 <= int(axis) < len(x.shape):
            raise ValueError(f"Invalid axis {axis} for operand shape {tuple(x.shape)}")
        return _numpy.astype(fn(x, axis=int(axis)), index_dtype)
    arg.__name__ = name
    arg.__doc__ = f"jax.lax.{name}: the index of the extreme along `axis`, in index_dtype."
    return arg


def broadcast_shapes(*shapes):
    """jax.lax.broadcast_shapes: the shape the given shapes broadcast to (NumPy's rule)."""
    return tuple(_np.broadcast_shapes(*(tuple(s) for s in shapes)))


def broadcast_to_rank(x, rank):
    """x with leading dimensions of size 1 up to `rank` (unchanged when it has as many)."""
    x = _array(x)
    return x if x.ndim >= rank else _numpy.reshape(x, (1,) * (rank - x.ndim) + tuple(x.shape))


def collapse(operand, start_dimension, stop_dimension=None):
    """jax.lax.collapse: dimensions start … stop - 1 (to the end without stop) merged into one."""
    x = _array(operand)
    shape = tuple(x.shape)
    stop = len(shape) if stop_dimension is None else stop_dimension
    start, stop = builtins.slice(start_dimension, stop).indices(len(shape))[:2]
    merged = int(_np.prod(shape[start:stop], dtype=_np.int64))
    return _numpy.reshape(x, shape[:start] + (merged,) + shape[stop:])


def split(operand, sizes, axis=0):
    """jax.lax.split: consecutive pieces of the given sizes along `axis` (summing to its
    length)."""
    x = _array(operand)
    sizes = tuple(int(n) for n in sizes)
    axis = int(axis) % x.ndim
    if any(n < 0 for n in sizes) or sum(sizes) != x.shape[axis]:
        raise ValueError(f"Sum of sizes {sum(sizes)} must be equal to dimension {x.shape[axis]} "
                         f"of the operand shape {tuple(x.shape)}")
    pieces, at = [], 0
    for n in sizes:
        pieces.append(slice_in_dim(x, at, at + n, axis=axis))
        at += n
    return pieces


def stack(operands, axis=0):
    """jax.lax.stack: the operands, of one shape, along a new dimension `axis`."""
    return _numpy.stack([_array(x) for x in operands], axis=axis)


def unstack(x, axis=0):
    """jax.lax.unstack: the slices of x along `axis`, that dimension removed."""
    x = _array(x)
    axis = int(axis) % x.ndim
    return tuple(index_in_dim(x, i, axis, keepdims=False) for i in range(x.shape[axis]))


def tile(operand, reps):
    """jax.lax.tile: operand repeated reps[i] times along dimension i."""
    return _numpy.tile(_array(operand), tuple(int(r) for r in reps))


def optimization_barrier(operand, /):
    """jax.lax.optimization_barrier: the operand (a pytree) unchanged. spmd's compiler moves no
    computation across values, so there is nothing to stop."""
    return operand


def empty(shape, dtype, *, out_sharding=None):
    """jax.lax.empty: an array of the shape and dtype whose values are unspecified (zeros)."""
    _no_sharding("empty", out_sharding)
    return _numpy.zeros(tuple(shape), dtype)


argmax = _arg_extreme("argmax", _numpy.argmax)
argmin = _arg_extreme("argmin", _numpy.argmin)

__all__ = ["broadcast", "broadcast_in_dim", "reshape", "squeeze", "expand_dims", "concatenate",
           "transpose", "rev", "slice", "slice_in_dim", "index_in_dim", "dynamic_slice",
           "dynamic_slice_in_dim", "dynamic_index_in_dim", "dynamic_update_slice",
           "dynamic_update_slice_in_dim", "dynamic_update_index_in_dim", "pad", "iota",
           "broadcasted_iota", "full", "full_like", "cumsum", "cumprod", "argmax", "argmin",
           "broadcast_shapes", "broadcast_to_rank", "collapse", "split", "stack", "unstack",
           "tile", "optimization_barrier", "empty"]
