"""Run by spmdrun (tests/CMakeLists.txt: Python.MultiProcess): seed 001's and 003's Python as
written, with only the imports changed, in every process: initialize from the launcher's
environment, the device queries, the process-spanning constructors, a jit across processes and
process_allgather. Exits non-zero, naming the check, when one fails."""
import sys

import numpy as np

import spmd as jax
import spmd.numpy as jnp
from spmd.experimental import multihost_utils
from spmd.sharding import Mesh, NamedSharding, PartitionSpec as P


def check(cond, what):
    if not cond:
        print(f"process {jax.process_index()}: FAILED {what}", file=sys.stderr)
        sys.exit(1)


jax.distributed.initialize()
check(jax.process_count() == 2, "process_count")
check(jax.device_count() == 4 and jax.local_device_count() == 2, "device counts")
check(len(jax.devices()) == 4 and len(jax.local_devices()) == 2, "devices")

mesh = Mesh(np.array(jax.devices()), ("devices",))
sharding = NamedSharding(mesh, P("devices"))

# make_array_from_process_local_data: each process its own 4 rows of 8.
local = np.arange(4 * 3, dtype=np.float32).reshape(4, 3) + 100 * jax.process_index()
arr = jax.make_array_from_process_local_data(sharding, local)
check(arr.shape == [8, 3] and not arr.is_fully_addressable, "global array from local data")

# make_array_from_callback over the global value.
whole = np.arange(8 * 3, dtype=np.float32).reshape(8, 3)
from_cb = jax.make_array_from_callback((8, 3), sharding, lambda index: whole[index])

# A jit across both processes: the sum crosses them.
total = jax.jit(lambda a, b: jnp.sum(a) + jnp.sum(b))(arr, from_cb)
got = float(np.asarray(total))
check(abs(got - (np.arange(12).sum() * 2 + 100 * 12 + whole.sum())) < 1e-3,
      f"jit across processes: {got}")

gathered = multihost_utils.process_allgather(arr)
check(gathered.shape == (8, 3) and gathered[4, 0] == 100.0, "process_allgather")
try:
    np.asarray(arr)
    check(False, "np.asarray of an array spanning processes is refused")
except RuntimeError as e:
    check("process_allgather" in str(e), "the refusal points to process_allgather")
print(f"process {jax.process_index()}: ok")
jax.distributed.shutdown()
