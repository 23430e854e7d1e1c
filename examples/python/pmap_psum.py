"""Seed 002's "Basic Multi-Process Example" (seed 001's multi-process pmap): a psum over every
device of every process. Only the imports changed.
Run: spmdrun -n 2 --cpu-devices 4 -- python3 pmap_psum.py  (every entry: 8.0)"""
import spmd as jax
import spmd.numpy as jnp

# Initialize the distributed environment
jax.distributed.initialize()

# Create data on local devices
xs = jnp.ones(jax.local_device_count())

# Run a parallel computation across all devices
result = jax.pmap(lambda x: jax.lax.psum(x, 'i'), axis_name='i')(xs)
print(f"Process {jax.process_index()} result: {result}")
