"""jax.numpy's order statistics and counting, and jax.ops' segment reductions, beside JAX's:
quantile, nanquantile, percentile, nanpercentile, median, nanmedian (every method, axes,
keepdims, NaN, integer input, weights), bincount, histogram, histogram_bin_edges and
segment_sum/prod/max/min (with buckets and dropped ids), eagerly and under jit."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import spmd
import spmd.numpy as snp
from parity import covers, raises_like, same

RNG = np.random.default_rng(3)
A = RNG.normal(size=(4, 7, 5)).astype(np.float32)
A_NAN = A.copy()
A_NAN[1, 3, 2] = np.nan
A_NAN[2, :, 1] = np.nan
METHODS = ("linear", "lower", "higher", "midpoint", "nearest", "inverted_cdf")


def _kept_shape(shape, axis):
    """`shape` with the axes a reduction over `axis` removes kept as ones."""
    axes = range(len(shape)) if axis is None else np.atleast_1d(axis) % len(shape)
    return tuple(1 if i in set(int(k) for k in axes) else d for i, d in enumerate(shape))


@covers("numpy.quantile", "numpy.nanquantile")
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("axis", [None, 1, -1, (0, 2)], ids=str)
def test_quantiles_match_jax(method, axis):
    """Bit for bit, except "linear" within 1 ulp (XLA fuses its final multiply-add).

    JAX computes each quantile once, without keepdims: its keepdims=True value is the same
    values with the reduced axes kept as ones (checked against JAX itself once per case), and
    each JAX call is a compile of its own, which made this the suite's slowest test."""
    ulps = 0
    for a in (A, A_NAN, (A * 10).astype(np.int32), A.astype(np.float16)):
        if a.dtype == np.float16 and method == "inverted_cdf":
            continue  # JAX's own float16 inverted_cdf raises (float32 q times a float16 total)
        for name in ("quantile", "nanquantile"):
            for q in (np.float32(0.3), np.float32([0.0, 0.25, 0.5, 0.9, 1.0])):
                what = f"{name}({a.dtype}, {q}, axis={axis}, {method}"
                want = np.asarray(getattr(jnp, name)(a, q, axis=axis, method=method))
                same(getattr(snp, name)(a, q, axis=axis, method=method), want, what + ")",
                     ulps=ulps)
                kept = want.reshape(np.shape(q) + _kept_shape(a.shape, axis))
                same(getattr(snp, name)(a, q, axis=axis, method=method, keepdims=True), kept,
                     what + ", keepdims)", ulps=ulps)
    same(np.asarray(jnp.quantile(A, 0.3, axis=axis, method=method, keepdims=True)),
         np.asarray(jnp.quantile(A, 0.3, axis=axis, method=method)).reshape(
             _kept_shape(A.shape, axis)), "JAX's own keepdims=True")
    same(spmd.jit(lambda a: snp.quantile(a, 0.4, axis=axis, method=method))(A),
         jax.jit(lambda a: jnp.quantile(a, 0.4, axis=axis, method=method))(A), "under jit",
         ulps=ulps)


@covers("numpy.median", "numpy.nanmedian", "numpy.percentile", "numpy.nanpercentile")
def test_median_and_percentile_match_jax():
    for axis in (None, 0, 2, (1, 2)):
        for name in ("median", "nanmedian"):
            same(getattr(snp, name)(A_NAN, axis=axis), getattr(jnp, name)(A_NAN, axis=axis),
                 f"{name}(axis={axis})")
        for name in ("percentile", "nanpercentile"):
            q = np.float32([10, 50, 95])
            same(getattr(snp, name)(A_NAN, q, axis=axis, method="nearest"),
                 getattr(jnp, name)(A_NAN, q, axis=axis, method="nearest"), f"{name}({axis})")
    same(spmd.jit(snp.median)(A), jax.jit(jnp.median)(A), "median under jit")
    raises_like(lambda: jnp.percentile(A, [50]), lambda: snp.percentile(A, [50]), "a list")
    raises_like(lambda: jnp.quantile(A, 0.5, method="middle"),
                lambda: snp.quantile(A, 0.5, method="middle"), "an unknown method")
    raises_like(lambda: jnp.quantile(A, np.float32([[0.5]])),
                lambda: snp.quantile(A, np.float32([[0.5]])), "q of rank 2")
    for empty, axis in ((np.zeros(0, np.float32), None), (np.zeros((2, 0), np.float32), 1)):
        for name in ("quantile", "nanquantile"):
            raises_like(lambda: getattr(jnp, name)(empty, 0.5, axis=axis),
                        lambda: getattr(snp, name)(empty, 0.5, axis=axis), f"{name} of nothing")
    same(snp.median(np.zeros((0, 3), np.float32), axis=1),
         jnp.median(np.zeros((0, 3), np.float32), axis=1), "no lines")
    same(snp.quantile(np.float32([1, np.inf, -np.inf, 2]), np.float32([0, 0.3, 0.5, 1])),
         jnp.quantile(np.float32([1, np.inf, -np.inf, 2]), np.float32([0, 0.3, 0.5, 1])),
         "infinities")


def test_weighted_inverted_cdf_matches_jax():
    w = RNG.uniform(size=(7,)).astype(np.float32)
    same(snp.quantile(A, np.float32([0.2, 0.7]), axis=1, method="inverted_cdf", weights=w),
         jnp.quantile(A, np.float32([0.2, 0.7]), axis=1, method="inverted_cdf", weights=w),
         "weights along the axis")
    full = RNG.uniform(size=A.shape).astype(np.float32)
    same(snp.nanquantile(A_NAN, 0.5, axis=2, method="inverted_cdf", weights=full),
         jnp.nanquantile(A_NAN, 0.5, axis=2, method="inverted_cdf", weights=full),
         "weights of a's shape, NaN skipped")
    raises_like(lambda: jnp.quantile(A, 0.5, weights=full), lambda: snp.quantile(A, 0.5,
                                                                                   weights=full),
                "weights with linear")


@covers("numpy.bincount")
def test_bincount_matches_jax():
    x = np.array([-1, -1, 1, 3, 10, 3, 0])
    w = RNG.normal(size=7).astype(np.float32)
    for kwargs in ({}, {"length": 5}, {"minlength": 12}, {"weights": w},
                   {"weights": w, "length": 4}):
        same(snp.bincount(x, **kwargs), jnp.bincount(x, **kwargs), f"bincount({kwargs})")
    same(spmd.jit(lambda v: snp.bincount(v, length=6))(x),
         jax.jit(lambda v: jnp.bincount(v, length=6))(x), "under jit")
    for bad in (np.float32([1.0]), np.zeros((2, 2), np.int32)):
        raises_like(lambda: jnp.bincount(bad), lambda: snp.bincount(bad), f"bincount({bad!r})")
    with pytest.raises(TypeError, match="concrete"):  # no length: the bins depend on values
        spmd.jit(snp.bincount)(x)


@covers("numpy.histogram", "numpy.histogram_bin_edges")
def test_histogram_matches_jax():
    a = RNG.normal(size=(50,)).astype(np.float32)
    for kwargs in ({}, {"bins": 7}, {"bins": np.float32([-1, 0, 0.5, 2])},
                   {"range": (-0.5, 0.5)}, {"weights": a * 2}, {"density": True},
                   {"bins": 4, "range": (1.0, 1.0)}):
        same(snp.histogram(a, **kwargs), jnp.histogram(a, **kwargs), f"histogram({kwargs})")
    same(spmd.jit(lambda v: snp.histogram(v, bins=5))(a),
         jax.jit(lambda v: jnp.histogram(v, bins=5))(a), "under jit")
    same(snp.histogram_bin_edges(np.arange(10), 3), jnp.histogram_bin_edges(np.arange(10), 3),
         "integer input's edges")


@covers("ops.segment_sum", "ops.segment_prod", "ops.segment_max", "ops.segment_min")
@pytest.mark.parametrize("name", ["segment_sum", "segment_prod", "segment_max", "segment_min"])
def test_segment_reductions_match_jax(name):
    data = RNG.normal(size=(9, 3)).astype(np.float32)
    ids = np.array([0, 2, 2, -1, 1, 5, 0, 2, 3])
    mine, theirs = getattr(spmd.ops, name), getattr(jax.ops, name)
    for kwargs in ({}, {"num_segments": 4}, {"num_segments": 6, "bucket_size": 2}):
        same(mine(data, ids, **kwargs), theirs(data, ids, **kwargs), f"{name}({kwargs})")
    same(mine(np.arange(9), ids), theirs(np.arange(9), ids), f"{name} of integers")
    same(spmd.jit(lambda d, i: mine(d, i, 5))(data, ids),
         jax.jit(lambda d, i: theirs(d, i, 5))(data, ids), "under jit")
    if name == "segment_sum":
        loss = lambda f: lambda d: (f(d, ids, 4) ** 2).sum()
        same(spmd.grad(loss(mine))(data), jax.grad(loss(theirs))(data), "its gradient")
