"""jax.numpy's value-dependent selections: nonzero, flatnonzero, argwhere, compress, extract,
lexsort and unique (with unique_all, unique_counts, unique_inverse, unique_values), composed as
JAX composes them (stable sorts, cumulative sums, a bincount), so that the values are JAX's.
Their result's length depends on the values: eagerly it is the true one; under jit it must be
given as `size` (padded with `fill_value` or truncated), and without it a traced argument is
JAX's ConcretizationTypeError."""
import builtins
import math
import operator
from typing import NamedTuple

import numpy as np

from . import _arguments
from . import numpy as jnp
from ._arguments import concrete as _concrete

_SIZE_HINT = ("To make jnp.unique() compatible with JIT and other transforms, you can specify a "
              "concrete value for the size argument, which will determine the output size.")


def lexsort(keys, axis=-1):
    """jnp.lexsort: the stable order of the keys' elements along `axis`, the last key first:
    one stable argsort per key, from the first to the last."""
    keys = tuple(keys)
    _arguments.check_arraylike("lexsort", *keys)
    if not keys:
        raise TypeError("need sequence of keys with len > 0 in lexsort")
    if len({np.shape(k) for k in keys}) > 1:
        raise ValueError("all keys need to be the same shape")
    if np.ndim(keys[0]) == 0:
        return jnp.zeros((), jnp.int32)
    perm = jnp.argsort(keys[0], axis=axis, stable=True)
    for key in keys[1:]:
        order = jnp.argsort(jnp.take_along_axis(jnp.asarray(key), perm, axis=axis), axis=axis,
                            stable=True)
        perm = jnp.take_along_axis(perm, order, axis=axis)
    return perm


def nonzero(a, *, size=None, fill_value=None):
    """jnp.nonzero: per axis, the indices of a's non-zero elements in row-major order (JAX's
    composition: a bincount of the running count of them)."""
    _arguments.check_arraylike("nonzero", a)
    arr = jnp.asarray(a)
    if arr.ndim == 0:
        raise ValueError("Calling nonzero on 0d arrays is not allowed. "
                         "Use jnp.atleast_1d(scalar).nonzero() instead.")
    mask = arr if str(arr.dtype) == "bool" else arr != 0
    if size is None:
        size = int(_concrete(jnp.sum(mask), "The size argument of jnp.nonzero must be "
                                            "statically specified to use jnp.nonzero within "
                                            "JAX transformations."))
    size = operator.index(size)
    if math.prod(arr.shape) == 0 or size == 0:
        return tuple(jnp.zeros(size, jnp.int32) for _ in arr.shape)
    flat = jnp.cumsum(jnp.bincount(jnp.cumsum(jnp.reshape(mask, (-1,))), length=size))
    strides = np.cumprod(arr.shape[::-1])[::-1] // np.asarray(arr.shape)
    out = tuple((flat // int(stride)) % n for stride, n in zip(strides, arr.shape))
    if fill_value is not None:
        fills = fill_value if isinstance(fill_value, tuple) else (fill_value,) * arr.ndim
        if len(fills) != arr.ndim or builtins.any(np.shape(f) != () for f in fills):
            raise ValueError(f"fill_value must be a scalar or a tuple of length {arr.ndim}; "
                             f"got {fill_value}")
        past = jnp.arange(size) >= jnp.sum(mask)
        out = tuple(jnp.where(past, f, entry) for f, entry in zip(fills, out))
    return out


def flatnonzero(a, *, size=None, fill_value=None):
    return nonzero(jnp.ravel(a), size=size, fill_value=fill_value)[0]


def argwhere(a, *, size=None, fill_value=None):
    _arguments.check_arraylike("argwhere", a)
    a = jnp.asarray(a)
    result = jnp.transpose(jnp.stack(nonzero(jnp.atleast_1d(a), size=size,
                                             fill_value=fill_value)))
    if a.ndim == 0:
        return jnp.reshape(result[:0], (result.shape[0], 0))
    return jnp.reshape(result, (result.shape[0], a.ndim))


def compress(condition, a, axis=None, *, size=None, fill_value=0, out=None):
    _arguments.check_arraylike("compress", condition, a, fill_value)
    condition = jnp.astype(jnp.asarray(condition), bool)
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.compress is not supported.")
    if condition.ndim != 1:
        raise ValueError("condition must be a 1D array")
    arr = jnp.asarray(a)
    if axis is None:
        axis, arr = 0, jnp.ravel(arr)
    else:
        arr = jnp.moveaxis(arr, axis, 0)
    condition, extra = condition[:arr.shape[0]], condition[arr.shape[0]:]
    arr = arr[:condition.shape[0]]
    if size is None:
        if np.any(_concrete(extra, "jnp.compress's condition: pass size= inside jit")):
            raise ValueError("condition contains entries that are out of bounds")
        result = arr[_concrete(condition, "jnp.compress's condition: pass size= inside jit")]
    elif not 0 <= size <= arr.shape[0]:
        raise ValueError("size must be positive and not greater than the size of the array "
                         f"axis; got size={size} for a.shape[axis]={arr.shape[0]}")
    else:
        mask = jnp.reshape(condition, (-1,) + (1,) * (arr.ndim - 1))
        arr = jnp.where(mask, arr, jnp.asarray(fill_value, dtype=arr.dtype))
        result = arr[jnp.argsort(condition, stable=True, descending=True)][:size]
    return jnp.moveaxis(result, 0, axis)


def extract(condition, arr, *, size=None, fill_value=0):
    _arguments.check_arraylike("extract", condition, arr, fill_value)
    return compress(jnp.ravel(condition), jnp.ravel(arr), size=size, fill_value=fill_value)


def _sorted_mask(ar, axis, equal_nan):
    """(ar's slices along axis sorted lexicographically, the mask of the first of each run of
    equal ones, the sorting permutation), as JAX's _unique_sorted_mask."""
    aux = jnp.moveaxis(ar, axis, 0)
    n, rest = aux.shape[0], math.prod(aux.shape[1:])
    if rest == 0:
        n, perm = 1, jnp.zeros(1, jnp.int32)
    else:
        perm = lexsort(jnp.reshape(aux, (n, rest)).T[::-1])
    aux = aux[perm]
    if math.prod(aux.shape) == 0:
        return aux, jnp.zeros(n, bool), perm
    later, earlier = aux[1:], aux[:-1]
    differ = later != earlier
    if jnp.issubdtype(aux.dtype, jnp.inexact) and equal_nan:
        differ = differ & ~(jnp.isnan(later) & jnp.isnan(earlier))
    if aux.ndim > 1:
        differ = jnp.any(differ, axis=tuple(range(1, aux.ndim)))
    return aux, jnp.ones(n, bool).at[1:].set(differ), perm


def _unique(ar, axis, return_index, return_inverse, return_counts, equal_nan, size,
            fill_value, return_true_size=False):
    if ar.shape[axis] == 0 and size and fill_value is None:
        raise ValueError("jnp.unique: for zero-sized input with nonzero size argument, "
                         "fill_value must be specified")
    aux, mask, perm = _sorted_mask(ar, axis, equal_nan)
    if size is None:
        ind = _concrete(mask, "The error arose in jnp.unique(). " + _SIZE_HINT)
    else:
        ind = nonzero(mask, size=size)[0]
    has = math.prod(aux.shape) > 0
    result = aux[ind] if has else aux
    if size is not None and fill_value is not None:
        fill = jnp.astype(jnp.asarray(fill_value), result.dtype)
        if result.shape[0]:
            valid = jnp.reshape(jnp.arange(size) < jnp.sum(mask), (-1,) + (1,) *
                                (result.ndim - 1))
            result = jnp.where(valid, result, fill)
        else:
            result = jnp.full((size,) + tuple(result.shape[1:]), fill, dtype=result.dtype)
    out = (jnp.moveaxis(result, 0, axis),)
    if return_index:
        out += (perm[ind] if has else perm,)
    if return_inverse:
        if has:
            inverse = jnp.zeros(mask.shape, jnp.int32).at[perm].set(jnp.cumsum(mask) - 1)
        else:
            inverse = jnp.zeros(ar.shape[axis], jnp.int32)
        out += (inverse,)
    if return_counts:
        if has:
            if size is None:
                idx = jnp.append(nonzero(mask)[0], mask.shape[0])
            else:
                idx = nonzero(mask, size=size + 1)[0]
                idx = idx.at[1:].set(jnp.where(idx[1:], idx[1:], mask.shape[0]))
            out += (jnp.diff(idx),)
        elif ar.shape[axis]:
            out += (jnp.full((1,), ar.shape[axis], dtype=jnp.int32),)
        else:
            out += (jnp.zeros(0, jnp.int32),)
    if return_true_size:  # how many distinct values there are, whatever `size` kept
        out += (jnp.sum(mask),)
    return out[0] if len(out) == 1 else out


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None, *,
           equal_nan=True, size=None, fill_value=None, sorted=True):  # noqa: A002 - JAX's name
    """jnp.unique: the sorted distinct values (or slices along `axis`), with the first index of
    each, the inverse and the counts as asked."""
    _arguments.check_arraylike("unique", ar)
    arr = jnp.asarray(ar)
    if size is None:
        _concrete(ar, "The error arose for the first argument of jnp.unique(). " + _SIZE_HINT)
    else:
        size = operator.index(size)
    shape = tuple(arr.shape)
    if axis is None:
        axis_int, arr = 0, jnp.ravel(arr)
    else:
        axis_int = operator.index(axis) % arr.ndim
    result = _unique(arr, axis_int, return_index, return_inverse, return_counts, equal_nan,
                     size, fill_value)
    if return_inverse and axis is None:
        i = 2 if return_index else 1
        result = (*result[:i], jnp.reshape(result[i], shape), *result[i + 1:])
    return result


class _UniqueAllResult(NamedTuple):
    values: object
    indices: object
    inverse_indices: object
    counts: object


class _UniqueCountsResult(NamedTuple):
    values: object
    counts: object


class _UniqueInverseResult(NamedTuple):
    values: object
    inverse_indices: object


def unique_all(x, /, *, size=None, fill_value=None):
    _arguments.check_arraylike("unique_all", x)
    return _UniqueAllResult(*unique(x, return_index=True, return_inverse=True,
                                    return_counts=True, equal_nan=False, size=size,
                                    fill_value=fill_value))


def unique_counts(x, /, *, size=None, fill_value=None):
    _arguments.check_arraylike("unique_counts", x)
    return _UniqueCountsResult(*unique(x, return_counts=True, equal_nan=False, size=size,
                                       fill_value=fill_value))


def unique_inverse(x, /, *, size=None, fill_value=None):
    _arguments.check_arraylike("unique_inverse", x)
    return _UniqueInverseResult(*unique(x, return_inverse=True, equal_nan=False, size=size,
                                        fill_value=fill_value))


def unique_values(x, /, *, size=None, fill_value=None):
    _arguments.check_arraylike("unique_values", x)
    return unique(x, equal_nan=False, size=size, fill_value=fill_value)


# The set operations of two arrays (raveled), as jax.numpy composes them: eagerly the true
# result; under jit `size` elements, the first of the sorted result, padded with `fill_value`
# (by default: union1d's and setdiff1d's as unique's, intersect1d's and setxor1d's the smallest
# value found, or 0 where none is).

def _two(name, ar1, ar2, size):
    _arguments.check_arraylike(name, ar1, ar2)
    arr1, arr2 = jnp.ravel(jnp.asarray(ar1)), jnp.ravel(jnp.asarray(ar2))
    dtype = jnp.result_type(ar1, ar2)
    arr1, arr2 = jnp.astype(arr1, dtype), jnp.astype(arr2, dtype)
    if size is None:
        for a in (ar1, ar2):
            _concrete(a, f"The error arose in {name}()")
        return arr1, arr2, None
    return arr1, arr2, operator.index(size)


def _first(valid_count, vals, fill_value):
    """vals with the entries from valid_count on replaced by fill_value, or by JAX's default:
    the smallest of the rest after the padding became the largest (the smallest valid value)."""
    valid = jnp.arange(vals.shape[0]) < valid_count
    if fill_value is not None:
        return jnp.where(valid, vals, jnp.astype(jnp.asarray(fill_value), vals.dtype))
    if not vals.shape[0]:
        return vals
    vals = jnp.where(valid, vals, jnp.max(vals))
    return jnp.where(valid, vals, jnp.min(vals))


def _unique_counted(arr):
    """(the sorted distinct values padded with 0 to arr's length, the first index of each, how
    many there are): JAX's _unique(…, size=arr.size, return_index=True, return_true_size=True)."""
    if arr.shape[0] == 0:
        return arr, jnp.zeros(0, jnp.int32), 0
    return _unique(arr, 0, True, False, False, True, arr.shape[0], 0, return_true_size=True)


def union1d(ar1, ar2, *, size=None, fill_value=None):
    """jnp.union1d: the sorted distinct values of both."""
    _arguments.check_arraylike("union1d", ar1, ar2)
    if size is None:
        for a in (ar1, ar2):
            _concrete(a, "The error arose in union1d()")
    else:
        size = operator.index(size)
    both = jnp.concatenate((jnp.asarray(ar1), jnp.asarray(ar2)), axis=None)
    return unique(both, size=size, fill_value=fill_value)


def setdiff1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    """jnp.setdiff1d: the sorted distinct values of ar1 that are not in ar2."""
    _arguments.check_arraylike("setdiff1d", ar1, ar2)
    arr1, arr2 = jnp.ravel(jnp.asarray(ar1)), jnp.ravel(jnp.asarray(ar2))
    if size is None:
        _concrete(ar1, "The error arose in setdiff1d()")
    else:
        size = operator.index(size)
    fill = jnp.full_like(arr1, 0 if fill_value is None else fill_value, shape=())
    if arr1.shape[0] == 0:
        return jnp.full_like(arr1, fill, shape=size or 0)
    if not assume_unique:
        arr1 = unique(arr1, size=size and arr1.shape[0])
    mask = jnp.isin(arr1, arr2, invert=True)
    if size is None:
        return arr1[mask]
    if not assume_unique:
        n_unique = arr1.shape[0] + 1 - jnp.sum(arr1 == arr1[0])
        mask = jnp.where(jnp.arange(arr1.shape[0]) < n_unique, mask, False)
    return jnp.where(jnp.arange(size) < jnp.sum(mask), arr1[nonzero(mask, size=size)[0]], fill)


def setxor1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    """jnp.setxor1d: the sorted distinct values in exactly one of the two."""
    arr1, arr2, size = _two("setxor1d", ar1, ar2, size)
    if size is None:
        if not assume_unique:
            arr1, arr2 = unique(arr1), unique(arr2)
        aux = jnp.concatenate((arr1, arr2))
        if aux.shape[0] == 0:
            return aux
        aux = jnp.sort(aux)
        flag = jnp.concatenate((jnp.array([True]), aux[1:] != aux[:-1], jnp.array([True])))
        return aux[flag[1:] & flag[:-1]]
    if assume_unique:
        aux = jnp.sort(jnp.concatenate((arr1, arr2)))
        flag = jnp.concatenate((jnp.array([bool(aux.shape[0])]), aux[1:] != aux[:-1],
                                jnp.array([True])))
    else:
        u1, _, n1 = _unique_counted(arr1)
        u2, _, n2 = _unique_counted(arr2)
        arr = _placed(u1, u2, n1)
        count = n1 + n2
        mask = jnp.arange(arr.shape[0] + 1) < count + 1
        aux = jnp.take_along_axis(arr, lexsort((arr, ~mask[1:])), axis=0)
        flag = mask & jnp.concatenate((jnp.array([bool(aux.shape[0])]), aux[1:] != aux[:-1],
                                       jnp.array([False]))).at[count].set(True)
    aux_mask = flag[1:] & flag[:-1]
    return _first(jnp.sum(aux_mask), _picked(aux, aux_mask, size)[1], fill_value)


def _picked(aux, aux_mask, size):
    """(where, values): the first `size` positions aux_mask marks (aux's length past them) and
    aux's values there (0 past them)."""
    if not aux.shape[0]:
        return jnp.arange(0), jnp.zeros(size, aux.dtype)
    at = nonzero(aux_mask, size=size, fill_value=aux.shape[0])[0]
    return at, aux.at[at].get(mode="fill", fill_value=0)


def _placed(u1, u2, n1):
    """u1's first n1 values, then u2's, in zeros of both lengths (dynamic_update_slice's)."""
    from . import lax
    arr = jnp.zeros(u1.shape[0] + u2.shape[0], jnp.result_type(u1, u2))
    arr = lax.dynamic_update_slice(arr, u1, (0,))
    return lax.dynamic_update_slice(arr, u2, (n1,))


def intersect1d(ar1, ar2, assume_unique=False, return_indices=False, *, size=None,
                fill_value=None):
    """jnp.intersect1d: the sorted distinct values in both, and with return_indices the first
    index of each in ar1 and in ar2."""
    arr1, arr2, size = _two("intersect1d", ar1, ar2, size)
    if size is not None:
        return _intersect1d_size(arr1, arr2, assume_unique, return_indices, size, fill_value)
    ind1 = ind2 = jnp.arange(0)
    if not assume_unique:
        if return_indices:
            arr1, ind1 = unique(arr1, return_index=True)
            arr2, ind2 = unique(arr2, return_index=True)
        else:
            arr1, arr2 = unique(arr1), unique(arr2)
    arr = jnp.concatenate((arr1, arr2))
    order = jnp.argsort(arr, stable=True)
    aux = arr[order]
    mask = aux[1:] == aux[:-1]
    found = aux[:-1][mask]
    if not return_indices:
        return found
    first, second = order[:-1][mask], order[1:][mask] - arr1.shape[0]
    if not assume_unique:
        first, second = ind1[first], ind2[second]
    return found, first, second


def _intersect1d_size(arr1, arr2, assume_unique, return_indices, size, fill_value):
    if assume_unique:
        ind1, n1 = jnp.arange(arr1.shape[0]), arr1.shape[0]
        ind2 = jnp.arange(arr2.shape[0])
        arr = jnp.concatenate((arr1, arr2))
        order = jnp.argsort(arr, stable=True)
        mask = jnp.ones(arr.shape[0], bool)
    else:
        arr1, ind1, n1 = _unique_counted(arr1)
        arr2, ind2, n2 = _unique_counted(arr2)
        arr = _placed(arr1, arr2, n1)
        mask = jnp.arange(arr.shape[0]) < n1 + n2
        order = lexsort((arr, ~mask))
    aux = arr[order] if arr.shape[0] else arr
    aux_mask = (aux[1:] == aux[:-1]) & mask[1:]
    count = jnp.sum(aux_mask)
    at, vals = _picked(aux, aux_mask, size)
    vals = _first(count, vals, fill_value)
    if not return_indices:
        return vals
    valid = jnp.arange(size) < count
    first = jnp.where(valid, order.at[at].get(mode="fill", fill_value=arr1.shape[0]),
                      arr1.shape[0])
    second = jnp.where(valid, order.at[at + 1].get(mode="fill", fill_value=arr2.shape[0]) - n1,
                       arr2.shape[0])
    if not assume_unique:
        first = ind1.at[first].get(mode="fill", fill_value=ind1.shape[0])
        second = ind2.at[second].get(mode="fill", fill_value=ind2.shape[0])
    return vals, first, second


__all__ = ["lexsort", "nonzero", "flatnonzero", "argwhere", "compress", "extract", "unique",
           "unique_all", "unique_counts", "unique_inverse", "unique_values", "union1d",
           "setdiff1d", "setxor1d", "intersect1d"]
