"""jax.numpy beside spmd.numpy: each function on the same inputs through both, values, shapes and
dtypes compared (bit for bit, or within the ulps a row states), and a bad input for each that
both refuse with the same type of error.

Where a row allows ulps, the two differ by design: contractions and products add in another
order; XLA's simplifier turns a division by a broadcast operand into a product with its
reciprocal (JAX's x / y[None] is then 1 ulp from the correctly rounded quotient, which spmd and
NumPy give); transcendental functions are the C library's in spmd and XLA's polynomials in JAX."""
import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

import spmd
import spmd.numpy as snp
from parity import covers, product_atol, raises_like, same

RNG = np.random.default_rng(44)
X = RNG.standard_normal((2, 3)).astype(np.float32)
Y = RNG.standard_normal((3,)).astype(np.float32)
P = np.abs(X) + 0.5
SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.5, -2.5, 3e38], np.float32)
I = np.array([[3, -1, 7], [0, 2, -5]], np.int32)
H = X.astype(np.float16)
B = X > 0
A3 = RNG.standard_normal((3, 4, 5)).astype(np.float32)
B3 = RNG.standard_normal((4, 5, 2)).astype(np.float32)

# (name, args, kwargs[, ulps]): np.<name>(*args, **kwargs) in both libraries.
CASES = [
    ("zeros", ((2, 3),), {}), ("zeros", ((2,), np.int32), {}), ("ones", ((3,),), {}),
    ("full", ((2, 2), 3.5), {}), ("full", ((2,), 7), {}), ("zeros_like", (X,), {}),
    # max and min over no elements give `initial` (the fuzzer's find: spmd raised).
    ("max", (np.zeros(0, np.float32),), {"initial": 0.0}),
    ("min", (np.zeros((0, 3), np.int32),), {"axis": 0, "initial": 5}),
    ("max", (np.zeros((2, 0), np.float32),), {"axis": 1, "initial": -1.5, "keepdims": True}),
    # A NumPy scalar or array fill value keeps its dtype (an array broadcast to the shape).
    ("full", ((2, 2), np.float32(np.inf)), {}), ("full", ((3,), np.float16(1.5)), {}),
    ("full", ((2,), np.int16(3)), {}), ("full", ((2,), np.array(2.5)), {}),
    ("full", ((3, 2), np.array([0.5, 1.5])), {}), ("full", ((2,), np.uint8(7)), {}),
    ("ones_like", (X,), {"dtype": np.int32}), ("full_like", (I, 2.7), {}),
    ("arange", (5,), {}), ("arange", (5,), {"dtype": np.float32}), ("arange", (1.0, 5.0), {}),
    ("arange", (2, 10, 3), {}), ("arange", (0, 2.5), {}), ("arange", (3, 0, -1), {}),
    ("arange", (0.5, 2, 0.25), {"dtype": np.float32}), ("arange", (2.5,), {}),
    ("linspace", (0, 1, 7), {}), ("linspace", (-3.3, 11.1, 50), {}),
    ("linspace", (0, 10, 5), {"dtype": np.int32}), ("linspace", (0.0, 1.0, 4), {"endpoint": False}),
    ("eye", (3,), {}), ("eye", (3, 4, 1), {"dtype": np.int32}),
    ("array", ([1, 2, 3],), {}), ("asarray", (X,), {}),
    ("add", (X, Y), {}), ("subtract", (X, Y), {}), ("multiply", (X, Y), {}),
    ("divide", (X, Y), {}, 1), ("power", (P, Y), {}, 1), ("negative", (SPECIAL,), {}),
    ("exp", (X,), {}), ("log", (P,), {}), ("sqrt", (SPECIAL,), {}), ("abs", (SPECIAL,), {}),
    ("sign", (SPECIAL,), {}), ("maximum", (X, Y), {}), ("minimum", (SPECIAL, 1.0), {}),
    ("equal", (X, X), {}), ("not_equal", (X, Y), {}), ("less", (X, Y), {}),
    ("less_equal", (X, Y), {}), ("greater", (I, 0), {}), ("greater_equal", (I, 0), {}),
    ("logical_and", (B, X < 0.5), {}), ("logical_or", (B, X < 0.5), {}), ("logical_not", (B,), {}),
    ("add", (H, 2.0), {}), ("multiply", (I, 1.5), {}), ("add", (I, H), {}),
    ("sin", (SPECIAL,), {}, 1), ("cos", (X,), {}, 1), ("tan", (SPECIAL,), {}, 2), ("log1p", (P,), {}),
    ("expm1", (X,), {}), ("square", (I,), {}),
    ("sum", (X,), {}), ("sum", (X,), {"axis": 0}), ("sum", (I,), {"axis": 1, "keepdims": True}),
    ("mean", (X,), {"axis": 1}), ("max", (X,), {"axis": 0}), ("min", (I,), {}),
    ("prod", (X,), {"axis": 1}, 1), ("prod", (I,), {}), ("prod", (A3,), {"axis": (0, 2)}, 2),
    ("var", (X,), {"axis": 0}, 1), ("std", (X,), {}, 1), ("argmax", (X,), {"axis": 1}),
    ("argmin", (SPECIAL,), {}), ("argmin", (X,), {"axis": 0, "keepdims": True}),
    ("all", (B,), {"axis": 0}), ("any", (I,), {}), ("all", (SPECIAL,), {}),
    ("reshape", (X, (3, 2)), {}), ("reshape", (X, (-1,)), {}), ("transpose", (A3,), {}),
    ("transpose", (A3, (1, 0, 2)), {}), ("swapaxes", (A3, 0, 2), {}),
    ("moveaxis", (A3, 0, -1), {}), ("expand_dims", (X, 1), {}), ("expand_dims", (X, (0, 2)), {}),
    ("squeeze", (X.reshape(2, 1, 3),), {}), ("concatenate", ([X, X],), {"axis": 1}),
    ("stack", ([X, X],), {}), ("stack", ([Y, Y, Y],), {"axis": -1}),
    ("split", (A3, 2), {"axis": 1}), ("split", (np.arange(10), [2, 5]), {}),
    ("tile", (X, 2), {}), ("tile", (X, (2, 1, 3)), {}), ("repeat", (X, 3), {"axis": 1}),
    ("repeat", (I, 2), {}), ("where", (B, X, 0.0), {}), ("where", (X > 0, X, Y), {}),
    ("take", (np.arange(10.0, dtype=np.float32), np.array([0, -1, 12, 3])), {}),
    ("take", (X, np.array([2, 0])), {"axis": 1}), ("take", (I, np.array([[1, 0], [5, -7]])), {}),
    ("dot", (X, Y), {}, 1), ("matmul", (X, X.T), {}, 1), ("einsum", ("ij,kj->ik", X, X), {}, 1),
    ("outer", (Y, Y), {}), ("tensordot", (A3, B3), {}, 4, lambda a, b: tensordot_atol(a, b, 2)),
    ("tensordot", (A3, B3), {"axes": ([1], [0])}, 4,
     lambda a, b, axes: tensordot_atol(a, b, axes)),
    ("cumsum", (X,), {"axis": 1}), ("clip", (SPECIAL, -1.0, 2.0), {}), ("clip", (I,), {"max": 2}),
    ("round", (SPECIAL,), {}), ("isnan", (SPECIAL,), {}), ("isfinite", (SPECIAL,), {}),
    ("nan_to_num", (SPECIAL,), {}), ("ravel", (A3,), {}),
]


@covers("numpy.zeros", "numpy.ones", "numpy.full", "numpy.zeros_like", "numpy.ones_like",
        "numpy.full_like", "numpy.arange", "numpy.linspace", "numpy.eye", "numpy.array",
        "numpy.asarray", "numpy.add", "numpy.subtract", "numpy.multiply", "numpy.divide",
        "numpy.power", "numpy.negative", "numpy.exp", "numpy.log", "numpy.sqrt", "numpy.abs",
        "numpy.sign", "numpy.maximum", "numpy.minimum", "numpy.equal", "numpy.not_equal",
        "numpy.less", "numpy.less_equal", "numpy.greater", "numpy.greater_equal",
        "numpy.logical_and", "numpy.logical_or", "numpy.logical_not", "numpy.sin", "numpy.cos", "numpy.tan",
        "numpy.log1p", "numpy.expm1", "numpy.square", "numpy.sum", "numpy.mean", "numpy.max",
        "numpy.min", "numpy.prod", "numpy.var", "numpy.std", "numpy.argmax", "numpy.argmin",
        "numpy.all", "numpy.any", "numpy.reshape", "numpy.transpose", "numpy.swapaxes",
        "numpy.moveaxis", "numpy.expand_dims", "numpy.squeeze", "numpy.concatenate",
        "numpy.stack", "numpy.split", "numpy.tile", "numpy.repeat", "numpy.where", "numpy.take",
        "numpy.dot", "numpy.matmul", "numpy.einsum", "numpy.outer", "numpy.tensordot",
        "numpy.cumsum", "numpy.clip", "numpy.round", "numpy.isnan", "numpy.isfinite",
        "numpy.nan_to_num", "numpy.ravel")
@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_matches_jax(case):
    name, args, kwargs = case[:3]
    ulps = case[3] if len(case) > 3 else 0
    atol = case[4](*args, **kwargs) if len(case) > 4 else 0.0
    want = getattr(jnp, name)(*args, **kwargs)
    got = getattr(snp, name)(*args, **kwargs)
    same(got, want, f"{name}{args!r:.60}", ulps, atol)


def tensordot_atol(a, b, axes):
    """product_atol of np.tensordot(a, b, axes): its terms per output (a.size * b.size is
    terms² * the output's size) and sum(|a*b|)."""
    magnitude = np.tensordot(np.abs(a).astype(np.float64), np.abs(b).astype(np.float64), axes)
    return product_atol(round(np.sqrt(a.size * b.size / magnitude.size)), magnitude)


def compare_case(table, i, atol=0.0):
    """Row i of a table of (name, args, kwargs[, ulps]): np.<name>(*args, **kwargs) through
    both libraries, compared."""
    name, args, kwargs = table[i][:3]
    ulps = table[i][3] if len(table[i]) > 3 else 0
    same(getattr(snp, name)(*args, **kwargs), getattr(jnp, name)(*args, **kwargs),
         f"{name} case {i}", ulps, atol)


def test_inside_jit_matches_jax():
    """The same functions traced: a small chain through both jits."""
    def f(np_, x, y):
        z = np_.stack([np_.sin(x), np_.clip(x, -0.5, 0.5)], axis=0)
        w = np_.tensordot(z, np_.outer(y, y), axes=1)
        return np_.prod(np_.take(w, np_.array([1, 0]), axis=2), axis=0), np_.argmin(w, axis=-1)
    want = jax.jit(lambda x, y: f(jnp, x, y))(X, Y)
    got = spmd.jit(lambda x, y: f(snp, x, y))(X, Y)
    same(got, want, "a traced chain", ulps=4)


# (name, args, kwargs): a bad input both libraries refuse.
BAD = [
    ("bitwise_count", (X,), {}), ("packbits", (X,), {}), ("unpackbits", (I,), {}),
    ("packbits", (np.ones(3, bool),), {"bitorder": "mid"}),
    ("partition", (X, 3), {}), ("argpartition", (X, 1, 2), {}),
    ("convolve", (X, Y), {}), ("correlate", (Y, np.array([], np.float32)), {}),
    ("convolve", (Y, Y), {"mode": "middle"}), ("poly", (X,), {}),
    ("polyder", (np.ones(3), -1), {}), ("polyint", (np.ones(3), -1), {}),
    ("polyint", (np.ones(3), 2, np.ones(3)), {}),
    ("reshape", (X, (5,)), {}), ("transpose", (X, (0, 0)), {}), ("swapaxes", (X, 0, 3), {}),
    ("moveaxis", (X, 5, 0), {}), ("expand_dims", (X, 4), {}), ("concatenate", ([X, Y],), {}),
    ("stack", ([X, Y],), {}), ("split", (X, 4), {"axis": 1}), ("sum", (X,), {"axis": 2}),
    ("argmax", (X,), {"axis": 3}), ("matmul", (X, X), {}), ("dot", (X, A3), {}),
    ("add", (X, np.ones(4, np.float32)), {}), ("take", (X, np.array([0.5])), {}),
    ("full", ((2,), "a"), {}), ("zeros", ((2, -1),), {}), ("clip", ([1, 2],), {}),
    ("sin", ("x",), {}), ("eye", (-1,), {}), ("linspace", (0, 1, -2), {}),
]


@pytest.mark.parametrize("case", BAD, ids=[f"{c[0]}-{i}" for i, c in enumerate(BAD)])
def test_refuses_what_jax_refuses(case):
    name, args, kwargs = case
    raises_like(lambda: getattr(jnp, name)(*args, **kwargs),
                lambda: getattr(snp, name)(*args, **kwargs), f"{name}{args!r:.60}")


Z = np.array([[1.0, -np.inf, np.nan, 2.0], [np.inf, 0.0, -3.0, 5.0]], np.float32)
SQ = RNG.standard_normal((4, 4)).astype(np.float32)

# Signs, zeros, a wrapping lcm, and consecutive Fibonacci numbers (Euclid's longest int32 run).
GCD_A = np.array([0, 12, -18, 7, 0, 2**31 - 1, -5, 100, 1836311903], np.int32)
GCD_B = np.array([0, 8, 24, -21, 5, 3, 6, 75, 1134903170], np.int32)

# Zeros, signs, subnormals (JAX's frexp flushes them in its one jit), infinities, NaN, the ends of
# float32's range.
FLOATS = np.array([0.0, -0.0, 1.0, -3.5, 1e-40, -1e-45, np.inf, -np.inf, np.nan, 6.5e4, 3.4e38,
                   1.17e-38, 0.1, -7e-3], np.float32)
PIECES = np.linspace(-2, 2, 9, dtype=np.float32)
POLY, IPOLY = np.array([3, -1, 2, 5], np.float32), np.array([1, 2, 3], np.int32)
Y9, Y4 = RNG.standard_normal(9).astype(np.float32), RNG.standard_normal(4).astype(np.float32)
SPECIAL2 = np.array([[3.0, -1.0, np.nan, 0.0, -0.0, 7.5, -np.inf],
                     [np.inf, 2.0, 2.0, -5.0, 1e-40, 0.5, 4.0]], np.float32)
UINTS = np.random.default_rng(9).integers(0, 5, (4, 6)).astype(np.uint8)
# Wrapped into each integer type: zero, ones, the extremes, alternating bits.
TRUTHS = np.random.default_rng(10).integers(0, 2, (3, 13)).astype(bool)
BYTES = np.random.default_rng(11).integers(0, 256, (2, 3)).astype(np.uint8)
BIT_PATTERNS = np.array([0, 1, 2, 3, 7, 85, 100, 127, -128, -1, 2**31 - 1, -2**31, 0x55555555],
                        np.int64)

# The constants, aliases and compositions of _numpy_extra.py, and pad, take_along_axis.
EXTRA = [
    ("pad", (X, 2), {}), ("pad", (X, ((1, 0), (0, 3))), {"constant_values": 7.0}),
    ("pad", (I, (1, 2)), {}),
    ("take_along_axis", (X, np.array([[2, 0], [1, 1]]), 1), {}),
    ("take_along_axis", (A3, np.array([[[0]], [[2]], [[-1]]]), 2), {}),
    ("take_along_axis", (X, np.array([[1, 0, 0]]), 0), {}),
    ("absolute", (SPECIAL,), {}), ("fabs", (SPECIAL,), {}), ("amax", (X,), {"axis": 1}),
    ("amin", (I,), {}), ("concat", ([X, X],), {}), ("pow", (P, 2.0), {}, 1),
    ("permute_dims", (A3, (2, 0, 1)), {}), ("positive", (X,), {}), ("matrix_transpose", (A3,), {}),
    ("isinf", (SPECIAL,), {}), ("isposinf", (SPECIAL,), {}), ("isneginf", (SPECIAL,), {}),
    ("log2", (P,), {}), ("log10", (P,), {}),
    ("log10", (P.astype(np.float16),), {}), ("deg2rad", (X,), {}, 1),
    ("rad2deg", (X,), {}, 1), ("radians", (I,), {}, 1), ("degrees", (X,), {}, 1),
    ("reciprocal", (P,), {}, 1), ("heaviside", (Z, 0.5), {}),
    ("count_nonzero", (I,), {}), ("count_nonzero", (Z,), {"axis": 1}), ("ptp", (X,), {"axis": 0}),
    ("isclose", (X, X + 1e-7), {}), ("isclose", (Z, Z), {"equal_nan": True}),
    ("allclose", (X, X * 1.0000001), {}), ("array_equal", (Z, Z), {}),
    ("array_equal", (Z, Z), {"equal_nan": True}), ("nansum", (Z,), {"axis": 1}),
    ("nanmax", (Z,), {}), ("nanmin", (Z,), {"axis": 0}), ("average", (X,), {"axis": 0}),
    ("average", (X,), {"weights": P}, 1), ("atleast_1d", (3.0,), {}), ("atleast_2d", (Y,), {}),
    ("atleast_3d", (X,), {}), ("hstack", ([X, X],), {}), ("vstack", ([Y, Y],), {}),
    ("dstack", ([X, X],), {}), ("column_stack", ([Y, Y],), {}),
    ("array_split", (np.arange(10), 3), {}), ("hsplit", (SQ, 2), {}), ("vsplit", (SQ, [1],), {}),
    ("flip", (A3,), {}), ("flip", (A3, (0, 2)), {}), ("fliplr", (SQ,), {}), ("flipud", (SQ,), {}),
    ("roll", (A3, 2), {}), ("roll", (A3, -1), {"axis": 1}),
    ("roll", (A3, (1, 2)), {"axis": (0, 2)}),
    ("tril", (SQ,), {}), ("triu", (SQ, 1), {}), ("tri", (3, 4, -1), {}), ("diagonal", (SQ,), {}),
    ("diagonal", (A3, 1, 1, 2), {}), ("trace", (SQ,), {}, 1), ("diag", (Y,), {}),
    ("diag", (SQ, -1), {}), ("inner", (X, X), {}, 2), ("vdot", (X, X), {}, 2),
    ("kron", (SQ[:2, :2], X), {}), ("meshgrid", (Y, np.arange(2.0)), {}),
    ("meshgrid", (Y, Y), {"indexing": "ij"}), ("broadcast_arrays", (X, Y), {}),
    ("unstack", (A3,), {"axis": 1}), ("select", ([X > 0, X < -1], [X, -X], 9.0), {}),
    ("logspace", (0.0, 2.0, 5), {}, 4),
    # JAX's jit of it rounds pow(10, …) within one fusion up to 7 ulps from the composition's
    # values (which are closer: 10, 100 where JAX gives 10.000003, 100.00005); an integer
    # dtype's values are equal.
    ("geomspace", (1.0, 1000.0, 4), {}, 8), ("geomspace", (-1.0, -16.0, 5), {}, 8),
    ("geomspace", (2.0, 64.0, 6), {"endpoint": False}, 8),
    ("geomspace", (1, 256, 9), {"dtype": np.int32}),
    ("gcd", (GCD_A, GCD_B), {}), ("lcm", (GCD_A, GCD_B), {}), ("gcd", (np.int8(12), 18), {}),
    ("lcm", (GCD_A[:, None], GCD_B[1:4]), {}),
    ("frexp", (FLOATS,), {}), ("frexp", (FLOATS.astype(np.float16),), {}),
    ("frexp", (FLOATS.astype(ml_dtypes.bfloat16),), {}), ("frexp", (np.arange(-3, 4),), {}),
    ("spacing", (FLOATS,), {}), ("spacing", (FLOATS.astype(np.float16),), {}),
    ("unwrap", (np.array([0, 1, 2, 8, 9, -4, -3, 10.5], np.float32),), {}),
    ("unwrap", (np.arange(12).reshape(3, 4) * 3,), {"period": 7, "axis": 0}),
    ("unwrap", (X,), {"discont": 0.5, "axis": 0}),
    ("trim_zeros", (np.array([0, 0, 1, 2, 0, 3, 0], np.int32),), {}),
    ("trim_zeros", (np.array([0, 0, 1, 2, 0, 3, 0], np.int32), "b"), {}),
    ("trim_zeros", (np.array([[0, 0, 0], [0, 1, 0], [0, 0, 0]]),), {"axis": 1}),
    ("trim_zeros", (np.zeros(4),), {}),
    ("piecewise", (PIECES, [PIECES < 0, PIECES > 1], [lambda v: -v, lambda v: v * 10, 7.0]), {}),
    ("piecewise", (PIECES, [PIECES < 0], [lambda v: v * v]), {}),
    ("polyadd", (POLY, POLY[:2]), {}), ("polyadd", (POLY[:2], POLY), {}),
    ("polyadd", (IPOLY, IPOLY), {}), ("polysub", (IPOLY, POLY), {}), ("polyder", (POLY,), {}),
    ("polyder", (POLY, 2), {}), ("polyder", (IPOLY, 3), {}), ("polyder", (POLY, 0), {}),
    ("polyint", (POLY,), {}), ("polyint", (POLY, 2, 3.0), {}),
    ("polyint", (IPOLY, 2, np.array([1.0, 2.0])), {}), ("polydiv", (POLY, POLY[2:]), {}),
    ("polydiv", (np.array([1, 0, -1.0], np.float32), np.array([1, -1.0], np.float32)), {}),
    ("polydiv", (np.array([1, 0, -1.0], np.float32), np.array([1, -1.0], np.float32)),
     {"trim_leading_zeros": True}),
    ("polymul", (POLY, np.array([0, 2, 7], np.float32)), {}),
    ("polymul", (POLY, np.array([0, 2, 7], np.float32)), {"trim_leading_zeros": True}),
    ("polymul", (IPOLY, IPOLY[:2]), {}), ("poly", (np.array([1.5, -2, 0.25], np.float32),), {}),
    ("poly", (np.array([], np.float32),), {}), ("poly", (IPOLY,), {}),
    ("partition", (SPECIAL2, 2), {}), ("partition", (SPECIAL2, 0, 0), {}),
    ("partition", (SPECIAL2, -1, 1), {}), ("partition", (UINTS, 3, 1), {}),
    ("partition", (A3, 2), {}), ("argpartition", (SPECIAL2, 2), {}),
    ("argpartition", (SPECIAL2, 0, 0), {}), ("argpartition", (UINTS, 3, 1), {}),
    ("argpartition", (A3, 1, 1), {}),
    *[("bitwise_count", (BIT_PATTERNS.astype(t),), {}) for t in
      (np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32)],
    ("bitwise_count", (np.array([True, False]),), {}),
    ("packbits", (TRUTHS,), {}), ("packbits", (TRUTHS, 1), {}),
    ("packbits", (TRUTHS, 0, "little"), {}), ("packbits", (TRUTHS.astype(np.int32) * 3, -1), {}),
    ("unpackbits", (BYTES,), {}), ("unpackbits", (BYTES, 1), {}),
    ("unpackbits", (BYTES, 0), {"count": 3}),
    ("unpackbits", (BYTES, 1), {"count": 30, "bitorder": "little"}),
]
# Sums of at most 9 products each: JAX's order (XLA's convolution of these sizes), bit for bit.
CONVOLVED = [(name, (x, y, mode), {}) for name in ("convolve", "correlate")
             for mode in ("full", "same", "valid")
             for x, y in ((Y9, Y4), (Y4, Y9), (IPOLY, IPOLY[:2]), (Y9, Y9[:1]))]


@covers("numpy.pad", "numpy.take_along_axis", "numpy.absolute", "numpy.fabs", "numpy.amax",
        "numpy.amin", "numpy.concat", "numpy.pow", "numpy.permute_dims", "numpy.positive",
        "numpy.matrix_transpose", "numpy.isinf", "numpy.isposinf", "numpy.isneginf",
        "numpy.log2", "numpy.log10", "numpy.deg2rad", "numpy.rad2deg", "numpy.radians",
        "numpy.degrees", "numpy.reciprocal", "numpy.heaviside", "numpy.count_nonzero",
        "numpy.ptp", "numpy.isclose", "numpy.allclose", "numpy.array_equal", "numpy.nansum",
        "numpy.nanmax", "numpy.nanmin", "numpy.average", "numpy.atleast_1d", "numpy.atleast_2d",
        "numpy.atleast_3d", "numpy.hstack", "numpy.vstack", "numpy.dstack",
        "numpy.column_stack", "numpy.array_split", "numpy.hsplit", "numpy.vsplit",
        "numpy.flip", "numpy.fliplr", "numpy.flipud", "numpy.roll", "numpy.tril", "numpy.triu",
        "numpy.tri", "numpy.diagonal", "numpy.trace", "numpy.diag", "numpy.inner", "numpy.vdot",
        "numpy.kron", "numpy.meshgrid", "numpy.broadcast_arrays", "numpy.unstack",
        "numpy.select", "numpy.logspace", "numpy.geomspace", "numpy.gcd", "numpy.lcm",
        "numpy.frexp", "numpy.spacing", "numpy.unwrap", "numpy.trim_zeros", "numpy.piecewise",
        "numpy.polyadd", "numpy.polysub", "numpy.polyder", "numpy.polyint", "numpy.polydiv",
        "numpy.polymul", "numpy.poly", "numpy.partition", "numpy.argpartition",
        "numpy.bitwise_count", "numpy.packbits", "numpy.unpackbits")
@pytest.mark.parametrize("i", range(len(EXTRA)), ids=[f"{c[0]}-{i}" for i, c in enumerate(EXTRA)])
def test_more_functions_match_jax(i):
    compare_case(EXTRA, i)


@covers("numpy.e", "numpy.pi", "numpy.inf", "numpy.nan", "numpy.newaxis", "numpy.euler_gamma",
        "numpy.int8", "numpy.int16", "numpy.uint8", "numpy.uint16", "numpy.uint64",
        "numpy.bool", "numpy.float_", "numpy.int_", "numpy.uint", "numpy.double",
        "numpy.single", "numpy.dtype", "numpy.finfo", "numpy.iinfo", "numpy.promote_types",
        "numpy.issubdtype", "numpy.isscalar", "numpy.iterable", "numpy.broadcast_shapes",
        "numpy.generic", "numpy.number", "numpy.inexact", "numpy.floating", "numpy.integer",
        "numpy.signedinteger", "numpy.unsignedinteger")
def test_constants_and_dtype_helpers_match_jax():
    for name in ("e", "pi", "inf", "euler_gamma"):
        assert getattr(snp, name) == getattr(jnp, name), name
    assert np.isnan(snp.nan) and snp.newaxis is jnp.newaxis
    for name in ("int8", "int16", "uint8", "uint16", "uint64", "bool", "float_", "int_", "uint",
                 "double", "single"):
        same(getattr(snp, name)(3), getattr(jnp, name)(3), f"{name}(3)")
    for a, b in ((np.int32, np.float16), (np.int8, np.uint8), (np.float16, jnp.bfloat16),
                 (np.bool_, np.int16), (np.uint32, np.int32)):
        assert snp.promote_types(a, b) == jnp.promote_types(a, b), (a, b)
    assert snp.finfo(np.float32).eps == jnp.finfo(np.float32).eps
    assert snp.iinfo(np.int8).min == jnp.iinfo(np.int8).min
    assert snp.issubdtype(np.float32, snp.floating) == jnp.issubdtype(np.float32, jnp.floating)
    for x in (1.0, np.float32(2), np.zeros(()), np.zeros(2), [1]):
        assert snp.isscalar(x) == jnp.isscalar(x), x
    assert snp.isscalar(snp.zeros(())) == jnp.isscalar(jnp.zeros(())) is True
    assert snp.iterable([1]) and not snp.iterable(1)
    assert snp.broadcast_shapes((2, 1), (3,)) == jnp.broadcast_shapes((2, 1), (3,))
    assert snp.dtype("float32") == jnp.dtype("float32")
    for name in ("generic", "number", "inexact", "floating", "integer", "signedinteger",
                 "unsignedinteger"):
        assert issubclass(np.float32 if "float" in name or name in ("generic", "number",
                                                                    "inexact")
                          else np.uint8 if "unsigned" in name else np.int8,
                          getattr(snp, name)), name


MORE = [
    ("nanmean", (Z,), {"axis": 1}, 1), ("nanmean", (I,), {}, 1),
    ("nanargmax", (Z,), {"axis": 1}), ("nanargmin", (Z,), {}), ("nanargmax", (I,), {}),
    ("diff", (A3,), {}), ("diff", (X,), {"n": 2, "axis": 0}), ("ediff1d", (Y,), {}),
    ("ediff1d", (Y,), {"to_end": 9.0, "to_begin": np.array([1.0, 2.0], np.float32)}),
    ("cumulative_sum", (Y,), {}), ("cumulative_sum", (X,), {"axis": 1, "include_initial": True}),
    ("cumulative_prod", (X,), {"axis": 0}), ("trapezoid", (X,), {}, 2),
    ("trapezoid", (X,), {"dx": 0.5, "axis": 0}, 2), ("trapezoid", (Y,), {"x": P[0]}, 2),
    ("polyval", (np.array([3.0, -1.0, 2.0], np.float32), X), {}, 1), ("modf", (SPECIAL,), {}),
    ("vecdot", (X, X), {}, 2), ("matvec", (SQ, SQ[0]), {}, 2), ("vecmat", (SQ[0], SQ), {}, 2),
    ("append", (X, Y), {}), ("append", (X, X), {"axis": 0}), ("real", (X,), {}),
    ("imag", (X,), {}), ("conj", (I,), {}), ("conjugate", (X,), {}), ("isreal", (X,), {}),
    ("iscomplex", (X,), {}), ("tril_indices", (4,), {}), ("triu_indices", (3, 1, 4), {}),
    ("tril_indices_from", (SQ,), {}), ("triu_indices_from", (SQ, -1), {}),
    ("diag_indices", (3,), {}), ("diag_indices_from", (SQ,), {}), ("indices", ((2, 3),), {}),
    ("unravel_index", (np.array([5, 0, 11, -1]), (3, 4)), {}),
]


@covers("numpy.nanmean", "numpy.nanargmax", "numpy.nanargmin", "numpy.diff", "numpy.ediff1d",
        "numpy.cumulative_sum", "numpy.cumulative_prod", "numpy.trapezoid", "numpy.polyval",
        "numpy.modf", "numpy.vecdot", "numpy.matvec", "numpy.vecmat", "numpy.append",
        "numpy.real", "numpy.imag", "numpy.conj", "numpy.conjugate", "numpy.isreal",
        "numpy.iscomplex", "numpy.tril_indices", "numpy.triu_indices",
        "numpy.tril_indices_from", "numpy.triu_indices_from", "numpy.diag_indices",
        "numpy.diag_indices_from", "numpy.indices", "numpy.unravel_index")
@pytest.mark.parametrize("i", range(len(MORE)), ids=[f"{c[0]}-{i}" for i, c in enumerate(MORE)])
def test_still_more_functions_match_jax(i):
    compare_case(MORE, i)


@covers("numpy.isrealobj", "numpy.iscomplexobj", "numpy.result_type", "numpy.can_cast",
        "numpy.s_", "numpy.index_exp")
def test_static_helpers_match_jax():
    assert snp.isrealobj(X) == jnp.isrealobj(X) and snp.iscomplexobj(X) == jnp.iscomplexobj(X)
    # A Python int or float is weak: it takes the others' dtype where its kind joins theirs.
    for args in ((np.int32, np.float16), (X, I), (np.int8, np.uint8, np.int16),
                 (np.int8, 1), (np.float16, 1.0), (np.int32, 1.5), (np.uint8, 2),
                 (ml_dtypes.bfloat16, 3), (np.bool_, 1), (np.bool_, 1.0), (1, 2.0), (3,),
                 (True, 1), (np.float16, 1, 2.0), (np.int8, np.int16, 7)):
        assert snp.result_type(*args) == jnp.result_type(*args), args
    assert snp.can_cast(np.int8, np.int32) == jnp.can_cast(np.int8, np.int32)
    assert snp.s_[1:2, ::3] == jnp.s_[1:2, ::3] and snp.index_exp[2] == jnp.index_exp[2]


J = np.array([[5, -7, 0], [3, 12, -1]], np.int32)
K = np.array([[2, 3, 1], [-4, 5, 7]], np.int32)
SMALL = np.array([[0, 1, 2], [3, 4, 5]], np.int32)
ELEMENTWISE = [
    ("around", (SPECIAL,), {}), ("around", (X * 10,), {"decimals": 1}, 1), ("ceil", (SPECIAL,), {}),
    ("floor", (SPECIAL,), {}), ("rint", (SPECIAL,), {}), ("trunc", (SPECIAL,), {}),
    ("tanh", (X,), {}), ("true_divide", (X, Y), {}, 1), ("floor_divide", (J, K), {}),
    ("remainder", (J, K), {}), ("mod", (X, Y), {}, 1), ("fmod", (J, K), {}),
    ("divmod", (J, K), {}), ("bitwise_and", (J, K), {}), ("bitwise_or", (J, K), {}),
    ("bitwise_xor", (J, K), {}), ("bitwise_not", (J,), {}), ("bitwise_invert", (J,), {}),
    ("invert", (B,), {}), ("left_shift", (J, SMALL), {}), ("right_shift", (J, SMALL), {}),
    ("bitwise_left_shift", (J, SMALL), {}), ("bitwise_right_shift", (J, SMALL), {}),
    ("logical_xor", (B, X < 0.5), {}), ("astype", (SPECIAL, np.int32), {}),
    ("astype", (X, jnp.bfloat16), {}), ("broadcast_to", (Y, (4, 3)), {}),
    ("cumprod", (X,), {"axis": 1}, 2), ("dsplit", (A3[:, :, :4], 2), {}),
    ("empty", ((2, 3),), {}), ("empty_like", (I,), {}), ("identity", (3,), {}),
    ("from_dlpack", (X,), {}), ("float16", (X,), {}), ("float32", (I,), {}),
    ("float64", (X,), {}), ("int32", (X,), {}), ("int64", (I,), {}), ("uint32", (SMALL,), {}),
    ("bool_", (I,), {}), ("bfloat16", (X,), {}),
]


@covers("numpy.around", "numpy.ceil", "numpy.floor", "numpy.rint", "numpy.trunc", "numpy.tanh",
        "numpy.true_divide", "numpy.floor_divide", "numpy.remainder", "numpy.mod",
        "numpy.fmod", "numpy.divmod", "numpy.bitwise_and", "numpy.bitwise_or",
        "numpy.bitwise_xor", "numpy.bitwise_not", "numpy.bitwise_invert", "numpy.invert",
        "numpy.left_shift", "numpy.right_shift", "numpy.bitwise_left_shift",
        "numpy.bitwise_right_shift", "numpy.logical_xor", "numpy.astype", "numpy.broadcast_to",
        "numpy.cumprod", "numpy.dsplit", "numpy.empty", "numpy.empty_like", "numpy.identity",
        "numpy.from_dlpack", "numpy.float16", "numpy.float32", "numpy.float64", "numpy.int32",
        "numpy.int64", "numpy.uint32", "numpy.bool_", "numpy.bfloat16")
@pytest.mark.parametrize("i", range(len(ELEMENTWISE)),
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(ELEMENTWISE)])
def test_the_earlier_functions_match_jax(i):
    """spmd.numpy's functions from before issue 44, which tests/python/test_operators.py and
    the differential table check at length, here once each beside JAX for the count."""
    compare_case(ELEMENTWISE, i)


@covers("numpy.ndim", "numpy.shape", "numpy.size")
def test_shape_queries_match_jax():
    for x in (X, A3, 3.0, [1, 2]):
        assert snp.ndim(x) == jnp.ndim(x) and snp.shape(x) == jnp.shape(x)
        assert snp.size(x) == jnp.size(x)
    assert snp.size(A3, 1) == jnp.size(A3, 1)


NEG0 = np.array([0.0, -0.0, 1.5, -2.0, np.inf, -np.inf], np.float32)
THIRD = [
    ("fmax", (Z, Z[::-1]), {}), ("fmin", (Z, np.float32(1.0)), {}),
    ("logaddexp", (X, Y), {}, 4), ("logaddexp", (Z, Z), {}, 4), ("sinc", (X,), {}, 4),
    ("sinc", (np.zeros(3, np.float32),), {}), ("hypot", (X, Y), {}, 2), ("hypot", (Z, Z), {}, 2),
    ("hypot", (X.astype(np.float16), 4.0), {}, 2), ("hypot", (2.0, Y), {}, 2),
    ("signbit", (NEG0,), {}), ("signbit", (J,), {}), ("copysign", (X, NEG0[:3]), {}),
("float_power", (P, Y), {}, 2), ("nancumsum", (Z,), {}),
    ("nancumprod", (Z,), {"axis": 1}), ("nanprod", (Z,), {"axis": 1}), ("nanvar", (Z,), {}, 4),
    ("nanstd", (Z,), {"axis": 1}, 4), ("rollaxis", (A3, 2), {}), ("rollaxis", (A3, 0, 2), {}),
    ("rot90", (SQ,), {}), ("rot90", (A3, 2), {}), ("rot90", (A3, 3, (1, 2)), {}),
    ("resize", (X, (4, 4)), {}), ("delete", (A3, 1, 1), {}), ("delete", (X, np.array([0, 2])), {}),
    ("choose", (np.array([0, 1, 1]), [Y, Y * 2]), {}), ("isin", (J, np.array([0, 3, 12])), {}),
    ("isin", (J, K), {"invert": True}), ("array_equiv", (X, X[0]), {}),
    ("array_equiv", (Y, np.stack([Y, Y])), {}), ("block", ([[SQ, SQ], [SQ, SQ]],), {}),
    ("block", ([Y, Y],), {}),
]


@covers("numpy.fmax", "numpy.fmin", "numpy.logaddexp", "numpy.sinc", "numpy.hypot",
        "numpy.signbit", "numpy.copysign", "numpy.float_power",
        "numpy.nancumsum", "numpy.nancumprod", "numpy.nanprod", "numpy.nanvar", "numpy.nanstd",
        "numpy.rollaxis", "numpy.rot90", "numpy.resize", "numpy.delete", "numpy.choose",
        "numpy.isin", "numpy.array_equiv", "numpy.block")
@pytest.mark.parametrize("i", range(len(THIRD)), ids=[f"{c[0]}-{i}" for i, c in enumerate(THIRD)])
def test_a_third_batch_matches_jax(i):
    compare_case(THIRD, i)


@covers("numpy.frombuffer", "numpy.fromiter", "numpy.fromfunction", "numpy.save",
        "numpy.load", "numpy.get_printoptions", "numpy.set_printoptions", "numpy.printoptions",
        "numpy.character", "numpy.flexible", "numpy.object_", "numpy.complexfloating",
        "numpy.ComplexWarning", "numpy.isdtype", "numpy.mgrid", "numpy.ogrid", "numpy.r_",
        "numpy.c_")
def test_host_constructors_and_helpers_match_jax(tmp_path):
    buf = np.arange(6, dtype=np.float32).tobytes()
    same(snp.frombuffer(buf, np.float32), jnp.frombuffer(buf, np.float32), "frombuffer")
    raises_like(lambda: jnp.fromiter(range(5), np.int32),
                lambda: snp.fromiter(range(5), np.int32), "fromiter")
    same(snp.fromfunction(lambda i, j: i * 3 + j, (2, 3), dtype=np.float32),
         jnp.fromfunction(lambda i, j: i * 3 + j, (2, 3), dtype=np.float32), "fromfunction")
    snp.save(tmp_path / "x.npy", snp.asarray(X))
    same(snp.load(tmp_path / "x.npy"), jnp.load(tmp_path / "x.npy"), "save and load")
    assert snp.get_printoptions() == jnp.get_printoptions()
    with snp.printoptions(precision=2):
        assert snp.get_printoptions()["precision"] == 2
    for name in ("character", "flexible", "object_", "complexfloating", "ComplexWarning"):
        assert getattr(snp, name) is getattr(jnp, name), name
    snp.set_printoptions(precision=3)
    assert np.get_printoptions()["precision"] == 3
    snp.set_printoptions(precision=8)
    for dt, kind in ((np.int8, "signed integer"), (np.float32, "real floating"),
                     (jnp.bfloat16, "real floating"), (np.uint8, ("bool", "integral")),
                     (np.float32, np.float32), (np.bool_, "numeric")):
        assert snp.isdtype(dt, kind) == jnp.isdtype(dt, kind), (dt, kind)
    same(snp.mgrid[0:2, 0:3], jnp.mgrid[0:2, 0:3], "mgrid")
    same(snp.ogrid[0:2, 0:3], jnp.ogrid[0:2, 0:3], "ogrid")
    same(snp.mgrid[0:1:5j], jnp.mgrid[0:1:5j], "mgrid with a count")
    same(snp.r_[Y, 0, Y], jnp.r_[Y, 0, Y], "r_")
    same(snp.c_[Y, Y], jnp.c_[Y, Y], "c_")


V3 = RNG.standard_normal((4, 3)).astype(np.float32)
FOURTH = [
    ("exp2", (X,), {}, 4), ("exp2", (I,), {}, 4), ("cbrt", (SPECIAL,), {}),
    ("logaddexp2", (X, Y), {}, 4), ("logaddexp2", (False, False), {}),
    ("logaddexp2", (2, np.float16(3)), {}), ("hamming", (7,), {}, 8), ("hanning", (6,), {}, 8),
    ("blackman", (5,), {}, 16), ("bartlett", (6,), {}, 2), ("hamming", (1,), {}),
    ("vander", (np.array([1, 2, 3]),), {}), ("vander", (Y, 4), {"increasing": True}, 4),
    ("angle", (NEG0,), {}), ("angle", (X,), {"deg": True}, 1),
    ("ldexp", (X, np.array([1, -2, 3], np.int32)), {}), ("cross", (V3, V3[::-1]), {}, 2),
    ("cov", (X,), {}, 4), ("cov", (SQ,), {"rowvar": False, "bias": True}, 4),
    ("corrcoef", (SQ,), {}, 8), ("gradient", (X,), {}, 1), ("gradient", (Y, 0.5), {}, 1),
    ("insert", (X, 1, 9.0), {"axis": 1}), ("insert", (Y, 0, 7.0), {}),
]


@covers("numpy.exp2", "numpy.cbrt", "numpy.logaddexp2", "numpy.hamming", "numpy.hanning",
        "numpy.blackman", "numpy.bartlett", "numpy.vander", "numpy.angle", "numpy.ldexp",
        "numpy.cross", "numpy.cov", "numpy.corrcoef", "numpy.gradient", "numpy.insert")
@pytest.mark.parametrize("i", range(len(FOURTH)), ids=[f"{c[0]}-{i}" for i, c in enumerate(FOURTH)])
def test_a_fourth_batch_matches_jax(i):
    compare_case(FOURTH, i, atol=1e-6 if FOURTH[i][0] in ("cov", "corrcoef", "blackman") else 0)


def test_take_fills_every_dtype_as_jax_and_refuses_an_empty_axis():
    """jnp.take's fill for an index out of range in every integer width (uint64's highest value
    is no Python scalar spmd can convert: it was 0), and its IndexError for indices into an
    empty axis (spmd filled them)."""
    i = np.array([1, 9, -1, -9])
    jax.config.update("jax_enable_x64", True)
    spmd.config.update("jax_enable_x64", True)
    try:
        for dt in (np.uint64, np.uint32, np.uint8, np.int64, np.int8, np.float16, np.bool_):
            a = np.arange(4).astype(dt)
            same(snp.take(a, i), jnp.take(a, i), f"take of {np.dtype(dt).name}")
    finally:
        jax.config.update("jax_enable_x64", False)
        spmd.config.update("jax_enable_x64", False)
    empty = np.zeros((0, 3), np.float32)
    raises_like(lambda: jnp.take(empty, np.array([0]), axis=0),
                lambda: snp.take(empty, np.array([0]), axis=0), "take from an empty axis")
    same(snp.take(empty, np.zeros((0,), np.int32), axis=0),
         jnp.take(empty, np.zeros((0,), np.int32), axis=0), "no indices into an empty axis")


def _bits(x):
    """x's bytes as unsigned integers: equal only where every element is the same bit pattern
    (-0 is not 0, each NaN's payload counts)."""
    x = np.asarray(x)
    return x.view(np.dtype(f"u{x.dtype.itemsize}")) if x.dtype.itemsize in (1, 2, 4, 8) else x


def _sort_input(dtype, shape, rng):
    """Values of `dtype` with many ties, and for floats -0, 0, infinities and NaN of both signs."""
    if np.dtype(dtype) == np.bool_:
        return rng.integers(0, 2, shape).astype(np.bool_)
    if np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        pool = np.array([info.min, info.max, 0, 1, 2, 3], dtype)
        return rng.choice(pool, shape)
    pool = np.array([0.0, -0.0, 1.0, -1.0, 2.5, np.inf, -np.inf, np.nan, -np.nan], np.float64)
    return rng.choice(pool, shape).astype(dtype)


SORT_DTYPES = (np.float32, np.float16, jnp.bfloat16, np.int32, np.int8, np.uint8, np.uint16,
               np.uint32, np.bool_)


@covers("numpy.sort", "numpy.argsort")
@pytest.mark.parametrize("dtype", SORT_DTYPES, ids=lambda d: np.dtype(d).name)
def test_sort_and_argsort_are_jaxs_bit_for_bit(dtype):
    """Every axis, both directions and the flattened array, on values with ties, signed zeros
    and NaN of both signs: the sorted bits (which of two equal zeros or NaNs comes first shows)
    and the positions."""
    rng = np.random.default_rng(7)
    x = _sort_input(dtype, (5, 7, 6), rng)
    for axis in (0, 1, -1, None):
        for descending in (False, True):
            for fn in ("sort", "argsort"):
                got = getattr(snp, fn)(x, axis=axis, descending=descending)
                want = getattr(jnp, fn)(x, axis=axis, descending=descending)
                what = f"{fn}(axis={axis}, descending={descending}) of {np.dtype(dtype).name}"
                assert np.asarray(got).dtype == np.asarray(want).dtype, what
                assert np.array_equal(_bits(got), _bits(want)), f"{what}:\n{got}\nJAX's:\n{want}"


@covers("numpy.sort", "numpy.argsort")
def test_sort_in_x64_and_of_scalars_and_bad_arguments_as_jax():
    """float64 and int64 keys; argsort's int64 under x64 and its dtype=; a 0-d array (flattened
    with axis=None, refused otherwise); an axis out of range; kind= and order=."""
    rng = np.random.default_rng(8)
    jax.config.update("jax_enable_x64", True)
    spmd.config.update("jax_enable_x64", True)
    try:
        for dtype in (np.float64, np.int64, np.uint64):
            x = _sort_input(dtype, (4, 9), rng)
            for fn in ("sort", "argsort"):
                got, want = getattr(snp, fn)(x, descending=True), getattr(jnp, fn)(x, descending=True)
                assert np.asarray(got).dtype == np.asarray(want).dtype
                assert np.array_equal(_bits(got), _bits(want)), f"{fn} of {np.dtype(dtype)}"
        same(snp.argsort(np.arange(5)[::-1], dtype=np.int16),
             jnp.argsort(np.arange(5)[::-1], dtype=np.int16), "argsort with dtype=")
    finally:
        jax.config.update("jax_enable_x64", False)
        spmd.config.update("jax_enable_x64", False)
    same(snp.sort(np.float32(3), axis=None), jnp.sort(np.float32(3), axis=None), "0-d, axis=None")
    x = np.ones((2, 3), np.float32)
    for call in (lambda lib: lib.sort(np.float32(3)), lambda lib: lib.sort(x, axis=2),
                 lambda lib: lib.argsort(x, axis=-3), lambda lib: lib.sort(x, kind="heap"),
                 lambda lib: lib.argsort(x, order="f")):
        raises_like(lambda: call(jnp), lambda: call(snp), "a bad sort")


@covers("numpy.sort")
def test_sort_gradients_and_sharded_inputs_match_jax():
    """The cotangent of each sorted value goes back to its place (ties included), in both
    directions and along a split axis; a jit of a split input gives JAX's values and output
    sharding (the split kept, as Shardy keeps it, for sort, argsort, cumsum and take)."""
    rng = np.random.default_rng(9)
    x = rng.integers(-3, 3, (8, 6)).astype(np.float32)  # ties
    w = rng.standard_normal((8, 6)).astype(np.float32)
    for axis in (0, 1):
        for descending in (False, True):
            def loss(lib, a):
                return (lib.numpy.sort(a, axis=axis, descending=descending) * w).sum()
            same(spmd.grad(lambda a: loss(spmd, a))(x), jax.grad(lambda a: loss(jax, a))(x),
                 f"grad of sort(axis={axis}, descending={descending})")
    jmesh, smesh = (jax.make_mesh((8,), ("x",), devices=jax.devices()[:8],
                                  axis_types=(jax.sharding.AxisType.Auto,)),
                    spmd.make_mesh((8,), ("x",), axis_types=(spmd.AxisType.Auto,)))
    jx = jax.device_put(x, jax.sharding.NamedSharding(jmesh, jax.sharding.PartitionSpec("x")))
    sx = spmd.device_put(x, spmd.NamedSharding(smesh, spmd.P("x")))
    for axis in (0, 1):
        for fn, extra in (("argsort", ()), ("sort", ()), ("cumsum", ()),
                          ("take", (np.array([[1, 0], [2, 1]]),))):
            got = spmd.jit(lambda a: getattr(snp, fn)(a, *extra, axis=axis))(sx)
            want = jax.jit(lambda a: getattr(jnp, fn)(a, *extra, axis=axis))(jx)
            what = f"{fn} of an array split along axis 0, along axis {axis}"
            same(got, want, what)
            assert tuple(got.sharding.spec) == tuple(want.sharding.spec), \
                f"{what}: sharding {got.sharding.spec}, JAX's {want.sharding.spec}"
    got = spmd.vmap(lambda r: snp.sort(r, descending=True))(x)
    same(got, jax.vmap(lambda r: jnp.sort(r, descending=True))(x), "vmap of sort")
    same(np.asarray(snp.asarray(x).argsort(axis=0)), np.asarray(jnp.asarray(x).argsort(axis=0)),
         "the argsort method")


MASKED = RNG.standard_normal((4, 5)).astype(np.float32)
MASK = RNG.random((4, 5)) > 0.4
ROW_MASK = np.array([True, False, True, True, False])


@covers("numpy.sum", "numpy.mean", "numpy.max", "numpy.min", "numpy.prod", "numpy.var",
        "numpy.std", "numpy.all", "numpy.any", "numpy.amax", "numpy.amin")
@pytest.mark.parametrize("name", ["sum", "mean", "max", "min", "prod", "var", "std", "all",
                                  "any", "amax", "amin"])
def test_reductions_take_where_initial_dtype_and_out_as_jax(name):
    """A mask of the array's shape and one broadcast to it, over every axis, each axis, kept;
    initial where the reduction takes one (required with a mask by max and min); dtype=; and
    JAX's errors for out=, a mask that does not broadcast, and a mask without initial."""
    takes_initial = name in ("sum", "prod", "max", "min", "amax", "amin")
    extra = {"initial": -0.5} if takes_initial and name not in ("sum", "prod") else {}
    for mask in (MASK, ROW_MASK):
        for axis in (None, 0, 1):
            for keepdims in (False, True):
                kw = dict(axis=axis, keepdims=keepdims, where=mask, **extra)
                x = MASKED > 0 if name in ("all", "any") else MASKED
                same(getattr(snp, name)(x, **kw), getattr(jnp, name)(x, **kw),
                     f"{name}({kw})", ulps=2, atol=1e-5)  # sums cancel: orders differ
    if takes_initial:
        same(getattr(snp, name)(MASKED, axis=0, initial=0.25),
             getattr(jnp, name)(MASKED, axis=0, initial=0.25), f"{name} with initial", ulps=2)
    if name in ("sum", "mean", "prod", "var", "std"):
        ints = (MASKED * 4).astype(np.int8)
        same(getattr(snp, name)(ints, axis=1, dtype=np.float32),
             getattr(jnp, name)(ints, axis=1, dtype=np.float32), f"{name} with dtype", ulps=2)
        if name in ("sum", "prod"):  # an integer dtype= is the result's: int8 wraps in int8
            for dtype in (np.int8, np.uint8, np.int16):
                same(getattr(snp, name)(ints * 37, axis=1, dtype=dtype),
                     getattr(jnp, name)(ints * 37, axis=1, dtype=dtype),
                     f"{name} with dtype {np.dtype(dtype).name}")
        same(getattr(snp, name)(MASKED.astype(np.float16), where=MASK),
             getattr(jnp, name)(MASKED.astype(np.float16), where=MASK), f"{name} of float16",
             ulps=2)
    raises_like(lambda: getattr(jnp, name)(MASKED, out=MASKED),
                lambda: getattr(snp, name)(MASKED, out=MASKED), f"{name} with out=")
    raises_like(lambda: getattr(jnp, name)(MASKED, where=np.ones(4, bool), **extra),
                lambda: getattr(snp, name)(MASKED, where=np.ones(4, bool), **extra),
                f"{name} with a mask that does not broadcast")
    if name in ("max", "min"):
        raises_like(lambda: getattr(jnp, name)(MASKED, where=MASK),
                    lambda: getattr(snp, name)(MASKED, where=MASK), f"{name}: mask, no initial")


@covers("numpy.sum", "numpy.var")
def test_reductions_take_jaxs_positional_arguments_and_promote_integers():
    """jnp.sum(a, axis, dtype), jnp.var(a, axis, dtype, out, ddof): the positions JAX gives them;
    promote_integers=False keeps an int8 sum in int8; var's mean= and correction=."""
    ints = (MASKED * 40).astype(np.int8)
    same(snp.sum(ints, 0, np.int32), jnp.sum(ints, 0, np.int32), "sum(a, axis, dtype)")
    same(snp.sum(ints, promote_integers=False), jnp.sum(ints, promote_integers=False),
         "sum of int8, promote_integers=False")
    same(snp.var(MASKED, 1, None, None, 1), jnp.var(MASKED, 1, None, None, 1),
         "var(a, axis, dtype, out, ddof)", ulps=2)
    centre = MASKED.mean(axis=1, keepdims=True)
    same(snp.var(MASKED, axis=1, mean=centre), jnp.var(MASKED, axis=1, mean=centre),
         "var with mean=", ulps=2)
    same(snp.std(MASKED, axis=0, correction=1), jnp.std(MASKED, axis=0, correction=1),
         "std with correction=", ulps=2)


@covers("numpy.take", "numpy.take_along_axis", "numpy.flip")
@pytest.mark.parametrize("dtype", [np.float32, np.float16, jnp.bfloat16],
                         ids=lambda d: np.dtype(d).name)
def test_gathers_have_jaxs_gradients(dtype):
    """take's derivative adds the cotangent back at the indices (repeats summed in order, an
    index out of range contributing nothing), along each axis and flattened; and through what
    is made of take: an embedding lookup by an integer array, strided and reversed slices, flip
    and take_along_axis."""
    rng = np.random.default_rng(12)
    x = rng.standard_normal((5, 6)).astype(dtype)
    idx = np.array([[4, 0, 4], [-1, 9, 4]])  # a repeat, a negative index, one out of range
    w = rng.standard_normal((5, 6)).astype(np.float32)

    def check(fn, what):
        same(spmd.grad(lambda a: fn(snp, a))(x), jax.grad(lambda a: fn(jnp, a))(x), what)

    for axis in (0, 1, None):
        check(lambda np_, a: (np_.take(a, idx, axis=axis).astype(np.float32) ** 2).sum(),
              f"grad of take along {axis}")
    ids = np.array([3, 1, 3, 3, 0])
    check(lambda np_, a: (a[ids].astype(np.float32) * w[:5]).sum(), "grad of an embedding lookup")
    check(lambda np_, a: (a[::2, 5:0:-2].astype(np.float32) ** 2).sum(), "grad of strided slices")
    check(lambda np_, a: (np_.flip(a, 1).astype(np.float32) * w).sum(), "grad of flip")
    check(lambda np_, a: (np_.flip(a).astype(np.float32) * w).sum(), "grad of flip of every axis")
    for axes in ((0, 0), (0, -2, 1), (2,), (-3,)):  # repeated, out of range: errors, not answers
        raises_like(lambda: jnp.flip(x, axes), lambda: snp.flip(x, axes), f"flip over {axes}")
    order = np.argsort(np.asarray(w), axis=1)
    check(lambda np_, a: (np_.take_along_axis(a, order, axis=1).astype(np.float32) * w).sum(),
          "grad of take_along_axis")


@covers("numpy.take")
def test_take_gradients_under_jit_and_vmap_match_jax():
    """An embedding table's gradient from a jit of a lookup with repeated ids, the table split
    over devices; and a vmap of take's gradient over batched indices."""
    rng = np.random.default_rng(13)
    table = rng.standard_normal((16, 4)).astype(np.float32)
    ids = rng.integers(0, 16, (8, 3))

    def loss(np_, t, i):
        return (np_.take(t, i, axis=0) ** 2).sum()
    jmesh, smesh = (jax.make_mesh((8,), ("x",), devices=jax.devices()[:8],
                                  axis_types=(jax.sharding.AxisType.Auto,)),
                    spmd.make_mesh((8,), ("x",), axis_types=(spmd.AxisType.Auto,)))
    jt = jax.device_put(table, jax.sharding.NamedSharding(jmesh, jax.sharding.PartitionSpec("x")))
    st = spmd.device_put(table, spmd.NamedSharding(smesh, spmd.P("x")))
    same(spmd.jit(spmd.grad(lambda t: loss(snp, t, ids)))(st),
         jax.jit(jax.grad(lambda t: loss(jnp, t, ids)))(jt), "jit of an embedding's gradient")
    same(spmd.vmap(spmd.grad(lambda t, i: loss(snp, t, i)), in_axes=(None, 0))(table, ids),
         jax.vmap(jax.grad(lambda t, i: loss(jnp, t, i)), in_axes=(None, 0))(table, ids),
         "vmap of take's gradient over indices")


@covers("numpy.linalg.cholesky", "numpy.linalg.qr")
def test_cholesky_and_qr_match_jax():
    """Batches of symmetric positive definite matrices (one not: NaN, as JAX), upper=, float64
    under x64, an integer matrix; QR of tall, wide and batched matrices and mode 'r': JAX's
    values bit for bit (both call OpenBLAS's LAPACK, on one thread at these sizes), up to 200
    rows; Q's columns orthonormal."""
    rng = np.random.default_rng(41)
    g = rng.standard_normal((3, 5, 5)).astype(np.float32)
    spd = g @ np.swapaxes(g, -1, -2) + 5 * np.eye(5, dtype=np.float32)
    spd[2] = -np.eye(5)  # not positive definite
    for upper in (False, True):
        same(snp.linalg.cholesky(spd, upper=upper), jnp.linalg.cholesky(spd, upper=upper),
             f"cholesky, upper={upper}")
    same(snp.linalg.cholesky(np.array([[4, 2], [2, 3]])),
         jnp.linalg.cholesky(np.array([[4, 2], [2, 3]])), "cholesky of integers")
    # Only the lower triangle given (the upper one garbage, NaN included): JAX's potrf reads the
    # lower one alone when told not to symmetrize.
    lower_only = np.tril(spd[:2]) + np.triu(np.full((5, 5), np.nan, np.float32), 1)
    same(snp.linalg.cholesky(lower_only, symmetrize_input=False),
         jnp.linalg.cholesky(lower_only, symmetrize_input=False),
         "cholesky of a lower triangle")
    for shape in ((6, 4), (4, 6), (2, 5, 5)):
        a = rng.standard_normal(shape).astype(np.float32)
        q, r = snp.linalg.qr(a)
        jq, jr = jnp.linalg.qr(a)
        same(q, jq, f"Q of {shape}")
        same(r, jr, f"R of {shape}")
        k = min(shape[-2:])
        assert np.allclose(np.swapaxes(np.asarray(q), -1, -2) @ np.asarray(q), np.eye(k),
                           atol=1e-5)
    same(snp.linalg.qr(a, mode="r"), jnp.linalg.qr(a, mode="r"), "qr mode r")
    for n in (17, 64, 200):  # LAPACK's blocked paths (its block is 32 rows here)
        g = rng.standard_normal((n, n)).astype(np.float32)
        same(snp.linalg.cholesky(g @ g.T + n * np.eye(n, dtype=np.float32)),
             jnp.linalg.cholesky(g @ g.T + n * np.eye(n, dtype=np.float32)), f"cholesky of {n}")
        same(snp.linalg.qr(g[:, : n // 2]), jnp.linalg.qr(g[:, : n // 2]), f"qr of {n}")
    jax.config.update("jax_enable_x64", True)
    spmd.config.update("jax_enable_x64", True)
    try:
        wide = spd[:2].astype(np.float64)
        same(snp.linalg.cholesky(wide), jnp.linalg.cholesky(wide), "cholesky float64")
        same(snp.linalg.qr(wide[0]), jnp.linalg.qr(wide[0]), "qr float64")
    finally:
        jax.config.update("jax_enable_x64", False)
        spmd.config.update("jax_enable_x64", False)
    raises_like(lambda: jnp.linalg.cholesky(np.ones(3, np.float32)),
                lambda: snp.linalg.cholesky(np.ones(3, np.float32)), "cholesky of a vector")


@covers("numpy.linalg.norm")
def test_norms_match_jax():
    """Vector norms of every order JAX composes, matrix norms over two axes ('fro', 1, -1, inf,
    -inf), the flattened default, keepdims, an integer input; JAX's errors for an order a vector
    or a matrix does not have and an axis out of range."""
    rng = np.random.default_rng(42)
    x = rng.standard_normal((3, 4, 5)).astype(np.float32)
    for ord_ in (None, 2, 1, 0, 3, -1, np.inf, -np.inf, 0.5):
        for axis in (0, -1):
            same(snp.linalg.norm(x, ord_, axis), jnp.linalg.norm(x, ord_, axis),
                 f"vector norm ord={ord_} axis={axis}", ulps=4)
    for ord_ in (None, "fro", 1, -1, np.inf, -np.inf):
        for axis, keepdims in (((0, 1), False), ((2, 0), True), ((-1, -2), False)):
            same(snp.linalg.norm(x, ord_, axis, keepdims),
                 jnp.linalg.norm(x, ord_, axis, keepdims),
                 f"matrix norm ord={ord_} axis={axis} keepdims={keepdims}", ulps=4)
    same(snp.linalg.norm(x), jnp.linalg.norm(x), "flattened", ulps=4)
    same(snp.linalg.norm(x[0], keepdims=True), jnp.linalg.norm(x[0], keepdims=True), "keepdims",
         ulps=4)
    same(snp.linalg.norm(np.arange(6).reshape(2, 3)), jnp.linalg.norm(np.arange(6).reshape(2, 3)),
         "of integers", ulps=4)
    for what, call in (("a vector order 'fro'", lambda np_: np_.linalg.norm(x, "fro", 0)),
                       ("a matrix order 3", lambda np_: np_.linalg.norm(x, 3, (0, 1))),
                       ("three axes", lambda np_: np_.linalg.norm(x, None, (0, 1, 2))),
                       ("an axis out of range", lambda np_: np_.linalg.norm(x, None, 3))):
        raises_like(lambda: call(jnp), lambda: call(snp), what)


@covers("numpy.matmul", "numpy.dot")
def test_matrix_times_vector_is_jaxs_bit_for_bit():
    """A float32 matrix times a vector (XLA sums it in its own loop, not a GEMM: eight lanes,
    tiles of eight rows, kernels/xla_matvec.h): JAX's bits for rows and columns that fill no
    tile, one tile, and tiles with rows and columns left over, eagerly and under jit, as `A @ x`,
    `A @ x[:, None]`, `jnp.dot`, and a batch of matrices each with its own vector."""
    rng = np.random.default_rng(11)
    shapes = [(2, 1), (3, 7), (8, 8), (9, 17), (16, 100), (33, 33), (257, 300), (1000, 64)]
    for m, k in shapes:
        a = rng.standard_normal((m, k)).astype(np.float32)
        x = rng.standard_normal(k).astype(np.float32)
        same(snp.matmul(a, x), jnp.matmul(a, x), f"({m} × {k}) @ x")
        same(spmd.jit(snp.matmul)(a, x[:, None]), jax.jit(jnp.matmul)(a, x[:, None]),
             f"jit ({m} × {k}) @ x[:, None]")
        same(snp.dot(a, x), jnp.dot(a, x), f"dot of ({m} × {k}) and x")
    a = rng.standard_normal((3, 13, 21)).astype(np.float32)
    x = rng.standard_normal((3, 21, 1)).astype(np.float32)
    same(snp.matmul(a, x), jnp.matmul(a, x), "a batch of matrices, each with its own vector")
    raises_like(lambda: jnp.matmul(a[0], x[0, :20]), lambda: snp.matmul(a[0], x[0, :20]),
                "a vector of the wrong length")


@covers("numpy.sum", "numpy.mean", "numpy.dot")
def test_float32_sums_of_rows_are_jaxs_bit_for_bit():
    """float32 sums over a vector or the last axis (kernels/xla_sum.h): XLA's windows of 32 below
    4,096 elements of input, YNNPACK's order from there (rows up to 32,768), eagerly and under
    jit; the mean of a vector and the dot of two (fused multiply-adds up to 32 elements, then a
    product and the same sum)."""
    rng = np.random.default_rng(12)
    for n in (1, 2, 16, 31, 32, 33, 100, 1000, 4095, 4096, 5000, 32768):
        x = rng.standard_normal(n).astype(np.float32)
        same(snp.sum(x), jnp.sum(x), f"sum of {n}")
        same(spmd.jit(snp.sum)(x), jax.jit(jnp.sum)(x), f"jit sum of {n}")
        y = rng.standard_normal(n).astype(np.float32)
        same(spmd.jit(snp.dot)(x, y), jax.jit(jnp.dot)(x, y), f"dot of two vectors of {n}")
    for rows, n in ((3, 40), (3, 1000), (8, 1000), (100, 100), (2, 4096), (64, 33)):
        x = rng.standard_normal((rows, n)).astype(np.float32)
        same(snp.sum(x, axis=1), jnp.sum(x, axis=1), f"sum of {rows} rows of {n}")
        same(spmd.jit(lambda a: snp.sum(a, -1, keepdims=True))(x),
             jax.jit(lambda a: jnp.sum(a, -1, keepdims=True))(x), f"jit rows {rows} × {n}")
    for rows, n in ((100, 16), (100, 64), (2, 2000)):  # a batch of dots: "bi,bi->b"
        x, y = (rng.standard_normal((rows, n)).astype(np.float32) for _ in range(2))
        same(spmd.jit(lambda a, b: snp.einsum("bi,bi->b", a, b))(x, y),
             jax.jit(lambda a, b: jnp.einsum("bi,bi->b", a, b))(x, y), f"{rows} dots of {n}")
    # Half types sum their float32 values in that order (from 4,096 elements, widened in
    # registers as they are added: ynn_simd.h's half_row_sum).
    for rows, n in ((3, 40), (3, 5000), (64, 2047)):
        for dtype in (np.float16, jnp.bfloat16):
            x = (rng.standard_normal((rows, n)) * 100).astype(dtype)
            same(snp.sum(x, axis=1), jnp.sum(x, axis=1), f"{x.dtype} sum of {rows} rows of {n}")
            if dtype == np.float16:  # bfloat16's float32 sums: JAX's order not yet found
                same(spmd.jit(lambda a: snp.sum(a, axis=1, dtype=snp.float32))(x),
                     jax.jit(lambda a: jnp.sum(a, axis=1, dtype=jnp.float32))(x),
                     f"{x.dtype} float32 sum of {rows} rows of {n}")
    # Many short rows, from 4,096 elements of input: YNNPACK's lanes, summed many rows a pass
    # for rows of 1 to 16 (ynn_reduce.h: ynn_short_row_sums), alone and fed by a chain under jit
    # (norms, sums of squares and of exps), with their maxima and minima (extremes.h's short
    # rows); signed zeros, infinities and NaNs among the values.
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 3e38, -3e38], np.float32)
    chains = {"sum(a * a)": (lambda m: lambda a: m.sum(a * a, axis=-1)),
              "norm": (lambda m: lambda a: m.linalg.norm(a, axis=-1)),
              "sum(exp(a))": (lambda m: lambda a: m.sum(m.exp(a), axis=-1)),
              "max(exp(a))": (lambda m: lambda a: m.max(m.exp(a), axis=-1)),
              "max": (lambda m: lambda a: m.max(a, axis=-1)),
              "min": (lambda m: lambda a: m.min(a, axis=-1))}
    for n in range(1, 18):
        x = rng.standard_normal((5000 // n + 1, n)).astype(np.float32)
        x.flat[::7] = specials[np.arange(x.flat[::7].size) % specials.size]
        for name, chain in chains.items():
            # YNNPACK's max and min drop a NaN where spmd keeps it (test_sums_of_exps_and_logs…)
            a = np.where(np.isnan(x), np.float32(1), x) if name[1] in "ai" else x
            same(spmd.jit(chain(snp))(a), jax.jit(chain(jnp))(a), f"jit {name} of rows of {n}")
        x *= 1000
        same(snp.sum(x, axis=-1), jnp.sum(x, axis=-1), f"sums of rows of {n}")
        same(spmd.jit(lambda a: snp.mean(a, -1))(x), jax.jit(lambda a: jnp.mean(a, -1))(x),
             f"jit means of rows of {n}")
        for dtype in (np.float16, jnp.bfloat16):  # widened, then summed the same way
            h = x.astype(dtype)
            same(snp.sum(h, axis=-1), jnp.sum(h, axis=-1), f"{h.dtype} sums of rows of {n}")
    x = np.full((2048, 4), -0.0, np.float32)
    same(snp.sum(x, axis=-1), jnp.sum(x, axis=-1), "sums of rows of -0")
    x = np.array([np.inf, -np.inf, 1.0, np.nan, 2.0], np.float32)
    same(snp.sum(x[:3]), jnp.sum(x[:3]), "inf - inf")
    same(snp.sum(x[2:]), jnp.sum(x[2:]), "a NaN")
    x = rng.standard_normal(960).astype(np.float32)
    same(spmd.jit(snp.mean)(x), jax.jit(jnp.mean)(x), "mean of a vector")
    raises_like(lambda: jnp.sum(x, axis=1), lambda: snp.sum(x, axis=1), "an axis out of range")


def test_square_roots_of_squares_and_sums_over_one_element_are_xlas_rewrites():
    """What XLA's simplifier makes of jit's program (jit/simplify.h, lax.h's reduce): sqrt(x * x)
    is |x| (no overflow at 3e38, no underflow at 1e-30), also through the reshape a sum over an
    axis of one element becomes (a norm over that axis), while its gradient is sqrt's of x * x
    (NaN at 0); and a sum over an axis of one element keeps -0 and a subnormal and reads a chain's
    own exp, not its reductions'."""
    x = np.array([3e38, -1e-30, 1e-45, -2.5, np.nan, -np.inf, 0.0, -0.0, 7.0], np.float32)
    for name, f in (("sqrt(x * x)", lambda m: lambda a: m.sqrt(a * a)),
                    ("sqrt(square(x))", lambda m: lambda a: m.sqrt(m.square(a))),
                    ("sqrt(x * x) and x * x", lambda m: lambda a: (m.sqrt(a * a), a * a)),
                    ("norm over an axis of one",
                     lambda m: lambda a: m.linalg.norm(a.reshape(-1, 1), axis=-1))):
        same(spmd.jit(f(snp))(x), jax.jit(f(jnp))(x), f"jit {name}")
    same(spmd.jit(spmd.grad(lambda a: snp.sum(snp.sqrt(a * a))))(x),
         jax.jit(jax.grad(lambda a: jnp.sum(jnp.sqrt(a * a))))(x), "grad of sqrt(x * x)")
    same(snp.sqrt(x * x), jnp.sqrt(x * x), "eager sqrt(x * x), not rewritten")
    y = np.random.default_rng(3).standard_normal((5001, 1, 2)).astype(np.float32)
    y[:7, 0, 0] = [-0.0, 1e-45, -1e-45, 5.0, np.inf, -0.0, 3e38]  # no NaN: YNNPACK's max drops it
    for axis in (1, (1, 2)):
        same(spmd.jit(lambda a: snp.sum(a, axis=axis))(y), jax.jit(lambda a: jnp.sum(a, axis=axis))(y),
             f"jit sum over axes {axis}")
        same(spmd.jit(lambda a: snp.sum(snp.exp(a), axis=axis))(y),
             jax.jit(lambda a: jnp.sum(jnp.exp(a), axis=axis))(y), f"jit sum(exp) over axes {axis}")
        same(spmd.jit(lambda a: snp.max(a, axis=axis))(y), jax.jit(lambda a: jnp.max(a, axis=axis))(y),
             f"jit max over axes {axis}")


def test_floats_as_integers_saturate_as_jaxs():
    """float32 and float64 astype every integer type as XLA converts (kernels'
    saturating_convert.h, in vector lanes): NaN 0, beyond the range the type's extremes,
    fractions truncated toward zero, the floats next to each type's extremes, eagerly and under
    jit, 4,099 elements so that the lanes and their tail both see them; float16 and bfloat16,
    widened to float32 first, the same way."""
    rng = np.random.default_rng(41)
    for ftype in (np.float32, np.float64, np.float16, jnp.bfloat16):
        edges = [np.nan, np.inf, -np.inf, 0.0, -0.0, 0.5, -0.5, 1.5, -1.5, -1.0]
        for itype in (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
                      np.uint64):
            info = np.iinfo(itype)
            for edge in (float(info.max), float(info.min), float(info.max) + 1,
                         float(info.min) - 1):
                e = np.float32(edge) if ftype == jnp.bfloat16 else ftype(edge)
                edges += [np.nextafter(e, -np.inf), e, np.nextafter(e, np.inf)]
        x = (rng.standard_normal(4099) * 10.0 ** rng.integers(0, 20, 4099)).astype(ftype)
        x[:len(edges)] = np.array(edges, ftype)
        x[-len(edges):] = np.array(edges, ftype)
        for itype in (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
                      np.uint64):
            same(snp.asarray(x).astype(itype), jnp.asarray(x).astype(itype),
                 f"{np.dtype(ftype).name} as {np.dtype(itype).name}")
            same(spmd.jit(lambda a: a.astype(itype))(x), jax.jit(lambda a: a.astype(itype))(x),
                 f"jit {np.dtype(ftype).name} as {np.dtype(itype).name}")


def test_argmax_and_argmin_of_short_rows_are_jaxs():
    """argmax and argmin over a last axis of 1 to 129 elements (kernels' reduce.cc: rows of up to
    16 without a call per row, float rows of up to 128 a column of rows at a time; half types
    widened a part at a time), with ties, NaNs and zeros of both signs, eagerly and under jit."""
    rng = np.random.default_rng(31)
    for n in (1, 2, 3, 4, 5, 8, 16, 17, 64, 128, 129):
        x = rng.integers(-2, 3, size=(3000, n)).astype(np.float32)
        x.flat[::13] = np.nan
        x.flat[5::11] = -0.0
        for dtype in (np.float32, np.float16, jnp.bfloat16, np.int32, np.float64):
            a = np.nan_to_num(x).astype(dtype) if dtype == np.int32 else x.astype(dtype)
            same(snp.argmax(a, axis=-1), jnp.argmax(a, axis=-1), f"{a.dtype} argmax, rows of {n}")
            same(spmd.jit(lambda v: snp.argmin(v, axis=-1))(a),
                 jax.jit(lambda v: jnp.argmin(v, axis=-1))(a), f"{a.dtype} jit argmin, rows of {n}")


def test_sums_of_exps_and_logs_are_jaxs_bit_for_bit():
    """A float32 sum or max over the last axis of 4,096 elements or more is one "__ynn_fusion" in
    JAX's program, which takes exp and log from YNNPACK (kernels/ynn_math.h), not XLA: spmd's
    fused chain does the same (kernels/chain.h), the sum of exps in vector registers
    (kernels/ynn_simd.h). Below 4,096 elements both are XLA's. With NaN, infinities and values
    whose exps overflow and flush to zero; but for the max: YNNPACK's max drops a NaN (JAX's
    jnp.max over 4,096 ones and a NaN is 1.0), where spmd keeps XLA's and NumPy's NaN. Not yet
    JAX's: the element-wise work after such a reduction when its result holds 4,096 elements or
    more (logsumexp of 4,096 rows: JAX's log of the sums is YNNPACK's too)."""
    rng = np.random.default_rng(59)
    for shape in ((4096, 2048), (2, 4096), (3, 5000), (100, 100), (64, 63), (1, 1000)):
        x = (rng.standard_normal(shape) * 30).astype(np.float32)
        x.flat[:4] = [np.nan, np.inf, -np.inf, 100.0]
        positive = np.abs(x) + np.float32(0.01)
        cases = [
            ("sum(exp)", lambda m: lambda a: m.sum(m.exp(a), 1), x),
            ("mean(exp)", lambda m: lambda a: m.mean(m.exp(a), -1), x),
            ("sum(exp(a - 1) * 2)", lambda m: lambda a: m.sum(m.exp(a - 1.0) * 2.0, 1), x),
            ("max(exp)", lambda m: lambda a: m.max(m.exp(a), 1), np.nan_to_num(x, nan=1.0)),
            ("sum(log)", lambda m: lambda a: m.sum(m.log(a), 1), positive),
            ("softmax's denominators",
             lambda m: lambda a: m.sum(m.exp(a - m.max(a, 1, keepdims=True)), 1), x / 10),
        ]
        for name, f, a in cases:
            same(spmd.jit(f(snp))(a), jax.jit(f(jnp))(a), f"{name} of {shape}")
        half = (x / 10).astype(np.float16)  # exp in float32, rounded, then summed in float32
        same(spmd.jit(lambda a: snp.sum(snp.exp(a), 1))(half),
             jax.jit(lambda a: jnp.sum(jnp.exp(a), 1))(half), f"float16 sum(exp) of {shape}")
        if shape[0] >= 4096:
            continue
        same(spmd.jit(lambda a: spmd.nn.logsumexp(a, 1))(x / 10),
             jax.jit(lambda a: jax.nn.logsumexp(a, 1))(x / 10), f"logsumexp of {shape}")


def _inside_ynn_fusion(f, module, x):
    """f(x) as a "__ynn_fusion" computes it: the row sums of f([x, 1]) * [1, 0] are f(x) plus
    zero, and their 2 × len(x) elements put the product and f inside the fusion."""
    b = np.stack([x, np.ones_like(x)], axis=1)
    m = np.array([1, 0], np.float32)
    return module.jit(lambda b, m: module.numpy.sum(f(module)(b) * m, axis=1))(b, m)


@covers("numpy.exp", "numpy.log", "numpy.expm1", "numpy.log1p", "numpy.tanh", "nn.sigmoid")
def test_ynnpacks_transcendentals_are_jaxs_bit_for_bit():
    """Inside a reduction of 4,096 elements or more, XLA hands the element-wise work feeding it
    to YNNPACK, whose exp, log, expm1, log1p, tanh (from its expm1) and logistic (from its exp)
    are its own formulas, not XLA's (kernels/ynn_math.h): each of them, over every class of
    float32 (random bits, NaNs, infinities, subnormals), is JAX's there, bit for bit. But for
    the sign of a zero, which adding zero hides."""
    x = _every_float32(20000)
    for name, f in [("exp", lambda m: m.numpy.exp), ("log", lambda m: m.numpy.log),
                    ("expm1", lambda m: m.numpy.expm1), ("log1p", lambda m: m.numpy.log1p),
                    ("tanh", lambda m: m.numpy.tanh), ("sigmoid", lambda m: m.nn.sigmoid)]:
        same(_inside_ynn_fusion(f, spmd, x), _inside_ynn_fusion(f, jax, x), f"YNNPACK's {name}")


def test_reductions_of_transcendentals_take_the_formulas_jaxs_fusions_take():
    """Which formula a function feeding a sum takes follows XLA's fusion (kernels/ynn_fusion.h):
    YNNPACK's inside the "__ynn_fusion" of a reduction of 4,096 elements or more, XLA's behind
    an operation YNNPACK lacks (softplus's and where's selects), and XLA's below 4,096. Each sum
    is JAX's bit for bit. Not yet: erf (YNNPACK's formula unknown), and gelu below 4,096
    elements, where XLA's loop fusion computes x + 0.044715 x³ as one fused multiply-add and
    spmd rounds the product first (YNNPACK fuses none)."""
    rng = np.random.default_rng(60)
    for shape in ((512, 4096), (3, 5000), (64, 63)):
        a = (rng.standard_normal(shape) * 2).astype(np.float32)
        a.flat[:3] = [np.nan, np.inf, -np.inf]
        cases = [
            ("sum(tanh)", lambda m: lambda a: m.numpy.sum(m.numpy.tanh(a), 1)),
            ("sum(expm1)", lambda m: lambda a: m.numpy.sum(m.numpy.expm1(a), 1)),
            ("sum(log1p(|a|))", lambda m: lambda a: m.numpy.sum(m.numpy.log1p(m.numpy.abs(a)), 1)),
            ("sum(sigmoid)", lambda m: lambda a: m.numpy.sum(m.nn.sigmoid(a), 1)),
            ("sum(gelu)", lambda m: lambda a: m.numpy.sum(m.nn.gelu(a), 1)),
            ("mean(tanh(a) * a, 1)", lambda m: lambda a: m.numpy.mean(m.numpy.tanh(a) * a, 1)),
            ("sum(softplus)", lambda m: lambda a: m.numpy.sum(m.nn.softplus(a), 1)),
            ("sum(where(a > 0, exp, 0))",
             lambda m: lambda a: m.numpy.sum(m.numpy.where(a > 0, m.numpy.exp(a), 0.0), 1)),
            ("sum(where(a > 0, exp, 0) * 2)",
             lambda m: lambda a: m.numpy.sum(m.numpy.where(a > 0, m.numpy.exp(a), 0.0) * 2, 1)),
            ("max(tanh)", lambda m: lambda a: m.numpy.max(m.numpy.tanh(a), 1)),
        ]
        for name, f in cases:
            if name == "sum(gelu)" and a.size < 4096:
                continue  # outside YNNPACK, XLA fuses gelu's x + 0.044715 x³ into one FMA
            x = np.nan_to_num(a, nan=0.5) if name.startswith("max") else a
            same(spmd.jit(f(spmd))(x), jax.jit(f(jax))(x), f"{name} of {shape}")


@covers("numpy.sum", "numpy.mean")
def test_float32_sums_over_trailing_axes_are_jaxs_bit_for_bit():
    """XLA hands a float32 sum of 4,096 elements or more to YNNPACK, which flattens reduced
    dimensions that are the input's last into one row: jnp.sum of a (64, 64) array is the sum of
    one row of 4,096 in YNNPACK's order. spmd sums those axes as one row too while the row holds
    at most 32,768 elements (kernels/reduce.h: merged_trailing_axes), whether the sum stands
    alone or ends a fused chain. Summed axis by axis, 6 of these 8 differed in the last place.
    Not yet: longer rows (a (512, 4096) array's sum), whose order in JAX is still to be read."""
    rng = np.random.default_rng(61)
    for shape, axis in (((64, 64), None), ((3, 5000), None), ((2, 64, 64), None),
                        ((8, 4, 512), (1, 2)), ((5, 100, 70), (1, 2)), ((4096,), None),
                        ((4, 8, 128), None), ((128, 256), None)):
        a = (rng.standard_normal(shape) * 2 + 0.25).astype(np.float32)
        for name, f in [("sum", lambda m: lambda a: m.numpy.sum(a, axis)),
                        ("mean", lambda m: lambda a: m.numpy.mean(a, axis)),
                        ("sum(a * a)", lambda m: lambda a: m.numpy.sum(a * a, axis)),
                        ("mean(tanh)", lambda m: lambda a: m.numpy.mean(m.numpy.tanh(a), axis))]:
            same(spmd.jit(f(spmd))(a), jax.jit(f(jax))(a), f"{name} over {axis} of {shape}")
        same(snp.sum(a, axis), jnp.sum(a, axis), f"eager sum over {axis} of {shape}")


@covers("numpy.sort", "numpy.argsort")
def test_sorts_of_empty_arrays_are_jaxs():
    for x in (np.zeros((0,), np.float32), np.zeros((3, 0), np.float32), np.zeros((0, 4), np.int8)):
        for fn in ("sort", "argsort"):
            same(getattr(snp, fn)(x), getattr(jnp, fn)(x), f"{fn} of {x.shape}")


def _every_float32(n):
    """n float32s of random bits (every exponent, both signs, subnormals, NaNs) and the special
    values."""
    bits = np.random.default_rng(35).integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    special = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 1e-39,
                        88.72, 88.73, -87.4, -104.0, 7.9988117, 0.0004, 0.41421354, 0.41421357,
                        -0.41421357, -0.99999994], np.float32)
    return np.concatenate([bits.view(np.float32), special])


@covers("numpy.exp", "numpy.log", "numpy.log1p", "numpy.tanh", "nn.sigmoid", "lax.logistic")
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_exp_log_log1p_tanh_and_logistic_are_xlas_bit_for_bit(dtype):
    """spmd's float32 exp, log, log1p, tanh and logistic are XLA's own approximations
    (kernels/xla_math.h), so their values are JAX's bit for bit over every exponent, subnormals,
    NaNs and infinities; the half types compute in float32 and round, as XLA does."""
    x = _every_float32(20000).astype(jnp.dtype(dtype))
    for name, j, s in [("exp", jnp.exp, spmd.numpy.exp), ("log", jnp.log, spmd.numpy.log),
                       ("log1p", jnp.log1p, spmd.numpy.log1p), ("tanh", jnp.tanh, spmd.numpy.tanh),
                       ("sigmoid", jax.nn.sigmoid, spmd.nn.sigmoid),
                       ("logistic", jax.lax.logistic, spmd.lax.logistic)]:
        same(s(x), jax.jit(j)(x), f"{name} of {dtype}")


@covers("numpy.expm1")
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_expm1_is_xlas_bit_for_bit(dtype):
    """spmd's float32 expm1 is XLA's formula (kernels/xla_math.h: exp(x) - 1 beyond |x| = 0.5,
    else tanh(x / 2) (exp(x) + 1)), JAX's values bit for bit over every exponent, subnormals,
    NaNs and infinities; bfloat16 computes in float32 and rounds, as XLA does."""
    x = _every_float32(20000).astype(jnp.dtype(dtype))
    same(spmd.numpy.expm1(x), jax.jit(jnp.expm1)(x), f"expm1 of {dtype}")


@covers("numpy.expm1")
def test_expm1_of_every_float16_is_xlas():
    """XLA computes a float16 expm1 in float16 (its formula with each step rounded to float16,
    where bfloat16 is widened first): spmd repeats the steps, so all 65,536 float16 values give
    JAX's bits (rounding the float32 result once differed in 11,381 of them)."""
    x = np.arange(65536, dtype=np.uint16).view(np.float16)
    same(spmd.numpy.expm1(x), jax.jit(jnp.expm1)(x), "expm1 of every float16")
    same(spmd.jit(spmd.numpy.expm1)(x), jax.jit(jnp.expm1)(x), "expm1 of every float16, jitted")


def test_negative_and_abs_of_every_float16_are_jaxs_bits():
    """JAX's CPU code negates a float16 and takes its absolute value on the bits: a NaN keeps its
    payload, a signaling NaN stays signaling. spmd does the same, eager and jitted (it rounded
    every NaN to float16's one quiet NaN through float32)."""
    x = np.arange(65536, dtype=np.uint16).view(np.float16)
    for name, f, g in (("negative", spmd.numpy.negative, jnp.negative),
                       ("abs", spmd.numpy.abs, jnp.abs)):
        want = np.asarray(jax.jit(g)(x)).view(np.uint16)
        for how, got in (("eager", f(x)), ("jitted", spmd.jit(f)(x))):
            got = np.asarray(got).view(np.uint16)
            differ = np.flatnonzero(got != want)
            assert differ.size == 0, (f"{name} of every float16, {how}: {differ.size} differ, "
                                      f"first {hex(x.view(np.uint16)[differ[0]])}: "
                                      f"{hex(got[differ[0]])}, JAX's {hex(want[differ[0]])}")


@covers("numpy.cbrt", "lax.cbrt")
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_cbrt_is_the_c_librarys_as_xla_calls_it(dtype):
    """jnp.cbrt is one op, the C library's cbrtf as XLA's CPU code calls it, under its flushing
    of subnormals (a subnormal input gives the same odd value in both); the half types compute
    in float32 and round. Values and gradients bit for bit with JAX."""
    x = _every_float32(20000).astype(jnp.dtype(dtype))
    same(spmd.numpy.cbrt(x), jax.jit(jnp.cbrt)(x), f"cbrt of {dtype}")
    same(spmd.lax.cbrt(x), jax.jit(jax.lax.cbrt)(x), f"lax.cbrt of {dtype}")
    finite = x[np.isfinite(np.asarray(x, np.float32)) & (np.asarray(x, np.float32) != 0)][:2000]
    same(spmd.grad(lambda a: spmd.numpy.sum(spmd.numpy.cbrt(a)))(finite),
         jax.grad(lambda a: jnp.sum(jnp.cbrt(a)))(finite), f"cbrt's gradient in {dtype}")
    raises_like(lambda: jax.lax.cbrt(np.arange(3)), lambda: spmd.lax.cbrt(np.arange(3)),
                "lax.cbrt of integers")


@covers("numpy.divide", "numpy.true_divide")
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_a_division_by_a_broadcast_or_a_constant_is_xlas_product_with_its_reciprocal(dtype):
    """XLA's CPU backend divides by a broadcast value (a scalar, a column, a row) or a constant
    as a product with the reciprocal, and by an array of the quotient's own shape exactly; spmd
    traces the same program, so each quotient is JAX's bit for bit (about a third of them
    differ from the correctly rounded quotient)."""
    rng = np.random.default_rng(3)
    x = rng.normal(size=(300, 40)).astype(dtype)
    column = (np.abs(rng.normal(size=(300, 1))) + 0.1).astype(dtype)
    row = (np.abs(rng.normal(size=(40,))) + 0.1).astype(dtype)
    full = (np.abs(rng.normal(size=(300, 40))) + 0.1).astype(dtype)
    scalar = np.asarray(3.7, dtype)
    for what, f, args in [("x / 3.7", lambda x: x / 3.7, (x,)),
                          ("x / a traced scalar", lambda x, s: x / s, (x, scalar)),
                          ("x / column", lambda x, c: x / c, (x, column)),
                          ("x / row", lambda x, r: x / r, (x, row)),
                          ("x / an array of its shape", lambda x, y: x / y, (x, full)),
                          ("x / a constant array", lambda x: x / jnp.asarray(full), (x,))]:
        g = f if "constant" not in what else (lambda x: x / snp.asarray(full))
        same(spmd.jit(g)(*args), jax.jit(f)(*args), f"{what} in {dtype}")


@covers("numpy.linalg.cholesky", "numpy.linalg.qr")
def test_empty_factorizations_are_jaxs_and_quiet(capfd):
    """Empty matrices and empty batches: JAX's shapes, and nothing from LAPACK on stderr (an
    empty matrix's leading dimension 0 is one LAPACK refuses, printing that it did)."""
    for shape in ((0, 3), (3, 0), (0, 0), (2, 0, 4)):
        a = np.zeros(shape, np.float32)
        same(snp.linalg.qr(a), jnp.linalg.qr(a), f"qr of {shape}")
    for shape in ((0, 0), (0, 2, 2)):
        a = np.zeros(shape, np.float32)
        same(snp.linalg.cholesky(a), jnp.linalg.cholesky(a), f"cholesky of {shape}")
    assert "illegal value" not in capfd.readouterr().err


HYPERBOLIC = ("sinh", "cosh", "arcsinh", "arccosh", "arctanh")


@covers("numpy.sinh", "numpy.cosh", "numpy.arcsinh", "numpy.arccosh", "numpy.arctanh",
        "lax.sinh", "lax.cosh", "lax.asinh", "lax.acosh", "lax.atanh")
def test_hyperbolic_functions_are_jaxs_values_and_derivatives():
    """XLA's expansions: 22,000 values and the edges (±0, ±1, the branch points, the largest
    arguments, inf, NaN, subnormals) bit for bit in float32, float16 and bfloat16, but for a
    float32 arcsinh or arctanh within 2 ulps (XLA's fused loop contracts log1p(x) - log1p(-x):
    the same steps apart are spmd's bits, JAX's one value in 240 off); eagerly and
    under jit; the gradients are JAX's rules' (sinh's g cosh x, …), twice for sinh and cosh."""
    rng = np.random.default_rng(7)
    x = np.concatenate([rng.standard_normal(20000) * 3, rng.standard_normal(2000) * 60, [
        0, -0.0, 1, -1, 0.9999999, 1.0000001, np.inf, -np.inf, np.nan, 1e-40, -1e-40, 88.7,
        89, -89, 1e19, 2e19, 1.8446743e19, 3e38, 1.7e38, 1.71e38, 0.5, -0.5, 1e-8]])
    for dtype in (np.float32, np.float16, ml_dtypes.bfloat16):
        v = x.astype(dtype)
        for name in HYPERBOLIC:
            ulps = 2 if dtype is np.float32 and name in ("arcsinh", "arctanh") else 0
            what = f"{name}({np.dtype(dtype).name})"
            same(getattr(snp, name)(v), getattr(jnp, name)(v), what, ulps=ulps)
            same(spmd.jit(getattr(snp, name))(v[:64]), jax.jit(getattr(jnp, name))(v[:64]),
                 f"{what} under jit", ulps=ulps)
    lax_names = {"sinh": "sinh", "cosh": "cosh", "arcsinh": "asinh", "arccosh": "acosh",
                 "arctanh": "atanh"}
    g = np.array([0.3, -0.7, 1.5, 2.5, -3.0, 40.0, 0.999], np.float32)
    for name, lax_name in lax_names.items():
        inside = g if name != "arccosh" else np.abs(g) + 1
        inside = inside if name != "arctanh" else inside / 41
        f = lambda ns, fn: lambda v: ns.sum(fn(v) * np.float32(1.5))
        # (arcsinh's and arccosh's rules take rsqrt, which XLA computes to within an ulp.)
        same(spmd.grad(f(snp, getattr(snp, name)))(inside),
             jax.grad(f(jnp, getattr(jnp, name)))(inside), f"grad of {name}",
             ulps=1 if name in ("arcsinh", "arccosh") else 0)
        same(getattr(spmd.lax, lax_name)(inside), getattr(jax.lax, lax_name)(inside),
             f"lax.{lax_name}", ulps=2)
        same(spmd.vmap(getattr(snp, name))(inside.reshape(7, 1)),
             jax.vmap(getattr(jnp, name))(inside.reshape(7, 1)), f"vmap of {name}", ulps=2)
    for name in ("sinh", "cosh"):
        second = lambda ns, fn: ns.grad(lambda v: ns.grad(lambda w: fn(w))(v))
        for v in g[:6]:
            same(second(spmd, getattr(snp, name))(v), second(jax, getattr(jnp, name))(v),
                 f"second derivative of {name} at {v}")
    raises_like(lambda: jax.lax.sinh(np.arange(3)), lambda: spmd.lax.sinh(np.arange(3)),
                "lax.sinh of integers")
    same(snp.arctanh(np.arange(3)), jnp.arctanh(np.arange(3)), "arctanh of integers")


@covers("numpy.arctan2", "numpy.arctan", "numpy.arcsin", "numpy.arccos", "lax.atan2", "lax.atan",
        "lax.asin", "lax.acos")
def test_inverse_trigonometric_functions_are_jaxs_values_and_derivatives():
    """arctan2 is the C library's atan2 (what XLA's CPU backend calls on arrays of 80 elements
    or more; below that its loop takes another, within an ulp) and arctan, arcsin and arccos
    XLA's expansions of it: bit for bit in float32, float16 and bfloat16 over 20,000 values and
    the edges (signed zeros, ±1, beyond 1, inf, NaN, subnormals), eagerly and under jit; the
    gradients are JAX's rules' (rsqrt within an ulp)."""
    rng = np.random.default_rng(11)
    edges = [0.0, -0.0, 1.0, -1.0, 1.0000001, -1.0000001, 0.9999999, np.inf, -np.inf, np.nan,
             1e-40, -1e-40, 3e38, -3e38, 0.5, -0.5]
    x = np.concatenate([rng.uniform(-1.1, 1.1, 10000), rng.standard_normal(10000) * 40, edges])
    y = np.concatenate([rng.standard_normal(20000) * 3, edges[::-1]])
    for dtype in (np.float32, np.float16, ml_dtypes.bfloat16):
        a, b = x.astype(dtype), y.astype(dtype)
        what = np.dtype(dtype).name
        same(snp.arctan2(a, b), jnp.arctan2(a, b), f"arctan2({what})")
        same(snp.arctan2(b, a), jnp.arctan2(b, a), f"arctan2({what}), swapped")
        for name in ("arctan", "arcsin", "arccos"):
            same(getattr(snp, name)(a), getattr(jnp, name)(a), f"{name}({what})")
            same(spmd.jit(getattr(snp, name))(a[:128]), jax.jit(getattr(jnp, name))(a[:128]),
                 f"{name}({what}) under jit")
    z = np.array([[-0.0, 0.0], [-0.0, -0.0], [0.0, -0.0], [np.inf, -np.inf], [-np.inf, np.inf]],
                 np.float32)
    same(snp.arctan2(z[:, 0], z[:, 1]), jnp.arctan2(z[:, 0], z[:, 1]), "signed zeros and infs")
    h = np.array([0.5, -1.5, 2.0], np.float16)
    same(snp.arctan2(h, 2.0), jnp.arctan2(h, 2.0), "a weak Python scalar keeps float16")
    same(snp.arctan2(np.arange(3), 2), jnp.arctan2(np.arange(3), 2), "integers in a float")
    g = np.array([0.3, -0.7, 0.9, -0.2, 0.05], np.float32)
    w = np.array([1.5, 0.4, -2.0, -0.3, 3.0], np.float32)
    f = lambda ns, fn: lambda v: ns.sum(fn(v) * np.float32(1.5))
    for name in ("arctan", "arcsin", "arccos"):
        same(spmd.grad(f(snp, getattr(snp, name)))(g), jax.grad(f(jnp, getattr(jnp, name)))(g),
             f"grad of {name}", ulps=1)
    two = lambda ns: lambda u, v: ns.sum(ns.arctan2(u, v) * np.float32(1.5))
    same(spmd.grad(two(snp), argnums=(0, 1))(g, w), jax.grad(two(jnp), argnums=(0, 1))(g, w),
         "grad of arctan2")
    # (Below about 80 elements XLA's loop takes another atan2, within an ulp of the C
    # library's: the arrays above are larger, these five are not.)
    for lax_name, name in (("atan2", None), ("atan", "arctan"), ("asin", "arcsin"),
                           ("acos", "arccos")):
        args = (g, w) if name is None else (g,)
        same(getattr(spmd.lax, lax_name)(*args), getattr(jax.lax, lax_name)(*args),
             f"lax.{lax_name}", ulps=1)
    raises_like(lambda: jax.lax.atan2(np.arange(3), np.arange(3)),
                lambda: spmd.lax.atan2(np.arange(3), np.arange(3)), "lax.atan2 of integers")


@covers("numpy.nextafter", "lax.nextafter")
def test_nextafter_is_jaxs_bit_for_bit():
    """jnp.nextafter by the bits (through bitcast_convert_type), beside JAX over every pair of
    20 edge values (signed zeros, the smallest subnormals, the smallest normals, the largest
    finite values, inf, NaN) in float32, float16 and bfloat16, eagerly and under jit; integers
    in the default float, a weak Python scalar; no derivative, as in JAX."""
    vals = [0.0, -0.0, 1.0, -1.0, 2.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 3e-45, 1e-40,
            -1e-40, 1.17549435e-38, -1.17549435e-38, 3.4028235e38, -3.4028235e38, 0.5, 6e-8,
            -6e-8]
    x = np.array([a for a in vals for _ in vals])
    y = np.array([b for _ in vals for b in vals])
    for dtype in (np.float32, np.float16, ml_dtypes.bfloat16):
        with np.errstate(over="ignore"):
            a, b = x.astype(dtype), y.astype(dtype)
        what = f"nextafter({np.dtype(dtype).name})"
        same(snp.nextafter(a, b), jnp.nextafter(a, b), what)
        same(spmd.jit(snp.nextafter)(a, b), jax.jit(jnp.nextafter)(a, b), f"{what} under jit")
        same(spmd.lax.nextafter(a, b), jax.lax.nextafter(a, b), f"lax.{what}")
    h = np.array([0.0, 1.0, -3.0], np.float16)
    same(snp.nextafter(h, 1.0), jnp.nextafter(h, 1.0), "a weak Python scalar keeps float16")
    same(snp.nextafter(np.arange(3), 5), jnp.nextafter(np.arange(3), 5), "integers")
    f32 = np.array([1.0, 2.0], np.float32)
    raises_like(lambda: jax.grad(lambda v: jnp.sum(jnp.nextafter(v, 3.0)))(f32),
                lambda: spmd.grad(lambda v: snp.sum(snp.nextafter(v, 3.0)))(f32), "grad")


_SORTED_EDGES = np.sort(np.array([-np.inf, -2.0, -1.2e-38, -0.0, 0.0, 1e-40, 0.0, 1.2e-38, 1.5,
                                  1.5, 3.0, np.inf, np.nan], np.float32))
_QUERIES = np.array([[-np.inf, -3, -1.2e-38, -0.0, 0.0, 1e-45, 1e-40, 1.2e-38],
                     [1.5, 2, np.inf, np.nan, -np.nan, 3.0, -2.0, 7.0]], np.float32)


@covers("numpy.searchsorted", "numpy.digitize")
@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted_and_digitize_match_jax(side):
    """Both sides over JAX's sort order (±0 equal, subnormals as zero on CPU, NaN last, ties),
    integers at their extremes, a half type with a Python scalar, a sorter, an empty array,
    under jit; digitize over increasing and decreasing edges."""
    cases = [(_SORTED_EDGES, _QUERIES), (np.array([0, 3, 3, 2 ** 31 - 1], np.int32),
                                         np.array([-2 ** 31, 3, 2 ** 31 - 1, 4], np.int32)),
             (np.array([False, True, True]), np.array([True, False])),
             (np.float16([1, 2, 2]), 2.0), (np.zeros(0, np.float32), np.ones(3, np.float32))]
    for a, v in cases:
        same(snp.searchsorted(a, v, side), jnp.searchsorted(a, v, side), f"{a.dtype} {side}")
    same(spmd.jit(lambda a, v: snp.searchsorted(a, v, side=side))(_SORTED_EDGES, _QUERIES),
         jax.jit(lambda a, v: jnp.searchsorted(a, v, side=side))(_SORTED_EDGES, _QUERIES),
         "under jit")
    unsorted, order = np.array([3, 1, 2], np.int32), np.array([1, 2, 0], np.int32)
    same(snp.searchsorted(unsorted, 2, side, sorter=order),
         jnp.searchsorted(unsorted, 2, side, sorter=order), "a sorter")
    x = np.float32([0.2, 6.4, 3.0, 1.6, 4.0, -1.0])
    for bins in (np.float32([0, 1, 2.5, 4, 10]), np.float32([10, 4, 2.5, 1, 0])):
        same(snp.digitize(x, bins, right=side == "right"),
             jnp.digitize(x, bins, right=side == "right"), f"digitize over {bins}")


@covers("numpy.searchsorted", "numpy.digitize")
def test_searchsorted_and_digitize_errors_match_jax():
    a = np.arange(4, dtype=np.float32)
    for call, what in ((lambda np_: np_.searchsorted(a, 1.0, side="middle"), "a side"),
                       (lambda np_: np_.searchsorted(a, 1.0, method="fast"), "a method"),
                       (lambda np_: np_.searchsorted(a.reshape(2, 2), 1.0), "a of rank 2"),
                       (lambda np_: np_.digitize(a, a.reshape(2, 2)), "bins of rank 2")):
        raises_like(lambda: call(jnp), lambda: call(snp), what)


@covers("numpy.interp", "numpy.copy")
def test_interp_and_copy_match_jax():
    rng = np.random.default_rng(5)
    xp = np.sort(rng.uniform(-3, 3, 40)).astype(np.float32)
    fp = np.sin(xp).astype(np.float32)
    x = np.linspace(-4, 4, 1001).astype(np.float32)
    # Bit for bit: JAX's composition with XLA's one fused multiply-add.
    for kw in ({}, {"left": -9, "right": 9.5}, {"left": "extrapolate", "right": "extrapolate"},
               {"period": 2.5}):
        same(snp.interp(x, xp, fp, **kw), jnp.interp(x, xp, fp, **kw), f"interp {kw}")
    same(spmd.jit(snp.interp)(x, xp, fp), jax.jit(jnp.interp)(x, xp, fp), "interp under jit")
    same(snp.interp(np.arange(5), np.arange(4), np.arange(4) * 2),
         jnp.interp(np.arange(5), np.arange(4), np.arange(4) * 2), "interp of integers")
    raises_like(lambda: jnp.interp(x, xp, fp[:3]), lambda: snp.interp(x, xp, fp[:3]), "sizes")
    raises_like(lambda: jnp.interp(x, xp, fp, left="x"), lambda: snp.interp(x, xp, fp, left="x"),
                "a string left")
    # JAX fails on a list period inside its own jit (TracerArrayConversionError); spmd says why.
    with pytest.raises(ValueError, match="period must be a scalar"):
        snp.interp(x, xp, fp, period=[1, 2])
    same(snp.copy(X), jnp.copy(X), "copy")
    raises_like(lambda: jnp.copy([1, 2]), lambda: snp.copy([1, 2]), "copy of a list")


@covers("numpy.sum", "numpy.prod")
def test_sum_and_prod_in_bool_are_logical_or_and_and():
    """jnp.sum(…, dtype=bool) is JAX's logical or (XLA adds booleans so), prod its and."""
    for a in (np.int32(0), np.int32([1, 2, 0]), np.float32([0.5, 0]), np.zeros((2, 0)),
              np.int32([[1, 0], [1, 1]])):
        for kw in ({}, {"initial": True}) + (({"axis": 0},) if a.ndim else ()):
            for name in ("sum", "prod"):
                same(getattr(snp, name)(a, dtype=bool, **kw),
                     getattr(jnp, name)(a, dtype=bool, **kw), f"{name}({a}, dtype=bool, {kw})")


@covers("numpy.full", "numpy.dot")
def test_float_fills_of_integer_arrays_and_mixed_half_products_convert_as_jax():
    """A Python float fill of an integer array is XLA's conversion (NaN 0, held to the range);
    a product of float16 and uint32 converts the integers to float16 first (2^32 - 1 is inf)."""
    for v in (np.nan, np.inf, -np.inf, 3e9, -3e9, -1.5, 2.7):
        for d in (np.int32, np.uint8, np.uint32):
            same(snp.full((2,), v, d), jnp.full((2,), v, d), f"full({v}, {d.__name__})")
            same(spmd.jit(lambda x: snp.full((2,), v, d) + x)(np.zeros((), d)),
                 jax.jit(lambda x: jnp.full((2,), v, d) + x)(np.zeros((), d)),
                 f"full({v}, {d.__name__}) under jit")
    same(snp.max(np.array([], np.int32), initial=np.nan),
         jnp.max(np.array([], np.int32), initial=np.nan), "max of nothing, initial nan")
    a = np.ones((2, 2), np.float16)
    b = np.array([[0, 1], [2, 4294967295]], np.uint32)
    for name in ("dot", "matmul"):
        same(getattr(snp, name)(a, b), getattr(jnp, name)(a, b), f"{name}(float16, uint32)")


@covers("numpy.var", "numpy.std")
def test_variance_with_no_degree_of_freedom_left_is_nan():
    """ddof at least the count gives NaN, as JAX's, also with mean= or where= given (found by the
    differential fuzzer: it was -0.0)."""
    for kw in ({"mean": 0, "ddof": 2}, {"mean": 0, "ddof": 1}, {"where": np.array(True), "ddof": 1},
               {"mean": 0.5}, {"where": np.array([True, False]), "ddof": 1}):
        x = np.float32([0.0, 2.0]) if np.ndim(kw.get("where", 0)) else np.float32(0.0)
        for name in ("var", "std"):
            same(getattr(snp, name)(x, **kw), getattr(jnp, name)(x, **kw), f"{name} {kw}")


@covers("numpy.mean", "numpy.var", "numpy.std")
def test_an_integer_dtype_computes_the_mean_and_variance_in_it_as_jaxs():
    """mean and var with dtype=<an integer> convert the array first and divide rounding toward
    zero (var's result then the default float, NaN past the degrees of freedom); bool has no
    division and std asks for an inexact dtype (found by the differential fuzzer: spmd
    computed them in float32)."""
    a = np.float32([1.5, 2.5, -3.5])
    cases = [("mean", a, {"dtype": "int8"}), ("mean", a, {"dtype": "uint32"}),
             ("mean", np.int32([-7, 2]), {"dtype": "int32"}),
             ("mean", a, {"dtype": "int32", "where": np.array([True, False, True])}),
             ("mean", np.arange(6).reshape(2, 3), {"dtype": "int16", "axis": 1, "keepdims": True}),
             ("var", a, {"dtype": "int8"}), ("var", a, {"dtype": "uint8"}),
             ("var", a, {"dtype": "int32", "ddof": 1}), ("var", a, {"dtype": "int32", "ddof": 3}),
             ("var", a, {"dtype": "int32", "ddof": 0.5}),
             ("var", a, {"dtype": "uint32", "ddof": 5}),
             ("var", a, {"dtype": "int32", "where": np.array([True, False, True])}),
             ("var", a, {"dtype": "int32", "mean": np.float32(0.7)}),
             ("var", np.arange(6).reshape(2, 3) * 1000, {"dtype": "int8", "axis": 0}),
             ("var", np.arange(12).reshape(3, 4), {"dtype": "int32", "axis": (0, 1),
                                                   "keepdims": True}),
             ("var", np.array([True, False]), {"dtype": "int32"})]
    cases += [("std", a, {"dtype": "bfloat16"}), ("std", a, {"dtype": "float16"})]
    for name, x, kw in cases:
        same(getattr(snp, name)(x, **kw), getattr(jnp, name)(x, **kw), f"{name} {kw}")
    for name, dtype in (("mean", bool), ("var", bool), ("std", "int32"), ("std", bool),
                        ("std", "uint8")):
        raises_like(lambda: getattr(jnp, name)(a, dtype=dtype),
                    lambda: getattr(snp, name)(a, dtype=dtype), f"{name}(dtype={dtype})")
    # Of no elements: JAX's process dies of SIGFPE (XLA divides the integers by zero); spmd
    # raises its error instead.
    for name in ("mean", "var"):
        with pytest.raises(spmd.errors.InvalidArgument, match="division by zero"):
            getattr(snp, name)(np.float32([]), dtype="int32")


@covers("numpy.vectorize", "numpy.apply_along_axis", "numpy.apply_over_axes")
def test_vectorize_and_apply_along_axis_match_jax():
    """The function transformations: a signature's core dimensions (a batched matrix-vector
    product), scalars broadcast with a dimension of one expanded back, an excluded argument,
    several outputs; a 1-D function along each axis; a reduction over several axes. Sums are
    within 2 ulps (a vmapped sum reduces in another order than XLA's), products within the
    bound of two summation orders."""
    v = RNG.standard_normal(5).astype(np.float32)

    def cases(lib):
        matvec = lib.vectorize(lambda m, x: m @ x, signature="(n,k),(k)->(n)")
        scaled = lib.vectorize(lambda a, s, b: a * s + b, excluded={1})
        two = lib.vectorize(lambda x: (x.min(), x.max()), signature="(n)->(),()")
        return [scaled(A3[:, :1, :], 3.0, v), two(A3),
                lib.apply_along_axis(lambda x: x - x.max(), 1, A3),
                lib.apply_along_axis(lambda x: lib.stack([x.min(), x.max()]), 2, A3),
                lib.apply_along_axis(lambda x, k: x[k], 0, A3, 1),
                lib.apply_over_axes(lib.sum, A3, [0, 2])]
    same(cases(snp), cases(jnp), "vectorize and apply_along_axis", ulps=2)
    matvec = [lib.vectorize(lambda m, x: m @ x, signature="(n,k),(k)->(n)")(A3, v)
              for lib in (snp, jnp)]
    same(*matvec, "a vectorized matrix-vector product", ulps=1,
         atol=product_atol(5, np.abs(A3) @ np.abs(v)))


def test_vectorize_refuses_what_jax_refuses_and_what_jax_drops():
    """Bad signatures, core dimensions that disagree, outputs unlike the signature and bad
    excluded sets: JAX's error types. A keyword argument not excluded, which JAX drops without
    a word (calling the function without it), is a TypeError naming it."""
    v = RNG.standard_normal(4).astype(np.float32)
    bad = [
        (lambda lib: lib.vectorize(lambda m, x: m @ x, signature="(n,k),(k)>(n)")(A3, v)),
        (lambda lib: lib.vectorize(lambda m, x: m @ x, signature="(n,k),(k)->(n)")(A3, v)),
        (lambda lib: lib.vectorize(lambda x: x.sum(), signature="(n)->(n)")(A3)),
        (lambda lib: lib.vectorize(lambda x: x, excluded={-1})(A3)),
        (lambda lib: lib.vectorize(lambda x: x, excluded={1.5})(A3)),
        (lambda lib: lib.apply_along_axis(lambda x: x, 3, A3)),
    ]
    for i, call in enumerate(bad):
        raises_like(lambda: call(jnp), lambda: call(snp), f"vectorize case {i}")
    with pytest.raises(TypeError, match="keyword arguments \\['scale'\\]"):
        snp.vectorize(lambda x, scale=1.0: x * scale)(A3, scale=2.0)


def test_gcd_and_lcm_under_jit_and_where_jax_would_hang():
    """Traced, gcd runs Lamé's bound of Euclid steps: JAX's values (its jit loops until done).
    gcd(-2**31, 6), whose loop never ends in JAX (|INT_MIN| wraps), is NumPy's 2 here. Floats
    are JAX's ValueError."""
    for name in ("gcd", "lcm"):
        same(spmd.jit(getattr(snp, name))(GCD_A[:, None], GCD_B),
             jax.jit(getattr(jnp, name))(GCD_A[:, None], GCD_B), f"jit of {name}")
    assert int(snp.gcd(np.int32(-2**31), 6)) == int(np.gcd(np.int32(-2**31), np.int32(6))) == 2
    raises_like(lambda: jnp.gcd(X, X), lambda: snp.gcd(X, X), "gcd of floats")
    raises_like(lambda: jnp.lcm(1.5, 2), lambda: snp.lcm(1.5, 2), "lcm of floats")


def test_frexp_under_jit_and_its_derivative():
    """frexp traced (both parts) and the mantissa's derivative 2**-exponent; a traced
    trim_zeros is JAX's ConcretizationTypeError (its shape depends on the values), a trim that
    is not a string a TypeError."""
    same(spmd.jit(snp.frexp)(FLOATS), jax.jit(jnp.frexp)(FLOATS), "jit of frexp")
    v = np.array([3.0, 0.3, -5.5, 1e3], np.float32)
    same(spmd.grad(lambda t: snp.frexp(t)[0].sum())(v),
         jax.grad(lambda t: jnp.frexp(t)[0].sum())(v), "frexp's derivative")
    z = np.array([0, 1, 0], np.int32)
    with pytest.raises(jax.errors.ConcretizationTypeError):
        jax.jit(jnp.trim_zeros)(z)
    with pytest.raises(spmd.errors.ConcretizationTypeError, match="trim_zeros"):
        spmd.jit(snp.trim_zeros)(z)
    # A trim that is not a string: JAX's AttributeError from trim.lower(), a TypeError here; a
    # 0-d array is returned before trim is read, as in JAX.
    with pytest.raises(TypeError, match="trim must be a string"):
        snp.trim_zeros(z, None)
    same(snp.trim_zeros(np.float32(-1), None), jnp.trim_zeros(np.float32(-1), None), "0-d")


@covers("numpy.convolve", "numpy.correlate")
@pytest.mark.parametrize("i", range(len(CONVOLVED)),
                         ids=[f"{c[0]}-{c[1][2]}-{i}" for i, c in enumerate(CONVOLVED)])
def test_convolve_and_correlate_match_jax(i):
    compare_case(CONVOLVED, i)



@covers("numpy.histogram2d", "numpy.histogramdd")
def test_histogram2d_and_histogramdd_match_jax():
    """Counts, summed weights and densities of 2-D and 3-D points, with bins as counts, pairs,
    one array of edges and per-dimension edges, and explicit ranges; JAX's ValueError for a
    weight per point missing and a bin count per dimension missing. Counts equal, edges within
    an ulp and densities within 8 (divided by the edges' differences): the edges are
    jnp.linspace's, which is JAX's in about three cases of four and an ulp off at its second
    value in the others (XLA contracts one of its two multiply-adds, in a pattern not yet
    reproduced; bench/RESULTS.md, session 57)."""
    rng = np.random.default_rng(12)
    x, y = rng.standard_normal(200).astype(np.float32), rng.uniform(0, 3, 200).astype(np.float32)
    w = rng.uniform(0, 1, 200).astype(np.float32)
    pts = rng.standard_normal((100, 3)).astype(np.float32)
    box = [(-2.5, 2.5), (-3.0, 3.0), (-2.0, 2.0)]
    cases = [("histogram2d", (x, y, 5), {"range": [(-2, 2), (0, 3)]}),
             ("histogram2d", (x, y, (4, 6)), {"range": [(-2, 2), (0, 3)], "weights": w}),
             ("histogram2d", (x, y, np.linspace(-1, 2, 7, dtype=np.float32)), {}),
             ("histogram2d", (x, y, 4), {"range": [(-3, 3), (0, 3)], "density": True}),
             ("histogramdd", (pts, 3), {"range": box}),
             ("histogramdd", (pts, (2, 3, 4)), {"range": box, "weights": w[:100]}),
             ("histogramdd", (pts, [np.array([-1, 0, 1], np.float32)] * 3), {}),
             ("histogramdd", (pts, 3), {"range": box, "density": True})]
    for name, args, kwargs in cases:
        same(getattr(snp, name)(*args, **kwargs), getattr(jnp, name)(*args, **kwargs),
             f"{name}{tuple(kwargs)}", ulps=8)
    raises_like(lambda: jnp.histogramdd(pts, weights=w), lambda: snp.histogramdd(pts, weights=w),
                "a weight per point missing")
    raises_like(lambda: jnp.histogramdd(pts, (2, 3)), lambda: snp.histogramdd(pts, (2, 3)),
                "a bin count per dimension missing")


def test_linspace_of_traced_bounds():
    """Bounds that are traced values (jit's arguments, or arrays): the dtype from their type (it
    was read by converting them to NumPy, which a traced value refuses), and the values JAX's
    jit gives, the last multiply-add fused as XLA fuses it."""
    lo, hi = np.float32(-1.25), np.float32(3.0)
    same(spmd.jit(lambda a, b: snp.linspace(a, b, 9))(lo, hi),
         jax.jit(lambda a, b: jnp.linspace(a, b, 9))(lo, hi), "linspace of traced bounds")
    same(snp.linspace(snp.asarray(lo), snp.asarray(hi), 6, endpoint=False),
         jnp.linspace(jnp.asarray(lo), jnp.asarray(hi), 6, endpoint=False), "of array bounds")


def test_a_where_mask_larger_than_the_array_is_jaxs():
    """A where mask that broadcasts a reduction's array to more dimensions: JAX selects a and the
    mask broadcast together and reduces only a's own dimensions (so a 0-d array beside a mask of
    three gives three values); spmd refused it. Shapes that do not broadcast are ValueError."""
    mask = np.array([[True, False, True], [True, True, True]])
    cases = [("sum", (0,), {"where": np.array([], bool)}),
             ("sum", (np.float32(2.0),), {"where": mask[0]}),
             ("max", (np.float32(0.0),), {"initial": 0, "where": np.array([], bool)}),
             ("prod", (np.float32(2.0),), {"where": mask[0, :2]}),
             ("any", (True,), {"where": mask[0, :2]}),
             ("sum", (np.ones(3, np.float32),), {"where": mask}),
             ("sum", (np.ones(3, np.float32),), {"where": mask, "keepdims": True}),
             ("min", (np.ones((2, 3), np.float32),), {"axis": 1, "initial": 5.0,
                                                       "where": mask[0]})]
    for name, args, kwargs in cases:
        same(getattr(snp, name)(*args, **kwargs), getattr(jnp, name)(*args, **kwargs),
             f"{name}{tuple(kwargs)}")
    raises_like(lambda: jnp.sum(np.ones(3), where=np.zeros(2, bool)),
                lambda: snp.sum(np.ones(3), where=np.zeros(2, bool)), "shapes that do not broadcast")
