"""Orbax restores, in JAX, a checkpoint spmd saved with format="orbax" (orbax_save_check.py):

  orbax_restore_in_jax.py DIR EXPECTED_NPZ one            one JAX process of 4 CPU devices
  orbax_restore_in_jax.py DIR EXPECTED_NPZ two ADDR ID    process ID of two JAX processes of 2

with Orbax's default call, StandardCheckpointer().restore(DIR, abstract_tree): once onto shardings
the abstract tree gives (another mesh than the saving one, lists where the saved tree had lists),
once onto the shardings saved in _sharding (the abstract tree from Orbax's own metadata). Every
addressable shard's value and dtype are checked against EXPECTED_NPZ. Exits non-zero naming the
first failed check."""
import os
import sys

DIR, EXPECTED, MODE = sys.argv[1:4]
os.environ["JAX_PLATFORMS"] = "cpu"
os.environ["XLA_FLAGS"] = ("--xla_force_host_platform_device_count="
                           + ("4" if MODE == "one" else "2"))

import jax  # noqa: E402
import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402
import orbax.checkpoint as ocp  # noqa: E402
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P  # noqa: E402

jax.config.update("jax_enable_x64", True)
if MODE == "two":
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    jax.distributed.initialize(coordinator_address=sys.argv[4], num_processes=2,
                               process_id=int(sys.argv[5]))
me = jax.process_index()
expected = dict(np.load(EXPECTED))
dtypes = {"w": np.float32, "emb": ml_dtypes.bfloat16, "count": np.int32, "big": np.int64,
          "layers/0/b": np.float32, "layers/1/b": np.float32, "layers/1/g": np.float32,
          "s": np.float32}


def check(cond, what):
    if not cond:
        print(f"jax process {me}: FAILED {what}", file=sys.stderr)
        sys.exit(1)


def flat(tree):
    pairs = jax.tree_util.tree_flatten_with_path(tree)[0]
    return {"/".join(str(getattr(k, "key", getattr(k, "idx", k))) for k in path): leaf
            for path, leaf in pairs}


def check_values(tree, what):
    arrays = flat(tree)
    check(sorted(arrays) == sorted(expected), f"{what}: leaves {sorted(arrays)}")
    for name, arr in arrays.items():
        check(arr.dtype == dtypes[name], f"{what} {name}: dtype {arr.dtype}")
        for shard in arr.addressable_shards:
            got = np.asarray(shard.data).astype(expected[name].dtype)
            check(np.array_equal(got, expected[name][shard.index]),
                  f"{what} {name}: shard {shard.index} differs")


line = Mesh(np.array(jax.devices()), ("x",))


def S(name, spec):
    return jax.ShapeDtypeStruct(expected[name].shape, dtypes[name],
                                sharding=NamedSharding(line, spec))


abstract = {
    "w": S("w", P(None, "x")), "emb": S("emb", P(None, "x")), "count": S("count", P("x")),
    "big": S("big", P()),
    "layers": [{"b": S("layers/0/b", P("x"))},
               {"b": S("layers/1/b", P()), "g": S("layers/1/g", P("x"))}],
    "s": S("s", P()),
}
with ocp.StandardCheckpointer() as checkpointer:
    got = checkpointer.restore(DIR, abstract)
    check(isinstance(got["layers"], list), "a list where the saved tree had one")
    check_values(got, "onto the caller's shardings")
    check(got["w"].sharding == abstract["w"].sharding, "the caller's sharding")
    saved = checkpointer.metadata(DIR).item_metadata.tree
    check(tuple(saved["w"].sharding.partition_spec) == ("a", "b"), "the saved sharding")
    as_saved = jax.tree.map(
        lambda m: jax.ShapeDtypeStruct(m.shape, m.dtype, sharding=m.sharding.to_jax_sharding()),
        saved)
    got = checkpointer.restore(DIR, as_saved)
    check_values(got, "onto the saved shardings")
    check(got["w"].sharding.spec == P("a", "b"), f"w as saved: {got['w'].sharding}")
print(f"jax process {me}: ok: Orbax restored {DIR}")
