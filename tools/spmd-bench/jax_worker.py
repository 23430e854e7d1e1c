"""JAX as spmd-bench's baseline: one process of a JAX job, started by spmd-bench (one per spmd
process, JAX on CPU with one device each, multi-process through jax.distributed.initialize with
Gloo collectives, JAX's CPU default), doing the work the spmd rows do.

  jax_worker.py MODE ADDRESS N RANK BIND ARGS…   (BIND 1: rank i pinned to core i, as spmd's
                                                workers and mpirun's ranks are)

  collectives OPS SIZES SECONDS
      The collectives sweep of collective_sweep.cc, through jit of shard_map: all_reduce (psum),
      all_gather, reduce_scatter (psum_scatter), all_to_all. The same inputs, the same iteration
      rule (three warm-up calls size the run to SECONDS, rank 0's count for all), buffers of
      64 KiB and more rotated through a 64 MiB pool, each call timed on its own up to
      block_until_ready(), the last call's output checked; rank 0 prints one result row per
      point, as collective_sweep.cc prints them.
  jit ITERATIONS
      jit_bench.cc's work (see jit()), one JSON row from rank 0.
  train ITERATIONS
      train_bench.cc's data-parallel step with Optax's Adam: its first losses and its time.
  reshard BYTES ITERATIONS
      reshard_bench.cc's rows-to-columns device_put.
"""
import json
import os
import sys
import time

import numpy as np

FRESH_FROM = 64 << 10
POOL_BYTES = 64 << 20


def start(address, n, rank):
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import jax
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    jax.distributed.initialize(coordinator_address=address, num_processes=n, process_id=rank)
    return jax


# The sweep's inputs and answers (collective_sweep.cc's input() and expected()).
def inputs(rank, count):
    return (rank + 1 + np.arange(count) % 13).astype(np.float32)


def expected(op, n, rank, count, out_elems):
    i = np.arange(out_elems)
    if op == "all_reduce":
        return sum(inputs(r, count) for r in range(n))
    if op == "reduce_scatter":
        return sum(inputs(r, count * n)[rank * count:(rank + 1) * count] for r in range(n))
    if op == "all_gather":
        return (i // count + 1 + (i % count) % 13).astype(np.float32)
    # all_to_all: block j of the output is rank j's block `rank` of its input
    return (i // count + 1 + (rank * count + i % count) % 13).astype(np.float32)


def elems(op, count, n):
    """(elements in, elements out) per participant, as collective_sweep.cc counts them."""
    ins = count * n if op in ("reduce_scatter", "all_to_all") else count
    outs = count * n if op in ("all_gather", "all_to_all") else count
    return ins, outs


def bus_factor(op, n):
    return 2.0 * (n - 1) / n if op == "all_reduce" else (n - 1) / n


def collective(jax, mesh, op):
    from jax import lax
    from jax.sharding import PartitionSpec as P
    bodies = {
        "all_reduce": lambda x: lax.psum(x, "i"),
        "all_gather": lambda x: lax.all_gather(x, "i", tiled=True),
        "reduce_scatter": lambda x: lax.psum_scatter(x, "i", tiled=True),
        "all_to_all": lambda x: lax.all_to_all(x, "i", 0, 0, tiled=True),
    }
    return jax.jit(jax.shard_map(bodies[op], mesh=mesh, in_specs=P("i"), out_specs=P("i")))


def agree(jax, value):
    """Rank 0's value, on every rank."""
    from jax.experimental import multihost_utils
    return int(multihost_utils.broadcast_one_to_all(np.int32(value)))


def sweep(jax, ops, sizes, seconds):
    from jax.experimental import multihost_utils
    from jax.sharding import NamedSharding, PartitionSpec as P
    n, rank = jax.process_count(), jax.process_index()
    mesh = jax.sharding.Mesh(np.array(jax.devices()), ("i",))
    split = NamedSharding(mesh, P("i"))
    for op in ops:
        f = collective(jax, mesh, op)
        for nbytes in sizes:
            count = nbytes // 4 if op == "all_reduce" else nbytes // 4 // n
            if count == 0:
                continue
            ins, outs = elems(op, count, n)
            big = max(ins, outs) * 4
            pool = max(1, POOL_BYTES // big) if big >= FRESH_FROM else 1
            xs = [jax.make_array_from_process_local_data(split, inputs(rank, ins))
                  for _ in range(pool)]
            start_warm = time.perf_counter()
            for i in range(3):
                f(xs[i % pool]).block_until_ready()
            per_call = (time.perf_counter() - start_warm) / 3
            iterations = agree(jax, min(2000, max(5, int(seconds / max(per_call, 1e-7)))))
            multihost_utils.sync_global_devices(f"{op}-{nbytes}")
            times = []
            out = None
            for i in range(iterations):
                t = time.perf_counter()
                out = f(xs[i % pool])
                out.block_until_ready()
                times.append(time.perf_counter() - t)
            got = np.asarray(out.addressable_shards[0].data)
            ok = bool(np.array_equal(got, expected(op, n, rank, count, outs)))
            ok = bool(multihost_utils.process_allgather(np.array([ok])).all())
            if rank == 0:
                times.sort()
                p50 = times[len(times) // 2]
                algbw = nbytes / p50 / 1e9
                print(json.dumps({
                    "op": op, "impl": "jax", "transport": "gloo", "processes": n,
                    "bytes": nbytes, "p50_us": p50 * 1e6,
                    "p99_us": times[min(len(times) - 1, len(times) * 99 // 100)] * 1e6,
                    "algbw_GBps": algbw, "busbw_GBps": algbw * bus_factor(op, n),
                    "correct": ok, "iterations": iterations, "fresh_buffers": pool > 1}),
                    flush=True)


def main():
    mode, address, n, rank, bind = sys.argv[1:6]
    n, rank, args = int(n), int(rank), sys.argv[6:]
    if bind == "1":  # one core per process, as spmd's workers and mpirun's ranks
        os.sched_setaffinity(0, {rank % os.cpu_count()})
    if mode not in MODES:
        raise SystemExit(f"jax_worker.py: unknown mode {mode!r} ({', '.join(sorted(MODES))})")
    jax = start(address, n, rank)
    MODES[mode](jax, *args)
    jax.distributed.shutdown()


def collectives(jax, ops, sizes, seconds):
    sweep(jax, [o for o in ops.split(",") if o], [int(s) for s in sizes.split(",") if s],
          float(seconds))


def timed(iterations, f):
    """The median of `iterations` timings of f after one untimed call (workers.cc's timed())."""
    f()
    times = []
    for _ in range(iterations):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return float(np.median(times))


def filled(jax, shape, sharding, value):
    return jax.make_array_from_callback(
        shape, sharding, lambda index: np.full(
            [len(range(*s.indices(n))) for s, n in zip(index, shape)], value, np.float32))


def jit(jax, iterations):
    """jit_bench.cc's work with JAX: a cached call's dispatch, the row-split matmul, a * b + c,
    and the MLP forward in its two layouts. Times in seconds (dispatch in µs), JAX's calls
    waited for (block_until_ready), as spmd's calls return finished."""
    import jax.numpy as jnp
    from jax.sharding import NamedSharding, PartitionSpec as P
    iterations = int(iterations)
    n = jax.process_count()
    row = {"impl": "jax", "jax": jax.__version__, "processes": n}
    alone = jax.sharding.SingleDeviceSharding(jax.local_devices()[0])

    x16 = jax.device_put(np.ones(16, np.float32), alone)
    add_one = jax.jit(lambda t: t + 1.0)

    def thousand():
        for _ in range(1000):
            add_one(x16).block_until_ready()
    row["dispatch_us"] = timed(iterations, thousand) / 1000 * 1e6

    line = jax.sharding.Mesh(np.array(jax.devices()), ("x",))
    a = filled(jax, (2048, 2048), NamedSharding(line, P("x")), 0.5)
    w = filled(jax, (2048, 2048), NamedSharding(line, P()), 0.25)
    mm = jax.jit(jnp.matmul)
    row["matmul_s"] = timed(iterations, lambda: mm(a, w).block_until_ready())

    big = 16 << 20
    p, q, r = (jax.device_put(np.full(big, v, np.float32), alone) for v in (1.5, 2.0, 0.5))
    fma = jax.jit(lambda p, q, r: p * q + r)
    row["fusion_s"] = timed(iterations, lambda: fma(p, q, r).block_until_ready())

    forward = jax.jit(lambda x, w1, b1, w2, b2:
                      jnp.matmul(jax.nn.relu(jnp.matmul(x, w1) + b1), w2) + b2)
    shapes = [(512, 512), (512, 2048), (2048,), (2048, 512), (512,)]
    layouts = {"data_parallel": ((n, 1), [P("dp"), P(), P(), P(), P()]),
               "megatron": ((1, n), [P(), P(None, "mp"), P("mp"), P("mp", None), P()])}
    for name, (mesh_shape, specs) in layouts.items():
        mesh = jax.sharding.Mesh(np.array(jax.devices()).reshape(mesh_shape), ("dp", "mp"))
        args = [filled(jax, shape, NamedSharding(mesh, spec), 0.01 * (i + 1))
                for i, (shape, spec) in enumerate(zip(shapes, specs))]
        row[f"mlp_{name}_s"] = timed(iterations, lambda: forward(*args).block_until_ready())
    if jax.process_index() == 0:
        print(json.dumps(row), flush=True)


def train(jax, iterations):
    """train_bench.cc's jit step with JAX and Optax: the MLP (512x512 -> 1024 relu -> 256, mean
    squared error, Adam 1e-3), data parallel over every process (the batch split, the parameters
    replicated), from the same parameters and batch (train_bench.cc's filled(): each block
    0.02 sin(seed + i) over its own elements). The first 10 steps' losses, then seconds per step
    over timings of 5 steps."""
    import jax.numpy as jnp
    import optax
    from jax.sharding import NamedSharding, PartitionSpec as P
    iterations = int(iterations)
    mesh = jax.sharding.Mesh(np.array(jax.devices()), ("dp",))
    rep, rows = NamedSharding(mesh, P()), NamedSharding(mesh, P("dp"))

    def filled(shape, sharding, seed):
        def block(index):
            extent = [len(range(*s.indices(n))) for s, n in zip(index, shape)]
            i = np.arange(int(np.prod(extent)), dtype=np.float32)
            return (np.float32(0.02) * np.sin(np.float32(seed) + i)).reshape(extent)
        return jax.make_array_from_callback(shape, sharding, block)

    params = {"w1": filled((512, 1024), rep, 1), "b1": filled((1024,), rep, 2),
              "w2": filled((1024, 256), rep, 3), "b2": filled((256,), rep, 4)}
    x, y = filled((512, 512), rows, 5), filled((512, 256), rows, 6)
    optimizer = optax.adam(1e-3, b1=0.9, b2=0.999, eps=1e-8)

    def loss_fn(p, x, y):
        h = jax.nn.relu(jnp.matmul(x, p["w1"]) + p["b1"])
        d = jnp.matmul(h, p["w2"]) + p["b2"] - y
        return jnp.mean(d * d)

    @jax.jit
    def step(p, s, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(p, x, y)
        updates, s = optimizer.update(grads, s, p)
        return optax.apply_updates(p, updates), s, loss

    state = [params, optimizer.init(params)]

    def five():
        for _ in range(5):
            state[0], state[1], _ = step(state[0], state[1], x, y)
        jax.block_until_ready(state)
    # Products in float32, as spmd's: JAX's default on a recent GPU is TensorFloat32 (10-bit
    # mantissas), whose losses differ from float32's in the fourth digit. The CPU's default is
    # float32 already. On a GPU the step is timed at the default precision too.
    with jax.default_matmul_precision("float32"):
        losses = []
        for _ in range(10):
            state[0], state[1], loss = step(state[0], state[1], x, y)
            losses.append(float(loss))
        row = {"impl": "jax", "jax": jax.__version__, "processes": jax.process_count(),
               "matmul_precision": "float32", "losses": losses,
               "step_s": timed(iterations, five) / 5}
    if jax.default_backend() == "gpu":
        row["step_s_default_precision"] = timed(iterations, five) / 5
    if jax.process_index() == 0:
        print(json.dumps(row), flush=True)


def reshard(jax, nbytes, iterations):
    """reshard_bench.cc's device_put with JAX: a square float32 array of NBYTES split by rows
    over every process's device, put split by columns; barriers around each timing, the first
    call a warm-up and the check (the pattern (r * 7 + c) % 1000 sampled in the result)."""
    from jax.experimental import multihost_utils
    from jax.sharding import NamedSharding, PartitionSpec as P
    n = jax.process_count()
    side = int((int(nbytes) / 4) ** 0.5)
    side -= side % n
    mesh = jax.sharding.Mesh(np.array(jax.devices()), ("x",))
    rows, cols = NamedSharding(mesh, P("x", None)), NamedSharding(mesh, P(None, "x"))

    def block(index):
        r = np.arange(side)[index[0]][:, None]
        c = np.arange(side)[index[1]][None, :]
        return ((r * 7 + c) % 1000).astype(np.float32)
    a = jax.make_array_from_callback((side, side), rows, block)
    times, correct = [], True
    for i in range(int(iterations) + 1):
        multihost_utils.sync_global_devices(f"reshard-{i}")
        t = time.perf_counter()
        b = jax.device_put(a, cols)
        b.block_until_ready()
        if i == 0:
            shard = b.addressable_shards[0]
            got = np.asarray(shard.data)[::97, ::13]
            correct = bool(np.array_equal(got, block(shard.index)[::97, ::13]))
            continue
        times.append(time.perf_counter() - t)
        del b
    if jax.process_index() == 0:
        print(json.dumps({"impl": "jax", "jax": jax.__version__, "processes": n,
                          "bytes": side * side * 4, "reshard_s": float(np.median(times)),
                          "correct": correct}), flush=True)


MODES = {"collectives": collectives, "jit": jit, "train": train, "reshard": reshard}

if __name__ == "__main__":
    main()
