"""Run by orbax_interop.py under spmdrun, in every process: saves the tree orbax_write.py's
values describe (from its expected.npz) with spmd.checkpoint.save(..., format="orbax") from this
job's devices (x64 on, so the int64 leaf stays int64), then restores it with spmd onto another
layout and checks every addressable shard. Orbax restoring it in JAX is orbax_restore_in_jax.py.
Usage: orbax_save_check.py EXPECTED_NPZ OUT. Exits non-zero naming the first failed check."""
import sys

import ml_dtypes
import numpy as np

import spmd
from spmd import checkpoint as ckpt
from spmd.sharding import Mesh, NamedSharding, PartitionSpec as P

spmd.config.update("jax_enable_x64", True)
spmd.distributed.initialize()
expected_path, out = sys.argv[1:3]
v = dict(np.load(expected_path))
v["emb"] = v["emb"].astype(ml_dtypes.bfloat16)
devices = spmd.devices()
grid = Mesh(np.array(devices).reshape(2, len(devices) // 2), ("a", "b"))
line = Mesh(np.array(devices), ("x",))


def check(cond, what):
    if not cond:
        print(f"process {spmd.process_index()}: FAILED {what}", file=sys.stderr)
        sys.exit(1)


def put(name, spec):
    return spmd.make_array_from_callback(v[name].shape, NamedSharding(grid, spec),
                                         lambda index: v[name][index])


tree = {
    "w": put("w", P("a", "b")), "emb": put("emb", P(None, "b")), "count": put("count", P("a")),
    "big": put("big", P()),
    "layers": [{"b": put("layers/0/b", P())},
               {"b": put("layers/1/b", P("b")), "g": put("layers/1/g", P("a", "b"))}],
    "s": put("s", P()),
}
check(str(tree["big"].dtype) == "int64", f"the int64 leaf is int64: {tree['big'].dtype}")
ckpt.save(out, tree, format="orbax", step=3, metrics={"loss": 0.25})
back = ckpt.restore(out, {"w": NamedSharding(line, P(None, "x")), "big": NamedSharding(line, P()),
                          "layers": [{"b": NamedSharding(line, P("x"))}, {}]})
for name, arr in (("w", back["w"]), ("big", back["big"]), ("layers/0/b", back["layers"][0]["b"])):
    for shard in arr.addressable_shards:
        check(np.array_equal(np.asarray(shard.data), v[name][shard.index]),
              f"spmd restores {name} of its Orbax-format checkpoint")
meta = ckpt.read_metadata(out)
check(meta["step"] == 3 and meta["metrics"] == {"loss": 0.25}, f"the metadata: {meta}")
print(f"process {spmd.process_index()}: ok: saved {out} in Orbax's format")
