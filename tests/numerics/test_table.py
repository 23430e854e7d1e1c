"""spmd's values against JAX 0.10.2's at the edges: every row of table.py on every dtype it takes,
on a 1 x 4 and a 2 x 2 mesh, with its gradient where the row has one; every cast; and the named
cases of issue 54 (half-precision means, long sums, inf and NaN, -inf masks, kinks, aliased
arguments, collectives of bool) on 1 x 1, 1 x 4, 4 x 1 and 2 x 2, where also the result must not
depend on the mesh. How values are compared: table.py's docstring."""
import contextlib
import functools

import jax
import jax.numpy as jnp
import jax.scipy.special
import numpy as np
import pytest

import spmd
import spmd.numpy as snp
import table

MESHES = {"1x1": (1, 1), "1x4": (1, 4), "4x1": (4, 1), "2x2": (2, 2)}


class Jax:
    np, lax, nn = jnp, jax.lax, jax.nn
    relu, softmax = staticmethod(jax.nn.relu), staticmethod(jax.nn.softmax)
    sigmoid = staticmethod(jax.nn.sigmoid)
    logsumexp = staticmethod(jax.scipy.special.logsumexp)
    grad, jit = staticmethod(jax.grad), staticmethod(jax.jit)
    shard_map, P = staticmethod(jax.shard_map), jax.P

    @staticmethod
    def mesh(shape):
        auto = (jax.sharding.AxisType.Auto,) * 2
        return jax.make_mesh(shape, ("a", "b"), axis_types=auto, devices=jax.devices()[:4]
                             if shape[0] * shape[1] == 4 else jax.devices()[:1])

    @staticmethod
    def put(x, mesh, spec):
        return jax.device_put(x, jax.NamedSharding(mesh, jax.P(*spec)))


class Spmd:
    np, lax, nn = snp, spmd.lax, spmd.nn
    relu, softmax, logsumexp = spmd.nn.relu, spmd.nn.softmax, spmd.nn.logsumexp
    sigmoid = spmd.nn.sigmoid
    grad, jit = staticmethod(spmd.grad), staticmethod(spmd.jit)
    shard_map, P = staticmethod(spmd.shard_map), spmd.P

    @staticmethod
    def mesh(shape):
        return spmd.make_mesh(shape, ("a", "b"), axis_types=(spmd.AxisType.Auto,) * 2)

    @staticmethod
    def put(x, mesh, spec):
        return spmd.device_put(x, spmd.NamedSharding(mesh, spmd.P(*spec)))


@contextlib.contextmanager
def x64(on):
    """jax_enable_x64 set to `on` in JAX and in spmd for the block (table.WIDE's cases)."""
    before = jax.config.jax_enable_x64, spmd.config.jax_enable_x64
    jax.config.update("jax_enable_x64", on)
    spmd.config.update("jax_enable_x64", on)
    try:
        yield
    finally:
        jax.config.update("jax_enable_x64", before[0])
        spmd.config.update("jax_enable_x64", before[1])


def run(ns, fn, inputs, mesh_shape, specs):
    """fn(ns, *inputs) under ns's jit, the inputs laid out over a mesh of mesh_shape; the result
    as NumPy, or the exception's class."""
    mesh = ns.mesh(mesh_shape)
    args = [ns.put(x, mesh, spec) for x, spec in zip(inputs, specs)]
    try:
        out = ns.jit(lambda *xs: fn(ns, *xs))(*args)
    except Exception as e:  # noqa: BLE001 - the class is compared with JAX's
        return type(e)
    return [np.asarray(o) for o in out] if isinstance(out, (tuple, list)) else np.asarray(out)


def classify(x):
    return np.isnan(x), np.isposinf(x), np.isneginf(x)


def compare(got, want, tolerance, what, scale=None):
    """Asserts spmd's `got` equals JAX's `want` under `tolerance` (table.py)."""
    if isinstance(want, type) or isinstance(got, type):
        assert isinstance(got, type) and isinstance(want, type), (
            f"{what}: spmd gave {got!r}, JAX {want!r}")
        kinds = [k for k in (TypeError, ValueError, OverflowError) if issubclass(want, k)]
        assert all(issubclass(got, k) for k in kinds), (
            f"{what}: spmd raised {got.__name__}, JAX {want.__name__}")
        return
    if isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), what
        for i, (g, w) in enumerate(zip(got, want)):
            compare(g, w, tolerance, f"{what}[{i}]", scale)
        return
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype}, JAX {want.dtype}"
    assert got.shape == want.shape, f"{what}: shape {got.shape}, JAX {want.shape}"
    if not np.issubdtype(want.dtype, np.floating) and want.dtype != table.BF16:
        bad = np.flatnonzero(got != want)
        assert bad.size == 0, (f"{what}: {bad.size} of {want.size} differ, first at "
                               f"{bad[0]}: {got.flat[bad[0]]} vs JAX {want.flat[bad[0]]}")
        return
    dtype = str(want.dtype)
    g, w = got.astype(np.float64), want.astype(np.float64)
    for mask_g, mask_w, kind in zip(classify(g), classify(w), ("NaN", "+inf", "-inf")):
        bad = np.flatnonzero(mask_g != mask_w)
        assert bad.size == 0, (f"{what}: {kind} differs at {bad.size} places, first "
                               f"{bad[0]}: {g.flat[bad[0]]} vs JAX {w.flat[bad[0]]}")
    finite = np.isfinite(w)
    g, w = g[finite], w[finite]
    if tolerance == "exact":
        bad = np.flatnonzero((g != w) | (np.signbit(g) != np.signbit(w)))
    else:
        big = np.maximum(np.abs(g), np.abs(w))
        if tolerance in ("ulp", "wide_ulp", "grad"):
            bound = table.ULPS[dtype] * (4 if tolerance == "wide_ulp" else 1) * ulp(big, dtype)
            if tolerance == "grad":
                bound = bound + 2.0 ** -20 * np.max(np.abs(w), initial=0)
        else:
            s = big if scale is None else np.broadcast_to(scale, want.shape)[finite]
            bound = table.SUM_RTOL[dtype] * np.maximum(s, 1e-30)
        bad = np.flatnonzero(np.abs(g - w) > bound)
    assert bad.size == 0, (f"{what}: {bad.size} of {w.size} finite values differ, first "
                           f"{bad[0]}: {g[bad[0]]!r} vs JAX {w[bad[0]]!r}")


def ulp(x, dtype):
    """The spacing of `dtype`'s values at the magnitudes x (float64)."""
    if dtype == "bfloat16":  # bfloat16 is float32 with 16 fewer bits of fraction
        return np.abs(np.spacing(x.astype(np.float32)).astype(np.float64)) * 2.0 ** 16
    return np.abs(np.spacing(x.astype(table.np_dtype(dtype))).astype(np.float64))


def grid(values_a, values_b, columns=16):
    """Every pair of the two value lists, as two (4, k) arrays (k a multiple of `columns` / 4),
    padded with ones."""
    a, b = np.meshgrid(values_a, values_b, indexing="ij")
    a, b = a.ravel(), b.ravel()
    pad = -a.size % columns
    a = np.concatenate([a, np.ones(pad, a.dtype)])
    b = np.concatenate([b, np.ones(pad, b.dtype)])
    return a.reshape(4, -1), b.reshape(4, -1)


def unary_input(dtype):
    return table.values(dtype, 64, seed=1).reshape(4, 16)


def grad_of(fn, arity):
    """The gradient of sum(w * fn(...)) with respect to every argument, for weights w from 0.5
    to 1.5 (an uneven cotangent: the gradient of a plain sum of softmax is 0 up to rounding)."""
    def g(ns, *xs):
        def total(*ys):
            r = ns.np.astype(fn(ns, *ys), ns.np.float32)
            w = ns.np.reshape(ns.np.astype(ns.np.arange(r.size), ns.np.float32), r.shape)
            return ns.np.sum(r * (w * (1.0 / r.size) + 0.5))
        return list(ns.grad(total, argnums=tuple(range(arity)))(*xs))
    return g


SPEC2 = ("a", "b")
CASES = [(row, dtype, mesh) for row in table.UNARY + table.BINARY for dtype in row.dtypes
         for mesh in ("1x4", "2x2")]


@pytest.mark.parametrize("row,dtype,mesh", CASES,
                         ids=[f"{r.name}-{d}-{m}" for r, d, m in CASES])
def test_elementwise(row, dtype, mesh):
    with x64(dtype in table.WIDE):
        check_elementwise(row, dtype, mesh)


# JAX's values of an element-wise row, computed once per (row, dtype, value or gradient) on the
# first mesh and compared with spmd's on both: an element-wise value and the gradient of
# sum(w * f) do not depend on the layout in JAX, and the second compile on the other mesh was
# half of this test's time (JAX's XLA compiles). spmd still runs on each mesh.
_JAX_ELEMENTWISE = {}


def jax_elementwise(row, dtype, kind, fn, inputs, mesh, specs):
    if (row.name, dtype) not in _JAX_ELEMENTWISE:
        _JAX_ELEMENTWISE.clear()  # the cases of one row and dtype are consecutive
        _JAX_ELEMENTWISE[row.name, dtype] = {}
    values = _JAX_ELEMENTWISE[row.name, dtype]
    if kind not in values:
        values[kind] = run(Jax, fn, inputs, MESHES[mesh], specs)
    return values[kind]


def check_elementwise(row, dtype, mesh):
    if row.arity == 1:
        inputs = [unary_input(dtype)]
    else:
        inputs = list(grid(table.special_values(dtype), table.special_values(dtype)))
        if row.nonzero_divisor and dtype not in table.FLOATS:
            inputs[1][inputs[1] == 0] = 1
    specs = [SPEC2] * row.arity
    want = jax_elementwise(row, dtype, "value", row.call, inputs, mesh, specs)
    got = run(Spmd, row.call, inputs, MESHES[mesh], specs)
    compare(got, want, row.tolerance, f"{row.name}({dtype}) on {mesh}")
    if row.grad and dtype == "float32":
        fn = grad_of(row.call, row.arity)
        compare(run(Spmd, fn, inputs, MESHES[mesh], specs),
                jax_elementwise(row, dtype, "grad", fn, inputs, mesh, specs),
                "grad", f"grad {row.name}({dtype}) on {mesh}")


@pytest.mark.parametrize("name", ["floor_divide", "divmod"])
def test_integer_division_by_zero(name):
    """JAX's integer floor_divide by zero returns a value without a word (-2 for 7 // 0 here);
    spmd raises InvalidArgument (a ValueError) saying so, when the program runs."""
    x, y = np.array([7, -7, 3, 4], np.int32), np.array([0, 2, 1, 0], np.int32)
    jax_out = run(Jax, lambda ns, a, b: getattr(ns.np, name)(a, b), [x, y], (1, 1), [(), ()])
    assert not isinstance(jax_out, type), jax_out
    with pytest.raises(spmd.errors.InvalidArgument, match="integer division by zero"):
        spmd.jit(getattr(snp, name))(spmd.device_put(x), spmd.device_put(y))
    assert not isinstance(run(Spmd, lambda ns, a, b: getattr(ns.np, name)(a, b),
                              [x, np.array([1, 2, 1, 3], np.int32)], (1, 1), [(), ()]), type)


def reduction_input(dtype):
    """Special values without the extremes (whose sum depends on the order of addition even in
    its class: max + max - max is inf or max), then random ones."""
    x = table.values(dtype, 64, seed=2)
    if dtype in table.FLOATS:
        big = np.abs(x.astype(np.float64)) >= float(table.ml_dtypes.finfo(x.dtype).max) / 4
        x[big & np.isfinite(x.astype(np.float64))] = 1
    return x.reshape(4, 16)


def finite_reduction_input(dtype):
    x = reduction_input(dtype)
    if dtype in table.FLOATS:
        x[~np.isfinite(x.astype(np.float64))] = 1
    return x


RED_CASES = [(row, dtype, axis, mesh) for row in table.REDUCTIONS for dtype in row.dtypes
             for axis in (None, 0, 1) for mesh in ("1x4", "2x2")]
LAX_RED_CASES = [(row, dtype, axis) for row in table.LAX_REDUCTIONS for dtype in row.dtypes
                 for axis in (None, 0, 1)]


@pytest.mark.parametrize("row,dtype,axis,mesh", RED_CASES,
                         ids=[f"{r.name}-{d}-axis{a}-{m}" for r, d, a, m in RED_CASES])
def test_reduction(row, dtype, axis, mesh):
    with x64(dtype in table.WIDE):
        check_reduction(row, dtype, axis, mesh)


@pytest.mark.parametrize("row,dtype,axis", LAX_RED_CASES,
                         ids=[f"{r.name}-{d}-axis{a}" for r, d, a in LAX_RED_CASES])
def test_lax_reduction(row, dtype, axis):
    with x64(dtype in table.WIDE):
        check_reduction(row, dtype, axis, "1x1")


def check_reduction(row, dtype, axis, mesh):
    def call(ns, x):
        return row.call(ns, x, axis=axis)
    for inputs in ([reduction_input(dtype)], [finite_reduction_input(dtype)]):
        x = inputs[0].astype(np.float64) if dtype != "bool" else inputs[0]
        scale = None
        if row.name in ("sum", "mean", "cumsum", "lax_reduce_sum") and dtype in table.FLOATS:
            a = np.abs(x)
            scale = (np.cumsum(a, axis=axis) if axis is not None else np.cumsum(a))
            if row.name != "cumsum":
                scale = np.sum(a, axis=axis) / (1 if row.name in ("sum", "lax_reduce_sum") else
                                                  (a.size if axis is None else a.shape[axis]))
        want = run(Jax, call, inputs, MESHES[mesh], [SPEC2])
        got = run(Spmd, call, inputs, MESHES[mesh], [SPEC2])
        compare(got, want, row.tolerance, f"{row.name}({dtype}, axis={axis}) on {mesh}", scale)
    if row.grad and dtype == "float32":
        fn = grad_of(call, 1)
        inputs = [finite_reduction_input(dtype)]
        compare(run(Spmd, fn, inputs, MESHES[mesh], [SPEC2]),
                run(Jax, fn, inputs, MESHES[mesh], [SPEC2]), "grad",
                f"grad {row.name}({dtype}, axis={axis}) on {mesh}")


CAST_CASES = [(a, b) for a in table.CASTS for b in table.CASTS]


@pytest.mark.parametrize("source,target", CAST_CASES, ids=[f"{a}-to-{b}" for a, b in CAST_CASES])
def test_casts(source, target):
    with x64(source in table.WIDE or target in table.WIDE):
        check_cast(source, target)


def check_cast(source, target):
    x = table.values(source, 64, seed=3).reshape(4, 16)
    if source in table.FLOATS:  # beyond the extremes of every integer type too
        x.flat[-8:] = np.array([3e9, -3e9, 7e4, -7e4, 256.5, -2.7, 65535.9, -129], np.float64
                               ).astype(x.dtype)

    def call(ns, v):
        return ns.np.astype(v, table.np_dtype(target))
    compare(run(Spmd, call, [x], (2, 2), [SPEC2]), run(Jax, call, [x], (2, 2), [SPEC2]),
            "exact", f"astype({source} -> {target})")


def _f(*xs, dtype=np.float32):
    return np.array(xs, dtype)


def _shard_psum(op):
    """`op` over both axes of a 2 x 2 mesh in a shard_map, each device holding one element."""
    def call(ns, x):
        return ns.shard_map(lambda v: getattr(ns.lax, op)(v, ("a", "b")), mesh=ns.mesh((2, 2)),
                            in_specs=ns.P(("a", "b")), out_specs=ns.P(("a", "b")))(x)
    return call


# Issue 54's rows: (name, call, inputs (each split over the mesh's first dimension or, for a
# scalar, replicated), tolerance).
ROWS = [
    ("mean of float16 80000 x 0.5", lambda ns, x: ns.np.mean(x),
     [np.full(80000, 0.5, np.float16)], "exact"),
    ("grad of that mean", lambda ns, x: ns.grad(lambda v: ns.np.astype(ns.np.mean(v),
                                                                       ns.np.float32))(x),
     [np.full(80000, 0.5, np.float16)], "exact"),
    ("mean of float16 4096 x 60", lambda ns, x: ns.np.mean(x),
     [np.full(4096, 60, np.float16)], "exact"),
    ("sum of float16 [4e4, 4e4, -4e4, -4e4]", lambda ns, x: ns.np.sum(x),
     [_f(40000, 40000, -40000, -40000, dtype=np.float16)], "exact"),
    ("var and std of float16 59, 61, ... (their sum passes 65504); ddof 1; ddof n is NaN",
     lambda ns, x: [ns.np.var(x), ns.np.std(x), ns.np.var(x, ddof=1), ns.np.var(x, ddof=4096)],
     [np.tile(np.array([59, 61], np.float16), 2048)], "exact"),
    ("cumprod of int8 [3] * 8 and of bool", lambda ns, x: [ns.np.cumprod(x),
                                                       ns.np.cumprod(x > 3)],
     [np.full(8, 3, np.int8)], "exact"),
    ("sum of 2^22 x 0.1", lambda ns, x: ns.np.sum(x * 0.1), [np.ones(2 ** 22, np.float32)],
     "sum"),
    ("sum over 1156 rows of 3 columns (9 blocks and 4 rows), and over the columns",
     lambda ns, x: [ns.np.sum(x, axis=0), ns.np.sum(x, axis=1), ns.np.mean(x)],
     [np.random.default_rng(5).uniform(0.1, 1.0, (1156, 3)).astype(np.float32)], "sum"),
    ("grad by (0, 1) of a*b*b at (x, x)",
     lambda ns, x: list(ns.grad(lambda a, b: ns.np.sum(a * b * b), argnums=(0, 1))(x, x)),
     [_f(2, 3, 4, 5)], "exact"),
    ("grad by 0 of a*b*b at (x, x)",
     lambda ns, x: ns.grad(lambda a, b: ns.np.sum(a * b * b))(x, x), [_f(2, 3, 4, 5)], "exact"),
    ("sqrt(inf)", lambda ns, x: ns.np.sqrt(x), [_f(np.inf, np.inf, 4, np.inf)], "exact"),
    ("exp(-inf) * 1e30", lambda ns, x: ns.np.exp(x) * 1e30, [np.full(8, -np.inf, np.float32)],
     "exact"),
    ("logsumexp of a row of -inf; of a row holding inf",
     lambda ns, x: ns.logsumexp(x, axis=1),
     [np.array([[-np.inf] * 4, [0, np.inf, 1, 2], [1, 2, 3, 4], [-np.inf, 0, -np.inf, 1]],
               np.float32)], "ulp"),
    ("grad relu at 0, abs at 0",
     lambda ns, x: [ns.grad(lambda v: ns.np.sum(ns.relu(v)))(x),
                    ns.grad(lambda v: ns.np.sum(ns.np.abs(v)))(x)], [_f(0, -0.0, 1, -1)],
     "exact"),
    ("argmax([1, 5, nan, nan])", lambda ns, x: ns.np.argmax(x), [_f(1, 5, np.nan, np.nan)],
     "exact"),
    ("cumsum of int8 [100] * 4", lambda ns, x: ns.np.cumsum(x),
     [np.full(4, 100, np.int8)], "exact"),
    ("astype int32 of nan, inf, 3e9, -inf", lambda ns, x: ns.np.astype(x, ns.np.int32),
     [_f(np.nan, np.inf, 3e9, -np.inf)], "exact"),
    ("d/dy sum(0 ** y) at y = 2, 0", lambda ns, y: ns.grad(
        lambda v: ns.np.sum(ns.np.power(ns.np.zeros(4), v)))(y), [_f(2, 0, 2, 0)], "exact"),
    ("d/dx sum(x ** 0) at 0; x ** 2, x ** -1, x ** 3",
     lambda ns, x: [ns.grad(lambda v: ns.np.sum(v ** 0))(x), x ** 2, x ** -1, x ** 3,
                    ns.grad(lambda v: ns.np.sum(v ** 3))(x)], [_f(0, 1.5, -2, 3)], "exact"),
    ("log(1e-45); rsqrt(1e-45); relu(-0.)",
     lambda ns, x: [ns.np.log(x), ns.lax.rsqrt(x), ns.relu(-x * 0)],
     [_f(1e-45, 1e-45, 1e-45, 1e-45)], "exact"),
    ("int32 + uint32", lambda ns, a, b: a + b,
     [np.array([1, -2, 3, 4], np.int32), np.array([2, 2, 4000000000, 1], np.uint32)], "exact"),
    ("psum of bool", _shard_psum("psum"), [np.array([1, 1, 1, 0], bool)], "exact"),
    ("pmean of bool", _shard_psum("pmean"), [np.array([1, 1, 1, 0], bool)], "exact"),
    ("pmean of int32", _shard_psum("pmean"), [np.array([1, 2, 3, 5], np.int32)],
     "exact"),
    ("int32 ** -1", lambda ns, x: x ** -1, [np.array([2, 1, -1, 3], np.int32)], "exact"),
    ("maximum and minimum of -0 and 0, both orders",
     lambda ns, x: [ns.np.maximum(x, 0.0), ns.np.maximum(0.0, x), ns.np.minimum(x, 0.0),
                    ns.np.minimum(0.0, x)], [_f(-0.0, 0.0, -0.0, 0.0)], "exact"),
    ("prod of int32 1000s (wraps), of bool, of an empty axis; prod along 0 and 1",
     lambda ns, x: [ns.np.prod(x), ns.np.prod(x > 999), ns.np.prod(x[:, :0], axis=1),
                    ns.np.prod(x, axis=0), ns.np.prod(x, axis=1)],
     [np.full((4, 4), 1000, np.int32)], "exact"),
    ("grad of prod along 1 and of the whole, with one zero, two zeros and -0 in a row",
     lambda ns, x: [ns.grad(lambda v: ns.np.sum(ns.np.prod(v, axis=1) *
                                                ns.np.arange(1.0, 5.0)))(x),
                    ns.grad(lambda v: ns.np.prod(v[:, :2] + 1))(x)],
     [np.array([[1, 2, 0, 4], [0, 0, 3, 1], [2, 3, 4, 5], [-1, 0.5, 2, -0.0]], np.float32)],
     "exact"),
    ("second derivative of prod (sum of its gradient), with a zero and without",
     lambda ns, x: ns.grad(lambda v: ns.np.sum(ns.grad(lambda u: ns.np.prod(u))(v)))(x),
     [_f(2, 0, 3, 5, 1, 4, 0.5, 2)], "exact"),
    ("where with a NaN branch under grad",
     lambda ns, x: ns.grad(lambda v: ns.np.sum(ns.np.where(v > 0, ns.np.sqrt(v),
                                                           ns.np.zeros(4))))(x),
     [_f(-1, 0, 4, 9)], "exact"),
]


# Zeros of both signs: `neg` holds only zeros and negatives (rows of -0 only, of both signs, of
# +0 only), `pos` its mirror, so that every max of `neg` and min of `pos` is a zero.
SIGNED_ZEROS = [np.array([[-0.0, -0.0, -1, -2] * 2, [-0.0, 0.0, -3, -0.0] * 2,
                          [0.0, 0.0, -1, -4] * 2, [-5, -0.0, 0.0, -0.0] * 2], np.float32)]
SIGNED_ZEROS.append(-SIGNED_ZEROS[0])


def _folded(ns, fold, x, axis):
    """fold (jnp.maximum or minimum) applied across `axis` of x (None: every element), slice by
    slice."""
    x = ns.np.reshape(x, (-1,)) if axis is None else x
    axis = 0 if axis is None else axis
    return functools.reduce(fold, [ns.np.take(x, i, axis=axis) for i in range(x.shape[axis])])


@pytest.mark.parametrize("mesh", list(MESHES))
def test_max_and_min_of_zeros_of_both_signs_are_maximum_and_minimum_folded(mesh):
    """jnp.max over zeros of both signs is +0 and jnp.min -0 along every axis and on every mesh:
    the fold of jnp.maximum (minimum) over the axis. XLA's own reductions are not consistent
    here: the column [-0, 0, 0, -0] gives +0 in a jit of its max alone and -0 in a jit that also
    reduces the other axis, and where the rows are split over devices (meshes 4x1 and 2x2) its
    cross-device combination keeps either sign, even of a fold written with jnp.minimum. So spmd
    keeps the one answer jnp.maximum defines, whatever the order of folding (extremes.h): equal
    to JAX's fold where the rows are on one device, and to spmd's own 1 x 1 result on every
    mesh. argmax and argmin take the first zero, as JAX's do."""
    specs = [("a",), ("a",)]
    for axis in (None, 0, 1):
        def want(ns, neg, pos):
            return [_folded(ns, ns.np.maximum, neg, axis), _folded(ns, ns.np.minimum, pos, axis),
                    ns.np.argmax(neg, axis=axis), ns.np.argmin(pos, axis=axis)]

        def got(ns, neg, pos):
            return [ns.np.max(neg, axis=axis), ns.np.min(pos, axis=axis),
                    ns.np.argmax(neg, axis=axis), ns.np.argmin(pos, axis=axis)]
        what = f"max, min, argmax and argmin along {axis} of signed zeros on {mesh}"
        result = run(Spmd, got, SIGNED_ZEROS, MESHES[mesh], specs)
        compare(result, run(Spmd, got, SIGNED_ZEROS, (1, 1), specs), "exact", what + " (1x1)")
        if MESHES[mesh][0] == 1:
            compare(result, run(Jax, want, SIGNED_ZEROS, MESHES[mesh], specs), "exact", what)


@pytest.mark.parametrize("mesh", ["1x1", "1x4"])
def test_max_and_min_read_subnormals_as_zero(mesh):
    """jit reads subnormals as zero (float_environment.h): a max or min over several elements is
    that of the values so read, a zero of the subnormal's sign, whether a vector lane or a row's
    tail meets it (JAX's max([1e-45] * 3) is 0). Rows of 3 and 40 elements: a tail alone, and
    lanes then a tail."""
    tiny = np.float32(1.4e-45)
    values = np.array([tiny, -tiny, 3 * tiny, -2 * tiny, 0.0, -0.0], np.float32)
    rng = np.random.default_rng(3)
    for width in (3, 40):
        x = values[rng.integers(0, len(values), (4, width))]
        for axis in (None, 0, 1):
            def call(ns, v):
                return [ns.np.max(v, axis=axis), ns.np.min(v, axis=axis)]
            compare(run(Spmd, call, [x], MESHES[mesh], [("a",)]),
                    run(Jax, call, [x], MESHES[mesh], [("a",)]), "exact",
                    f"max and min along {axis} of 4 x {width} subnormals and zeros on {mesh}")


@pytest.mark.parametrize("name,call,inputs,tolerance", ROWS,
                         ids=[getattr(r, "values", r)[0] for r in ROWS])
@pytest.mark.parametrize("mesh", list(MESHES))
def test_named_cases(name, call, inputs, tolerance, mesh):
    if "psum" in name or "pmean" in name:
        if mesh != "2x2":
            pytest.skip("the collective cases run on the 2 x 2 mesh their shard_map names")
    specs = [("a",) if x.ndim else () for x in inputs]
    want = run(Jax, call, inputs, MESHES[mesh], specs)
    got = run(Spmd, call, inputs, MESHES[mesh], specs)
    compare(got, want, tolerance, f"{name} on {mesh}")
    # The same program on one device gives the same special values, dtypes and integers.
    if mesh != "1x1" and not ("psum" in name or "pmean" in name):
        alone = run(Spmd, call, inputs, MESHES["1x1"], specs)
        compare(got, alone, tolerance, f"{name}: {mesh} beside 1x1")


def test_every_numeric_name_has_a_row():
    """A new element-wise or reduction operation without a row fails here."""
    rows = {r.spmd_name for r in
            table.UNARY + table.BINARY + table.REDUCTIONS + table.LAX_REDUCTIONS}
    public = {n for m in (spmd.numpy, spmd.lax, spmd.nn) for n in dir(m)
              if not n.startswith("_") and callable(getattr(m, n))}
    missing = sorted(public - rows - set(table.ELSEWHERE))
    assert not missing, f"no row in tests/numerics/table.py for: {missing}"


def test_where_broadcasts_its_operands_to_their_joint_sharding_on_an_explicit_mesh():
    """jnp.where broadcasts cond, x and y to one sharding before select (JAX's _broadcast_arrays):
    a split over (dp, mp), v over mp and c over dp meet at (dp, mp) instead of being refused."""
    a = np.arange(16, dtype=np.float32).reshape(4, 4) - 6
    v, c = _f(10, 20, 30, 40), _f(-1, -2, -3, -4).reshape(4, 1)

    def program(ns, types):
        mesh = (jax.make_mesh((2, 2), ("dp", "mp"), axis_types=types, devices=jax.devices()[:4])
                if ns is Jax else spmd.make_mesh((2, 2), ("dp", "mp"), axis_types=types))
        put = [ns.put(x, mesh, s) for x, s in ((a, ("dp", "mp")), (v, ("mp",)), (c, ("dp",)))]
        out = ns.jit(lambda x, y, z: ns.np.where(x > 0, y, z))(*put)
        return np.asarray(out), tuple(out.sharding.spec)

    want, want_spec = program(Jax, (jax.sharding.AxisType.Explicit,) * 2)
    got, got_spec = program(Spmd, (spmd.AxisType.Explicit,) * 2)
    compare(got, want, "exact", "where on an Explicit 2 x 2 mesh")
    assert got_spec == want_spec == ("dp", "mp")


def test_a_products_gradient_keeps_an_explicit_split_of_the_other_dimension():
    """grad of sum(prod(a, axis=1)) with a's rows split over an Explicit axis: the one-device
    gradient (zeros among the factors), laid out as a. JAX 0.10.2 refuses this program (its
    derivative's reshape "is not supported" on an Explicit split), so the reference is spmd on
    one device."""
    a = np.random.default_rng(4).uniform(-2, 2, (4, 6)).astype(np.float32)
    a[1, 2] = a[3, 0] = a[3, 5] = 0

    def grad_of(ns, v):
        return ns.grad(lambda u: ns.np.sum(ns.np.prod(u, axis=1)))(v)
    mesh = spmd.make_mesh((2, 2), ("dp", "mp"), axis_types=(spmd.AxisType.Explicit,) * 2)
    with spmd.set_mesh(mesh):
        out = spmd.jit(lambda v: grad_of(Spmd, v))(Spmd.put(a, mesh, ("dp",)))
    alone = run(Spmd, grad_of, [a], (1, 1), [()])
    compare(np.asarray(out), alone, "exact", "grad of prod on an Explicit 2 x 2 mesh")
    assert tuple(out.sharding.spec) == ("dp",)


def test_a_scalar_from_process_local_data_is_the_scalar_on_every_device():
    """make_array_from_process_local_data of a rank-0 value on a replicated sharding (it also
    carries pmap's in_axes=None for a scalar) gives the scalar, as JAX does."""
    local = np.float32(2.5)
    want = jax.make_array_from_process_local_data(
        jax.NamedSharding(Jax.mesh((2, 2)), jax.P()), local)
    got = spmd.make_array_from_process_local_data(
        spmd.NamedSharding(Spmd.mesh((2, 2)), spmd.P()), local)
    compare(np.asarray(got), np.asarray(want), "exact", "a scalar from process-local data")
    assert got.shape == () and len(got.addressable_shards) == 4


@pytest.mark.parametrize("dtype", [np.float16, table.BF16], ids=["float16", "bfloat16"])
def test_a_half_contraction_split_over_devices_is_the_one_device_value(dtype):
    """Half types contract in float32 and round once, after the cross-device sum, so a split
    contraction gives JAX's one-device value on every mesh. (JAX rounds each device's partial to
    the half type before its all-reduce: the split sums below differ from its one-device value,
    and partials of +-8e4 overflow to NaN.)"""
    rng = np.random.default_rng(7)
    x = np.stack([rng.uniform(0, 1, 4096), np.repeat([4e4, -4e4], 2048)]).astype(dtype)
    w = np.ones((4096, 3), dtype)

    def call(ns, a, b):
        return [a @ b, ns.np.einsum("ik,kj->ij", a, b)]
    want = run(Jax, call, [x, w], (1, 1), [(), ()])
    for mesh in ("1x4", "4x1", "2x2"):
        got = run(Spmd, call, [x, w], MESHES[mesh], [(None, "b"), ("b",)])
        compare(got, want, "exact", f"{np.dtype(dtype).name} x @ w split along k on {mesh}")


@pytest.mark.parametrize("dtype", sorted(table.WIDE))
def test_the_wide_dtypes_run_as_64_bit(dtype):
    """table.WIDE's cases run with x64 on: their arrays stay 64-bit in both libraries."""
    x = table.values(dtype, 16, seed=4).reshape(4, 4)
    with x64(True):
        for ns in (Jax, Spmd):
            out = run(ns, lambda n, v: v + v, [x], MESHES["2x2"], [SPEC2])
            assert out.dtype == table.np_dtype(dtype), (ns.__name__, out.dtype)


@pytest.mark.parametrize("shape", [(2, 0), (0, 3), (0,)])
def test_scans_of_empty_arrays_are_empty(shape):
    """cumsum and cumprod along each axis of an array with a zero dimension: empty, of the
    input's dtype, as JAX's (the scan once divided by the zero-sized line count: SIGFPE)."""
    x = np.zeros(shape, np.float32)
    for axis in range(len(shape)):
        def call(ns, v, axis=axis):
            return [ns.np.cumsum(v, axis=axis), ns.np.cumprod(v, axis=axis)]
        want = run(Jax, call, [x], (1, 1), [()])
        compare(run(Spmd, call, [x], (1, 1), [()]), want, "exact", f"scans of {shape}, {axis}")
        got_eager = [np.asarray(snp.cumsum(snp.asarray(x), axis=axis)),
                     np.asarray(snp.cumprod(snp.asarray(x), axis=axis))]
        compare(got_eager, want, "exact", f"eager scans of {shape}, axis {axis}")
