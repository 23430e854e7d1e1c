"""jax.numpy's counting: bincount, histogram_bin_edges, histogram, histogram2d and
histogramdd, composed as JAX composes them (searchsorted for the bin, a scatter-add for the
counts, each update added in its order), so that the values are JAX's bit for bit."""
import builtins
import operator

import numpy as np

from . import _arguments
from . import numpy as jnp
from ._arguments import concrete as _concrete
from ._core import Tensor


def bincount(x, weights=None, minlength=0, *, length=None, out_sharding=None):
    """jnp.bincount: the count (or summed weight) of each non-negative integer in the 1-D x,
    negative ones counted in bin 0 and those at or past `length` dropped. Without `length` the
    bins reach x's largest value, which must then be concrete (not traced)."""
    _arguments.check_arraylike("bincount", x)
    x = jnp.asarray(x)
    if np.dtype(str(x.dtype)) == np.bool_:
        x = jnp.astype(x, jnp.int32)
    if not jnp.issubdtype(x.dtype, jnp.integer):
        raise TypeError(f"x argument to bincount must have an integer type; got {x.dtype}")
    if x.ndim != 1:
        raise ValueError("only 1-dimensional input supported.")
    minlength = operator.index(minlength)
    if length is None:
        values = _concrete(x, "The error occurred because of argument 'x' of jnp.bincount. To "
                              "avoid this error, pass a static `length` argument.")
        length = builtins.max(minlength, values.size and int(builtins.max(0, values.max())) + 1)
    else:
        length = operator.index(length)
    if weights is None:
        weights = np.array(1, dtype=np.int32)
    elif np.shape(x) != np.shape(weights):
        raise ValueError(f"type of weights must match type of x. Got typeof(x)={x.dtype}"
                         f"{list(x.shape)} and typeof(weights)={jnp.asarray(weights).dtype}"
                         f"{list(np.shape(weights))}")
    dtype = jnp.asarray(weights).dtype
    return jnp.zeros(length, dtype).at[jnp.clip(x, 0)].add(weights, mode="drop")


def _inexact_dtype(dtype):
    return dtype if jnp.issubdtype(dtype, jnp.inexact) else jnp.float32


def histogram_bin_edges(a, bins=10, range=None, weights=None):  # noqa: A002 - NumPy's name
    """jnp.histogram_bin_edges: the given 1-D edges, or `bins` + 1 evenly spaced over `range`
    (a's extremes by default; a range of zero width widened by a half on each side)."""
    if isinstance(bins, str):
        raise NotImplementedError("string values for `bins` not implemented.")
    _arguments.check_arraylike("histogram_bin_edges", a, bins)
    arr = jnp.asarray(a)
    dtype = _inexact_dtype(arr.dtype)
    if np.ndim(bins) == 1:
        return jnp.asarray(bins, dtype=dtype)
    count = operator.index(_concrete(bins, "bins argument of histogram_bin_edges"))
    if range is None:
        range = [jnp.min(arr), jnp.max(arr)]  # noqa: A001
    range = jnp.asarray(jnp.stack([jnp.asarray(r) for r in range])
                        if isinstance(range, (list, tuple)) else range, dtype=dtype)
    if tuple(range.shape) != (2,):
        raise ValueError(f"`range` must be either None or a sequence of scalars, got {range}")
    flat = jnp.ptp(range) == 0
    lo = jnp.where(flat, range[0] - 0.5, range[0])
    hi = jnp.where(flat, range[1] + 0.5, range[1])
    if not isinstance(lo, Tensor):  # concrete: linspace's formula as XLA fuses it, on the host
        lo, hi = np.asarray(lo)[()], np.asarray(hi)[()]
    return jnp.linspace(lo, hi, count + 1, dtype=dtype)


def histogram(a, bins=10, range=None, weights=None, density=None):  # noqa: A002
    """jnp.histogram: (the count or summed weight in each bin, the bin edges); the last bin
    holds its right edge, values outside the edges are counted nowhere."""
    if weights is None:
        _arguments.check_arraylike("histogram", a, bins)
        a = jnp.asarray(a)
        a = jnp.astype(a, _inexact_dtype(a.dtype))
        weights = jnp.ones_like(a)
    else:
        _arguments.check_arraylike("histogram", a, bins, weights)
        if np.shape(a) != np.shape(weights):
            raise ValueError("weights should have the same shape as a.")
        dtype = _inexact_dtype(jnp.result_type(a, weights))
        a, weights = jnp.asarray(a, dtype=dtype), jnp.asarray(weights, dtype=dtype)
    edges = histogram_bin_edges(a, bins, range, weights)
    bin_idx = jnp.searchsorted(edges, a, side="right")
    bin_idx = jnp.where(a == edges[-1], len(edges) - 1, bin_idx)
    counts = jnp.zeros(len(edges), weights.dtype).at[bin_idx].add(weights)[1:]
    if density:
        counts = counts / jnp.diff(edges) / counts.sum()
    return counts, edges


def histogramdd(sample, bins=10, range=None, weights=None, density=None):  # noqa: A002
    """jnp.histogramdd: counts (or summed weights, or a density) of N points of D coordinates
    (sample: N × D) in the product of each dimension's bins, JAX's composition: per dimension
    the bin edges and each point's bin (searchsorted on the right, a point on the last edge in
    the last bin), the bins raveled, one bincount, the outlier rows and columns cut off."""
    if weights is None:
        _arguments.check_arraylike("histogramdd", sample)
        sample = jnp.asarray(sample, _inexact_dtype(jnp.asarray(sample).dtype))
    else:
        _arguments.check_arraylike("histogramdd", sample, weights)
        if np.shape(weights) != np.shape(sample)[:1]:
            raise ValueError("should have one weight for each sample.")
        dtype = _inexact_dtype(jnp.result_type(sample, weights))
        sample, weights = jnp.asarray(sample, dtype), jnp.asarray(weights, dtype)
    n, d = np.shape(sample)
    if range is not None and (len(range) != d or any(r is not None and np.shape(r)[0] != 2
                                                     for r in range)):
        raise ValueError(f"For sample.shape={(n, d)}, range must be a sequence of {d} pairs or "
                         f"Nones; got range={range!r}")
    try:
        per_dimension = list(bins)
    except TypeError:
        per_dimension = d * [bins]
    else:
        if len(per_dimension) != d:
            raise ValueError("should be a bin for each dimension.")
    indices, edges = [], []
    for i in builtins.range(d):
        column = sample[:, i]
        e = histogram_bin_edges(column, per_dimension[i], None if range is None else range[i],
                                weights)
        at = jnp.searchsorted(e, column, side="right")
        indices.append(jnp.where(column == e[-1], at - 1, at))
        edges.append(e)
    nbins = tuple(int(e.shape[0]) + 1 for e in edges)
    flat = jnp.ravel_multi_index(tuple(indices), nbins, mode="clip")
    hist = jnp.reshape(bincount(flat, weights, length=int(np.prod(nbins))), nbins)
    hist = hist[d * (slice(1, -1),)]
    if density:
        hist = jnp.astype(hist, sample.dtype)
        hist = hist / jnp.sum(hist)
        for norm in jnp.ix_(*[jnp.diff(e) for e in edges]):
            hist = hist / norm
    return hist, edges


def histogram2d(x, y, bins=10, range=None, weights=None, density=None):  # noqa: A002
    """jnp.histogram2d: histogramdd of the points (x, y); bins an int, a pair, or one array of
    edges for both."""
    _arguments.check_arraylike("histogram2d", x, y)
    try:
        count = len(bins)
    except TypeError:
        count = 1
    if count not in (1, 2):
        edges = jnp.asarray(bins)
        bins = [edges, edges]
    hist, edges = histogramdd(jnp.transpose(jnp.asarray([x, y])), bins, range, weights, density)
    return hist, edges[0], edges[1]


__all__ = ["bincount", "histogram_bin_edges", "histogram", "histogram2d", "histogramdd"]
