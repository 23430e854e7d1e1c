"""Seed 002's "Multi-Host Data Pipeline Example" (the DistributedDataLoader class and its usage)
and its "Distributed Data Loading" mesh, as written: only the imports changed. The seed's mnist
line (tensorflow_datasets) is left out: it needs a download, and spmd.data's loader (after the
seed's code) is the sharded, shuffled, resumable form of the same pipeline.
Run: spmdrun -n 2 --cpu-devices 2 -- python3 data_loader.py"""
import numpy as np
from typing import Iterator

import spmd as jax
import spmd.data

class DistributedDataLoader:
    def __init__(self, data, batch_size, mesh, data_sharding):
        self.data = data
        self.batch_size = batch_size
        self.mesh = mesh
        self.data_sharding = data_sharding
        
        # Shard data across processes
        total_samples = len(data)
        samples_per_process = total_samples // jax.process_count()
        start_idx = jax.process_index() * samples_per_process
        end_idx = start_idx + samples_per_process
        
        self.local_data = data[start_idx:end_idx]
        
    def __iter__(self) -> Iterator:
        num_local_batches = len(self.local_data) // self.batch_size
        
        for i in range(num_local_batches):
            start = i * self.batch_size
            end = start + self.batch_size
            local_batch = self.local_data[start:end]
            
            # Create global batch from local data
            global_batch = jax.make_array_from_process_local_data(
                self.data_sharding, local_batch
            )
            
            yield global_batch

# Usage
jax.distributed.initialize()

# Create mesh and sharding
devices = np.array(jax.devices()).reshape(-1)
mesh = jax.sharding.Mesh(devices, ('batch',))
data_sharding = jax.sharding.NamedSharding(
    mesh, jax.sharding.PartitionSpec('batch')
)

# Create distributed data loader
data = np.random.randn(10000, 784)  # Example data
dataloader = DistributedDataLoader(data, batch_size=32, 
                                 mesh=mesh, 
                                 data_sharding=data_sharding)

# Iterate over distributed batches
count = 0
for batch in dataloader:
    # batch is now a jax.Array sharded across all devices
    if count < 2:
        print(f"Batch shape: {batch.shape}, "
              f"is distributed: {not batch.is_fully_addressable}")
    count += 1
print(f"{count} batches")

# Seed 002's "Distributed Data Loading" mesh: (device_count // 2, 2) devices.
mesh_shape = (jax.device_count() // 2, 2)
devices = np.array(jax.devices()).reshape(mesh_shape)
mesh = jax.sharding.Mesh(devices, ["model_replicas", "data_parallelism"])
data_sharding = jax.sharding.NamedSharding(
    mesh, jax.sharding.PartitionSpec(None, "data_parallelism")
)
print(f"data_sharding shard shape for (32, 784): {data_sharding.shard_shape((32, 784))}")

# spmd.data's loader over the same records: every process the same number of batches, shuffled
# by a seed, the last batch padded and masked instead of dropped.
loader = spmd.data.DistributedDataLoader(
    data.astype(np.float32), 32,
    jax.sharding.NamedSharding(jax.sharding.Mesh(jax.devices(), ('batch',)),
                               jax.sharding.PartitionSpec('batch')), seed=1)
first = loader.next()
print(f"spmd.data: {loader.batches_per_epoch} batches per epoch, batch {first['data'].shape}")
