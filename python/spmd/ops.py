"""jax.ops: segment_sum, segment_prod, segment_max and segment_min, as JAX composes them: a
scatter of the data's rows into (num_segments,) + data.shape[1:] filled with the reduction's
identity, ids outside 0 … num_segments - 1 dropped (negative ones too: they are not counted from
the end), each row combined in its order, so that the values are JAX's bit for bit. With
bucket_size, the rows are scattered into buckets of that many and the buckets reduced, as
JAX's."""
import numpy as np

from . import _arguments
from . import numpy as jnp

_IDENTITY = {"add": (0, 0, False), "multiply": (1, 1, True),
             "min": (np.inf, "max", True), "max": (-np.inf, "min", False)}


def _identity(how, dtype):
    """The reduction's identity in `dtype` (JAX's _get_identity)."""
    dtype = np.dtype(str(dtype)) if str(dtype) != "bfloat16" else None
    float_value, integer_end, boolean = _IDENTITY[how]
    if dtype is not None and dtype == np.bool_:
        return boolean
    if dtype is not None and dtype.kind in "iu":
        info = np.iinfo(dtype)
        return {0: 0, 1: 1, "max": info.max, "min": info.min}[integer_end]
    return float_value


def _segment(name, how, reduce, data, segment_ids, num_segments, indices_are_sorted,
             unique_indices, bucket_size, mode):
    _arguments.check_arraylike(name, data, segment_ids)
    data, segment_ids = jnp.asarray(data), jnp.asarray(segment_ids)
    if num_segments is None:
        ids = _arguments.concrete(segment_ids, f"{name}() `num_segments` argument: pass a static "
                                               "num_segments inside jit")
        num_segments = int(np.max(ids)) + 1
    num_segments = int(num_segments)
    if num_segments < 0:
        raise ValueError("num_segments must be non-negative.")
    fill = _identity(how, data.dtype)
    kwargs = {"unique_indices": unique_indices, "mode": mode, "wrap_negative_indices": False}
    if bucket_size is None:
        out = jnp.full((num_segments,) + tuple(data.shape[1:]), fill, dtype=data.dtype)
        return getattr(out.at[segment_ids], how)(data, **kwargs)
    buckets = -(-int(segment_ids.shape[0]) // int(bucket_size))
    out = jnp.full((buckets, num_segments) + tuple(data.shape[1:]), fill, dtype=data.dtype)
    rows = np.arange(int(segment_ids.shape[0])) // int(bucket_size)
    out = getattr(out.at[rows, segment_ids[None, :]], how)(data, **kwargs)
    return jnp.astype(reduce(out, axis=0), data.dtype)


def _reduction(name, how, reduce):
    """jax.ops.segment_<name>: the data's rows reduced per segment id."""
    def segment(data, segment_ids, num_segments=None, indices_are_sorted=False,
                unique_indices=False, bucket_size=None, mode=None, out_sharding=None):
        return _segment(f"segment_{name}", how, reduce, data, segment_ids, num_segments,
                        indices_are_sorted, unique_indices, bucket_size, mode)
    segment.__name__ = segment.__qualname__ = f"segment_{name}"
    segment.__doc__ = _reduction.__doc__.replace("<name>", name)
    return segment


segment_sum = _reduction("sum", "add", jnp.sum)
segment_prod = _reduction("prod", "multiply", jnp.prod)
segment_max = _reduction("max", "max", jnp.max)
segment_min = _reduction("min", "min", jnp.min)
