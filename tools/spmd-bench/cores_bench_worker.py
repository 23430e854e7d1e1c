#!/usr/bin/env python3
"""spmd-bench cores's Python side (issue 51): compute-bound work on every core, spmd beside JAX
in one process, interleaved; prints one JSON line.

  ops ITERATIONS       spmd on 1 process x 1 CPU device beside JAX's CPU backend (one device,
                       every core): a @ b and a @ b.T, the attention's two permuted einsums, a
                       transpose, sum(exp(a), 1), sum(a, 0), max(a, 1), argmax(a, 0), an
                       element-wise chain, the half types' rows, the MLP step and the
                       transformer block below; and the limits of this machine measured
                       in the same run: the faster of NumPy's and JAX's sgemm of 2048^3 (every
                       core; NumPy's OpenBLAS obeys OPENBLAS_CORETYPE, JAX's does not) and a read
                       of the reductions' bytes on every core. Medians of milliseconds per
                       call, each spmd timing beside a JAX one.
  steps DEVICES ITERATIONS
                       the MLP step and the transformer block, data-parallel: the batch split
                       over every device of every process (run under an spmd job for several
                       processes); milliseconds per step, process 0 prints.

The MLP: 512-2048-2048-512, batch 256, float32, jit(grad + SGD) (issue 51's table). The
transformer block: batch 8 x sequence 512 x width 512, 8 heads of 64, pre-layer-norm attention
and a GELU MLP of width 2048, forward and backward (the gradient of a mean square of the
output), float32.
"""
import json
import os
import statistics
import sys
import threading
import time

import numpy as np


def median_ms(f, iterations, calls=3):
    f()
    times = []
    for _ in range(iterations):
        start = time.perf_counter()
        for _ in range(calls):
            f()
        times.append((time.perf_counter() - start) / calls * 1e3)
    return statistics.median(times)


def side_by_side(ours, theirs, iterations, calls=3):
    """Medians of both, each iteration timing both, in turn first."""
    ours(), theirs()
    a, b = [], []
    for i in range(iterations):
        pair = [(ours, a), (theirs, b)]
        for f, out in (pair if i % 2 == 0 else pair[::-1]):
            start = time.perf_counter()
            for _ in range(calls):
                f()
            out.append((time.perf_counter() - start) / calls * 1e3)
    return statistics.median(a), statistics.median(b)


def filled(shape, seed):
    return np.random.default_rng(seed).normal(scale=0.05, size=shape).astype(np.float32)


# --- the two steps, written once for any numpy-like module and library ---

def mlp(lib, jnp):
    def loss(p, x, y):
        h = jax_relu(jnp, jnp.matmul(x, p["w1"]))
        h = jax_relu(jnp, jnp.matmul(h, p["w2"]))
        d = jnp.matmul(h, p["w3"]) - y
        return jnp.mean(d * d)

    @lib.jit
    def step(p, x, y):
        g = lib.grad(loss)(p, x, y)
        return {k: p[k] - 0.01 * g[k] for k in p}

    params = {"w1": filled((512, 2048), 1), "w2": filled((2048, 2048), 2),
              "w3": filled((2048, 512), 3)}
    data = (filled((256, 512), 4), filled((256, 512), 5))
    return step, params, data


def jax_relu(jnp, x):
    return jnp.maximum(x, 0.0)


def transformer(lib, jnp, nn):
    batch, seq, width, heads, hidden = 8, 512, 512, 8, 2048

    def norm(x, g):
        mu = jnp.mean(x, axis=-1, keepdims=True)
        var = jnp.mean((x - mu) ** 2, axis=-1, keepdims=True)
        return (x - mu) * lib.lax.rsqrt(var + 1e-5) * g

    def block(p, x):
        h = norm(x, p["g1"])
        q = jnp.matmul(h, p["wq"]).reshape(batch, seq, heads, width // heads)
        k = jnp.matmul(h, p["wk"]).reshape(batch, seq, heads, width // heads)
        v = jnp.matmul(h, p["wv"]).reshape(batch, seq, heads, width // heads)
        s = jnp.einsum("bqhd,bkhd->bhqk", q, k) * (1.0 / 8.0)
        a = jnp.einsum("bhqk,bkhd->bqhd", nn.softmax(s, axis=-1), v).reshape(batch, seq, width)
        x = x + jnp.matmul(a, p["wo"])
        h = norm(x, p["g2"])
        return x + jnp.matmul(nn.gelu(jnp.matmul(h, p["w1"])), p["w2"])

    def loss(p, x):
        y = block(p, x)
        return jnp.mean(y * y)

    @lib.jit
    def step(p, x):
        return lib.grad(loss)(p, x)

    shapes = {"g1": (width,), "g2": (width,), "wq": (width, width), "wk": (width, width),
              "wv": (width, width), "wo": (width, width), "w1": (width, hidden),
              "w2": (hidden, width)}
    params = {k: (np.ones(s, np.float32) if k[0] == "g" else filled(s, i))
              for i, (k, s) in enumerate(shapes.items())}
    return step, params, (filled((batch, seq, width), 9),)


# --- the limits ---

def sgemm_gflops(iterations, jax=None):
    """2048^3 float32 on every core: NumPy's (OpenBLAS), or JAX's where given."""
    a, b = filled((2048, 2048), 11), filled((2048, 2048), 12)
    if jax is None:
        ms = median_ms(lambda: a @ b, iterations, calls=2)
    else:
        f, x, y = jax.jit(lambda a, b: a @ b), jax.device_put(a), jax.device_put(b)
        ms = median_ms(lambda: f(x, y).block_until_ready(), iterations, calls=2)
    return 2 * 2048 ** 3 / (ms / 1e3) / 1e9


def read_gbps(nbytes, iterations):
    """Every core reading its share of `nbytes` (NumPy releases the GIL in a reduction): the
    faster of an OR of 64-bit words and a float32 maximum, each a vectorised pass at memory
    speed."""
    cores = len(os.sched_getaffinity(0))
    best = 0.0
    for dtype, reduce in ((np.uint64, np.bitwise_or.reduce), (np.float32, np.maximum.reduce)):
        parts = np.array_split(np.ones(nbytes // np.dtype(dtype).itemsize, dtype), cores)

        def read():
            threads = [threading.Thread(target=reduce, args=(p,)) for p in parts]
            for t in threads:
                t.start()
            for t in threads:
                t.join()

        ms = median_ms(read, max(iterations, 9))
        best = max(best, nbytes / (ms / 1e3) / 1e9)
    return best


def ops(iterations):
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import jax
    import jax.numpy as jjnp
    import spmd
    import spmd.numpy as snp
    spmd.distributed.initialize(num_processes=1, num_cpu_devices=1)
    ours_dev, theirs_dev = spmd.devices()[0], jax.devices()[0]
    rows = {}

    def compare(name, make, *host, flops=None, nbytes=None):
        ours_f, theirs_f = make(spmd, snp), make(jax, jjnp)
        ours_a = [spmd.device_put(h, ours_dev) for h in host]
        theirs_a = [jax.device_put(h, theirs_dev) for h in host]
        ours_ms, theirs_ms = side_by_side(
            lambda: spmd.block_until_ready(ours_f(*ours_a)),
            lambda: jax.block_until_ready(theirs_f(*theirs_a)), iterations)
        rows[name] = {"spmd_ms": ours_ms, "jax_ms": theirs_ms, "speed": theirs_ms / ours_ms}
        if flops:
            rows[name]["spmd_gflops"] = flops / ours_ms / 1e6
        if nbytes:
            rows[name]["spmd_gbps"] = nbytes / ours_ms / 1e6

    a, b = filled((256, 2048), 1), filled((2048, 2048), 2)
    c, d = filled((512, 1024), 3), filled((1024, 1024), 4)
    x = filled((4096, 2048), 5)
    compare("a@b 256x2048x2048", lambda m, n: m.jit(lambda a, b: a @ b), a, b,
            flops=2 * 256 * 2048 * 2048)
    compare("a@b.T 256x2048x2048", lambda m, n: m.jit(lambda a, b: a @ b.T), a, b,
            flops=2 * 256 * 2048 * 2048)
    compare("a@b.T 512x1024x1024", lambda m, n: m.jit(lambda a, b: a @ b.T), c, d,
            flops=2 * 512 * 1024 * 1024)
    # The attention's permuted einsums (8 x 512 x 8 heads of 64), read where they lie.
    q, k = filled((8, 512, 8, 64), 6), filled((8, 512, 8, 64), 7)
    p = filled((8, 8, 512, 512), 8)
    compare("einsum bqhd,bkhd->bhqk 8x512x8x64",
            lambda m, n: m.jit(lambda q, k: n.einsum("bqhd,bkhd->bhqk", q, k)), q, k,
            flops=2 * 8 * 8 * 512 * 512 * 64)
    compare("einsum bhqk,bkhd->bqhd 8x512x8x64",
            lambda m, n: m.jit(lambda p, v: n.einsum("bhqk,bkhd->bqhd", p, v)), p, k,
            flops=2 * 8 * 8 * 512 * 512 * 64)
    compare("transpose 4096x2048", lambda m, n: m.jit(lambda a: n.transpose(a)), x,
            nbytes=2 * x.nbytes)
    compare("sum(exp(a),1) 4096x2048", lambda m, n: m.jit(lambda a: n.sum(n.exp(a), axis=1)), x,
            nbytes=x.nbytes)
    # Other functions YNNPACK computes inside the reduction's fusion (kernels/ynn_simd.h).
    compare("sum(tanh(a),1) 4096x2048", lambda m, n: m.jit(lambda a: n.sum(n.tanh(a), axis=1)), x,
            nbytes=x.nbytes)
    # A chain of several steps feeding the sum (nn.gelu's nine), block by block in spmd.
    compare("sum(gelu(a),1) 4096x2048",
            lambda m, n: m.jit(lambda a: n.sum(m.nn.gelu(a), axis=1)), x, nbytes=x.nbytes)
    positive = (np.abs(x) + 0.01).astype(np.float32)
    compare("sum(log(a),1) 4096x2048", lambda m, n: m.jit(lambda a: n.sum(n.log(a), axis=1)),
            positive, nbytes=x.nbytes)
    compare("sum(a,0) 4096x2048", lambda m, n: m.jit(lambda a: n.sum(a, axis=0)), x,
            nbytes=x.nbytes)
    # Reductions other than sums: the row maxima (softmax's first pass) and argmax down columns.
    compare("max(a,1) 4096x2048", lambda m, n: m.jit(lambda a: n.max(a, axis=1)), x,
            nbytes=x.nbytes)
    compare("argmax(a,0) 4096x2048", lambda m, n: m.jit(lambda a: n.argmax(a, axis=0)), x,
            nbytes=x.nbytes)
    # Products (factors near 1, so that they neither overflow nor pass through subnormals), the
    # integer extremes and bool's first true element.
    near_one = (1 + x * 0.01).astype(np.float32)
    compare("prod(a,1) 4096x2048", lambda m, n: m.jit(lambda a: n.prod(a, axis=1)), near_one,
            nbytes=x.nbytes)
    compare("prod(a,0) 4096x2048", lambda m, n: m.jit(lambda a: n.prod(a, axis=0)), near_one,
            nbytes=x.nbytes)
    xi8 = (x * 2000).astype(np.int8)
    compare("int8 max(a,1) 4096x2048", lambda m, n: m.jit(lambda a: n.max(a, axis=1)), xi8,
            nbytes=xi8.nbytes)
    compare("bool argmax(a,1) 4096x2048", lambda m, n: m.jit(lambda a: n.argmax(a, axis=1)),
            x > 0.15, nbytes=x.size)
    compare("tanh(a*1.5+0.25)*a 4096x2048",
            lambda m, n: m.jit(lambda a: n.tanh(a * 1.5 + 0.25) * a), x)
    # Arithmetic, extremes and a square root only: one register run in spmd
    # (kernels/register_run.h), one loop in XLA.
    compare("sqrt(clip(a*3,-.1,.1)^2+1e-8)/(1+a) 4096x2048",
            lambda m, n: m.jit(lambda a: n.sqrt(n.clip(a * 3, -0.1, 0.1) ** 2 + 1e-8) / (1 + a)),
            x)
    # Mixed precision: the half types compute in float32 a block at a time (DESIGN.md, "Kernels").
    xb, xh = x.astype(jjnp.bfloat16), x.astype(jjnp.float16)
    compare("bfloat16 a*b+a 4096x2048", lambda m, n: m.jit(lambda a, b: a * b + a), xb, xb * 0.5)
    compare("float16 maximum(a,0) 4096x2048", lambda m, n: m.jit(lambda a: n.maximum(a, 0)), xh)
    compare("bfloat16 sum(a,1) 4096x2048", lambda m, n: m.jit(lambda a: n.sum(a, axis=1)), xb,
            nbytes=xb.nbytes)
    compare("bfloat16 a@b 256x2048x2048", lambda m, n: m.jit(lambda a, b: a @ b),
            a.astype(jjnp.bfloat16), b.astype(jjnp.bfloat16), flops=2 * 256 * 2048 * 2048)
    # Forward, the weights' gradients and the hidden layers' (not the input's): 8 products.
    mlp_flops = 2 * 256 * (2 * 512 * 2048 + 3 * 2048 * 2048 + 3 * 2048 * 512)
    ours_step, params, data = mlp(spmd, snp)
    theirs_step, _, _ = mlp(jax, jjnp)
    compare("mlp step", lambda m, n: ours_step if m is spmd else theirs_step, params, *data,
            flops=mlp_flops)
    ours_t, tparams, tdata = transformer(spmd, snp, spmd.nn)
    theirs_t, _, _ = transformer(jax, jjnp, jax.nn)
    compare("transformer block fwd+bwd", lambda m, n: ours_t if m is spmd else theirs_t, tparams,
            *tdata)
    numpy_gflops, jax_gflops = sgemm_gflops(iterations), sgemm_gflops(iterations, jax)
    rows["limits"] = {"sgemm_peak_gflops": max(numpy_gflops, jax_gflops),
                      "numpy_sgemm_gflops": numpy_gflops, "jax_sgemm_gflops": jax_gflops,
                      "read_gbps": read_gbps(x.nbytes, iterations)}
    rows["jax"] = jax.__version__
    rows["environment"] = {v: os.environ.get(v, "(unset)")
                           for v in ("OPENBLAS_CORETYPE", "SPMD_CPU_SGEMM")}
    return rows


def pytree_put(spmd, tree, sharding):
    return {k: spmd.device_put(v, sharding) for k, v in tree.items()}


def steps(devices, iterations):
    import spmd
    import spmd.numpy as snp
    from spmd.sharding import NamedSharding, PartitionSpec as P
    spmd.distributed.initialize(num_cpu_devices=devices)
    mesh = spmd.make_mesh((spmd.device_count(),), ("data",))
    replicated, split = NamedSharding(mesh, P()), NamedSharding(mesh, P("data"))
    row = {"processes": spmd.process_count(), "devices": spmd.device_count()}
    mlp_step, params, data = mlp(spmd, snp)
    p = pytree_put(spmd, params, replicated)
    xs = [spmd.device_put(v, split) for v in data]
    row["mlp_step_ms"] = median_ms(lambda: spmd.block_until_ready(mlp_step(p, *xs)), iterations)
    block_step, tparams, tdata = transformer(spmd, snp, spmd.nn)
    p = pytree_put(spmd, tparams, replicated)
    xs = [spmd.device_put(v, split) for v in tdata]
    row["transformer_step_ms"] = median_ms(
        lambda: spmd.block_until_ready(block_step(p, *xs)), iterations)
    return row


if __name__ == "__main__":
    if sys.argv[1] == "ops":
        row = ops(int(sys.argv[2]))
    else:
        row = steps(int(sys.argv[2]), int(sys.argv[3]))
    if sys.argv[1] == "ops" or row["processes"] == 1 or \
            int(os.environ.get("SPMD_PROCESS_ID", "0")) == 0:
        print(json.dumps(row), flush=True)
