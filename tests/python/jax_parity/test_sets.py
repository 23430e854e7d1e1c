"""jax.numpy's value-dependent selections beside JAX's: nonzero, flatnonzero, argwhere,
compress, extract, lexsort, unique and its four array-API forms, eagerly (the true length) and
under jit with size= and fill_value= (padded or truncated), with NaN, signed zeros, empty input
and slices along an axis; and JAX's errors where the length cannot be known."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import spmd
import spmd.numpy as snp
from parity import covers, raises_like, same

RNG = np.random.default_rng(11)
M = RNG.integers(-2, 3, size=(4, 6)).astype(np.float32)
V = np.float32([3, -0.0, np.nan, 1, 0.0, 3, np.nan, -2, 1])


@covers("numpy.nonzero", "numpy.flatnonzero", "numpy.argwhere")
def test_nonzero_family_matches_jax():
    for a in (M, M[0], M > 0, np.zeros((3, 0)), np.int32([[0, 0], [0, 0]])):
        for name in ("nonzero", "flatnonzero", "argwhere"):
            same(getattr(snp, name)(a), getattr(jnp, name)(a), f"{name}({a.shape})")
    for size, fill in ((3, None), (30, None), (30, -1), (30, (7, 9))):
        same(spmd.jit(lambda a: snp.nonzero(a, size=size, fill_value=fill))(M),
             jax.jit(lambda a: jnp.nonzero(a, size=size, fill_value=fill))(M),
             f"nonzero(size={size}, fill_value={fill})")
    same(spmd.jit(lambda a: snp.argwhere(a, size=5, fill_value=-1))(M),
         jax.jit(lambda a: jnp.argwhere(a, size=5, fill_value=-1))(M), "argwhere under jit")
    raises_like(lambda: jnp.nonzero(np.float32(1)), lambda: snp.nonzero(np.float32(1)), "0-d")
    with pytest.raises(TypeError, match="concrete"):
        spmd.jit(snp.nonzero)(M)


@covers("numpy.compress", "numpy.extract")
def test_compress_and_extract_match_jax():
    cond = np.array([True, False, True, True])
    for axis in (None, 0, 1):
        c = cond if axis != 1 else np.array([1, 0, 0, 1, 1, 0])
        same(snp.compress(c, M, axis=axis), jnp.compress(c, M, axis=axis), f"axis={axis}")
    same(spmd.jit(lambda c, a: snp.compress(c, a, axis=0, size=3, fill_value=9))(cond, M),
         jax.jit(lambda c, a: jnp.compress(c, a, axis=0, size=3, fill_value=9))(cond, M),
         "compress under jit")
    same(snp.extract(M > 0, M), jnp.extract(M > 0, M), "extract")
    same(spmd.jit(lambda a: snp.extract(a > 0, a, size=10))(M),
         jax.jit(lambda a: jnp.extract(a > 0, a, size=10))(M), "extract under jit")


@covers("numpy.lexsort")
def test_lexsort_matches_jax():
    keys = (RNG.integers(0, 3, 12), RNG.integers(0, 2, 12), np.float32(RNG.integers(0, 2, 12)))
    same(snp.lexsort(keys), jnp.lexsort(keys), "three keys")
    two = RNG.integers(0, 3, size=(2, 3, 5))
    same(snp.lexsort(two, axis=1), jnp.lexsort(two, axis=1), "along axis 1")
    same(snp.lexsort((V,)), jnp.lexsort((V,)), "NaN and signed zeros")


@covers("numpy.unique", "numpy.unique_all", "numpy.unique_counts", "numpy.unique_inverse",
        "numpy.unique_values")
def test_unique_matches_jax():
    for a in (V, M, np.int32([5, 5, 1]), np.zeros(0, np.float32)):
        for flags in ((False, False, False), (True, True, True), (False, True, False)):
            for equal_nan in (True, False):
                same(snp.unique(a, *flags, equal_nan=equal_nan),
                     jnp.unique(a, *flags, equal_nan=equal_nan), f"unique({a!r}, {flags})")
    same(snp.unique(M, True, True, True, axis=0), jnp.unique(M, True, True, True, axis=0),
         "rows")
    same(snp.unique(M, return_counts=True, axis=1), jnp.unique(M, return_counts=True, axis=1),
         "columns")
    for name in ("unique_all", "unique_counts", "unique_inverse", "unique_values"):
        same(tuple(np.atleast_1d(getattr(snp, name)(V))) if name == "unique_values" else
             tuple(getattr(snp, name)(V)),
             tuple(np.atleast_1d(getattr(jnp, name)(V))) if name == "unique_values" else
             tuple(getattr(jnp, name)(V)), name)
    for size, fill in ((3, None), (12, -1.0)):
        same(spmd.jit(lambda a: snp.unique(a, True, True, True, size=size, fill_value=fill))(V),
             jax.jit(lambda a: jnp.unique(a, True, True, True, size=size, fill_value=fill))(V),
             f"unique(size={size}, fill_value={fill}) under jit")
    with pytest.raises(TypeError, match="concrete"):
        spmd.jit(snp.unique)(V)
    raises_like(lambda: jnp.unique(np.zeros(0), size=2), lambda: snp.unique(np.zeros(0), size=2),
                "empty with size and no fill")


A = np.int32([5, 1, 3, 3, 9, 1, 7, 0])
B = np.int32([3, 8, 1, 1, 2, 7])
F = np.float32([2.5, np.nan, 1.0, -0.0, 0.0, 2.5])
G = np.float32([0.0, np.nan, 7.0])
H = np.float16([np.inf, -np.inf, 1, np.nan, -0.0, 1])
PAIRS = ((A, B), (B, A), (F, G), (A, np.zeros(0, np.int32)), (A, F), (A[:1], A[:1]),
         (H, np.float16([-np.inf, 1, 0.0])), (np.zeros(0, np.float32), G))


@covers("numpy.union1d", "numpy.setdiff1d", "numpy.setxor1d", "numpy.intersect1d")
def test_set_operations_of_two_arrays_match_jax():
    for name in ("union1d", "setdiff1d", "setxor1d", "intersect1d"):
        ours, theirs = getattr(snp, name), getattr(jnp, name)
        for x, y in PAIRS:
            what = f"{name}({x.dtype}[{x.size}], {y.dtype}[{y.size}])"
            same(ours(x, y), theirs(x, y), what)
            # Under jit, `size` elements: truncated, or padded with fill_value or JAX's default.
            for size, fill in ((2, None), (12, None), (12, -1)):
                same(spmd.jit(lambda a, b: ours(a, b, size=size, fill_value=fill))(x, y),
                     jax.jit(lambda a, b: theirs(a, b, size=size, fill_value=fill))(x, y),
                     f"{what} size={size} fill_value={fill}")
        if name != "union1d":
            u, v = np.unique(A), np.unique(B)
            same(ours(u, v, assume_unique=True), theirs(u, v, assume_unique=True), name)
            same(ours(u, v, assume_unique=True, size=7), theirs(u, v, assume_unique=True, size=7),
                 f"{name} assume_unique, size=7")
        raises_like(lambda: theirs(A, [1, 2]), lambda: ours(A, [1, 2]), f"{name} of a list")
        with pytest.raises(TypeError, match="concrete"):
            spmd.jit(ours)(A, B)
    for kw in ({}, {"size": 5}, {"size": 5, "fill_value": 3}):
        same(snp.intersect1d(A, B, return_indices=True, **kw),
             jnp.intersect1d(A, B, return_indices=True, **kw), f"intersect1d indices {kw}")
    same(snp.intersect1d(np.unique(A), np.unique(B), assume_unique=True, return_indices=True,
                         size=5),
         jnp.intersect1d(np.unique(A), np.unique(B), assume_unique=True, return_indices=True,
                         size=5), "intersect1d assume_unique indices")


@covers("numpy.where")
def test_one_argument_where_is_nonzero_as_in_jax():
    same(snp.where(M), jnp.where(M), "where(c)")
    same(spmd.jit(lambda a: snp.where(a, size=5, fill_value=-1))(M),
         jax.jit(lambda a: jnp.where(a, size=5, fill_value=-1))(M), "where(c, size, fill_value)")
    raises_like(lambda: jnp.where(M, 1, 2, size=3), lambda: snp.where(M, 1, 2, size=3), "size")
    raises_like(lambda: jnp.where(M, None, 2), lambda: snp.where(M, None, 2), "x None")
    raises_like(lambda: jnp.where(M, 1), lambda: snp.where(M, 1), "y missing")
