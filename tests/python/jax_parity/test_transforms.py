"""jax's transformations and array constructors beside spmd's: vmap, pmap, shard_map, vjp,
custom_vjp and the make_array_* constructors, on the same inputs; values, shapes and shardings
compared."""
import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import spmd
import spmd.numpy as snp
from parity import covers, raises_like, same

X = np.arange(32, dtype=np.float32).reshape(8, 4) / 5 - 2


@covers("vmap")
def test_vmap_matches_jax():
    def f(np_, row, w):
        return np_.tanh(row * w).sum() + np_.max(row)
    w = np.float32(0.5)
    same(spmd.vmap(lambda r: f(snp, r, w))(X), jax.vmap(lambda r: f(jnp, r, w))(X), "vmap rows",
         ulps=4)
    same(spmd.vmap(lambda c, s: c * s, in_axes=(1, None))(X, 2.0),
         jax.vmap(lambda c, s: c * s, in_axes=(1, None))(X, 2.0), "vmap columns, a constant")


@covers("pmap")
def test_pmap_matches_jax():
    def f(lib, np_):
        return lib.pmap(lambda x: x / lib.lax.psum(np_.sum(x), "i"), axis_name="i")
    same(f(spmd, snp)(X), f(jax, jnp)(X), "pmap with psum", ulps=2)


@covers("shard_map", "P", "NamedSharding")
def test_shard_map_matches_jax():
    jm = jax.make_mesh((4,), ("x",), devices=jax.devices()[:4],
                       axis_types=(jax.sharding.AxisType.Explicit,))
    sm = spmd.make_mesh((4,), ("x",), axis_types=(spmd.AxisType.Explicit,))

    def f(lib, np_, mesh):
        body = lambda b: lib.lax.psum(np_.sum(b * b, axis=0), "x")  # noqa: E731
        return lib.jit(lib.shard_map(body, mesh=mesh, in_specs=lib.P("x"),
                                     out_specs=lib.P()))
    js = jax.device_put(X, jax.NamedSharding(jm, jax.P("x")))
    ss = spmd.device_put(X, spmd.NamedSharding(sm, spmd.P("x")))
    assert tuple(ss.sharding.spec) == tuple(js.sharding.spec)
    same(f(spmd, snp, sm)(ss), f(jax, jnp, jm)(js), "shard_map sum of squares", ulps=2)


@covers("vjp")
def test_vjp_matches_jax():
    def f(np_):
        return lambda x: np_.sin(x) * x
    out_s, vjp_s = spmd.vjp(f(snp), X)
    out_j, vjp_j = jax.vjp(f(jnp), X)
    same(out_s, out_j, "vjp's primal", ulps=2)
    ct = np.ones_like(X)
    same(vjp_s(ct), vjp_j(ct), "vjp's cotangent", ulps=4)


@covers("make_array_from_callback", "make_array_from_process_local_data",
        "make_array_from_single_device_arrays")
def test_make_array_constructors_match_jax():
    jm = jax.make_mesh((2, 2), ("a", "b"), devices=jax.devices()[:4],
                       axis_types=(jax.sharding.AxisType.Auto,) * 2)
    sm = spmd.make_mesh((2, 2), ("a", "b"), axis_types=(spmd.AxisType.Auto,) * 2)
    jsh, ssh = jax.NamedSharding(jm, jax.P("a", "b")), spmd.NamedSharding(sm, spmd.P("a", "b"))
    same(spmd.make_array_from_callback(X.shape, ssh, lambda idx: X[idx]),
         jax.make_array_from_callback(X.shape, jsh, lambda idx: X[idx]), "from_callback")
    same(spmd.make_array_from_process_local_data(ssh, X),
         jax.make_array_from_process_local_data(jsh, X), "from_process_local_data")
    jparts = [jax.device_put(X[i], d) for i, d in
              zip(jsh.devices_indices_map(X.shape).values(), jsh.devices_indices_map(X.shape))]
    sparts = [spmd.device_put(X[i], d) for d, i in ssh.devices_indices_map(X.shape).items()]
    same(spmd.make_array_from_single_device_arrays(X.shape, ssh, sparts),
         jax.make_array_from_single_device_arrays(X.shape, jsh, jparts), "from_single_device")


def _grad_meshes(shape, names):
    return (jax.make_mesh(shape, names, devices=jax.devices()[:8],
                          axis_types=(jax.sharding.AxisType.Auto,) * len(shape)),
            spmd.make_mesh(shape, names, axis_types=(spmd.AxisType.Auto,) * len(shape)))


_RNG = np.random.default_rng(31)
_W, _B = _RNG.standard_normal((16, 4)).astype(np.float32), _RNG.standard_normal(4).astype(np.float32)
_X, _Y = _RNG.standard_normal((32, 16)).astype(np.float32), _RNG.standard_normal((32, 4)).astype(
    np.float32)
_W1, _W2 = _RNG.standard_normal((16, 16)).astype(np.float32), _RNG.standard_normal((16, 4)).astype(
    np.float32)


def _linear(np_, w, b, x, y):
    return np_.mean((np_.dot(x, w) + b - y) ** 2)


def _mlp(np_, w1, w2, x, y):
    return np_.mean((np_.dot(np_.tanh(np_.dot(x, w1)), w2) - y) ** 2)


# (what, mesh shape, axis names, loss, arrays, their specs)
GRAD_LAYOUTS = [
    ("data parallel", (8,), ("d",), _linear, (_W, _B, _X, _Y), ((), (), ("d",), ("d",))),
    ("parameters split on their outputs", (8,), ("d",), _linear,
     (np.tile(_W, (1, 2)), np.tile(_B, 2), _X, np.tile(_Y, (1, 2))),
     ((None, "d"), ("d",), (), ())),
    ("data and model parallel", (2, 4), ("dp", "mp"), _linear,
     (np.tile(_W, (1, 2)), np.tile(_B, 2), _X, np.tile(_Y, (1, 2))),
     ((None, "mp"), ("mp",), ("dp",), ("dp", "mp"))),
    ("Megatron MLP", (2, 4), ("dp", "mp"), _mlp, (_W1, _W2, _X, _Y),
     ((None, "mp"), ("mp", None), ("dp",), ("dp",))),
    ("FSDP MLP", (8,), ("d",), _mlp, (_W1, _W2, _X, _Y), (("d",), ("d",), ("d",), ("d",))),
]


@covers("grad")
@pytest.mark.parametrize("case", GRAD_LAYOUTS, ids=[c[0] for c in GRAD_LAYOUTS])
def test_gradient_shardings_are_jaxs(case):
    """jit(grad(loss)) of every argument of a loss on split inputs: the values and each
    gradient's sharding are jax.grad's (spmd once laid each gradient out as its argument, where
    JAX's propagation gathers an FSDP weight and splits a replicated target's gradient)."""
    what, shape, names, loss, arrays, specs = case
    jmesh, smesh = _grad_meshes(shape, names)
    jargs = [jax.device_put(a, jax.sharding.NamedSharding(jmesh, jax.sharding.PartitionSpec(*s)))
             for a, s in zip(arrays, specs)]
    sargs = [spmd.device_put(a, spmd.NamedSharding(smesh, spmd.P(*s)))
             for a, s in zip(arrays, specs)]
    every = tuple(range(len(arrays)))
    want = jax.jit(jax.grad(lambda *a: loss(jnp, *a), argnums=every))(*jargs)
    got = spmd.jit(spmd.grad(lambda *a: loss(snp, *a), argnums=every))(*sargs)
    same(got, want, f"gradients, {what}", ulps=4, atol=1e-6)
    assert [tuple(g.sharding.spec) for g in got] == [tuple(w.sharding.spec) for w in want], \
        f"{what}: gradient shardings {[g.sharding.spec for g in got]}, JAX's " \
        f"{[w.sharding.spec for w in want]}"


@covers("custom_vjp")
def test_custom_vjp_rules_are_jaxs():
    """jax.custom_vjp: the bwd rule's gradient (not the function's own), with residuals, a
    nondiff argument, None for an argument, two outputs, under jit and grad of grad; the values
    are the function's, eagerly and traced."""
    def make(lib, jnp_):
        @lib.custom_vjp
        def softplus(x):
            return jnp_.log1p(jnp_.exp(x))

        def fwd(x):
            e = jnp_.exp(x)
            return jnp_.log1p(e), e

        def bwd(e, g):
            return (g * e / (1 + e) * 2.0,)  # twice the true derivative: the rule wins
        softplus.defvjp(fwd, bwd)

        @functools.partial(lib.custom_vjp, nondiff_argnums=(0,))
        def clip_gradient(limit, x, y):
            return x * y

        def clip_fwd(limit, x, y):
            return x * y, (x, y)

        def clip_bwd(limit, res, g):
            x, y = res
            return (jnp_.clip(g * y, -limit, limit), None)
        clip_gradient.defvjp(clip_fwd, clip_bwd)

        @lib.custom_vjp
        def polar(r, t):
            return r * jnp_.cos(t), r * jnp_.sin(t)

        def polar_fwd(r, t):
            return polar(r, t), (r, t)

        def polar_bwd(res, g):
            r, t = res
            gx, gy = g
            return (gx * jnp_.cos(t) + gy * jnp_.sin(t), r * (gy * jnp_.cos(t) - gx * jnp_.sin(t)))
        polar.defvjp(polar_fwd, polar_bwd)
        return softplus, clip_gradient, polar

    s_soft, s_clip, s_polar = make(spmd, snp)
    j_soft, j_clip, j_polar = make(jax, jnp)
    x = np.array([-3.0, -0.5, 0.0, 0.7, 4.0], np.float32)
    y = np.array([2.0, -1.0, 3.0, 0.5, -4.0], np.float32)
    same(s_soft(x), j_soft(x), "softplus eagerly")
    same(spmd.jit(s_soft)(x), jax.jit(j_soft)(x), "softplus under jit")
    loss = lambda lib, f: lambda v: lib.numpy.sum(f(v))
    same(spmd.grad(loss(spmd, s_soft))(x), jax.grad(loss(jax, j_soft))(x), "softplus's rule")
    same(spmd.jit(spmd.grad(loss(spmd, s_soft)))(x), jax.jit(jax.grad(loss(jax, j_soft)))(x),
         "softplus's rule under jit")
    second = lambda lib, f: lib.grad(lambda v: lib.grad(lambda w: f(w))(v))
    for v in (np.float32(-1.0), np.float32(0.5)):
        same(second(spmd, s_soft)(v), second(jax, j_soft)(v), f"grad of grad at {v}")
    clip = lambda lib, f: lambda a, b: lib.numpy.sum(f(0.5, a, b))
    same(spmd.grad(clip(spmd, s_clip), argnums=(0, 1))(x, y),
         jax.grad(clip(jax, j_clip), argnums=(0, 1))(x, y), "clip_gradient (None for y)")
    radius = lambda lib, f: lambda r, t: lib.numpy.sum(f(r, t)[0] * 3.0 + f(r, t)[1])
    same(spmd.grad(radius(spmd, s_polar), argnums=(0, 1))(np.abs(x), y),
         jax.grad(radius(jax, j_polar), argnums=(0, 1))(np.abs(x), y), "two outputs",
         ulps=1)
    same(s_polar(np.abs(x), y), j_polar(np.abs(x), y), "two outputs' values", ulps=1)

    @spmd.custom_vjp
    def undefined(v):
        return v
    raises_like(lambda: jax.custom_vjp(lambda v: v)(x), lambda: undefined(x),
                "no defvjp")
    def wrong_shape(lib, jnp_):
        f = lib.custom_vjp(lambda v: v * 2.0)
        f.defvjp(lambda v: (v * 2.0, None), lambda r, g: (jnp_.ones((7,), jnp_.float32),))
        return lambda v: jnp_.sum(f(v))
    raises_like(lambda: jax.grad(wrong_shape(jax, jnp))(x),
                lambda: spmd.grad(wrong_shape(spmd, snp))(x), "a cotangent of another shape")
    raises_like(lambda: jax.grad(lambda v: jnp.sum(jax.vmap(wrong_shape(jax, jnp))(v)))(y[:, None]),
                lambda: spmd.grad(lambda v: snp.sum(spmd.vmap(wrong_shape(spmd, snp))(v)))(
                    y[:, None]), "a cotangent of another shape, under vmap")
    # vmap batches the value and the rule (traced on one example), both ways round.
    same(spmd.vmap(s_soft)(x.reshape(5, 1)), jax.vmap(j_soft)(x.reshape(5, 1)), "vmap")
    batched = lambda lib, f: lambda v: lib.numpy.sum(lib.vmap(f)(v))
    same(spmd.grad(batched(spmd, s_soft))(x.reshape(5, 1)),
         jax.grad(batched(jax, j_soft))(x.reshape(5, 1)), "grad of vmap")


@covers("custom_vjp", "vmap")
def test_custom_vjp_rules_are_batched_per_example_as_jaxs():
    """A bwd rule written for one example's shapes (a dot product over the example, an outer
    product) is batched by vmap: grad of vmap, vmap of grad, and a shared (unmapped) argument
    whose cotangent sums over the batch, beside JAX."""
    def make(lib, jnp_):
        @lib.custom_vjp
        def scaled(w, x):  # x: one example, f32[3]; w: f32[3]
            return x * jnp_.dot(w, x)

        def fwd(w, x):
            return scaled(w, x), (w, x)

        def bwd(res, g):
            w, x = res
            s = jnp_.dot(w, x)
            return (jnp_.dot(g, x) * x * 0.5, g * s + jnp_.dot(g, x) * w)
        scaled.defvjp(fwd, bwd)
        return scaled

    s_f, j_f = make(spmd, snp), make(jax, jnp)
    rng = np.random.default_rng(4)
    w = rng.standard_normal(3).astype(np.float32)
    xs = rng.standard_normal((4, 3)).astype(np.float32)
    loss = lambda lib, f: lambda w_, v: lib.numpy.sum(lib.vmap(f, in_axes=(None, 0))(w_, v) ** 2)
    same(spmd.grad(loss(spmd, s_f), argnums=(0, 1))(w, xs),
         jax.grad(loss(jax, j_f), argnums=(0, 1))(w, xs), "grad of vmap", ulps=4)
    per_example = lambda lib, f: lib.vmap(lib.grad(lambda w_, v: lib.numpy.sum(f(w_, v))),
                                          in_axes=(None, 0))
    same(per_example(spmd, s_f)(w, xs), per_example(jax, j_f)(w, xs), "vmap of grad", ulps=4)
    same(spmd.jit(per_example(spmd, s_f))(w, xs), jax.jit(per_example(jax, j_f))(w, xs),
         "vmap of grad under jit", ulps=4)
    nested = lambda lib, f: lambda w_, v: lib.numpy.sum(
        lib.vmap(lib.vmap(f, in_axes=(None, 0)), in_axes=(None, 0))(w_, v))
    xss = xs.reshape(2, 2, 3)
    same(spmd.grad(nested(spmd, s_f), argnums=(0, 1))(w, xss),
         jax.grad(nested(jax, j_f), argnums=(0, 1))(w, xss), "grad of vmap of vmap", ulps=4)


def test_custom_vjp_leaves_no_cycle_through_the_trace():
    """The rule's closure holds no traced value (residuals travel as the operation's operands):
    a process that differentiates, vmaps, differentiates through vmap and fails in a trace frees
    every Tensor by its exit,
    which nanobind checks and reports on stderr."""
    import subprocess
    import sys
    import textwrap
    script = textwrap.dedent("""
        import numpy as np, spmd, spmd.numpy as snp
        f = spmd.custom_vjp(lambda x: snp.log1p(snp.exp(x)))
        f.defvjp(lambda x: (f(x), snp.exp(x)), lambda e, g: (g * e / (1 + e),))
        x = np.array([[1.0], [2.0]], np.float32)
        spmd.grad(lambda v: snp.sum(f(v)))(x)
        spmd.vmap(f)(x)
        spmd.grad(lambda v: snp.sum(spmd.vmap(f)(v)))(x)
        bad = spmd.custom_vjp(lambda x: x * 2.0)  # a rule that fails, under vmap
        bad.defvjp(lambda x: (x * 2.0, x), lambda r, g: (snp.reshape(g, (7,)),))
        try:
            spmd.grad(lambda v: snp.sum(spmd.vmap(bad)(v)))(x)
        except (spmd.errors.Error, TypeError, ValueError):
            print("refused")
    """)
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0 and "refused" in run.stdout, run.stderr[-2000:]
    assert "leaked instance" not in run.stderr, run.stderr[-2000:]
