"""vmap, shard_map with psum, and reshard from Python against JAX."""
import jax
import jax.numpy as jjnp
import numpy as np

import spmd
import spmd.numpy as snp

RNG = np.random.default_rng(5)
X = RNG.standard_normal((6, 4)).astype(np.float32)
W = RNG.standard_normal((4, 3)).astype(np.float32)


def line():
    return spmd.sharding.Mesh(spmd.devices()[:2], ("x",))


def test_vmap_and_per_example_gradients_equal_jax():
    whole = spmd.NamedSharding(line(), spmd.P())
    x, w = spmd.device_put(X, whole), spmd.device_put(W, whole)

    def ours(w, row):
        return snp.sum(snp.tanh(snp.dot(row, w)))

    def theirs(w, row):
        return jjnp.sum(jjnp.tanh(jjnp.dot(row, w)))

    got = spmd.vmap(spmd.grad(ours), in_axes=(None, 0))(w, x)
    want = jax.vmap(jax.grad(theirs), in_axes=(None, 0))(W, X)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-6)
    mapped = spmd.jit(spmd.vmap(lambda r: snp.sum(r * r), in_axes=1))(x)
    np.testing.assert_allclose(np.asarray(mapped), np.sum(X * X, axis=0), rtol=1e-6)


def test_shard_map_with_psum_equals_jax():
    mesh = line()
    x = spmd.device_put(X, spmd.NamedSharding(mesh, spmd.P("x")))

    def body(block):
        return spmd.lax.psum(snp.sum(block, axis=0), "x")

    got = spmd.jit(lambda a: spmd.shard_map(body, mesh, spmd.P("x"), spmd.P())(a))(x)
    np.testing.assert_allclose(np.asarray(got), X.sum(axis=0), rtol=1e-5)
    moved = spmd.jit(lambda a: spmd.reshard(a * 2.0, spmd.P(None, "x")))(x)
    assert moved.sharding.spec == spmd.P(None, "x")
    np.testing.assert_array_equal(np.asarray(moved), X * 2)


def test_vjp_inside_jit_equals_jax():
    whole = spmd.NamedSharding(line(), spmd.P())
    x, w = spmd.device_put(X, whole), spmd.device_put(W, whole)

    def ours(x, w):
        y, pullback = spmd.vjp(lambda a, b: snp.tanh(snp.dot(a, b)), x, w)
        return pullback(snp.ones((6, 3)) * 0.5)

    dx, dw = spmd.jit(ours)(x, w)
    _, jpullback = jax.vjp(lambda a, b: jjnp.tanh(jjnp.dot(a, b)), X, W)
    jdx, jdw = jpullback(jjnp.ones((6, 3)) * 0.5)
    np.testing.assert_allclose(np.asarray(dx), np.asarray(jdx), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(dw), np.asarray(jdw), rtol=1e-5, atol=1e-6)


def test_pmap_differentiates_as_jaxs_unchecked_shard_map():
    """JAX 0.10.2 runs pmap as a shard_map with check_vma=False: grad inside is each device's
    own, and psum's transpose is a psum (so grad of a psum'ed loss is n times the sum)."""
    w = np.array([1.0, 2.0], np.float32)
    xs = np.arange(16, dtype=np.float32).reshape(8, 2)

    def calls(m, np_):
        own = m.pmap(lambda v, x: m.grad(lambda u: np_.sum(u * x))(v), axis_name="i",
                     in_axes=(None, 0))
        summed = m.pmap(lambda v, x: m.lax.pmean(
            m.grad(lambda u: m.lax.psum(np_.sum(u * x), "i"))(v), "i"), axis_name="i",
            in_axes=(None, 0))
        return [np.asarray(own(w, xs)), np.asarray(summed(w, xs))]

    for got, want in zip(calls(spmd, snp), calls(jax, jjnp)):
        np.testing.assert_allclose(got, want, rtol=1e-6)
