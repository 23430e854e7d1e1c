"""Writes Orbax checkpoints with real JAX and Orbax (build/venv's pinned orbax-checkpoint), for
orbax_interop.py to restore in spmd. Run as

  orbax_write.py OUT one                 one JAX process of 4 CPU devices writes every form:
      std       StandardCheckpointer's defaults (OCDBT, Zarr v2), on a 2 x 2 mesh
      zarr3     OCDBT with Zarr v3 (sharding_indexed chunks)
      dirs2     one Zarr v2 directory per leaf (use_ocdbt=False)
      dirs3     one Zarr v3 directory per leaf
      mesh1x4   the defaults on a 1 x 4 mesh
      manager/  a CheckpointManager's steps 0..2, keeping 2
      items/5   a CheckpointManager step of two items, "state" and "extra"
      unfinished.orbax-checkpoint-tmp-1  std as it stands before Orbax commits it
      scalars   PyTreeCheckpointer: Python scalars (an int, a float), a string, None, {} and an
                array, as Orbax's handlers store each
      expected.npz  every leaf's global value by spmd's name for it
      ocdbt-deep, ocdbt-numbered  TensorStore's OCDBT itself, 20 commits of 20 keys into nodes of
          at most 512 bytes (a B+tree of several levels; a version tree with interior nodes),
          the second with numbered manifests; each key's value in ocdbt-*.json
  orbax_write.py OUT two ADDRESS ID      process ID of two JAX processes (2 CPU devices each,
      jax.distributed on ADDRESS, Gloo) writes OUT/two together with the other.

The leaves cover float32, bfloat16, int32 and int64 (a NumPy leaf), a scalar, nested dicts and
lists, sharded, split along one axis and replicated."""
import json
import os
import shutil
import sys

OUT, MODE = sys.argv[1], sys.argv[2]
os.environ["JAX_PLATFORMS"] = "cpu"
os.environ["XLA_FLAGS"] = ("--xla_force_host_platform_device_count="
                           + ("4" if MODE == "one" else "2"))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import orbax.checkpoint as ocp  # noqa: E402
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P  # noqa: E402


def values():
    """The global values, by spmd's name (keys joined by '/')."""
    rng = np.random.default_rng(7)
    return {
        "w": np.arange(16 * 32, dtype=np.float32).reshape(16, 32) / 7,
        "emb": rng.standard_normal((8, 12)).astype(jnp.bfloat16),
        "count": np.arange(12, dtype=np.int32) * -3,
        "big": np.arange(5, dtype=np.int64) * (1 << 40),
        "layers/0/b": rng.standard_normal(8).astype(np.float32),
        "layers/1/b": rng.standard_normal(8).astype(np.float32),
        "layers/1/g": rng.standard_normal((4, 4)).astype(np.float32),
        "s": np.float32(2.5),
    }


def tree_on(mesh):
    v = values()
    put = lambda name, spec: jax.make_array_from_callback(  # noqa: E731
        v[name].shape, NamedSharding(mesh, spec), lambda index: v[name][index])
    return {
        "w": put("w", P("a", "b")),
        "emb": put("emb", P(None, "b")),
        "count": put("count", P("a")),
        "big": v["big"],
        "layers": [{"b": put("layers/0/b", P())},
                   {"b": put("layers/1/b", P("b")), "g": put("layers/1/g", P("a", "b"))}],
        "s": put("s", P()),
    }


def save(path, tree, **handler_options):
    shutil.rmtree(path, ignore_errors=True)
    checkpointer = ocp.Checkpointer(ocp.PyTreeCheckpointHandler(**handler_options))
    checkpointer.save(path, args=ocp.args.PyTreeSave(tree))


def unfinished_copy(src, dst):
    """`src` as Orbax leaves it before the commit: under its temporary name, without
    commit_success.txt, with no commit time."""
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(src, dst)
    os.remove(os.path.join(dst, "commit_success.txt"))
    meta_path = os.path.join(dst, "_CHECKPOINT_METADATA")
    with open(meta_path) as f:
        meta = json.load(f)
    meta["commit_timestamp_nsecs"] = None
    with open(meta_path, "w") as f:
        json.dump(meta, f)


def write_ocdbt(path, config):
    """An OCDBT database written by TensorStore directly, and its keys and values as JSON."""
    import tensorstore as ts
    shutil.rmtree(path, ignore_errors=True)
    kv = ts.KvStore.open({"driver": "ocdbt", "base": "file://" + path, "config": config}).result()
    expected = {}
    for commit in range(20):
        with ts.Transaction() as txn:
            for i in range(commit * 20, commit * 20 + 20):
                key = f"leaf{i % 97:03d}/chunk.{i}"
                expected[key] = f"value {i} " * (1 + i % 40)  # inline and out-of-line values
                kv.with_transaction(txn)[key] = expected[key].encode()
    with open(path + ".json", "w") as f:
        json.dump(expected, f)


def write_one():
    mesh = Mesh(np.array(jax.devices()).reshape(2, 2), ("a", "b"))
    tree = tree_on(mesh)
    with ocp.StandardCheckpointer() as checkpointer:
        shutil.rmtree(f"{OUT}/std", ignore_errors=True)
        checkpointer.save(f"{OUT}/std", tree)
    save(f"{OUT}/zarr3", tree, use_zarr3=True)
    save(f"{OUT}/dirs2", tree, use_ocdbt=False)
    save(f"{OUT}/dirs3", tree, use_ocdbt=False, use_zarr3=True)
    save(f"{OUT}/mesh1x4", tree_on(Mesh(np.array(jax.devices()).reshape(1, 4), ("a", "b"))))
    unfinished_copy(f"{OUT}/std", f"{OUT}/unfinished.orbax-checkpoint-tmp-1")
    shutil.rmtree(f"{OUT}/scalars", ignore_errors=True)
    with ocp.PyTreeCheckpointer() as checkpointer:
        checkpointer.save(f"{OUT}/scalars", {"step": 7, "lr": 0.125, "name": "run-1",
                                             "none": None, "empty": {}, "w": jnp.arange(3.0)})
    for d in ("manager", "items"):
        shutil.rmtree(f"{OUT}/{d}", ignore_errors=True)
    with ocp.CheckpointManager(f"{OUT}/manager",
                               options=ocp.CheckpointManagerOptions(
                                   max_to_keep=2, best_fn=lambda m: m["loss"], best_mode="min",
                                   keep_checkpoints_without_metrics=False)) as manager:
        for step in range(3):
            manager.save(step, args=ocp.args.StandardSave({"x": jnp.full((6,), step + 0.5)}),
                         metrics={"loss": 1.0 / (step + 1)})
    with ocp.CheckpointManager(f"{OUT}/items", item_names=("state", "extra")) as manager:
        manager.save(5, args=ocp.args.Composite(
            state=ocp.args.StandardSave({"w": tree["w"]}),
            extra=ocp.args.StandardSave({"n": jnp.arange(3, dtype=jnp.int32)})))
    write_ocdbt(f"{OUT}/ocdbt-deep", {"max_decoded_node_bytes": 512, "version_tree_arity_log2": 2})
    write_ocdbt(f"{OUT}/ocdbt-numbered", {"manifest_kind": "numbered",
                                          "max_decoded_node_bytes": 512})
    expected = {k: (v.astype(np.float32) if v.dtype == jnp.bfloat16 else v)
                for k, v in values().items()}
    np.savez(f"{OUT}/expected.npz", **expected)
    print("wrote every form")


def write_two(address, process_id):
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    jax.distributed.initialize(coordinator_address=address, num_processes=2,
                               process_id=process_id)
    mesh = Mesh(np.array(jax.devices()).reshape(2, 2), ("a", "b"))
    with ocp.StandardCheckpointer() as checkpointer:
        if process_id == 0:
            shutil.rmtree(f"{OUT}/two", ignore_errors=True)
        checkpointer.save(f"{OUT}/two", tree_on(mesh))
    print(f"process {process_id} wrote two")


if MODE == "one":
    write_one()
else:
    write_two(sys.argv[3], int(sys.argv[4]))
