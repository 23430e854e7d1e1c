"""A JAX training script as a user writes it, run unchanged against `jax` and against `spmd`
(`import spmd as jax`): typed keys split and permuted, glorot initializers, gelu, one_hot,
log_softmax, indexing by a permutation, value_and_grad through jit with a Python float
argument, jax.tree.map for the update. Every step's loss and accuracy must be JAX's."""
import jax
import jax.numpy as jnp
import numpy as np

import spmd
import spmd.numpy as snp
from parity import covers, same


def script(jax, jnp, steps=12):
    def init(key, sizes):
        params = []
        keys = jax.random.split(key, len(sizes) - 1)
        for k, (m, n) in zip(keys, zip(sizes[:-1], sizes[1:])):
            w = jax.nn.initializers.glorot_uniform()(k, (m, n), jnp.float32)
            params.append({"w": w, "b": jnp.zeros((n,))})
        return params

    def forward(params, x):
        for layer in params[:-1]:
            x = jax.nn.gelu(x @ layer["w"] + layer["b"])
        return x @ params[-1]["w"] + params[-1]["b"]

    def loss_fn(params, x, y):
        onehot = jax.nn.one_hot(y, 10)
        return -jnp.mean(jnp.sum(onehot * jax.nn.log_softmax(forward(params, x)), axis=-1))

    @jax.jit
    def step(params, x, y, lr):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        return jax.tree.map(lambda p, g: p - lr * g, params, grads), loss

    key = jax.random.key(0)
    key, sub = jax.random.split(key)
    params = init(sub, [32, 64, 64, 10])
    data = np.random.default_rng(0).standard_normal((256, 32)).astype(np.float32)
    labels = np.random.default_rng(1).integers(0, 10, 256)
    trace = []
    for _ in range(steps):
        key, sub = jax.random.split(key)
        idx = jax.random.permutation(sub, 256)[:64]
        x, y = jnp.asarray(data)[idx], jnp.asarray(labels)[idx]
        params, loss = step(params, x, y, 0.1)
        acc = jnp.mean(jnp.argmax(forward(params, x), -1) == y)
        trace.append((np.asarray(loss), np.asarray(acc)))
    return trace, params


@covers("jit", "value_and_grad", "tree.map", "random.key", "random.split",
        "random.permutation", "nn.initializers", "nn.gelu", "nn.one_hot", "nn.log_softmax")
def test_a_jax_training_script_runs_unchanged_with_jaxs_losses():
    want, want_params = script(jax, jnp)
    got, got_params = script(spmd, snp)
    for i, ((gl, ga), (wl, wa)) in enumerate(zip(got, want)):
        same(gl, wl, f"step {i} loss", ulps=64)
        same(ga, wa, f"step {i} accuracy")
    same(got_params, want_params, "the trained parameters", atol=1e-5)
