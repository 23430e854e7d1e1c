"""Seeds 000 and 002, "Manual initialization with explicit parameters", and seed 001's
"Multi-host JAX" set-up: jax.distributed.initialize with coordinator_address, num_processes and
process_id given, then the device counts.

Changed besides the imports: the seeds' addresses ("10.0.0.1:1234", "192.168.0.1:1234") and
process ids are literals for one cluster; here they are the ones the launcher chose, read from
its environment, so that the example runs anywhere. Run: spmdrun -n 2 -- python3 initialize.py
"""
import os

import spmd as jax

# Manual initialization with explicit parameters
jax.distributed.initialize(
    coordinator_address=os.environ["SPMD_COORDINATOR_ADDRESS"],
    num_processes=2,
    process_id=int(os.environ["SPMD_PROCESS_ID"])
)

# After init, jax.devices() returns ALL devices across ALL hosts:
print(jax.device_count())   # e.g. 32 (4 hosts × 8 GPUs each)
print(jax.local_device_count())  # 8 (devices on THIS host)

# A second initialize() raises RuntimeError, as the seeds say.
try:
    jax.distributed.initialize()
except RuntimeError as e:
    print(f"second initialize: RuntimeError: {e}")
