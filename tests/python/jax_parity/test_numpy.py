"""jax.numpy beside spmd.numpy: each function on the same inputs through both, values, shapes and
dtypes compared (bit for bit, or within the ulps a row states), and a bad input for each that
both refuse with the same type of error.

Where a row allows ulps, the two differ by design: contractions and products add in another
order; XLA's simplifier turns a division by a broadcast operand into a product with its
reciprocal (JAX's x / y[None] is then 1 ulp from the correctly rounded quotient, which spmd and
NumPy give); transcendental functions are the C library's in spmd and XLA's polynomials in JAX."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import spmd
import spmd.numpy as snp
from parity import covers, raises_like, same

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
    ("ones_like", (X,), {"dtype": np.int32}), ("full_like", (I, 2.7), {}),
    ("arange", (5,), {}), ("arange", (5,), {"dtype": np.float32}),
    ("linspace", (0, 1, 7), {}), ("linspace", (-3.3, 11.1, 50), {}),
    ("linspace", (0, 10, 5), {"dtype": np.int32}), ("linspace", (0.0, 1.0, 4), {"endpoint": False}),
    ("eye", (3,), {}), ("eye", (3, 4, 1), {"dtype": np.int32}),
    ("array", ([1, 2, 3],), {}), ("asarray", (X,), {}),
    ("add", (X, Y), {}), ("subtract", (X, Y), {}), ("multiply", (X, Y), {}),
    ("divide", (X, Y), {}, 1), ("power", (P, Y), {}, 1), ("negative", (SPECIAL,), {}),
    ("exp", (X,), {}, 1), ("log", (P,), {}, 1), ("sqrt", (SPECIAL,), {}), ("abs", (SPECIAL,), {}),
    ("sign", (SPECIAL,), {}), ("maximum", (X, Y), {}), ("minimum", (SPECIAL, 1.0), {}),
    ("equal", (X, X), {}), ("not_equal", (X, Y), {}), ("less", (X, Y), {}),
    ("less_equal", (X, Y), {}), ("greater", (I, 0), {}), ("greater_equal", (I, 0), {}),
    ("logical_and", (B, X < 0.5), {}), ("logical_or", (B, X < 0.5), {}), ("logical_not", (B,), {}),
    ("add", (H, 2.0), {}), ("multiply", (I, 1.5), {}), ("add", (I, H), {}),
    ("sin", (SPECIAL,), {}, 1), ("cos", (X,), {}, 1), ("log1p", (P,), {}, 1),
    ("expm1", (X,), {}, 2), ("square", (I,), {}),
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
    ("outer", (Y, Y), {}), ("tensordot", (A3, B3), {}, 4),
    ("tensordot", (A3, B3), {"axes": ([1], [0])}, 4),
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
        "numpy.logical_and", "numpy.logical_or", "numpy.logical_not", "numpy.sin", "numpy.cos",
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
    want = getattr(jnp, name)(*args, **kwargs)
    got = getattr(snp, name)(*args, **kwargs)
    same(got, want, f"{name}{args!r:.60}", ulps)


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
    ("log2", (P,), {}, 2), ("log10", (P,), {}, 2), ("deg2rad", (X,), {}, 1),
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
    ("roll", (A3, 2), {}), ("roll", (A3, -1), {"axis": 1}), ("roll", (A3, (1, 2)), {"axis": (0, 2)}),
    ("tril", (SQ,), {}), ("triu", (SQ, 1), {}), ("tri", (3, 4, -1), {}), ("diagonal", (SQ,), {}),
    ("diagonal", (A3, 1, 1, 2), {}), ("trace", (SQ,), {}, 1), ("diag", (Y,), {}),
    ("diag", (SQ, -1), {}), ("inner", (X, X), {}, 2), ("vdot", (X, X), {}, 2),
    ("kron", (SQ[:2, :2], X), {}), ("meshgrid", (Y, np.arange(2.0)), {}),
    ("meshgrid", (Y, Y), {"indexing": "ij"}), ("broadcast_arrays", (X, Y), {}),
    ("unstack", (A3,), {"axis": 1}), ("select", ([X > 0, X < -1], [X, -X], 9.0), {}),
    ("logspace", (0.0, 2.0, 5), {}, 4),
]


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
        "numpy.select", "numpy.logspace")
@pytest.mark.parametrize("i", range(len(EXTRA)), ids=[f"{c[0]}-{i}" for i, c in enumerate(EXTRA)])
def test_more_functions_match_jax(i):
    name, args, kwargs = EXTRA[i][:3]
    ulps = EXTRA[i][3] if len(EXTRA[i]) > 3 else 0
    same(getattr(snp, name)(*args, **kwargs), getattr(jnp, name)(*args, **kwargs),
         f"{name} case {i}", ulps)


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
