"""jax's transformations and array constructors beside spmd's: vmap, pmap, shard_map, vjp and
the make_array_* constructors, on the same inputs; values, shapes and shardings compared."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import spmd
import spmd.numpy as snp
from parity import covers, same

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
