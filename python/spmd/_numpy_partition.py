"""jnp.partition and jnp.argpartition: the kth smallest element in its sorted place, the smaller
ones before it and the larger after, as JAX composes them of two lax.top_k calls (the smallest
kth + 1 in ascending order, then the rest in descending order: JAX's order, not NumPy's)."""
import operator

import numpy as np

from . import _arguments
from . import numpy as jnp


def _prepared(name, a, kth, axis):
    _arguments.check_arraylike(name, a)
    arr = jnp.asarray(a)
    if jnp.issubdtype(arr.dtype, jnp.complexfloating):
        raise NotImplementedError(f"jnp.{name} for complex dtype is not implemented.")
    ndim = arr.ndim
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    axis %= ndim
    n = arr.shape[axis]
    kth = operator.index(kth)
    if not -n <= kth < n:
        raise ValueError(f"axis {kth} is out of bounds for array of dimension {n}")
    return jnp.swapaxes(arr, axis, -1), kth % n, axis


def _negated(arr):
    """-arr for top_k's smallest-first, an unsigned one as -(arr + 1) (JAX's)."""
    if jnp.issubdtype(arr.dtype, jnp.unsignedinteger):
        return -(arr + 1)
    return -arr


def partition(a, kth, axis=-1):
    """jnp.partition."""
    from . import lax
    arr, kth, axis = _prepared("partition", a, kth, axis)
    smallest = lax.top_k(_negated(arr), kth + 1)[0]
    bottom = -smallest - 1 if jnp.issubdtype(arr.dtype, jnp.unsignedinteger) else -smallest
    top = lax.top_k(arr, arr.shape[-1] - kth - 1)[0]
    return jnp.swapaxes(jnp.concatenate([bottom, top], axis=-1), -1, axis)


def argpartition(a, kth, axis=-1):
    """jnp.argpartition: the indices partition's elements come from."""
    from . import lax
    from ._transforms import vmap
    arr, kth, axis = _prepared("argpartition", a, kth, axis)
    bottom = lax.top_k(_negated(arr), kth + 1)[1]

    def set_to_zero(v, i):
        return v.at[i].set(0)
    for _ in range(arr.ndim - 1):
        set_to_zero = vmap(set_to_zero)
    proxy = set_to_zero(jnp.ones(arr.shape, np.float32), bottom)
    top = lax.top_k(proxy, arr.shape[-1] - kth - 1)[1]
    return jnp.swapaxes(jnp.concatenate([bottom, top], axis=-1), -1, axis)


__all__ = ["argpartition", "partition"]
