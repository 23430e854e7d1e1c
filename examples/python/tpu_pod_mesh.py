"""Seed 002's "TPU Pod Example": a (devices // 8, 8) mesh and its data-parallel, model-parallel
and mixed shardings. Only the imports changed, and the seed's missing `import numpy as np` added.
The seed's mesh needs a multiple of 8 devices: spmdrun -n 2 --cpu-devices 4 -- python3
tpu_pod_mesh.py"""
import numpy as np

import spmd as jax
import spmd.numpy as jnp

# On Cloud TPU, initialization is automatic
jax.distributed.initialize()

# Verify TPU setup
print(f"Process {jax.process_index()} of {jax.process_count()}")
print(f"Local devices: {jax.local_devices()}")

# Create computation mesh
devices = jax.devices()
mesh_shape = (len(devices) // 8, 8)  # Typical TPU pod structure
devices_array = np.array(devices).reshape(mesh_shape)
mesh = jax.sharding.Mesh(devices_array, ('dp', 'mp'))

# Define sharding strategies
# Data parallel sharding
dp_sharding = jax.sharding.NamedSharding(
    mesh, jax.sharding.PartitionSpec('dp', None)
)

# Model parallel sharding
mp_sharding = jax.sharding.NamedSharding(
    mesh, jax.sharding.PartitionSpec(None, 'mp')
)

# Mixed sharding
mixed_sharding = jax.sharding.NamedSharding(
    mesh, jax.sharding.PartitionSpec('dp', 'mp')
)

x = np.arange(16 * 16, dtype=np.float32).reshape(16, 16)
for name, s in [("dp", dp_sharding), ("mp", mp_sharding), ("mixed", mixed_sharding)]:
    a = jax.device_put(x, s)
    total = jax.jit(lambda a: jnp.sum(a * 2))(a)
    print(f"{name}: shard shape {s.shard_shape(a.shape)}, sum {float(np.asarray(total))}")
