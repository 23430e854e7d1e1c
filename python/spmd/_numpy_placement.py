"""jax.numpy's functional forms of NumPy's in-place placements, composed of x.at[] as JAX
composes them: put, put_along_axis and fill_diagonal (each needs inplace=False, as JAX's),
diagflat, ravel_multi_index and ix_; and the array-API names of the inverse trigonometric
functions (acos, asin, atan, atan2, acosh, asinh, atanh)."""
import math
import operator

import numpy as np

from . import _arguments
from . import numpy as jnp

acos, asin, atan, atan2 = jnp.arccos, jnp.arcsin, jnp.arctan, jnp.arctan2
acosh, asinh, atanh = jnp.arccosh, jnp.arcsinh, jnp.arctanh


def _tile_to_size(arr, size):
    if arr.shape[0] < size:
        arr = jnp.tile(arr, int(np.ceil(size / arr.shape[0])))
    return arr[:size] if arr.shape[0] > size else arr


def put(a, ind, v, mode=None, *, inplace=True):
    """jnp.put: a copy of `a` with v (repeated to the indices' number) at the flat indices."""
    if inplace:
        raise ValueError("jax.numpy.put cannot modify arrays in-place, because JAX arrays are "
                         "immutable. Pass inplace=False to instead return an updated array.")
    _arguments.check_arraylike("put", a, ind, v)
    arr, ind_arr, v_arr = jnp.asarray(a), jnp.ravel(jnp.asarray(ind)), jnp.ravel(v)
    if not math.prod(arr.shape) or not ind_arr.shape[0] or not v_arr.shape[0]:
        return arr
    v_arr = _tile_to_size(v_arr, ind_arr.shape[0])
    size = math.prod(arr.shape)
    if mode is None:
        scatter_mode = "drop"
    elif mode == "clip":
        ind_arr, scatter_mode = jnp.clip(ind_arr, 0, size - 1), "promise_in_bounds"
    elif mode == "wrap":
        ind_arr, scatter_mode = ind_arr % size, "promise_in_bounds"
    elif mode == "raise":
        raise NotImplementedError("The 'raise' mode to jnp.put is not supported.")
    else:
        raise ValueError(f"mode should be one of 'wrap' or 'clip'; got mode={mode!r}")
    return arr.at[jnp.unravel_index(ind_arr, arr.shape)].set(v_arr, mode=scatter_mode)


def put_along_axis(arr, indices, values, axis, inplace=True, *, mode=None):
    """jnp.put_along_axis: a copy of arr with values placed at the indices along `axis` (the
    inverse of take_along_axis)."""
    if inplace:
        raise ValueError("jax.numpy.put_along_axis cannot modify arrays in-place, because JAX "
                         "arrays are immutable. Pass inplace=False to instead return an updated "
                         "array.")
    _arguments.check_arraylike("put_along_axis", arr, indices, values)
    arr, indices, values = jnp.asarray(arr), jnp.asarray(indices), jnp.asarray(values)
    shape, original_axis = tuple(arr.shape), axis
    if axis is None:
        arr, axis = jnp.ravel(arr), 0
    if arr.ndim != indices.ndim:
        raise ValueError("put_along_axis arguments 'arr' and 'indices' must have same ndim. "
                         f"Got arr.ndim={arr.ndim} and indices.ndim={indices.ndim}.")
    try:
        values = jnp.broadcast_to(values, tuple(indices.shape))
    except ValueError:
        raise ValueError("put_along_axis argument 'values' must be broadcastable to 'indices'. "
                         f"Got values.shape={tuple(values.shape)} and "
                         f"indices.shape={tuple(indices.shape)}.") from None
    axis = operator.index(axis) % arr.ndim
    index = list(jnp.indices(tuple(arr.shape), sparse=True))
    index[axis] = indices
    result = arr.at[tuple(index)].set(values, mode=mode)
    return jnp.reshape(result, shape) if original_axis is None else result


def fill_diagonal(a, val, wrap=False, *, inplace=True):
    """jnp.fill_diagonal: a copy of `a` with val (a scalar, or repeated to the diagonal's
    length) on its main diagonal."""
    if inplace:
        raise NotImplementedError("JAX arrays are immutable, must use inplace=False")
    if wrap:
        raise NotImplementedError("wrap=True is not implemented, must use wrap=False")
    _arguments.check_arraylike("fill_diagonal", a, val)
    a, val = jnp.asarray(a), jnp.asarray(val)
    if a.ndim < 2:
        raise ValueError("array must be at least 2-d")
    if a.ndim > 2 and not all(n == a.shape[0] for n in a.shape[1:]):
        raise ValueError("All dimensions of input must be of equal length")
    n = min(a.shape)
    idx = jnp.diag_indices(n, a.ndim)
    return a.at[idx].set(val if val.ndim == 0 else _tile_to_size(jnp.ravel(val), n))


def diagflat(v, k=0):
    """jnp.diagflat: the flattened v on the k-th diagonal of a square array."""
    _arguments.check_arraylike("diagflat", v)
    flat = jnp.ravel(v)
    k = operator.index(k)
    side = flat.shape[0] + abs(k)
    i = np.arange(0, side - abs(k))
    at = i + k + i * side if k >= 0 else i + (i - k) * side
    return jnp.reshape(jnp.zeros(side * side, dtype=flat.dtype).at[at].set(flat), (side, side))


def ravel_multi_index(multi_index, dims, mode="raise", order="C", *, dtype=None):
    """jnp.ravel_multi_index: the flat index of each coordinate tuple in an array of shape
    dims (mode 'raise' needs concrete indices; 'clip', 'wrap' and 'ignore' do not)."""
    if len(multi_index) != len(dims):
        raise ValueError(f"len(multi_index)={len(multi_index)} != len(dims)={len(dims)}")
    dims = tuple(operator.index(d) for d in dims)
    _arguments.check_arraylike("ravel_multi_index", *multi_index)
    indices = [jnp.asarray(i) for i in multi_index]
    dtype = jnp.result_type(jnp.int32, *indices) if dtype is None else np.dtype(dtype)
    if not jnp.issubdtype(dtype, jnp.integer):
        raise ValueError(f"dtype={dtype} is not an integer type.")
    if math.prod(dims) - 1 > np.iinfo(np.dtype(str(dtype))).max:
        raise ValueError(f"jnp.ravel_multi_index: dtype={dtype} not large enough to hold "
                         f"flattened index for dims={dims}. Use the dtype argument to pass a "
                         "suitable dtype (e.g. dtype=np.min_scalar_type(prod(dims))).")
    for index in indices:
        if mode == "raise":
            _arguments.concrete(index, "The error occurred because ravel_multi_index was "
                                       "jit-compiled with mode='raise'. Use mode='wrap' or "
                                       "mode='clip' instead.")
        if not jnp.issubdtype(index.dtype, jnp.integer):
            raise TypeError("only int indices permitted")
    if mode == "raise":
        if any(np.any((np.asarray(i) < 0) | (np.asarray(i) >= d)) for i, d in zip(indices, dims)):
            raise ValueError("invalid entry in coordinates array")
    elif mode == "clip":
        indices = [jnp.clip(i, 0, d - 1) for i, d in zip(indices, dims)]
    elif mode == "wrap":
        indices = [i % d for i, d in zip(indices, dims)]
    elif mode != "ignore":
        raise ValueError(f"invalid mode={mode!r}. Expected 'raise', 'wrap', 'clip', or 'ignore'.")
    if order == "F":
        strides = np.cumprod((1,) + dims[:-1])
    elif order == "C":
        strides = np.cumprod((1,) + dims[1:][::-1])[::-1]
    else:
        raise ValueError(f"invalid order={order!r}. Expected 'C' or 'F'")
    result = jnp.asarray(0, dtype=dtype)
    for i, s in zip(indices, strides):
        result = result + jnp.astype(i, dtype) * int(s)
    return result


def ix_(*args):
    """jnp.ix_: each 1-D integer array shaped to index one dimension of an open mesh."""
    _arguments.check_arraylike("ix", *args)
    out = []
    for i, a in enumerate(args):
        a = jnp.asarray(a)
        if a.ndim != 1:
            raise ValueError(f"Arguments to jax.numpy.ix_ must be 1-dimensional, got shape "
                             f"{tuple(a.shape)}")
        if str(a.dtype) == "bool":
            raise NotImplementedError("Boolean arguments to jax.numpy.ix_ are not implemented")
        shape = [1] * len(args)
        shape[i] = a.shape[0]
        out.append(jnp.zeros(shape, jnp.int32) if a.shape[0] == 0 else jnp.reshape(a, shape))
    return tuple(out)


__all__ = ["acos", "asin", "atan", "atan2", "acosh", "asinh", "atanh", "put", "put_along_axis",
           "fill_diagonal", "diagflat", "ravel_multi_index", "ix_"]
