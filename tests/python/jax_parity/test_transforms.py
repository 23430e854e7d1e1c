"""jax's transformations and array constructors beside spmd's: vmap, pmap, shard_map, vjp and
the make_array_* constructors, on the same inputs; values, shapes and shardings compared."""
import jax
import jax.numpy as jnp
import numpy as np

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
