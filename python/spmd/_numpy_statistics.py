"""jax.numpy's order statistics: quantile, percentile, median and their NaN-skipping forms, as
JAX's _quantile computes them (the line sorted, the two neighbours of q * (n - 1) gathered and
weighted in q's dtype; inverted_cdf with or without weights), so that the values are JAX's bit
for bit. Method "linear" repeats what XLA's CPU code does with low * w_low + high * w_high: one
fused multiply-add, fma(low, w_low, high * w_high) for quantile and fma(high, w_high,
low * w_low) for nanquantile (read from JAX 0.10.2's values), computed in float64 from float32
(the product exact there, so only the sum rounds twice: a 1-ulp difference in about one element
in 2^28, none seen). The reduced axes are moved to the end and flattened into one line first;
every step is per line, so the values do not depend on where the line lies."""
import math
import operator

import numpy as np

from . import _arguments, lax
from . import numpy as jnp
from ._fused import fma

_METHODS = ("linear", "lower", "higher", "midpoint", "nearest", "inverted_cdf")


def _inexact(x):
    x = jnp.asarray(x)
    return x if jnp.issubdtype(x.dtype, jnp.inexact) else jnp.asarray(x, jnp.float32)


class _NoValues(TypeError, IndexError):
    """A quantile over no values. JAX refuses it by accident of its gather (TypeError) or of its
    indexing (IndexError, for some NaN-skipping forms); this is both."""


def _lines(a, axis, keepdims):
    """(a with the reduced axes flattened into its last, the shape a keepdims result has after
    q's dimensions, or None without keepdims); _NoValues when the axes hold none."""
    lines, shape = _flattened(a, axis, keepdims)
    if lines.shape[-1] == 0:
        raise _NoValues(f"quantile: the reduced axes of an array of shape {tuple(a.shape)} hold "
                        "no values to take a quantile of")
    return lines, shape


def _flattened(a, axis, keepdims):
    if axis is None:
        return jnp.reshape(a, (-1,)), ((1,) * a.ndim if keepdims else None)
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    axes = tuple(_axis(ax, a.ndim) for ax in axes)
    if len(set(axes)) != len(axes):
        raise ValueError("repeated axis")
    kept = [d for d in range(a.ndim) if d not in axes]
    lines = jnp.transpose(a, kept + list(axes))
    lines = jnp.reshape(lines, tuple(a.shape[d] for d in kept) +
                        (math.prod(a.shape[d] for d in axes),))
    shape = tuple(1 if d in axes else a.shape[d] for d in range(a.ndim))
    return lines, (shape if keepdims else None)


def _axis(ax, ndim):
    ax = operator.index(ax)
    if not -ndim <= ax < ndim:
        raise ValueError(f"axis {ax} is out of bounds for array of dimension {ndim}")
    return ax % ndim


def _gather(a, index):
    """a's lines (…, n) at index (q_shape + a.shape[:-1]), one element per line and q."""
    lead = tuple(index.shape[:index.ndim - (a.ndim - 1)])
    lines = jnp.broadcast_to(a, lead + tuple(a.shape))
    return jnp.take_along_axis(lines, index[..., None], axis=-1)[..., 0]


def _neighbours(a, q, squash_nans):
    """(the lower and upper neighbours' values, their weights) of each quantile q along a's
    sorted last axis."""
    if squash_nans:
        a = jnp.sort(jnp.where(jnp.isnan(a), np.nan, a), axis=-1)
        counts = jnp.sum(jnp.logical_not(jnp.isnan(a)), axis=-1, dtype=q.dtype)
        last = counts - jnp.asarray(1, q.dtype)
        position = jnp.reshape(q, q.shape + (1,) * counts.ndim) * last
    else:
        a = jnp.sort(jnp.where(jnp.any(jnp.isnan(a), axis=-1, keepdims=True), np.nan, a),
                     axis=-1)
        last = jnp.asarray(a.shape[-1], q.dtype) - jnp.asarray(1, q.dtype)
        position = jnp.reshape(q, q.shape + (1,) * (a.ndim - 1)) * last
    low, high = jnp.floor(position), jnp.ceil(position)
    high_weight = position - low
    low_weight = jnp.asarray(1, q.dtype) - high_weight
    low = jnp.maximum(jnp.asarray(0, q.dtype), jnp.minimum(low, last))
    high = jnp.maximum(jnp.asarray(0, q.dtype), jnp.minimum(high, last))
    shape = tuple(q.shape) + tuple(a.shape[:-1])
    low = jnp.broadcast_to(jnp.astype(low, jnp.int32), shape)
    high = jnp.broadcast_to(jnp.astype(high, jnp.int32), shape)
    low_weight = jnp.broadcast_to(low_weight, shape)
    high_weight = jnp.broadcast_to(high_weight, shape)
    return a, _gather(a, low), _gather(a, high), low_weight, high_weight


def _fma_lerp(low, low_weight, high, high_weight, high_fused=False):
    """fma(low, low_weight, high * high_weight), or fma(high, high_weight, low * low_weight)
    when high_fused, for float32 operands (in float64: the product exact, the sum rounded to
    float64 and then to float32); the plain expression otherwise."""
    t = jnp._t
    if str(low.dtype) != "float32":
        return t.add(t.multiply(low, low_weight), t.multiply(high, high_weight))
    if high_fused:
        low, low_weight, high, high_weight = high, high_weight, low, low_weight
    return fma(low, low_weight, t.multiply(high, high_weight))


_fused_lerp = jnp._op(_fma_lerp)


def _quantile(a, q, axis, method, keepdims, squash_nans, weights=None):
    if method not in _METHODS:
        raise ValueError("method can only be 'linear', 'lower', 'higher', 'midpoint', 'nearest'"
                         " or 'inverted_cdf'")
    if weights is not None:
        if method != "inverted_cdf":
            raise NotImplementedError(f"{method} doesn't support weights. Only method "
                                      "'inverted_cdf' supports weights.")
        return _inverted_cdf_weighted(a, q, axis, keepdims, squash_nans, weights)
    a, q = _inexact(a), jnp.asarray(q)
    if q.ndim > 1:
        raise ValueError(f"q must be have rank <= 1, got shape {tuple(q.shape)}")
    dtype = a.dtype
    lines, keep_shape = _lines(a, axis, keepdims)
    if method == "inverted_cdf":
        result = _inverted_cdf(lines, q, squash_nans, jnp.ones_like(lines))
    else:
        _, low_value, high_value, low_weight, high_weight = _neighbours(lines, q, squash_nans)
        if method == "linear":
            result = _fused_lerp(jnp.astype(low_value, q.dtype), low_weight,
                                 jnp.astype(high_value, q.dtype), high_weight, squash_nans)
        elif method == "lower":
            result = low_value
        elif method == "higher":
            result = high_value
        elif method == "nearest":
            result = jnp.where(high_weight <= jnp.asarray(0.5, high_weight.dtype), low_value,
                               high_value)
        else:  # midpoint
            result = (low_value + high_value) * jnp.asarray(0.5, low_value.dtype)
    if keep_shape is not None:
        result = jnp.reshape(result, tuple(q.shape) + keep_shape)
    return jnp.astype(result, dtype)


def _inverted_cdf(lines, q, squash_nans, weights):
    """JAX's inverted_cdf along the last axis of the lines, weights beside them."""
    if squash_nans:
        lines = jnp.where(jnp.isnan(lines), np.nan, lines)
    else:
        lines = jnp.where(jnp.any(jnp.isnan(lines), axis=-1, keepdims=True), np.nan, lines)
    lines, weights = lax.sort_key_val(lines, weights, dimension=lines.ndim - 1)
    zeros = jnp.zeros_like(weights)
    bad = jnp.logical_or(weights < zeros, jnp.isnan(weights))
    nan_data = jnp.isnan(lines)
    clean = jnp.where(jnp.logical_or(bad, nan_data), zeros, weights)
    cum = jnp.cumsum(clean, axis=-1)
    total = cum[..., -1]
    extra = (1,) * total.ndim
    target = jnp.reshape(q, tuple(q.shape) + extra) * total
    below = jnp.reshape(cum, (1,) * q.ndim + tuple(cum.shape)) < target[..., None]
    idx = jnp.sum(jnp.astype(below, jnp.int32), axis=-1)
    if squash_nans:
        valid = jnp.sum(jnp.logical_not(nan_data), axis=-1, dtype=q.dtype)
    else:
        valid = jnp.full(total.shape, lines.shape[-1], dtype=q.dtype)
    max_idx = jnp.astype(valid - jnp.asarray(1, q.dtype), jnp.int32)
    idx = jnp.maximum(0, jnp.minimum(idx, max_idx))
    result = _gather(lines, idx)
    all_nan = valid == jnp.zeros_like(valid)
    any_bad = jnp.any(bad, axis=-1)
    force = jnp.logical_or(any_bad, all_nan if squash_nans else jnp.any(nan_data, axis=-1))
    return jnp.where(force, jnp.full_like(result, np.nan), result)


def _inverted_cdf_weighted(a, q, axis, keepdims, squash_nans, weights):
    a, weights = jnp.asarray(a), jnp.asarray(weights)
    dtype = jnp.result_type(a, weights)
    dtype = dtype if jnp.issubdtype(dtype, jnp.inexact) else jnp.float32
    a, weights, q = jnp.astype(a, dtype), jnp.astype(weights, dtype), jnp.asarray(q)
    if tuple(weights.shape) != tuple(a.shape):
        if axis is None:
            raise ValueError("Weights shape must match 'a' shape when axis is None.")
        axes = (axis,) if isinstance(axis, int) else tuple(axis)
        axes = tuple(_axis(ax, a.ndim) for ax in axes)
        want = tuple(a.shape[ax] for ax in axes)
        if tuple(weights.shape) != want:
            raise ValueError(f"Weights shape {tuple(weights.shape)} must match reduction axes "
                             f"{want}")
        order = sorted(range(len(axes)), key=lambda i: axes[i])
        weights = jnp.transpose(weights, order) if len(axes) > 1 else weights
        shape = [a.shape[d] if d in axes else 1 for d in range(a.ndim)]
        weights = jnp.broadcast_to(jnp.reshape(weights, tuple(shape)), tuple(a.shape))
    lines, keep_shape = _lines(a, axis, keepdims)
    weight_lines, _ = _lines(weights, axis, keepdims)
    result = _inverted_cdf(lines, q, squash_nans, weight_lines)
    if keep_shape is not None:
        result = jnp.reshape(result, tuple(q.shape) + keep_shape)
    return jnp.astype(result, dtype)


def _checked(name, a, q, weights=None):
    _arguments.check_arraylike(name, a, q)
    if weights is not None:
        _arguments.check_arraylike(name, weights)


def _refuse_out(name, out, overwrite_input):
    if overwrite_input or out is not None:
        raise ValueError(f"jax.numpy.{name} does not support overwrite_input=True or "
                         "out != None")


def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False,
             *, weights=None):
    _checked("quantile", a, q, weights)
    _refuse_out("quantile", out, overwrite_input)
    return _quantile(a, q, axis, method, keepdims, False, weights)


def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                keepdims=False, *, weights=None):
    _checked("nanquantile", a, q, weights)
    _refuse_out("nanquantile", out, overwrite_input)
    return _quantile(a, q, axis, method, keepdims, True, weights)


def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
               keepdims=False, *, weights=None, out_sharding=None):
    _checked("percentile", a, q, weights)
    return quantile(a, _inexact(q) / 100, axis=axis, out=out, overwrite_input=overwrite_input,
                    method=method, keepdims=keepdims, weights=weights)


def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                  keepdims=False, *, weights=None):
    _checked("nanpercentile", a, q, weights)
    return nanquantile(a, _inexact(q) / 100, axis=axis, out=out,
                       overwrite_input=overwrite_input, method=method, keepdims=keepdims,
                       weights=weights)


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    _arguments.check_arraylike("median", a)
    return quantile(a, 0.5, axis=axis, out=out, overwrite_input=overwrite_input,
                    keepdims=keepdims, method="midpoint")


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    _arguments.check_arraylike("nanmedian", a)
    return nanquantile(a, 0.5, axis=axis, out=out, overwrite_input=overwrite_input,
                       keepdims=keepdims, method="midpoint")


__all__ = ["quantile", "nanquantile", "percentile", "nanpercentile", "median", "nanmedian"]
