"""Seed 002's "Complete Multi-Process Training Example", with only the imports changed and one
line left out (marked below): `jax.lax.pmean(g, 'devices')` inside a plain jit, which JAX itself
refuses (NameError: unbound axis name: devices): in jit the gradient of the global loss is
already the mean over every device's rows, so there is nothing to average. spmd refuses it the
same way (spmd.errors.InvalidArgument). The loss is printed too, so that runs can be compared.
Run: spmdrun -n 4 --cpu-devices 2 -- python3 train.py  (or under srun / mpirun)"""
import spmd as jax
import spmd.numpy as jnp
from spmd import random, grad, jit, vmap
from spmd import optax

# Initialize distributed JAX
jax.distributed.initialize()

# Define a simple model
def model(params, x):
    return jnp.dot(x, params['w']) + params['b']

def loss_fn(params, x, y):
    pred = model(params, x)
    return jnp.mean((pred - y) ** 2)

# Initialize parameters
key = random.PRNGKey(42)
params = {
    'w': random.normal(key, (10, 1)),
    'b': random.normal(key, (1,))
}

# Create optimizer
optimizer = optax.adam(1e-3)
opt_state = optimizer.init(params)

# Create sharding for parameters
mesh = jax.sharding.Mesh(jax.devices(), ('devices',))
param_sharding = jax.sharding.NamedSharding(
    mesh, jax.sharding.PartitionSpec()
)

# Shard parameters across devices
params = jax.tree_map(lambda x: jax.device_put(x, param_sharding), params)

# Training step
@jit
def train_step(params, opt_state, batch):
    x, y = batch
    grads = grad(loss_fn)(params, x, y)
    
    # Average gradients across all devices
    # (left out: grads = jax.tree_map(lambda g: jax.lax.pmean(g, 'devices'), grads))
    
    updates, opt_state = optimizer.update(grads, opt_state)
    params = optax.apply_updates(params, updates)
    return params, opt_state

# Training loop (simplified)
for epoch in range(10):
    # Load batch (each process loads different data)
    x = random.normal(key, (32, 10))
    y = random.normal(key, (32, 1))
    batch = (x, y)
    
    # Training step
    params, opt_state = train_step(params, opt_state, batch)
    
    # Log from first process only
    if jax.process_index() == 0 and epoch % 5 == 0:
        print(f"Epoch {epoch} completed")

loss = jit(loss_fn)(params, x, y)
if jax.process_index() == 0:
    print(f"final loss {float(loss):.6f} ({jax.process_count()} processes, "
          f"{jax.device_count()} devices)")
