"""Seed 002's training step across processes, the same program for spmd and for JAX:
`train_two_by_two.py spmd` under spmdrun (2 processes of 2 CPU devices), or
`train_two_by_two.py jax ADDRESS PROCESS_ID` (JAX's jax.distributed.initialize on CPU with 2
host devices per process and its Gloo collectives). Each process feeds its own rows of every
batch (make_array_from_process_local_data); process 0 prints one JSON line of the 20 losses.
tests/python/distributed_vs_jax.py runs both and compares."""
import json
import sys

import numpy as np

if sys.argv[1] == "spmd":
    import spmd as jax
    import spmd.numpy as jnp
    from spmd import optax
    jax.distributed.initialize()
else:
    import jax
    import jax.numpy as jnp
    import optax
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    jax.distributed.initialize(coordinator_address=sys.argv[2], num_processes=2,
                               process_id=int(sys.argv[3]))

STEPS, ROWS = 20, 16  # rows per process per step


def model(params, x):
    return jnp.dot(x, params['w']) + params['b']


def loss_fn(params, x, y):
    return jnp.mean((model(params, x) - y) ** 2)


key = jax.random.PRNGKey(42)
params = {'w': jax.random.normal(key, (10, 1)), 'b': jax.random.normal(key, (1,))}
optimizer = optax.adam(1e-2)
opt_state = optimizer.init(params)
mesh = jax.sharding.Mesh(jax.devices(), ('devices',))
replicated = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec())
rows = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec('devices'))
params = {k: jax.device_put(v, replicated) for k, v in params.items()}


@jax.jit
def train_step(params, opt_state, batch):
    x, y = batch
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    updates, opt_state = optimizer.update(grads, opt_state)
    return optax.apply_updates(params, updates), opt_state, loss


true_w = np.linspace(-1, 1, 10, dtype=np.float32).reshape(10, 1)
losses = []
for step in range(STEPS):
    rng = np.random.default_rng(1000 * step + jax.process_index())
    x = rng.standard_normal((ROWS, 10)).astype(np.float32)
    y = (x @ true_w + 0.5 + 0.1 * rng.standard_normal((ROWS, 1))).astype(np.float32)
    batch = (jax.make_array_from_process_local_data(rows, x),
             jax.make_array_from_process_local_data(rows, y))
    params, opt_state, loss = train_step(params, opt_state, batch)
    losses.append(float(np.asarray(loss)))
if jax.process_index() == 0:
    print(json.dumps({"impl": sys.argv[1], "devices": jax.device_count(), "losses": losses}))
