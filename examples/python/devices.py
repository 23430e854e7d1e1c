"""Seed 002's "Local vs Global Devices", "Core Distributed Functions" and best practices 1-4, and
seed 001's device counts, as written (only the import changed).
Run: spmdrun -n 2 --cpu-devices 2 -- python3 devices.py"""
import spmd as jax

# Initialize distributed JAX
jax.distributed.initialize(
    coordinator_address=None,  # Required unless auto-detected
    num_processes=None,        # Required unless auto-detected
    process_id=None,          # Required unless auto-detected
    local_device_ids=None,    # Optional: restrict local devices
    initialization_timeout=300 # Optional: timeout in seconds
)

# Get process information
process_id = jax.process_index()  # Current process index
num_processes = jax.process_count()  # Total number of processes

# Device information
local_devices = jax.local_devices()  # Devices on this process
global_devices = jax.devices()       # All devices across processes

# Get local devices
local_devices = jax.local_devices()
print(f"Process {jax.process_index()} has {len(local_devices)} local devices")

# Get all global devices
global_devices = jax.devices()
print(f"Total global devices: {len(global_devices)}")

key = jax.random.PRNGKey(42 + jax.process_index())

if jax.process_index() == 0:
    print("Training started...")

print(f"Process {jax.process_index()}: "
      f"{len(jax.local_devices())} local devices, "
      f"{len(jax.devices())} total devices")

jax.device_count()  # total number of accelerator devices in the cluster
jax.local_device_count()  # number of accelerator devices attached to this host
