"""jax.lax's general gather and scatters (gather, scatter, scatter_add, scatter_sub,
scatter_mul, scatter_min, scatter_max) with XLA's dimension numbers, and the types that go with
them (GatherDimensionNumbers, ScatterDimensionNumbers, GatherScatterMode).

Each is one take from, or one scatter into (spmd.numpy's update_at), the flattened operand at
the flat position of every element: per operand dimension, the start the index vector gives
(or the batch position, for batching dimensions) plus the offset within the window. The work
is laid out batch-major, windows last, as XLA's CPU scatter visits them, so repeated positions
are updated in XLA's order and the values are JAX's bit for bit. Modes as JAX's: a gather clamps
its windows into the operand by default (PROMISE_IN_BOUNDS, as XLA does) or fills a window
that does not fit (FILL_OR_DROP); a scatter drops such a window by default or clamps it
(CLIP)."""
import enum
from typing import NamedTuple

import numpy as np

from . import numpy as jnp
from ._at import _default_fill, _update_at


class GatherDimensionNumbers(NamedTuple):
    offset_dims: tuple
    collapsed_slice_dims: tuple
    start_index_map: tuple
    operand_batching_dims: tuple = ()
    start_indices_batching_dims: tuple = ()


class ScatterDimensionNumbers(NamedTuple):
    update_window_dims: tuple
    inserted_window_dims: tuple
    scatter_dims_to_operand_dims: tuple
    operand_batching_dims: tuple = ()
    scatter_indices_batching_dims: tuple = ()


class GatherScatterMode(enum.Enum):
    CLIP = enum.auto()
    FILL_OR_DROP = enum.auto()
    PROMISE_IN_BOUNDS = enum.auto()
    ONE_HOT = enum.auto()

    @staticmethod
    def from_any(s):
        if isinstance(s, GatherScatterMode):
            return s
        if s == "clip":
            return GatherScatterMode.CLIP
        if s is None or s == "fill" or s == "drop":
            return GatherScatterMode.FILL_OR_DROP
        if s == "promise_in_bounds":
            return GatherScatterMode.PROMISE_IN_BOUNDS
        if s == "one_hot":
            return GatherScatterMode.ONE_HOT
        raise ValueError(f'Unknown gather mode "{s}"')


class _Windows(NamedTuple):
    flat: object  # int positions, batch shape + window extents (batch-major)
    inside: object  # bool, batch shape + (1,) * windows: the window fits; None when clamped
    window_dims: tuple  # the operand dimensions the windows keep, in order


def _windows(shape, indices, index_map, operand_batching, indices_batching, extents, dropped,
             clip):
    """Flat positions of every window element, laid out batch shape + kept window extents.
    extents[d]: the window's size along operand dimension d; `dropped`: the dimensions of size
    1 that the windows do not keep (collapsed or inserted, and the batching ones)."""
    batch = tuple(indices.shape[:-1])
    kept = tuple(d for d in range(len(shape)) if d not in dropped)
    rank = len(batch) + len(kept)
    strides = [int(np.prod(shape[d + 1:], dtype=np.int64)) for d in range(len(shape))]
    flat, inside = jnp.zeros((1,) * rank, jnp.int32), None
    for d, n in enumerate(shape):
        if d in index_map:
            start = jnp.astype(indices[..., index_map.index(d)], jnp.int32)
        elif d in operand_batching:
            axis = indices_batching[operand_batching.index(d)]
            start = jnp.broadcast_to(jnp.reshape(jnp.arange(batch[axis], dtype=jnp.int32),
                                                 (-1,) + (1,) * (len(batch) - axis - 1)), batch)
        else:
            start = jnp.zeros(batch, jnp.int32)
        last = n - extents[d]
        if not clip:
            ok = jnp.logical_and(start >= 0, start <= last)
            inside = ok if inside is None else jnp.logical_and(inside, ok)
        start = jnp.reshape(jnp.clip(start, 0, max(last, 0)), batch + (1,) * len(kept))
        coord = start
        if d in kept:
            at = len(batch) + kept.index(d)
            offsets = np.arange(extents[d], dtype=np.int32).reshape(
                (1,) * at + (-1,) + (1,) * (rank - at - 1))
            coord = coord + offsets
        flat = flat + coord * strides[d]
    if inside is not None:
        inside = jnp.reshape(inside, batch + (1,) * len(kept))
    return _Windows(jnp.broadcast_to(flat, batch + tuple(extents[d] for d in kept)), inside,
                    kept)


def _batch_major(rank, window_positions):
    """The permutation taking a layout whose window dimensions sit at `window_positions` to
    batch dimensions first, windows last."""
    batch = [i for i in range(rank) if i not in window_positions]
    return batch + list(window_positions)


def _dimension_numbers(what, dn, kind):
    """dn as `kind` (a GatherDimensionNumbers or ScatterDimensionNumbers, or anything with its
    fields); TypeError naming `what` for anything else."""
    if isinstance(dn, kind) or all(hasattr(dn, f) for f in kind._fields[:3]):
        return dn
    raise TypeError(f"{what}: dimension_numbers must be a {kind.__name__}, not "
                    f"{type(dn).__name__}")


def gather(operand, start_indices, dimension_numbers, slice_sizes, *, unique_indices=False,
           indices_are_sorted=False, mode=None, fill_value=None):
    """jax.lax.gather: the window of `slice_sizes` at each start index vector (the last
    dimension of start_indices), collapsed and batching dimensions dropped, the windows'
    dimensions at `offset_dims` of the result."""
    dn = _dimension_numbers("gather", dimension_numbers, GatherDimensionNumbers)
    mode = GatherScatterMode.from_any(GatherScatterMode.PROMISE_IN_BOUNDS if mode is None
                                      else mode)
    if mode == GatherScatterMode.ONE_HOT:
        raise NotImplementedError("spmd.lax.gather: mode ONE_HOT is not supported")
    operand, indices = jnp.asarray(operand), jnp.asarray(start_indices)
    shape = tuple(operand.shape)
    slice_sizes = tuple(int(s) for s in slice_sizes)
    if len(slice_sizes) != len(shape) or len(dn.start_index_map) != indices.shape[-1]:
        raise TypeError(f"gather: slice_sizes {slice_sizes} must have one entry per operand "
                        f"dimension {shape}, and start_index_map {dn.start_index_map} one per "
                        f"index vector element ({indices.shape[-1]})")
    dropped = set(dn.collapsed_slice_dims) | set(dn.operand_batching_dims)
    w = _windows(shape, indices, tuple(dn.start_index_map), tuple(dn.operand_batching_dims),
                 tuple(dn.start_indices_batching_dims), slice_sizes, dropped,
                 clip=mode != GatherScatterMode.FILL_OR_DROP)
    taken = jnp.take(jnp.reshape(operand, (-1,)), jnp.reshape(w.flat, (-1,)), mode="clip")
    out = jnp.reshape(taken, tuple(w.flat.shape))
    if w.inside is not None:
        fill = _default_fill(operand.dtype) if fill_value is None else fill_value
        out = jnp.where(w.inside, out, jnp.asarray(fill, dtype=operand.dtype))
    rank = out.ndim
    order = _batch_major(rank, tuple(dn.offset_dims))
    return jnp.transpose(out, tuple(int(i) for i in np.argsort(order)))


def _scatter(how, operand, scatter_indices, updates, dimension_numbers, unique_indices, mode):
    dn = _dimension_numbers(f"scatter {how}", dimension_numbers, ScatterDimensionNumbers)
    mode = GatherScatterMode.from_any(mode)
    if mode == GatherScatterMode.ONE_HOT:
        raise NotImplementedError("spmd.lax.scatter: mode ONE_HOT is not supported")
    operand, indices = jnp.asarray(operand), jnp.asarray(scatter_indices)
    updates = jnp.asarray(updates)
    if updates.dtype != operand.dtype:
        raise TypeError(f"scatter {how} operand and updates must have the same dtype, got "
                        f"{operand.dtype} and {updates.dtype}")
    shape = tuple(operand.shape)
    windows = tuple(dn.update_window_dims)
    dropped = set(dn.inserted_window_dims) | set(dn.operand_batching_dims)
    kept = [d for d in range(len(shape)) if d not in dropped]
    if len(kept) != len(windows) or updates.ndim != indices.ndim - 1 + len(windows):
        raise TypeError(f"scatter: updates of shape {tuple(updates.shape)} do not fit operand "
                        f"{shape}, indices {tuple(indices.shape)} and {dn}")
    extents = [1] * len(shape)
    for d, at in zip(kept, windows):
        extents[d] = int(updates.shape[at])
    w = _windows(shape, indices, tuple(dn.scatter_dims_to_operand_dims),
                 tuple(dn.operand_batching_dims), tuple(dn.scatter_indices_batching_dims),
                 extents, dropped, clip=mode == GatherScatterMode.CLIP)
    flat = w.flat if w.inside is None else jnp.where(w.inside, w.flat, int(np.prod(shape)))
    values = jnp.transpose(updates, tuple(_batch_major(updates.ndim, windows)))
    out = _update_at(jnp.reshape(operand, (-1,)), jnp.reshape(flat, (-1,)),
                     jnp.reshape(values, (-1,)), how, False, unique_indices)
    return jnp.reshape(out, shape)


def scatter(operand, scatter_indices, updates, dimension_numbers, *, indices_are_sorted=False,
            unique_indices=False, mode=None):
    """jax.lax.scatter: each update window replaces the operand's at its index (the last of
    a repeated one stays)."""
    return _scatter("set", operand, scatter_indices, updates, dimension_numbers,
                    unique_indices, mode)


def scatter_sub(operand, scatter_indices, updates, dimension_numbers, *,
                indices_are_sorted=False, unique_indices=False, mode=None):
    """operand - updates at the indices, as operand + (-updates) (the same in every dtype)."""
    updates = jnp.asarray(updates)
    if updates.dtype != jnp.asarray(operand).dtype:  # before negating (unsigned types wrap)
        return _scatter("sub", operand, scatter_indices, updates, dimension_numbers,
                        unique_indices, mode)
    return _scatter("add", operand, scatter_indices, jnp.negative(updates), dimension_numbers,
                    unique_indices, mode)


def _combining(name, how):
    """jax.lax.scatter_<name>: each update window combined with the operand's at its index,
    repeated ones in turn."""
    def combined(operand, scatter_indices, updates, dimension_numbers, *,
                 indices_are_sorted=False, unique_indices=False, mode=None):
        return _scatter(how, operand, scatter_indices, updates, dimension_numbers,
                        unique_indices, mode)
    combined.__name__ = combined.__qualname__ = f"scatter_{name}"
    combined.__doc__ = _combining.__doc__.replace("<name>", name)
    return combined


scatter_add = _combining("add", "add")
scatter_mul = _combining("mul", "multiply")
scatter_min = _combining("min", "min")
scatter_max = _combining("max", "max")


__all__ = ["GatherDimensionNumbers", "ScatterDimensionNumbers", "GatherScatterMode", "gather",
           "scatter", "scatter_add", "scatter_sub", "scatter_mul", "scatter_min",
           "scatter_max"]
