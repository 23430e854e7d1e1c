"""spmd-bench checkpoint --orbax's Python side, run as a one-process spmd job with JAX and Orbax
imported beside spmd (both on DEVICES CPU devices):

  orbax_bench_worker.py write DIR BYTES DEVICES [LEAVES]
      Orbax (StandardCheckpointer, its defaults: OCDBT, Zarr v2, zstd) saves LEAVES (default 8)
      float32 leaves of pseudo-random values (incompressible, like trained weights) totalling
      BYTES, each split by rows over the devices: LEAVES x DEVICES chunks.
  orbax_bench_worker.py restore DIR ROUNDS DEVICES
      Per round, both restores of the same files onto the same layout (rows split over the
      devices), each timed until every shard is in memory, in alternating order so that a slow
      period of the machine falls on both: spmd.checkpoint.restore, and Orbax's
      StandardCheckpointer().restore(DIR, abstract_tree). Prints one JSON row: each side's
      seconds per round, their medians, GB/s, spmd's speed over Orbax's, and whether both
      restored the same values.
"""
import json
import os
import sys
import time

MODE, DIR = sys.argv[1], sys.argv[2]
DEVICES = int(sys.argv[4])
os.environ["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={DEVICES}"
os.environ["JAX_PLATFORMS"] = "cpu"

import jax  # noqa: E402
import numpy as np  # noqa: E402
import orbax.checkpoint as ocp  # noqa: E402
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P  # noqa: E402

import spmd  # noqa: E402
from spmd import checkpoint as ckpt  # noqa: E402

LEAVES = int(sys.argv[5]) if len(sys.argv) > 5 else 8
COLS = 1024


def shape(nbytes):
    cols = min(COLS, max(1, nbytes // LEAVES // 4 // DEVICES))
    rows = nbytes // LEAVES // 4 // cols
    return (max(DEVICES, rows - rows % DEVICES), cols)


def write(nbytes):
    mesh = Mesh(np.array(jax.devices()), ("x",))
    rng = np.random.default_rng(0)
    tree = {}
    for i in range(LEAVES):
        host = rng.standard_normal(shape(nbytes), dtype=np.float32)
        tree[f"layer{i}"] = jax.device_put(host, NamedSharding(mesh, P("x")))
    with ocp.StandardCheckpointer() as checkpointer:
        checkpointer.save(DIR, tree)
    rows, cols = shape(nbytes)
    print(json.dumps({"wrote": DIR, "bytes": LEAVES * rows * cols * 4, "leaves": LEAVES}))


def restore(rounds):
    spmd.distributed.initialize(num_processes=1, num_cpu_devices=DEVICES)
    jmesh = Mesh(np.array(jax.devices()), ("x",))
    smesh = spmd.sharding.Mesh(np.array(spmd.devices()), ("x",))
    rows = spmd.sharding.NamedSharding(smesh, spmd.sharding.PartitionSpec("x"))
    with ocp.StandardCheckpointer() as checkpointer:
        meta = checkpointer.metadata(DIR).item_metadata.tree
        split = NamedSharding(jmesh, P("x"))
        abstract = {k: jax.ShapeDtypeStruct(m.shape, m.dtype, sharding=split)
                    for k, m in meta.items()}
        nbytes = sum(int(np.prod(m.shape)) * 4 for m in meta.values())
        times = {"spmd": [], "orbax": []}
        sums = {}

        def run_spmd():
            t = time.perf_counter()
            out = ckpt.restore(DIR, rows)
            for a in out.values():
                a.block_until_ready()
            times["spmd"].append(time.perf_counter() - t)
            sums["spmd"] = [float(np.asarray(out[k].addressable_shards[-1].data)[-1].sum())
                            for k in sorted(out)]

        def run_orbax():
            t = time.perf_counter()
            out = checkpointer.restore(DIR, abstract)
            jax.block_until_ready(out)
            times["orbax"].append(time.perf_counter() - t)
            sums["orbax"] = [float(np.asarray(out[k].addressable_shards[-1].data)[-1].sum())
                             for k in sorted(out)]

        for r in range(rounds):
            for f in ((run_spmd, run_orbax) if r % 2 == 0 else (run_orbax, run_spmd)):
                f()
    spmd_s, orbax_s = float(np.median(times["spmd"])), float(np.median(times["orbax"]))
    print(json.dumps({
        "bytes": nbytes, "leaves": len(meta), "devices": DEVICES, "rounds": rounds,
        "spmd_s": times["spmd"], "orbax_s": times["orbax"],
        "spmd_median_s": spmd_s, "orbax_median_s": orbax_s,
        "spmd_GBps": nbytes / spmd_s / 1e9, "orbax_GBps": nbytes / orbax_s / 1e9,
        "spmd_speed_over_orbax": orbax_s / spmd_s,
        "correct": sums["spmd"] == sums["orbax"],
    }))


if MODE == "write":
    write(int(sys.argv[3]))
else:
    restore(int(sys.argv[3]))
