"""jax.lax beside spmd.lax: the collectives inside shard_map on a 2 x 4 mesh, control flow,
dot_general and the element-wise functions; an unbound axis name is JAX's NameError."""
import functools

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

import spmd
import spmd.lax as slax
import spmd.numpy as snp
from parity import covers, product_atol, raises_like, same

X = np.arange(64, dtype=np.float32).reshape(8, 8) / 9 - 3


def _lib(lib):
    if lib is jax:
        mesh = jax.make_mesh((2, 4), ("a", "b"), devices=jax.devices()[:8],
                             axis_types=(jax.sharding.AxisType.Auto,) * 2)
        return jax, jnp, mesh, jax.sharding.PartitionSpec
    return spmd, snp, spmd.make_mesh((2, 4), ("a", "b"),
                                     axis_types=(spmd.AxisType.Auto,) * 2), spmd.P


# name -> (body, out_spec as a tuple of entries): each result's spec names the axes it varies
# over, as check_vma requires.
COLLECTIVES = {
    "psum": (lambda lax, x: lax.psum(x, "b"), ("a",)),
    "pmean": (lambda lax, x: lax.pmean(x, ("a", "b")), ()),
    "pmax": (lambda lax, x: lax.pmax(x, "a"), (None, "b")),
    "pmin": (lambda lax, x: lax.pmin(x, "b"), ("a",)),
    "all_gather": (lambda lax, x: lax.all_gather(x, "b", axis=1, tiled=True), ("a", "b")),
    "all_gather_stacked": (lambda lax, x: lax.all_gather(x, "a"), ("a", None, "b")),
    "psum_scatter": (lambda lax, x: lax.psum_scatter(x, "b", scatter_dimension=0, tiled=True),
                     (("a", "b"),)),
    "ppermute": (lambda lax, x: lax.ppermute(x, "b", [(i, (i + 1) % 4) for i in range(4)]),
                 ("a", "b")),
    "axis_index": (lambda lax, x: x * lax.axis_index("b"), ("a", "b")),
    "axis_size": (lambda lax, x: x * lax.axis_size(("a", "b")), ("a", "b")),
    "all_to_all": (lambda lax, x: lax.all_to_all(x, "b", 0, 1, tiled=True), ("a", "b")),
    "all_to_all_stacked": (lambda lax, x: lax.all_to_all(x, "b", 0, 1), ("a", "b")),
    "all_to_all_back": (lambda lax, x: lax.all_to_all(x, "a", 1, 0, tiled=True), ("a", "b")),
}


@covers("lax.psum", "lax.pmean", "lax.pmax", "lax.pmin", "lax.all_gather", "lax.psum_scatter",
        "lax.ppermute", "lax.axis_index", "lax.axis_size", "lax.all_to_all")
@pytest.mark.parametrize("name", list(COLLECTIVES))
def test_collectives_in_shard_map_match_jax(name):
    body, out = COLLECTIVES[name]

    def run(lib):
        top, np_, mesh, P = _lib(lib)
        f = top.shard_map(functools.partial(body, top.lax), mesh=mesh, in_specs=P("a", "b"),
                          out_specs=P(*out))
        return top.jit(f)(X)
    same(run(spmd), run(jax), name, ulps=2)


def test_an_unbound_axis_name_is_a_name_error():
    for name in ("psum", "pmean", "pmax", "axis_index", "axis_size"):
        call = (lambda lax: getattr(lax, name)("x")) if name.startswith("axis") else \
            (lambda lax: getattr(lax, name)(X, "x"))
        err = raises_like(lambda: call(jax.lax), lambda: call(spmd.lax), f"lax.{name} outside")
        assert "unbound axis name: x" in str(err)


@covers("lax.scan", "lax.fori_loop", "lax.cond", "lax.switch", "lax.while_loop",
        "lax.stop_gradient", "lax.dot_general", "lax.rsqrt", "lax.erf", "lax.logistic",
        "lax.tan")
def test_control_flow_and_functions_match_jax():
    def program(lib, np_, x):
        lax = lib.lax
        carry, ys = lax.scan(lambda c, r: (c + r, c * r), np_.zeros(8, np.float32), x)
        y = lax.fori_loop(0, 3, lambda i, v: v * 2 + i, carry)
        z = lax.cond(np_.sum(x) > 0, lambda v: v + 1, lambda v: v - 1, y)
        s = lax.switch(np_.argmax(x[0]) % 3, [lambda v: v, lambda v: -v, lambda v: v * v], z)
        d = lax.dot_general(x, ys, (((1,), (1,)), ((), ())))
        return (s, d, lax.rsqrt(np_.abs(x) + 1), lax.erf(x), lax.logistic(x),
                lax.stop_gradient(x) * 2, lax.tan(x), ys)
    want = jax.jit(lambda x: program(jax, jnp, x))(X)
    got = spmd.jit(lambda x: program(spmd, snp, x))(X)
    same(got[:1] + got[2:], want[:1] + want[2:], "scan, fori_loop, cond, switch, …", ulps=4)
    ys = np.abs(np.asarray(want[-1], np.float64))
    same(got[1], want[1], "dot_general", ulps=4,
         atol=product_atol(X.shape[1], np.abs(X).astype(np.float64) @ ys.T))
    same(spmd.lax.switch(7, [lambda: snp.ones(2), lambda: snp.zeros(2)]),
         jax.lax.switch(7, [lambda: jnp.ones(2), lambda: jnp.zeros(2)]), "a clamped index")
    same(spmd.lax.while_loop(lambda v: v < 100, lambda v: v * 3, 1),
         jax.lax.while_loop(lambda v: v < 100, lambda v: v * 3, 1), "while_loop")


def test_a_while_loop_on_traced_values_says_why_not():
    with pytest.raises(TypeError, match="no loops"):
        spmd.jit(lambda x: spmd.lax.while_loop(lambda v: v < 10, lambda v: v * 2, x))(1.0)


def test_lax_functions_refuse_integers_as_jax():
    raises_like(lambda: jax.lax.exp(np.int32(2)), lambda: spmd.lax.exp(np.int32(2)),
                "lax.exp of an int")


@covers("lax.sort", "lax.sort_key_val")
def test_sort_and_sort_key_val_match_jax():
    """lax.sort of an array and of a tuple sorted by its first array, lax.sort_key_val along
    each dimension, the values' gradient, and what both refuse."""
    rng = np.random.default_rng(3)
    keys = rng.integers(-2, 3, (4, 6)).astype(np.float32)
    values = rng.standard_normal((4, 6)).astype(np.float32)
    labels = rng.integers(0, 9, (4, 6)).astype(np.int32)
    for dim in (0, 1, -1):
        same(slax.sort(keys, dimension=dim), jax.lax.sort(keys, dimension=dim), f"sort, {dim}")
        same(slax.sort((keys, values, labels), dimension=dim),
             jax.lax.sort((keys, values, labels), dimension=dim), f"sort of a tuple, {dim}")
        same(slax.sort_key_val(keys, values, dim), jax.lax.sort_key_val(keys, values, dim),
             f"sort_key_val, {dim}")
    same(spmd.grad(lambda v: (slax.sort_key_val(keys, v)[1] * values).sum())(values),
         jax.grad(lambda v: (jax.lax.sort_key_val(keys, v)[1] * values).sum())(values),
         "grad of sort_key_val's values")
    raises_like(lambda: jax.lax.sort_key_val(keys, values[:2]),
                lambda: slax.sort_key_val(keys, values[:2]), "keys and values of two shapes")
    raises_like(lambda: jax.lax.sort(keys, dimension=2), lambda: slax.sort(keys, dimension=2),
                "a dimension out of range")


def test_sort_by_several_keys_matches_jax():
    """lax.sort with num_keys 2 and 3: the first key primary, ties broken by the next, equal
    rows kept in their order; float keys with -0, 0, NaN and infinities as JAX orders them; under
    jit too; and JAX's errors for num_keys out of range or beside a single operand."""
    rng = np.random.default_rng(5)
    a = rng.integers(0, 3, (5, 8)).astype(np.int32)
    b = np.array([0.0, -0.0, np.nan, 1.0, -np.inf, np.inf, 1.0, 0.0] * 5, np.float32).reshape(5, 8)
    c = rng.integers(-1, 2, (5, 8)).astype(np.float32)
    v = np.arange(40, dtype=np.int32).reshape(5, 8)
    for dim in (0, 1):
        for k in (2, 3):
            same(slax.sort((a, b, c, v), dimension=dim, num_keys=k),
                 jax.lax.sort((a, b, c, v), dimension=dim, num_keys=k), f"num_keys={k}, {dim}")
    same(spmd.jit(lambda *x: slax.sort(x, num_keys=2))(b, a, v),
         jax.lax.sort((b, a, v), num_keys=2), "num_keys=2 under jit")
    for call in (lambda lax: lax.sort((a, b), num_keys=3), lambda lax: lax.sort((a, b), num_keys=0),
                 lambda lax: lax.sort(a, num_keys=2)):
        raises_like(lambda: call(jax.lax), lambda: call(slax), "num_keys out of range")


CONV_X = np.random.default_rng(21).standard_normal((2, 3, 9, 8)).astype(np.float32)
CONV_K = np.random.default_rng(22).standard_normal((4, 3, 3, 2)).astype(np.float32)
CONV_NHWC, CONV_HWIO = np.transpose(CONV_X, (0, 2, 3, 1)), np.transpose(CONV_K, (2, 3, 1, 0))
CONV_GROUPED = np.random.default_rng(23).standard_normal((6, 1, 3, 3)).astype(np.float32)
CONV_1D = (np.random.default_rng(24).standard_normal((2, 4, 10)).astype(np.float32),
           np.random.default_rng(25).standard_normal((5, 4, 3)).astype(np.float32))
# (what, lhs, rhs, window_strides, padding, keyword arguments)
CONV_CASES = [
    ("VALID", CONV_X, CONV_K, (1, 1), "VALID", {}),
    ("SAME, strided", CONV_X, CONV_K, (2, 3), "SAME", {}),
    ("explicit and negative padding, both dilations", CONV_X, CONV_K, (1, 2),
     [(2, -1), (0, 3)], {"lhs_dilation": (2, 1), "rhs_dilation": (1, 2)}),
    ("NHWC strings", CONV_NHWC, CONV_HWIO, (1, 1), "SAME",
     {"dimension_numbers": ("NHWC", "HWIO", "NHWC")}),
    ("ConvDimensionNumbers, SAME_LOWER", CONV_NHWC, CONV_HWIO, (2, 1), "SAME_LOWER",
     {"dimension_numbers": "dn"}),
    ("feature groups (depthwise)", CONV_X, CONV_GROUPED, (1, 1), "SAME",
     {"feature_group_count": 3}),
    ("1-D", *CONV_1D, (2,), "SAME", {}),
    ("preferred_element_type", CONV_X, CONV_K, (1, 1), "VALID",
     {"preferred_element_type": np.float32}),
]


@covers("lax.conv_general_dilated", "lax.conv_dimension_numbers")
@pytest.mark.parametrize("case", CONV_CASES, ids=[c[0] for c in CONV_CASES])
def test_conv_general_dilated_matches_jax_with_its_gradients(case):
    """Values within the rounding of a reordered sum (XLA's convolution adds in Eigen's order,
    spmd's in a matmul's), and both operands' gradients, under jit."""
    what, lhs, rhs, strides, padding, kw = case
    if kw.get("dimension_numbers") == "dn":
        kw = dict(kw, dimension_numbers=jax.lax.conv_dimension_numbers(
            lhs.shape, rhs.shape, ("NHWC", "HWIO", "NHWC")))

    def loss(lib):
        return lambda a, b: (lib.lax.conv_general_dilated(a, b, strides, padding, **kw) ** 2).sum()
    same(spmd.jit(lambda a, b: spmd.lax.conv_general_dilated(a, b, strides, padding, **kw))(
         lhs, rhs), jax.jit(lambda a, b: jax.lax.conv_general_dilated(
             a, b, strides, padding, **kw))(lhs, rhs), what, ulps=8, atol=1e-5)
    same(spmd.jit(spmd.grad(loss(spmd), argnums=(0, 1)))(lhs, rhs),
         jax.jit(jax.grad(loss(jax), argnums=(0, 1)))(lhs, rhs), f"grad of {what}", ulps=8,
         atol=2e-4)


@covers("lax.conv", "lax.conv_with_general_padding")
def test_conv_forms_and_bad_arguments_match_jax():
    same(spmd.lax.conv(CONV_X, CONV_K, (1, 2), "SAME"),
         jax.lax.conv(CONV_X, CONV_K, (1, 2), "SAME"), "lax.conv", ulps=8, atol=1e-5)
    same(spmd.lax.conv_with_general_padding(CONV_X, CONV_K, (1, 1), [(1, 1), (0, 2)], (1, 2),
                                            (2, 1)),
         jax.lax.conv_with_general_padding(CONV_X, CONV_K, (1, 1), [(1, 1), (0, 2)], (1, 2),
                                           (2, 1)), "conv_with_general_padding", ulps=8,
         atol=1e-5)
    for what, call in (
            ("dtypes that differ", lambda lib: lib.lax.conv(CONV_X, CONV_K.astype(np.float16),
                                                           (1, 1), "SAME")),
            ("a padding name JAX does not know", lambda lib: lib.lax.conv(
                CONV_X, CONV_K, (1, 1), "FULL")),
            ("groups that do not divide", lambda lib: lib.lax.conv_general_dilated(
                CONV_X, CONV_K, (1, 1), "SAME", feature_group_count=2))):
        raises_like(lambda: call(jax), lambda: call(spmd), what)


def _solve_cases():
    rng = np.random.default_rng(7)
    lower = np.tril(rng.standard_normal((6, 6)).astype(np.float32)) + 3 * np.eye(6, dtype=np.float32)
    for left in (True, False):
        b = rng.standard_normal((6, 4) if left else (4, 6)).astype(np.float32)
        for low in (True, False):
            for transpose_a in (False, True):
                for unit in (False, True):
                    yield (lower if low else lower.T.copy(), b,
                           dict(left_side=left, lower=low, transpose_a=transpose_a,
                                unit_diagonal=unit))


@covers("lax.linalg")
def test_triangular_solve_matches_jax_with_its_gradients():
    """jax.lax.linalg.triangular_solve, every combination of its flags: the values bit for bit
    (both call BLAS's trsm on column-major copies), b's gradient too; a's within 6 ulps (JAX
    orders the product of its rule by the operands' shapes, a 4-term dot here). Each side's
    gradient moves with the kernels its OpenBLAS runs (Debian's 0.3.21 for spmd, the
    scipy-openblas wheel for JAX): 2 ulps apart at most with the AVX-512 kernels, 5 where
    OPENBLAS_CORETYPE=Haswell names the AVX2 ones on an AVX-512 processor, as session 67's
    Zen 5 machine does. Batched, under vmap, and under jit with the batch split over 8
    devices; JAX's errors for bad shapes."""
    for a, b, kw in _solve_cases():
        what = f"triangular_solve{kw}"
        same(slax.linalg.triangular_solve(a, b, **kw), jax.lax.linalg.triangular_solve(a, b, **kw),
             what)

        def loss(m, a, b):
            return m.numpy.sum(m.lax.linalg.triangular_solve(a, b, **kw) ** 2)
        ga, gb = spmd.grad(lambda a, b: loss(spmd, a, b), argnums=(0, 1))(a, b)
        ja, jb = jax.grad(lambda a, b: loss(jax, a, b), argnums=(0, 1))(a, b)
        same(gb, jb, f"b's gradient of {what}")
        same(ga, ja, f"a's gradient of {what}", ulps=6)
    rng = np.random.default_rng(8)
    a = np.tril(rng.standard_normal((8, 5, 5)).astype(np.float32)) + 4 * np.eye(5, dtype=np.float32)
    b = rng.standard_normal((8, 5, 3)).astype(np.float32)
    kw = dict(left_side=True, lower=True)
    want = jax.lax.linalg.triangular_solve(a, b, **kw)
    same(slax.linalg.triangular_solve(a, b, **kw), want, "a batch")
    same(spmd.vmap(lambda a, b: slax.linalg.triangular_solve(a, b, **kw))(a, b),
         jax.vmap(lambda a, b: jax.lax.linalg.triangular_solve(a, b, **kw))(a, b), "vmap")
    mesh = spmd.make_mesh((8,), ("x",), axis_types=(spmd.AxisType.Auto,))
    split = spmd.NamedSharding(mesh, spmd.P("x"))
    got = spmd.jit(lambda a, b: slax.linalg.triangular_solve(a, b, **kw))(
        spmd.device_put(a, split), spmd.device_put(b, split))
    same(got, want, "a batch split over 8 devices")
    assert got.sharding.spec == spmd.P("x"), got.sharding
    raises_like(lambda: jax.lax.linalg.triangular_solve(a[0], b, **kw),
                lambda: slax.linalg.triangular_solve(a[0], b, **kw), "batches that differ")
    raises_like(lambda: jax.lax.linalg.triangular_solve(a, b, left_side=False),
                lambda: slax.linalg.triangular_solve(a, b, left_side=False), "sizes that differ")


@covers("lax.linalg")
def test_choleskys_gradient_is_jaxs():
    """jnp.linalg.cholesky's gradient: JAX's JVP transposed, L⁻ᵀ φ(Lᵀ Ḡ) L⁻¹ by two triangular
    solves, then the symmetrization's transpose: bit for bit with jax.grad on a weighted loss,
    batched, in float64 under x64 within 4 ulps; lax.linalg.cholesky's and qr's forms."""
    rng = np.random.default_rng(9)
    g = rng.standard_normal((3, 6, 6)).astype(np.float32)
    spd = g @ np.swapaxes(g, -1, -2) + 6 * np.eye(6, dtype=np.float32)
    weights = rng.standard_normal((6, 6)).astype(np.float32)

    def loss(m, x):
        return m.numpy.sum(m.numpy.linalg.cholesky(x) * weights)
    same(spmd.grad(lambda x: loss(spmd, x))(spd), jax.grad(lambda x: loss(jax, x))(spd),
         "cholesky's gradient")
    same(spmd.grad(lambda x: loss(spmd, x))(spd[0]), jax.grad(lambda x: loss(jax, x))(spd[0]),
         "one matrix's")
    same(slax.linalg.cholesky(spd), jax.lax.linalg.cholesky(spd), "lax.linalg.cholesky")
    same(slax.linalg.qr(spd, full_matrices=False), jax.lax.linalg.qr(spd, full_matrices=False),
         "lax.linalg.qr")
    jax.config.update("jax_enable_x64", True)
    spmd.config.update("jax_enable_x64", True)
    try:
        wide = spd.astype(np.float64)
        same(spmd.grad(lambda x: loss(spmd, x))(wide), jax.grad(lambda x: loss(jax, x))(wide),
             "cholesky's gradient in float64", ulps=4)
    finally:
        jax.config.update("jax_enable_x64", False)
        spmd.config.update("jax_enable_x64", False)


@covers("lax.linalg")
def test_qrs_gradient_matches_jax():
    """jnp.linalg.qr's gradient through Q and R: JAX's JVP transposed, for tall, square and
    wide matrices (JAX's block rule: X1 = Q R1, R2 = Qᵀ X2) and a batch, within 16 ulps or 1e-5
    of jax.grad (the transposed rule's sums run in another order)."""
    rng = np.random.default_rng(10)
    for shape in ((6, 4), (5, 5), (2, 7, 3), (3, 5), (2, 2, 6)):
        x = rng.standard_normal(shape).astype(np.float32)
        wq = rng.standard_normal(shape[:-1] + (min(shape[-2:]),)).astype(np.float32)
        wr = rng.standard_normal(shape[:-2] + (min(shape[-2:]), shape[-1])).astype(np.float32)

        def loss(m, x):
            q, r = m.numpy.linalg.qr(x)
            return m.numpy.sum(q * wq) + m.numpy.sum(r * wr)
        same(spmd.grad(lambda x: loss(spmd, x))(x), jax.grad(lambda x: loss(jax, x))(x),
             f"qr's gradient of {shape}", ulps=16, atol=1e-5)
        same(spmd.grad(lambda x: snp.sum(snp.linalg.qr(x, mode="r") * wr))(x),
             jax.grad(lambda x: jnp.sum(jnp.linalg.qr(x, mode="r") * wr))(x),
             f"R's alone, of {shape}", ulps=16, atol=1e-5)


LAX_REDUCTIONS = ("reduce_sum", "reduce_prod", "reduce_max", "reduce_min", "reduce_and",
                  "reduce_or", "reduce_xor")
REDUCTION_SHAPES = (((4096,), (0,)), ((64, 300), (1,)), ((64, 300), (0,)), ((8, 16, 33), (0, 2)),
                    ((3, 5), ()), ((3, 0, 2), (1,)), ((5, 7), (0, 1)))


def _reduced(x, axes):
    """How many elements make each result element, and the sum of their magnitudes."""
    n = int(np.prod([x.shape[a] for a in axes])) if axes else 1
    magnitude = np.abs(x.astype(np.float64)).sum(axis=axes) if axes else np.abs(x)
    return n, magnitude


@covers("lax.reduce_sum", "lax.reduce_prod", "lax.reduce_max", "lax.reduce_min",
        "lax.reduce_and", "lax.reduce_or", "lax.reduce_xor")
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "int8", "int32", "uint8",
                                   "bool"])
def test_lax_reductions_match_jax(dtype):
    """Every lax reduction over the shapes and axes above, the result's dtype JAX's (no
    promotion: int8 sums wrap in int8), its values JAX's bit for bit where the order cannot
    matter (integers, bool, max and min) and within a sum's or a product's rounding where it
    can. XLA sums half types in the half type itself, spmd in float32 (as jnp.sum): spmd's is the
    closer to the exact sum, so a half sum is held to the bound of n half-precision additions.
    Errors (bool sums and products, float bitwise reductions) are JAX's."""
    rng = np.random.default_rng(5)
    for shape, axes in REDUCTION_SHAPES:
        x = np.asarray(jnp.asarray(rng.normal(scale=20, size=shape).astype(np.float32))
                       .astype(dtype))
        for name in LAX_REDUCTIONS:
            what = f"lax.{name}({dtype}{list(shape)}, {axes})"
            try:
                want = getattr(jax.lax, name)(x, axes)
            except TypeError:
                raises_like(lambda: getattr(jax.lax, name)(x, axes),
                            lambda: getattr(slax, name)(x, axes), what)
                continue
            got = getattr(slax, name)(x, axes)
            kind = np.dtype(x.dtype).kind
            if name in ("reduce_sum", "reduce_prod") and (kind == "f" or dtype == "bfloat16"):
                n, magnitude = _reduced(x, axes)
                if name == "reduce_sum":
                    half = dtype in ("float16", "bfloat16")
                    same(got, want, what, ulps=1,
                         atol=product_atol(n, magnitude, np.float16 if half else np.float32))
                else:
                    same(got, want, what, ulps=2 * n)
            else:
                same(got, want, what)


def test_lax_reductions_refuse_bad_axes_as_jax():
    x = np.zeros((3, 4), np.float32)
    for axes in ((2,), (0, 0), (-1,)):
        err = raises_like(lambda: jax.lax.reduce_sum(x, axes),
                          lambda: slax.reduce_sum(x, axes), f"reduce_sum axes {axes}")
        try:
            jax.lax.reduce_sum(x, axes)
        except ValueError as e:
            assert str(err) == str(e), f"axes {axes}: {err!r}, JAX's {e!r}"


# --- element-wise functions: values on every dtype they take (special values included: NaN,
# infinities, -0, the integer extremes, the most negative over -1), under jit too, and lax's
# refusals:
# mixed dtypes (a Python scalar is its kind's default dtype, not weak), a dtype a function does
# not take, ranks and shapes that do not broadcast, a list.

F32 = np.array([0.0, -0.0, 1.5, -2.5, 0.5, -0.5, 2.5, 3.0, np.inf, -np.inf, np.nan, 1e-40,
                7.0, -7.0, 65504.0, 1e30], np.float32)
G32 = np.array([2.0, 0.0, -0.0, 2.0, -3.0, 0.5, np.nan, 1.0, np.inf, 2.0, 1.0, -1.0,
                0.0, -2.0, 3.0, -np.inf], np.float32)
I32 = np.array([7, -7, 0, 1, -1, 2**31 - 1, -2**31, 3, 40, -40, 5, 31, 32, 33, -2, 100], np.int32)
J32 = np.array([2, 2, 0, 0, -1, 2, -1, 33, 3, -3, 31, 1, 0, 7, -2, 0], np.int32)


def _inputs(dtype):
    if dtype in ("float32", "float16", "bfloat16"):
        d = ml_dtypes.bfloat16 if dtype == "bfloat16" else np.dtype(dtype)
        return F32.astype(d), G32.astype(d)
    if dtype == "bool":
        return I32 > 0, J32 > 0
    info = np.iinfo(np.dtype(dtype))
    return (np.clip(I32, info.min, info.max).astype(dtype),
            np.clip(J32, info.min, info.max).astype(dtype))


BINARY = {
    "add": ("float32", "bfloat16", "int32", "uint8", "int8"),
    "sub": ("float32", "int32", "uint8"),
    "mul": ("float32", "float16", "int32", "uint8"),
    "div": ("float32", "int32", "int8", "uint8"),
    "rem": ("float32", "int32", "int8", "uint8"),
    "max": ("float32", "int32", "bool"), "min": ("float32", "uint8", "bool"),
    "eq": ("float32", "int32", "bool"), "ne": ("float32", "int32"), "lt": ("float32", "int32"),
    "le": ("float32", "uint8"), "gt": ("float32", "int32"), "ge": ("float32", "bool"),
    "bitwise_and": ("int32", "bool"), "bitwise_or": ("uint8", "bool"),
    "bitwise_xor": ("int32", "bool"),
    "shift_left": ("int32", "uint8"), "shift_right_arithmetic": ("int32", "int8", "uint8"),
    "shift_right_logical": ("int32", "uint8", "int8"),
    "pow": ("float32",),
}
UNARY = {
    "neg": ("float32", "int32", "uint8"), "sign": ("float32", "int32", "uint8"),
    "floor": ("float32", "bfloat16"), "ceil": ("float32",), "is_finite": ("float32", "float16"),
    "exp2": ("float32",), "bitwise_not": ("int32", "uint8", "bool"), "abs": ("float32", "int32"),
    "square": ("float32", "int32"), "reciprocal": ("float32",), "round": ("float32", "bfloat16"),
}
CASES = [(n, d) for n, ds in BINARY.items() for d in ds]
UNARY_CASES = [(n, d) for n, ds in UNARY.items() for d in ds]


@covers("lax.add", "lax.sub", "lax.mul", "lax.div", "lax.rem", "lax.max", "lax.min", "lax.eq",
        "lax.ne", "lax.lt", "lax.le", "lax.gt", "lax.ge", "lax.bitwise_and", "lax.bitwise_or",
        "lax.bitwise_xor", "lax.shift_left", "lax.shift_right_arithmetic",
        "lax.shift_right_logical", "lax.pow")
@pytest.mark.parametrize("name,dtype", CASES, ids=[f"{n}-{d}" for n, d in CASES])
def test_binary_functions_match_jax(name, dtype):
    x, y = _inputs(dtype)
    if name in ("div", "rem") and dtype != "float32":
        y = np.where(y == 0, np.ones_like(y), y)  # an integer zero divisor raises (below)
    same(getattr(slax, name)(x, y), getattr(jax.lax, name)(x, y), f"lax.{name} {dtype}")


@covers("lax.neg", "lax.sign", "lax.floor", "lax.ceil", "lax.is_finite", "lax.exp2",
        "lax.bitwise_not", "lax.abs", "lax.square", "lax.reciprocal", "lax.round",
        "lax.RoundingMethod")
@pytest.mark.parametrize("name,dtype", UNARY_CASES, ids=[f"{n}-{d}" for n, d in UNARY_CASES])
def test_unary_functions_match_jax(name, dtype):
    x, _ = _inputs(dtype)
    same(getattr(slax, name)(x), getattr(jax.lax, name)(x), f"lax.{name} {dtype}")
    if name == "round":
        same(slax.round(x, slax.RoundingMethod.TO_NEAREST_EVEN),
             jax.lax.round(x, jax.lax.RoundingMethod.TO_NEAREST_EVEN), "round to even")


@covers("lax.integer_pow", "lax.clamp", "lax.select", "lax.select_n",
        "lax.convert_element_type")
def test_powers_selections_and_conversions_match_jax():
    x, y = _inputs("float32")
    i, _ = _inputs("int32")
    for n in (0, 1, 2, 3, 5, 8, -1, -3):
        same(slax.integer_pow(x, n), jax.lax.integer_pow(x, n), f"integer_pow(x, {n})")
    same(slax.integer_pow(i, 3), jax.lax.integer_pow(i, 3), "integer_pow of int32")
    same(slax.clamp(np.float32(-1), x, np.float32(2)), jax.lax.clamp(np.float32(-1), x,
                                                                     np.float32(2)), "clamp")
    same(slax.clamp(y, x, y + 1), jax.lax.clamp(y, x, y + 1), "clamp by arrays")
    same(slax.select(x > y, x, y), jax.lax.select(x > y, x, y), "select")
    same(slax.select(True, x, y), jax.lax.select(True, x, y), "select by a scalar")
    which = np.arange(16, dtype=np.int32) % 3
    same(slax.select_n(which, x, y, x * 2), jax.lax.select_n(which, x, y, x * 2), "select_n")
    for dtype in (np.int32, np.uint8, np.int8, np.float16, bool):
        same(slax.convert_element_type(x, dtype), jax.lax.convert_element_type(x, dtype),
             f"convert_element_type to {np.dtype(dtype).name}")
    # Python scalars and NumPy values: their kind's default dtype, NumPy's canonical one.
    same(slax.add(x, 1.0), jax.lax.add(x, 1.0), "add of a Python float")
    same(slax.mul(np.ones(16), x), jax.lax.mul(np.ones(16), x), "a float64 NumPy array")
    same(slax.add(x, np.ones(1, np.float32)), jax.lax.add(x, np.ones(1, np.float32)),
         "a dimension of 1")


@covers("lax.bitcast_convert_type")
def test_bitcast_convert_type_matches_jax():
    """The bits of every dtype read as each of its width, narrower and wider (a last dimension
    added or dropped), special floats among them, eagerly, under jit, vmap and grad, and sharded
    over a mesh; bool and a wrong last dimension are JAX's errors."""
    f32 = np.array([0.0, -0.0, 1.5, -2.25, np.inf, -np.inf, np.nan, 1e-40, 65504.0, 7.0],
                   np.float32)
    values = {np.float32: f32, np.int32: f32.view(np.int32), np.uint32: f32.view(np.uint32),
              np.float16: f32.astype(np.float16), ml_dtypes.bfloat16: f32.astype(ml_dtypes.bfloat16),
              np.int16: f32.view(np.int16), np.uint8: f32.view(np.uint8), np.int8: f32.view(np.int8)}
    for source, x in values.items():
        for target in values:
            size, new = np.dtype(source).itemsize, np.dtype(target).itemsize
            y = x if new <= size else x.reshape(-1, new // size)
            what = f"{np.dtype(source).name} to {np.dtype(target).name}"
            same(slax.bitcast_convert_type(y, target), jax.lax.bitcast_convert_type(y, target),
                 what)
            same(spmd.jit(lambda v, t=target: slax.bitcast_convert_type(v, t))(y),
                 jax.jit(lambda v, t=target: jax.lax.bitcast_convert_type(v, t))(y),
                 f"{what} under jit")
    # Chained with arithmetic (a fused program reads the bits), over a vmap, and its gradient.
    chained = lambda lax, np_: lambda v: lax.bitcast_convert_type(
        lax.bitcast_convert_type(v * 2, np.int32) + 1, np.float32) - v
    same(spmd.jit(chained(slax, snp))(f32), jax.jit(chained(jax.lax, jnp))(f32), "chained")
    same(spmd.vmap(lambda v: slax.bitcast_convert_type(v, np.uint8))(f32.reshape(5, 2)),
         jax.vmap(lambda v: jax.lax.bitcast_convert_type(v, np.uint8))(f32.reshape(5, 2)), "vmap")
    loss = lambda lax, np_: lambda v: np_.sum(
        v * lax.bitcast_convert_type(lax.bitcast_convert_type(v, np.int32) ^ 1, np.float32))
    g = np.array([0.5, 1.0, 2.0, 3.0], np.float32)
    same(spmd.grad(loss(slax, snp))(g), jax.grad(loss(jax.lax, jnp))(g), "grad (zero through bits)")
    # Sharded: narrowing keeps the split and adds a whole last dimension; widening a whole one.
    mesh = spmd.make_mesh((2, 4), ("a", "b"), axis_types=(spmd.AxisType.Auto,) * 2)
    jmesh = jax.make_mesh((2, 4), ("a", "b"), devices=jax.devices()[:8],
                          axis_types=(jax.sharding.AxisType.Auto,) * 2)
    x = np.arange(64, dtype=np.float32).reshape(8, 8) - 20.5
    xs = spmd.device_put(x, spmd.NamedSharding(mesh, spmd.P("a", "b")))
    xj = jax.device_put(x, jax.sharding.NamedSharding(jmesh, jax.sharding.PartitionSpec("a", "b")))
    narrow = lambda lax: lambda v: lax.bitcast_convert_type(v, np.uint16)
    got, want = spmd.jit(narrow(slax))(xs), jax.jit(narrow(jax.lax))(xj)
    same(got, want, "sharded narrowing")
    wide = lambda lax: lambda v: lax.bitcast_convert_type(lax.bitcast_convert_type(v, np.uint8),
                                                           np.float32)
    same(spmd.jit(wide(slax))(xs), jax.jit(wide(jax.lax))(xj), "sharded there and back")
    # Empty arrays keep their shape rule: no elements, a last dimension added or dropped.
    for empty, target in ((np.zeros((0,), np.float32), np.uint8),
                          (np.zeros((0, 4), np.uint8), np.float32),
                          (np.zeros((3, 0), np.int16), np.float16)):
        same(slax.bitcast_convert_type(empty, target),
             jax.lax.bitcast_convert_type(empty, target), f"empty {empty.shape} to {target}")
    raises_like(lambda: jax.lax.bitcast_convert_type(f32, bool),
                lambda: slax.bitcast_convert_type(f32, bool), "float32 to bool")
    raises_like(lambda: jax.lax.bitcast_convert_type(f32 > 0, np.int8),
                lambda: slax.bitcast_convert_type(f32 > 0, np.int8), "bool to int8")
    raises_like(lambda: jax.lax.bitcast_convert_type(f32.view(np.uint8)[:6].reshape(2, 3),
                                                     np.float32),
                lambda: slax.bitcast_convert_type(f32.view(np.uint8)[:6].reshape(2, 3),
                                                  np.float32), "a last dimension of 3 bytes")


@covers("lax.add", "lax.select", "lax.clamp", "lax.div", "lax.rem")
def test_lax_functions_under_jit_match_jax():
    def f(lax, x, y, i, j):
        return (lax.select(lax.gt(x, y), lax.add(x, y), lax.clamp(-1.0, x, 1.0)),
                lax.div(i, j), lax.rem(i, j), lax.shift_right_logical(i, j))
    x, y = _inputs("float32")
    i, j = _inputs("int32")
    j = np.where(j == 0, np.ones_like(j), j)
    same(spmd.jit(lambda *a: f(slax, *a))(x, y, i, j),
         jax.jit(lambda *a: f(jax.lax, *a))(x, y, i, j), "lax under jit")


BAD = [
    ("mixed dtypes", lambda lax: lax.add(np.ones(3, np.float32), np.ones(3, np.int32))),
    ("a Python int beside int8", lambda lax: lax.add(np.ones(3, np.int8), 1)),
    ("a Python float beside float16", lambda lax: lax.mul(np.ones(3, np.float16), 2.0)),
    ("a Python float beside int32", lambda lax: lax.sub(np.ones(3, np.int32), 1.5)),
    ("bool in add", lambda lax: lax.add(np.ones(3, bool), np.ones(3, bool))),
    ("ranks", lambda lax: lax.add(np.ones(3, np.float32), np.ones((2, 3), np.float32))),
    ("shapes", lambda lax: lax.max(np.ones(3, np.float32), np.ones(4, np.float32))),
    ("a list", lambda lax: lax.add([1.0, 2.0], np.ones(2, np.float32))),
    ("an integer base", lambda lax: lax.pow(np.ones(3, np.int32), np.ones(3, np.int32))),
    ("a negative integer power", lambda lax: lax.integer_pow(np.ones(3, np.int32), -2)),
    ("an integer reciprocal", lambda lax: lax.reciprocal(np.ones(3, np.int32))),
    ("a float shift", lambda lax: lax.shift_left(np.ones(3, np.float32), np.ones(3, np.float32))),
    ("a float and", lambda lax: lax.bitwise_and(np.ones(3, np.float32), np.ones(3, np.float32))),
    ("floor of an int", lambda lax: lax.floor(np.ones(3, np.int32))),
    ("clamp's shape", lambda lax: lax.clamp(np.zeros(2, np.float32), np.ones(3, np.float32),
                                            np.float32(1))),
    ("clamp's dtypes", lambda lax: lax.clamp(0, np.ones(3, np.float32), 1)),
    ("select's float predicate", lambda lax: lax.select(np.ones(3, np.float32),
                                                        np.ones(3, np.float32),
                                                        np.ones(3, np.float32))),
    ("select's predicate shape", lambda lax: lax.select(np.ones(1, bool), np.ones(3, np.float32),
                                                        np.ones(3, np.float32))),
    ("select_n of three by a bool", lambda lax: lax.select_n(np.ones(3, bool),
                                                             *[np.ones(3, np.float32)] * 3)),
]


@covers("lax.div", "lax.rem")
def test_an_integer_division_by_zero_raises_where_jax_returns_a_value():
    """XLA's x / 0 is -1 and x % 0 is x, without a word; spmd raises InvalidArgument saying
    so when the program runs, as its floor_divide does."""
    x, y = np.array([7, -7], np.int32), np.array([0, 2], np.int32)
    assert np.asarray(jax.lax.div(x, y))[0] == -1
    for name in ("div", "rem"):
        with pytest.raises(spmd.errors.InvalidArgument, match="integer division by zero"):
            np.asarray(getattr(slax, name)(x, y))
        with pytest.raises(spmd.errors.InvalidArgument, match="integer division by zero"):
            np.asarray(spmd.jit(getattr(slax, name))(x, y))


@pytest.mark.parametrize("what,call", BAD, ids=[b[0] for b in BAD])
def test_lax_refuses_what_jax_refuses(what, call):
    raises_like(lambda: call(jax.lax), lambda: call(slax), what)


# --- shape functions: broadcasts, reshapes, static and dynamic slices (traced starts clamped as
# XLA clamps them, negative ones from the end), window updates, padding (interior and cropping),
# iotas, fills, cumulative sums and arg extremes.

A = np.arange(24, dtype=np.float32).reshape(2, 3, 4) - 7.5
SHAPE_CASES = {
    "broadcast": lambda lax, a: lax.broadcast(a, (2,)),
    "broadcast_in_dim": lambda lax, a: lax.broadcast_in_dim(a[:, :1, 0], (2, 5, 3), (0, 2)),
    "reshape": lambda lax, a: lax.reshape(a, (4, 6)),
    "reshape_dimensions": lambda lax, a: lax.reshape(a, (6, 4), dimensions=(2, 0, 1)),
    "squeeze": lambda lax, a: lax.squeeze(a[:, :1], (1,)),
    "expand_dims": lambda lax, a: lax.expand_dims(a, (0, 2)),
    "concatenate": lambda lax, a: lax.concatenate([a, a * 2], 1),
    "transpose": lambda lax, a: lax.transpose(a, (2, 0, 1)),
    "rev": lambda lax, a: lax.rev(a, (0, 2)),
    "slice": lambda lax, a: lax.slice(a, (0, 1, 0), (2, 3, 4), (1, 1, 3)),
    "slice_in_dim": lambda lax, a: lax.slice_in_dim(a, 1, None, 2, axis=2),
    "index_in_dim": lambda lax, a: lax.index_in_dim(a, -1, axis=1, keepdims=False),
    "pad": lambda lax, a: lax.pad(a, np.float32(-1), [(1, 0, 0), (0, 2, 1), (-1, 1, 2)]),
    "pad_crop": lambda lax, a: lax.pad(a, np.float32(9), [(0, -1, 0), (-1, -1, 0), (2, 0, 0)]),
    "iota": lambda lax, a: lax.iota(np.int32, 5),
    "broadcasted_iota": lambda lax, a: lax.broadcasted_iota(np.float32, (2, 3), 1),
    "full": lambda lax, a: lax.full((2, 2), 3.5),
    "full_like": lambda lax, a: lax.full_like(a, 2, np.int32),
    "cumsum": lambda lax, a: lax.cumsum(a, axis=2),
    "cumsum_reverse": lambda lax, a: lax.cumsum(a, axis=1, reverse=True),
    "cumprod": lambda lax, a: lax.cumprod(a / 8, axis=0, reverse=True),
    "argmax": lambda lax, a: lax.argmax(a, 1, np.int32),
    "argmin": lambda lax, a: lax.argmin(a, 2, np.uint8),
}


@covers("lax.broadcast", "lax.broadcast_in_dim", "lax.reshape", "lax.squeeze",
        "lax.expand_dims", "lax.concatenate", "lax.transpose", "lax.rev", "lax.slice",
        "lax.slice_in_dim", "lax.index_in_dim", "lax.pad", "lax.iota", "lax.broadcasted_iota",
        "lax.full", "lax.full_like", "lax.cumsum", "lax.cumprod", "lax.argmax", "lax.argmin")
@pytest.mark.parametrize("name", list(SHAPE_CASES))
def test_shape_functions_match_jax(name):
    call = SHAPE_CASES[name]
    same(call(slax, A), call(jax.lax, A), name)
    same(spmd.jit(lambda a: call(slax, a))(A), jax.jit(lambda a: call(jax.lax, a))(A),
         f"{name} under jit")


@covers("lax.dynamic_slice", "lax.dynamic_slice_in_dim", "lax.dynamic_index_in_dim",
        "lax.dynamic_update_slice", "lax.dynamic_update_slice_in_dim",
        "lax.dynamic_update_index_in_dim")
@pytest.mark.parametrize("i,j", [(0, 0), (1, 2), (5, 9), (-1, -2), (-9, 1)])
def test_dynamic_slices_at_traced_starts_match_jax(i, j):
    """Starts past the end are clamped so the window fits, negative ones count from the end
    (and are clamped too), under jit where the starts are traced."""
    update = np.full((1, 2, 2), 100.0, np.float32)
    row = np.full((3, 4), 50.0, np.float32)

    def f(lax, a, i, j):
        return (lax.dynamic_slice(a, (i, j, 1), (1, 2, 3)),
                lax.dynamic_slice_in_dim(a, j, 2, axis=2),
                lax.dynamic_index_in_dim(a, i, axis=0, keepdims=False),
                lax.dynamic_update_slice(a, update, (i, j, j)),
                lax.dynamic_update_slice_in_dim(a, update, j, axis=1),
                lax.dynamic_update_index_in_dim(a, row, i, axis=0))
    i32, j32 = np.int32(i), np.int32(j)
    same(spmd.jit(lambda *x: f(slax, *x))(A, i32, j32),
         jax.jit(lambda *x: f(jax.lax, *x))(A, i32, j32), f"dynamic slices at ({i}, {j})")
    same(f(slax, A, i, j), f(jax.lax, A, i, j), f"dynamic slices at Python ({i}, {j})")


def test_dynamic_update_slice_has_jaxs_gradient():
    def loss(lax, a, u):
        return (lax.dynamic_update_slice(a, u, (0, 1, 1)) ** 2).sum()
    u = np.ones((1, 2, 2), np.float32)
    same(spmd.grad(lambda a, u: loss(slax, a, u), argnums=(0, 1))(A, u),
         jax.grad(lambda a, u: loss(jax.lax, a, u), argnums=(0, 1))(A, u), "its gradient")


SHAPE_BAD = [
    ("reshape's size", lambda lax: lax.reshape(A, (5, 5))),
    ("broadcast_in_dim's sizes", lambda lax: lax.broadcast_in_dim(A, (2, 4, 4), (0, 1, 2))),
    ("squeeze of a dimension of 3", lambda lax: lax.squeeze(A, (1,))),
    ("concatenate's dtypes", lambda lax: lax.concatenate([A, A.astype(np.int32)], 0)),
    ("transpose's permutation", lambda lax: lax.transpose(A, (0, 0, 1))),
    ("slice past the end", lambda lax: lax.slice(A, (0, 0, 0), (2, 3, 5))),
    ("dynamic_update_slice's dtype",
     lambda lax: lax.dynamic_update_slice(A, np.ones((1, 1, 1), np.int32), (0, 0, 0))),
    ("pad's value dtype", lambda lax: lax.pad(A, np.int32(0), [(0, 0, 0)] * 3)),
    ("full of an array", lambda lax: lax.full((2,), np.ones(2, np.float32))),
    ("argmax's index dtype", lambda lax: lax.argmax(A, 0, np.float32)),
]


@pytest.mark.parametrize("what,call", SHAPE_BAD, ids=[b[0] for b in SHAPE_BAD])
def test_shape_functions_refuse_what_jax_refuses(what, call):
    raises_like(lambda: call(jax.lax), lambda: call(slax), what)


# --- reductions by a computation, running extremes, top_k, dot, batch_matmul and map.

R = np.array([[1.0, np.nan, 3.0, -0.0, 0.0, 3.0, -np.inf, 2.0],
              [0.0, -0.0, 1e-45, 0.0, 5.0, -1.0, 5.0, np.inf]], np.float32)
RI = np.array([[3, -7, 3, 0, 9, 9, -2, 1], [0, 1, 2, 3, 4, 5, 6, 7]], np.int32)


@covers("lax.reduce", "lax.cummax", "lax.cummin", "lax.top_k", "lax.dot", "lax.batch_matmul",
        "lax.map")
def test_reduce_running_extremes_top_k_dot_and_map_match_jax():
    for lib_op, init, dims in (("add", 0.0, (1,)), ("max", -np.inf, (0,)), ("min", 2.0, (1,)),
                               ("mul", 1.0, (0, 1))):
        same(slax.reduce(np.abs(R[:, 2:]), np.float32(init), getattr(slax, lib_op), dims),
             jax.lax.reduce(np.abs(R[:, 2:]), np.float32(init), getattr(jax.lax, lib_op), dims),
             f"reduce by {lib_op}")
    same(slax.reduce(RI, np.int32(0), jax.lax.bitwise_or, (1,)),
         jax.lax.reduce(RI, np.int32(0), jax.lax.bitwise_or, (1,)), "reduce by JAX's or")
    for name in ("cummax", "cummin"):
        for x in (R, RI):
            for axis, reverse in ((1, False), (1, True), (0, False)):
                same(getattr(slax, name)(x, axis, reverse), getattr(jax.lax, name)(x, axis,
                                                                                   reverse),
                     f"{name}({x.dtype}, {axis}, reverse={reverse})")
    # top_k: XLA's total order: NaN first, +0 above -0, a subnormal above 0, a NaN with its sign
    # bit set last, and the lower index first among equal bits.
    top = np.array([[1.0, np.nan, 3.0, -0.5, 0.0, 3.0, -np.inf, 2.0],
                    [7.0, -2.0, 2.5, 1e30, 5.0, -1.0, 5.0, np.inf]], np.float32)
    edges = np.array([[0.0, -0.0, 1e-40, -1e-40, -np.nan, np.nan, 0.0, -0.0],
                      [-np.inf, 1e-45, -0.0, 3.0, 0.0, -1e-45, np.inf, 3.0]], np.float32)
    for x in (top, RI, edges, edges.astype(np.float16), edges.astype(ml_dtypes.bfloat16)):
        for k in (0, 3, 8):
            same(slax.top_k(x, k), jax.lax.top_k(x, k), f"top_k({x.dtype}, {k})")
    same(slax.top_k(RI, 1, axis=0), jax.lax.top_k(RI, 1, axis=0), "top_k along axis 0")
    m, v = X[:3, :4], X[0, :4]
    for a, b in ((m, v), (v, v), (m, m.T), (v, m.T)):
        same(slax.dot(a, b), jax.lax.dot(a, b), f"dot {a.shape} {b.shape}", ulps=1,
             atol=product_atol(a.shape[-1], np.abs(a).astype(np.float64) @ np.abs(b)))
    b3, t3 = X.reshape(2, 4, 8), np.swapaxes(X.reshape(2, 4, 8), 1, 2)
    same(slax.batch_matmul(b3, t3), jax.lax.batch_matmul(b3, t3), "batch_matmul", ulps=1,
         atol=product_atol(8, np.abs(b3).astype(np.float64) @ np.abs(t3)))
    same(slax.map(lambda r: r * 2 + 1, X), jax.lax.map(lambda r: r * 2 + 1, X), "map")
    same(spmd.jit(lambda x: slax.cummax(x, 1))(R), jax.jit(lambda x: jax.lax.cummax(x, 1))(R),
         "cummax under jit")


COMB_BAD = [
    ("reduce by a lambda", lambda lax: lax.reduce(RI, 0, lambda a, b: a + b, (1,)),
     NotImplementedError),
    ("reduce of two operands together",
     lambda lax: lax.reduce([RI, RI], [0, 0], lambda a, b: (a[0] + b[0], a[1] + b[1]), (1,)),
     NotImplementedError),
    ("dot of rank 3", lambda lax: lax.dot(X.reshape(2, 4, 8), X[0]), ValueError),
    ("top_k past the size", lambda lax: lax.top_k(RI, 9), None),
]


@pytest.mark.parametrize("what,call,ours", COMB_BAD, ids=[b[0] for b in COMB_BAD])
def test_reduce_dot_and_top_k_refuse_bad_arguments(what, call, ours):
    """JAX's errors, and a clear NotImplementedError where JAX would run a computation spmd
    cannot reduce by (JAX traces it; spmd takes lax's monoids only)."""
    if ours is NotImplementedError:
        call(jax.lax)  # JAX runs it
        with pytest.raises(NotImplementedError, match="lax.reduce"):
            call(slax)
        return
    raises_like(lambda: call(jax.lax), lambda: call(slax), what)


# --- associative_scan, reduce_window, padtype_to_pads (_lax_windows.py) ---

_WIN_RNG = np.random.default_rng(51)


@covers("lax.associative_scan")
@pytest.mark.parametrize("n,axis,reverse", [(1, 0, False), (2, 0, False), (5, 0, True),
                                            (8, 1, False), (13, 1, True), (16, -1, False)])
def test_associative_scan_is_jaxs_bit_for_bit(n, axis, reverse):
    """Sums (JAX's pairing order, so bit for bit), a pytree recurrence (a linear recurrence's
    pairs; within rounding: XLA contracts its multiply-add into one fused operation), and bools
    combined by or (interleaved with or, not +)."""
    shape = [3, 3]
    shape[axis] = n
    x = _WIN_RNG.standard_normal(shape).astype(np.float32)
    got = spmd.lax.associative_scan(snp.add, x, reverse=reverse, axis=axis)
    want = jax.lax.associative_scan(jnp.add, x, reverse=reverse, axis=axis)
    same(got, want, "sum")

    def recurrence(np_):
        def combine(p, q):
            return (p[0] * q[0], p[1] * q[0] + q[1])
        return combine
    a = (_WIN_RNG.uniform(0.5, 1.0, shape)).astype(np.float32)
    same(spmd.jit(lambda u, v: spmd.lax.associative_scan(recurrence(snp), (u, v),
                                                          reverse=reverse, axis=axis))(a, x),
         jax.jit(lambda u, v: jax.lax.associative_scan(recurrence(jnp), (u, v),
                                                        reverse=reverse, axis=axis))(a, x),
         "a pytree under jit", ulps=4, atol=1e-6)  # XLA fuses p1 * q0 + q1 into one FMA
    flags = x > 0.5
    same(spmd.lax.associative_scan(snp.logical_or, flags, reverse=reverse, axis=axis),
         jax.lax.associative_scan(jnp.logical_or, flags, reverse=reverse, axis=axis), "bools")


@covers("lax.associative_scan")
def test_associative_scan_errors_are_jaxs():
    x = np.ones((3, 4), np.float32)
    raises_like(lambda: jax.lax.associative_scan(jnp.add, (x, x[:2])),
                lambda: spmd.lax.associative_scan(snp.add, (x, x[:2])), "lengths differ")


_POOL = _WIN_RNG.standard_normal((2, 7, 6, 3)).astype(np.float32)
_RELU = np.maximum(_POOL, 0)  # ties of zeros in most windows
_WINDOW_CASES = [
    ("max 2x2/2 VALID", "max", (1, 2, 2, 1), (1, 2, 2, 1), "VALID", None, None),
    ("max 3x3/1 SAME", "max", (1, 3, 3, 1), (1, 1, 1, 1), "SAME", None, None),
    ("min 2x3/2 SAME_LOWER", "min", (1, 2, 3, 1), (1, 2, 2, 1), "SAME_LOWER", None, None),
    ("sum 3x3/2 SAME", "add", (1, 3, 3, 1), (1, 2, 2, 1), "SAME", None, None),
    ("sum pairs", "add", (1, 2, 2, 1), (1, 1, 1, 1), ((0, 0), (1, 2), (0, 1), (0, 0)), None,
     None),
    ("max dilated window", "max", (1, 2, 2, 1), (1, 1, 1, 1), "VALID", None, (1, 2, 2, 1)),
    ("sum dilated base", "add", (1, 2, 2, 1), (1, 1, 1, 1), "VALID", (1, 2, 1, 1), None),
]


def _window_call(lib, kind, window, strides, padding, base, dilation, x, init=None):
    op = {"max": lib.lax.max, "min": lib.lax.min, "add": lib.lax.add}[kind]
    if init is None:
        init = {"max": -np.inf, "min": np.inf, "add": 0.0}[kind]
    return lib.lax.reduce_window(x, np.float32(init), op, window, strides, padding, base,
                                 dilation)


@covers("lax.reduce_window")
@pytest.mark.parametrize("case", _WINDOW_CASES, ids=[c[0] for c in _WINDOW_CASES])
def test_reduce_window_and_its_gradient_are_jaxs(case):
    """Pooling as flax writes it: values bit for bit, and gradients (a max's to the first
    maximum of each window, as JAX's select-and-scatter, on ReLU outputs full of ties)."""
    name, kind, *spec = case
    # Sums add in XLA's window order, which is row-major except where XLA picks another (seen
    # with uneven padding): within rounding. Maxima and minima are exact.
    ulps = 2 if kind == "add" else 0
    same(_window_call(spmd, kind, *spec, _POOL), _window_call(jax, kind, *spec, _POOL), name,
         ulps=ulps, atol=1e-6 if ulps else 0.0)
    w = _WIN_RNG.standard_normal(np.shape(_window_call(jax, kind, *spec, _POOL))).astype(
        np.float32)

    def loss(lib, np_):
        return lambda v: np_.sum(_window_call(lib, kind, *spec, v) * w)
    if spec[-1] is not None:  # JAX has no derivative of a max over a dilated window
        return
    same(spmd.jit(spmd.grad(loss(spmd, snp)))(_RELU), jax.jit(jax.grad(loss(jax, jnp)))(_RELU),
         f"grad of {name}", ulps=ulps, atol=1e-6 if ulps else 0.0)


@covers("lax.reduce_window")
def test_reduce_window_of_any_computation_and_init_is_jaxs():
    """A product with init 1, a sum with an init of 5 and padding (padding is skipped, not
    combined with the init), on integers too."""
    x = _WIN_RNG.integers(-3, 4, (5, 6)).astype(np.int32)
    for lib_op, init, padding in ((lambda lib: lib.lax.mul, 1, "VALID"),
                                  (lambda lib: lib.lax.add, 5, "SAME"),
                                  (lambda lib: lib.lax.max, 2, ((1, 1), (0, 2)))):
        got = spmd.lax.reduce_window(x, np.int32(init), lib_op(spmd), (2, 3), (1, 2), padding)
        want = jax.lax.reduce_window(x, np.int32(init), lib_op(jax), (2, 3), (1, 2), padding)
        same(got, want, f"init {init}, padding {padding}")


@covers("lax.padtype_to_pads")
def test_padtype_to_pads_is_jaxs():
    for padding in ("VALID", "SAME", "SAME_LOWER", "same"):
        assert spmd.lax.padtype_to_pads((7, 6, 5), (3, 2, 4), (2, 1, 3), padding) == \
            list(jax.lax.padtype_to_pads((7, 6, 5), (3, 2, 4), (2, 1, 3), padding)), padding


@covers("lax.broadcast_shapes", "lax.broadcast_to_rank", "lax.collapse", "lax.split",
        "lax.stack", "lax.unstack", "lax.tile", "lax.optimization_barrier", "lax.empty")
def test_more_shape_functions_match_jax():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    assert spmd.lax.broadcast_shapes((2, 1), (3,)) == jax.lax.broadcast_shapes((2, 1), (3,))
    same(spmd.lax.broadcast_to_rank(x[0, 0], 3), jax.lax.broadcast_to_rank(x[0, 0], 3), "rank")
    for start, stop in ((1, None), (0, 2), (0, 3), (-2, None)):
        same(spmd.lax.collapse(x, start, stop), jax.lax.collapse(x, start, stop),
             f"collapse({start}, {stop})")
    for sizes, axis in (((1, 1), 0), ((1, 0, 2), 1), ((4,), -1)):
        same(spmd.lax.split(x, sizes, axis), jax.lax.split(x, sizes, axis), f"split {sizes}")
        same(spmd.jit(lambda a: spmd.lax.split(a, sizes, axis))(x),
             jax.jit(lambda a: jax.lax.split(a, sizes, axis))(x), "split under jit")
    raises_like(lambda: jax.lax.split(x, (1, 1), 1), lambda: spmd.lax.split(x, (1, 1), 1),
                "sizes that do not sum")
    for axis in (0, 1, -1):
        same(spmd.lax.stack([x, x + 1], axis), jax.lax.stack([x, x + 1], axis), "stack")
        same(spmd.lax.unstack(x, axis), jax.lax.unstack(x, axis), "unstack")
    same(spmd.lax.tile(x, (1, 2, 3)), jax.lax.tile(x, (1, 2, 3)), "tile")
    tree = {"a": x, "b": (x[0],)}
    same(spmd.lax.optimization_barrier(tree), jax.lax.optimization_barrier(tree), "barrier")
    assert spmd.lax.empty((2, 3), np.int32).shape == jax.lax.empty((2, 3), np.int32).shape


@covers("lax.population_count")
def test_population_count_matches_jax():
    """Set bits per element in each integer type, in its own dtype; floats refused as JAX
    refuses them."""
    patterns = np.array([0, 1, 2, 3, 7, 85, 100, 127, -128, -1, 2**31 - 1, -2**31, 0x55555555],
                        np.int64)
    for t in (np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32):
        x = patterns.astype(t)
        same(slax.population_count(x), jax.lax.population_count(x), f"population_count {t}")
        same(spmd.jit(slax.population_count)(x), jax.lax.population_count(x), f"jit, {t}")
    raises_like(lambda: jax.lax.population_count(np.float32(1)),
                lambda: slax.population_count(np.float32(1)), "population_count of a float")
