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
check(arr.shape == (8, 3) and not arr.is_fully_addressable, "global array from local data")

# make_array_from_callback over the global value.
whole = np.arange(8 * 3, dtype=np.float32).reshape(8, 3)
from_cb = jax.make_array_from_callback((8, 3), sharding, lambda index: whole[index])

# A jit across both processes: the sum crosses them.
total = jax.jit(lambda a, b: jnp.sum(a) + jnp.sum(b))(arr, from_cb)
got = float(np.asarray(total))
check(abs(got - (np.arange(12).sum() * 2 + 100 * 12 + whole.sum())) < 1e-3,
      f"jit across processes: {got}")

gathered = multihost_utils.process_allgather(arr, tiled=True)
check(gathered.shape == (8, 3) and gathered[4, 0] == 100.0, "process_allgather")
try:
    multihost_utils.process_allgather(arr)  # JAX: a global array needs tiled=True
    check(False, "process_allgather of a global array without tiled=True is refused")
except ValueError as e:
    check("only supports tiled=True" in str(e), f"the refusal says tiled=True: {e}")
# Host values: each process's own, stacked or concatenated, in a pytree; a scalar is stacked.
mine = np.full((2, 3), jax.process_index(), np.int64)  # canonicalized to int32, as JAX's
host = multihost_utils.process_allgather({"a": mine, "s": 7.5 + jax.process_index()})
check(host["a"].shape == (2, 2, 3) and host["a"].dtype == np.int32 and host["a"][1, 0, 0] == 1,
      f"process_allgather of host values stacks them: {host['a'].shape} {host['a'].dtype}")
check(host["s"].shape == (2,) and list(host["s"]) == [7.5, 8.5], f"scalars stacked: {host['s']}")
tiled = multihost_utils.process_allgather([mine, 3.0], tiled=True)
check(tiled[0].shape == (4, 3) and tiled[0][2, 0] == 1 and tiled[1].shape == (2,),
      "process_allgather(tiled=True) concatenates host values (a scalar still stacks)")
try:
    np.asarray(arr)
    check(False, "np.asarray of an array spanning processes is refused")
except RuntimeError as e:
    check("process_allgather" in str(e), "the refusal points to process_allgather")
# device_put of a host value onto devices of every process: JAX asserts it is the same
# everywhere; so does spmd, in every process.
try:
    jax.device_put(np.full(4, jax.process_index(), np.float32), NamedSharding(mesh, P()))
    check(False, "device_put of a different host value on each process is refused")
except RuntimeError as e:
    check("process 0 and process 1 hold different values" in str(e), f"the refusal says why: {e}")
same = jax.device_put(jnp.ones(4), NamedSharding(mesh, P("devices")))  # uncommitted: a host value
check(float(np.asarray(jax.jit(jnp.sum)(same))) == 4.0, "an uncommitted array put across processes")

# A checkpoint saved from both processes, restored onto another layout.
import tempfile  # noqa: E402
from spmd import checkpoint  # noqa: E402
mine = tempfile.mkdtemp(prefix="spmd-py-ckpt-") if jax.process_index() == 0 else ""
root = multihost_utils.broadcast_one_to_all(np.frombuffer(mine.encode().ljust(64), np.uint8))
directory = bytes(root).decode().strip() + "/ck"
checkpoint.save(directory, {"w": arr, "b": from_cb})
back = checkpoint.restore(directory, {"w": NamedSharding(mesh, P(None, None)),
                                      "b": NamedSharding(mesh, P("devices"))})
check(np.array_equal(np.asarray(back["w"]), gathered), "checkpoint restored replicated")
check(np.array_equal(multihost_utils.process_allgather(back["b"], tiled=True), whole),
      "checkpoint restored")
multihost_utils.sync_global_devices("restored")
if jax.process_index() == 0:
    import shutil  # noqa: E402
    shutil.rmtree(bytes(root).decode().strip())
print(f"process {jax.process_index()}: ok")
jax.distributed.shutdown()
