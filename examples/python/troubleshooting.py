"""Seed 002's "Troubleshooting" snippets 1-3 and its common pitfall 1 as a check: a longer
initialization timeout, restricting the visible devices, logging where processes are, and
differently-shaped inputs across processes (the pitfall) met with a clear error instead of a
hang. Only the imports changed; the two initialize() calls of the seed are one here (a second
call is an error). Run: spmdrun -n 2 --cpu-devices 4 -- python3 troubleshooting.py"""
import spmd as jax
import spmd.numpy as jnp

# Increase timeout for slow network setup, and restrict visible devices
jax.distributed.initialize(initialization_timeout=600, local_device_ids=[0, 1])
print(f"Process {jax.process_index()}: {len(jax.local_devices())} local devices")

# Add logging to identify where processes diverge
print(f"Process {jax.process_index()} at checkpoint A")
# ... computation ...
print(f"Process {jax.process_index()} at checkpoint B")

# BAD: Different shapes on different processes
if jax.process_index() == 0:
    data = jnp.ones((10, 5))
else:
    data = jnp.ones((8, 5))  # Different shape!
mesh = jax.sharding.Mesh(jax.devices(), ('devices',))
try:
    # Each process's rows make a global array of a different shape: the first computation on it
    # is refused in every process, naming the difference, instead of hanging.
    arr = jax.make_array_from_process_local_data(
        jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec('devices')), data)
    print(f"Process {jax.process_index()}: {float(jax.jit(jnp.sum)(arr))}")
except RuntimeError as e:
    print(f"Process {jax.process_index()}: {type(e).__name__}: {e}")
