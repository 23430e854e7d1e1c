"""Seed 002's "Creating Process-Spanning Arrays": the three ways, and its "Array Creation
Functions". The seed leaves load_my_data, load_my_data_shard, create_array_for_device and shape
to the reader; they are defined here (an 8 x 4 array whose rows are split over the devices).
Only the imports changed. Run: spmdrun -n 2 --cpu-devices 2 -- python3 process_spanning_arrays.py
"""
import numpy as np

import spmd as jax
from spmd.experimental import multihost_utils

jax.distributed.initialize()

shape = (8, 4)
FULL = np.arange(32, dtype=np.float32).reshape(shape)


def load_my_data():
    return FULL


def load_my_data_shard(process_index):
    rows = shape[0] // jax.process_count()
    return FULL[process_index * rows:(process_index + 1) * rows]


def create_array_for_device(d):
    rows = shape[0] // jax.device_count()
    return jax.device_put(FULL[d.id * rows:(d.id + 1) * rows], d)


# Each process loads the full array
full_array = load_my_data()

# Create a sharding specification
mesh = jax.sharding.Mesh(jax.devices(), ('devices',))
sharding = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec('devices'))

# Shard the array across all devices
sharded_array = jax.device_put(full_array, sharding)

# Each process loads its portion of the data
local_data = load_my_data_shard(jax.process_index())

# Create array from process-local data
global_array = jax.make_array_from_process_local_data(
    sharding, local_data
)
same_from_local = global_array

# Create arrays on each local device
per_device_arrays = [
    create_array_for_device(d) for d in jax.local_devices()
]

# Combine into global array
global_array = jax.make_array_from_single_device_arrays(
    shape, sharding, per_device_arrays
)

# Check if array is fully addressable
is_local = global_array.is_fully_addressable  # True if all shards are local

for name, a in [("device_put", sharded_array), ("process-local data", same_from_local),
                ("single-device arrays", global_array)]:
    whole = multihost_utils.process_allgather(a, tiled=True)
    print(f"{name}: shape {a.shape}, fully addressable {a.is_fully_addressable}, "
          f"equal to the full array {bool((whole == FULL).all())}")
for shard in global_array.addressable_shards:
    print(f"device {shard.device.id} holds rows {shard.index[0].start}:{shard.index[0].stop}")
