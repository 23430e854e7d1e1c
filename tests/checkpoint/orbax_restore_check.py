"""Run by orbax_interop.py under spmdrun, in every process: restores each checkpoint that
orbax_write.py wrote (Orbax in JAX) with spmd.checkpoint, onto every device of every process,
replicated and then resharded onto other meshes, and checks each addressable shard's values and
dtype against the writer's global values. Also a CheckpointManager's steps and items, and the
refusal of a checkpoint Orbax had not finished. Exits non-zero naming the first failed check."""
import os
import sys

import numpy as np

import spmd
from spmd import checkpoint as ckpt
from spmd.sharding import Mesh, NamedSharding, PartitionSpec as P

OUT = sys.argv[1]
FORMS = ["std", "zarr3", "dirs2", "dirs3", "mesh1x4", "two"]
DTYPES = {"w": "float32", "emb": "bfloat16", "count": "int32", "big": "int64",
          "layers/0/b": "float32", "layers/1/b": "float32", "layers/1/g": "float32",
          "s": "float32"}


def check(cond, what):
    if not cond:
        print(f"process {spmd.process_index()}: FAILED {what}", file=sys.stderr)
        sys.exit(1)


def flat(tree, prefix=""):
    """{"a/b": leaf} of nested dicts and lists."""
    items = tree.items() if isinstance(tree, dict) else enumerate(tree)
    out = {}
    for k, v in items:
        name = f"{prefix}{k}"
        out.update(flat(v, name + "/") if isinstance(v, (dict, list)) else {name: v})
    return out


def check_values(arrays, expected, what):
    check(set(arrays) == set(expected), f"{what}: leaves {sorted(arrays)} != {sorted(expected)}")
    for name, arr in arrays.items():
        check(str(arr.dtype) == DTYPES[name], f"{what} {name}: dtype {arr.dtype}")
        check(tuple(arr.shape) == expected[name].shape, f"{what} {name}: shape {arr.shape}")
        for shard in arr.addressable_shards:
            got = np.asarray(shard.data).astype(expected[name].dtype)
            want = expected[name][shard.index]
            check(np.array_equal(got, want), f"{what} {name}: shard {shard.index} differs")


spmd.distributed.initialize()
devices = spmd.devices()
n = len(devices)
line = Mesh(np.array(devices), ("x",))
grid = Mesh(np.array(devices).reshape(2, n // 2), ("p", "q"))
expected = dict(np.load(os.path.join(OUT, "expected.npz")))
resharded = {
    "w": NamedSharding(grid, P(None, "q")), "emb": NamedSharding(line, P(None, "x")),
    "count": NamedSharding(line, P("x")), "big": NamedSharding(line, P()),
    "layers": [{"b": NamedSharding(line, P("x"))},
               {"b": NamedSharding(grid, P("q")), "g": NamedSharding(grid, P("p", "q"))}],
    "s": NamedSharding(grid, P()),
}
for form in FORMS:
    path = os.path.join(OUT, form)
    check(ckpt.is_committed(path), f"{form} is a committed checkpoint")
    check_values(flat(ckpt.restore(path, NamedSharding(line, P()))), expected, form)
    got = ckpt.restore(path, resharded)
    check(isinstance(got["layers"], list), f"{form}: the target's structure")
    check_values(flat(got), expected, f"{form} resharded")

manager = ckpt.CheckpointManager(os.path.join(OUT, "manager"))
check(manager.all_steps() == [1, 2], f"Orbax's manager kept steps 1 and 2: {manager.all_steps()}")
check(manager.metadata(2)["metrics"] == {"loss": 1.0 / 3},
      f"the metrics Orbax recorded: {manager.metadata(2)}")
x = manager.restore(2, NamedSharding(line, P("x")))["x"]
for shard in x.addressable_shards:
    check(np.array_equal(np.asarray(shard.data), np.full(6, 2.5, np.float32)[shard.index]),
          "manager step 2")
items = flat(ckpt.restore(os.path.join(OUT, "items", "5"), NamedSharding(line, P())))
check(sorted(items) == ["extra/n", "state/w"], f"a step's items: {sorted(items)}")
check(np.array_equal(np.asarray(items["extra/n"].addressable_shards[0].data), np.arange(3)),
      "item extra")

# Python scalars come back as 0-d arrays of Orbax's stored dtype; a string, None and {} are not
# arrays and are left out.
scalars = ckpt.restore(os.path.join(OUT, "scalars"), NamedSharding(line, P()))
check(sorted(scalars) == ["lr", "step", "w"], f"the scalars checkpoint's arrays: {sorted(scalars)}")
check(str(scalars["step"].dtype) == "int64" and int(np.asarray(scalars["step"])) == 7, "step")
check(float(np.asarray(scalars["lr"])) == 0.125, "lr")

unfinished = os.path.join(OUT, "unfinished.orbax-checkpoint-tmp-1")
check(not ckpt.is_committed(unfinished), "an unfinished checkpoint is not committed")
try:
    ckpt.restore(unfinished, NamedSharding(line, P()))
    check(False, "an unfinished checkpoint is refused")
except RuntimeError as e:
    check("had not finished writing" in str(e), f"the refusal says why: {e}")
print(f"process {spmd.process_index()}: ok: {len(FORMS)} Orbax checkpoints restored on {n} "
      "devices")
