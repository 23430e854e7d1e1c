"""Seed 002's training step from Python, against JAX and Optax themselves: spmd.optax.adam over
10 steps of the same gradients, and the seed's jitted train_step (grad, Adam, pytrees of
parameters and optimizer state) from the same PRNGKey."""
import jax
import jax.numpy as jjnp
import numpy as np
import optax

import spmd
import spmd.numpy as snp


def test_adam_equals_optax_over_ten_steps():
    rng = np.random.default_rng(3)
    params = {"w": rng.standard_normal((4, 3)).astype(np.float32),
              "b": rng.standard_normal(3).astype(np.float32)}
    mesh = spmd.sharding.Mesh(spmd.devices(), ("devices",))
    whole = spmd.NamedSharding(mesh, spmd.P())
    ours = spmd.tree_map(lambda x: spmd.device_put(x, whole), params)
    opt, reference = spmd.optax.adam(1e-2), optax.adam(1e-2)
    state, ref_state = opt.init(ours), reference.init(params)
    theirs = params
    for step in range(10):
        grads = {k: (rng.standard_normal(v.shape) * (step + 1)).astype(np.float32)
                 for k, v in params.items()}
        updates, state = opt.update(spmd.tree_map(lambda g: spmd.device_put(g, whole), grads),
                                    state, ours)
        ours = spmd.optax.apply_updates(ours, updates)
        ref_updates, ref_state = reference.update(grads, ref_state, theirs)
        theirs = optax.apply_updates(theirs, ref_updates)
    for k in params:
        np.testing.assert_allclose(np.asarray(ours[k]), np.asarray(theirs[k]), rtol=1e-5,
                                   atol=1e-6)


def seed_train_step(lib, grad, optimizer, apply_updates):
    def model(params, x):
        return lib.dot(x, params["w"]) + params["b"]

    def loss_fn(params, x, y):
        return lib.mean((model(params, x) - y) ** 2)

    def train_step(params, opt_state, batch):
        x, y = batch
        loss = loss_fn(params, x, y)
        grads = grad(loss_fn)(params, x, y)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        return apply_updates(params, updates), opt_state, loss

    return train_step


def test_the_seeds_train_step_equals_jax():
    key, jkey = spmd.random.PRNGKey(42), jax.random.PRNGKey(42)
    params = {"w": spmd.random.normal(key, (10, 1)), "b": spmd.random.normal(key, (1,))}
    jparams = {"w": jax.random.normal(jkey, (10, 1)), "b": jax.random.normal(jkey, (1,))}
    mesh = spmd.sharding.Mesh(spmd.devices(), ("devices",))
    param_sharding = spmd.sharding.NamedSharding(mesh, spmd.sharding.PartitionSpec())
    params = spmd.tree_map(lambda x: spmd.device_put(x, param_sharding), params)
    optimizer, joptimizer = spmd.optax.adam(1e-1), optax.adam(1e-1)
    opt_state, jopt_state = optimizer.init(params), joptimizer.init(jparams)
    step = spmd.jit(seed_train_step(snp, spmd.grad, optimizer, spmd.optax.apply_updates))
    jstep = jax.jit(seed_train_step(jjnp, jax.grad, joptimizer, optax.apply_updates))
    rng = np.random.default_rng(7)
    rows = spmd.NamedSharding(mesh, spmd.P("devices"))
    for _ in range(5):
        x = rng.standard_normal((16, 10)).astype(np.float32)
        y = rng.standard_normal((16, 1)).astype(np.float32)
        params, opt_state, loss = step(params, opt_state,
                                       (spmd.device_put(x, rows), spmd.device_put(y, rows)))
        jparams, jopt_state, jloss = jstep(jparams, jopt_state, (x, y))
        np.testing.assert_allclose(np.asarray(loss), np.asarray(jloss), rtol=1e-5)
    for k in jparams:
        np.testing.assert_allclose(np.asarray(params[k]), np.asarray(jparams[k]), rtol=1e-5,
                                   atol=1e-6)
