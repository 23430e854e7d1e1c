"""Seed 003: n_devices_in_mesh(dummy) returns jax.device_count() as a jnp.float32 scalar; the
argument is ignored. Only the imports changed.
Run alone (1.0) or: spmdrun -n 4 --cpu-devices 2 -- python3 n_devices_in_mesh.py (8.0)"""
import spmd as jax
import spmd.numpy as jnp


def n_devices_in_mesh(dummy):
    return jnp.float32(jax.device_count())


jax.distributed.initialize()
print(f"n_devices_in_mesh(0.0) = {n_devices_in_mesh(0.0)}")
