#!/usr/bin/env python3
"""spmd-bench python's Python side, one mode per run; prints one JSON line.

  dispatch ITERATIONS  a cached call of jit(lambda x: x + 1) on float32[8], spmd.jit beside
                       jax.jit in this one process, interleaved; median microseconds per call.
                       JAX's calls are asynchronous: its figure includes block_until_ready (the
                       whole call, as spmd's synchronous call is), and its dispatch alone (a
                       loop of calls, then one wait) is reported beside. Also
                       jit(lambda x, a: x * a) called with a Python float for `a`.
  step ITERATIONS      train_bench.cc's MLP step (512x512 -> 1024 relu -> 256, mean squared
                       error, Adam 1e-3) from Python with spmd on one device: median seconds
                       per step over timings of 5 steps, as the C++ side measures it.
  transcendentals ITERATIONS
                       jit of exp, log, log1p, tanh and logistic on 2^22 float32s (log and
                       log1p of their absolute values), spmd on one device beside JAX's CPU
                       backend (which may use every core for one array): median milliseconds
                       per call, and whether the values are equal bit for bit.
  derivatives ITERATIONS
                       forward mode and rematerialisation beside JAX, on one device: jit of
                       jvp through a tanh MLP (256 x 512 -> 1024 -> 512; spmd's double vjp
                       against JAX's forward mode), jit of jacfwd of a 64 -> 64 tanh layer,
                       and jit of grad through eight checkpointed residual blocks (both
                       recompute them); median milliseconds per call, and the largest
                       relative difference from JAX's values.
  indexing ITERATIONS  indexed updates and order statistics beside JAX, on one device: jit of
                       an embedding gradient (32768 x 128 table, 8192 rows added at repeated
                       indices), of .at[].max at those rows, of segment_sum (65536 x 32 into
                       1024 segments), of x[i, j] at 2^20 index pairs and of quantile
                       (1024 x 1024, three q along rows); median milliseconds per call, and
                       whether the values are equal bit for bit.
  special ITERATIONS   special functions and callbacks beside JAX, on one device: jit of
                       lax.lgamma, digamma, erf_inv, erf and erfc, scipy.stats.norm.logcdf and
                       scipy.special.xlogy on 2^22 float32s, and a cached call of a jitted
                       function holding a jax.debug.callback (float32[8]); median milliseconds
                       per call, and whether the values are equal bit for bit.
"""
import json
import os
import statistics
import sys
import time

import numpy as np

BATCH, IN, HIDDEN, OUT = 512, 512, 1024, 256


def per_call_us(call, calls=200):
    start = time.perf_counter()
    for _ in range(calls):
        call()
    return (time.perf_counter() - start) / calls * 1e6


def dispatch(iterations):
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import jax
    import spmd
    spmd.distributed.initialize(num_processes=1, num_cpu_devices=1)
    host = np.arange(8, dtype=np.float32)
    ours_f = spmd.jit(lambda x: x + 1)
    theirs_f = jax.jit(lambda x: x + 1)
    ours_x = spmd.device_put(host, spmd.devices()[0])
    theirs_x = jax.device_put(host, jax.devices()[0])
    ours_f(ours_x)
    theirs_f(theirs_x).block_until_ready()
    # With a Python float argument too (a learning rate): JAX's weak-typed scalar.
    ours_s = spmd.jit(lambda x, a: x * a)
    theirs_s = jax.jit(lambda x, a: x * a)
    ours_s(ours_x, 0.5)
    theirs_s(theirs_x, 0.5).block_until_ready()
    ours, theirs, theirs_async, ours_scalar, theirs_scalar = [], [], [], [], []
    for _ in range(iterations):
        ours.append(per_call_us(lambda: ours_f(ours_x)))
        theirs.append(per_call_us(lambda: theirs_f(theirs_x).block_until_ready()))
        start = time.perf_counter()
        for _ in range(200):
            out = theirs_f(theirs_x)
        out.block_until_ready()
        theirs_async.append((time.perf_counter() - start) / 200 * 1e6)
        ours_scalar.append(per_call_us(lambda: ours_s(ours_x, 0.5)))
        theirs_scalar.append(per_call_us(lambda: theirs_s(theirs_x, 0.5).block_until_ready()))
    return {"spmd_us": statistics.median(ours), "jax_us": statistics.median(theirs),
            "jax_async_dispatch_us": statistics.median(theirs_async),
            "spmd_scalar_us": statistics.median(ours_scalar),
            "jax_scalar_us": statistics.median(theirs_scalar), "jax": jax.__version__}


def filled(shape, seed):
    n = int(np.prod(shape))
    return (0.02 * np.sin(seed + np.arange(n, dtype=np.float32))).astype(np.float32).reshape(shape)


def mlp_step(iterations):
    import spmd
    import spmd.numpy as jnp
    from spmd import optax
    spmd.distributed.initialize(num_processes=1, num_cpu_devices=1)
    device = spmd.devices()[0]

    def loss_fn(p, x, y):
        h = jnp.maximum(jnp.matmul(x, p["w1"]) + p["b1"], 0.0)
        d = jnp.matmul(h, p["w2"]) + p["b2"] - y
        return jnp.mean(d * d)

    optimizer = optax.adam(1e-3)

    @spmd.jit
    def train_step(params, opt_state, x, y):
        loss, grads = spmd.value_and_grad(loss_fn)(params, x, y)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    params = {k: spmd.device_put(filled(s, seed), device) for k, s, seed in
              [("w1", (IN, HIDDEN), 1), ("b1", (HIDDEN,), 2), ("w2", (HIDDEN, OUT), 3),
               ("b2", (OUT,), 4)]}
    x = spmd.device_put(filled((BATCH, IN), 5), device)
    y = spmd.device_put(filled((BATCH, OUT), 6), device)
    state = optimizer.init(params)
    params, state, loss = train_step(params, state, x, y)
    times = []
    for _ in range(iterations):
        start = time.perf_counter()
        for _ in range(5):
            params, state, loss = train_step(params, state, x, y)
        times.append((time.perf_counter() - start) / 5)
    return {"python_step_s": statistics.median(times), "loss": float(loss)}


def transcendentals(iterations):
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import jax
    import jax.numpy as jnp
    import spmd
    import spmd.numpy as snp
    spmd.distributed.initialize(num_processes=1, num_cpu_devices=1)
    host = np.random.default_rng(0).normal(size=1 << 22).astype(np.float32)
    ours_x = spmd.device_put(host, spmd.devices()[0])
    theirs_x = jax.device_put(host, jax.devices()[0])
    functions = {
        "exp": (snp.exp, jnp.exp),
        "log": (lambda x: snp.log(snp.abs(x)), lambda x: jnp.log(jnp.abs(x))),
        "log1p": (lambda x: snp.log1p(snp.abs(x)), lambda x: jnp.log1p(jnp.abs(x))),
        "tanh": (snp.tanh, jnp.tanh),
        "logistic": (spmd.nn.sigmoid, jax.nn.sigmoid),
    }
    row = {}
    for name, (ours, theirs) in functions.items():
        ours_f, theirs_f = spmd.jit(ours), jax.jit(theirs)
        equal = np.array_equal(np.asarray(ours_f(ours_x)), np.asarray(theirs_f(theirs_x)))
        ours_ms, theirs_ms = [], []
        for _ in range(iterations):
            ours_ms.append(per_call_us(lambda: ours_f(ours_x), calls=10) / 1e3)
            theirs_ms.append(per_call_us(lambda: theirs_f(theirs_x).block_until_ready(),
                                         calls=10) / 1e3)
        row[name] = {"spmd_ms": statistics.median(ours_ms),
                     "jax_ms": statistics.median(theirs_ms), "bit_for_bit": bool(equal)}
    return row


def _derivative_programs(lib, np_):
    def mlp(params, x):
        w1, w2 = params
        return np_.tanh(np_.tanh(x @ w1) @ w2)

    def layer(v, w):
        return np_.tanh(w @ v)

    def block(h, w):
        return np_.tanh(h @ w) + h

    def loss(w, h):
        step = lib.checkpoint(block)
        for _ in range(8):
            h = step(h, w)
        return np_.sum(h * h)
    return {
        "jvp_mlp": lib.jit(lambda p, t, x: lib.jvp(lambda q: mlp(q, x), (p,), (t,))[1]),
        "jacfwd_layer": lib.jit(lib.jacfwd(layer)),
        "grad_remat_blocks": lib.jit(lib.grad(loss)),
    }


def derivatives(iterations):
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import jax
    import jax.numpy as jnp
    import spmd
    import spmd.numpy as snp
    spmd.distributed.initialize(num_processes=1, num_cpu_devices=1)
    rng = np.random.default_rng(0)
    w1 = (rng.standard_normal((512, 1024)) / 23).astype(np.float32)
    w2 = (rng.standard_normal((1024, 512)) / 32).astype(np.float32)
    x = rng.standard_normal((256, 512)).astype(np.float32)
    v, w = rng.standard_normal(64).astype(np.float32), (rng.standard_normal((64, 64)) / 8).astype(
        np.float32)
    h, wb = rng.standard_normal((256, 256)).astype(np.float32), (
        rng.standard_normal((256, 256)) / 16).astype(np.float32)
    args = {"jvp_mlp": ((w1, w2), (w1 * 0.1, w2 * 0.1), x), "jacfwd_layer": (v, w),
            "grad_remat_blocks": (wb, h)}
    ours, theirs = _derivative_programs(spmd, snp), _derivative_programs(jax, jnp)
    row = {}
    for name in ours:
        a = [spmd.device_put(t, spmd.devices()[0]) for t in args[name]]
        b = [jax.device_put(t, jax.devices()[0]) for t in args[name]]
        got, want = np.asarray(ours[name](*a)), np.asarray(theirs[name](*b))
        ours_ms, theirs_ms = [], []
        for _ in range(iterations):
            ours_ms.append(per_call_us(lambda: ours[name](*a), calls=5) / 1e3)
            theirs_ms.append(per_call_us(lambda: theirs[name](*b).block_until_ready(),
                                         calls=5) / 1e3)
        scale = float(np.abs(want).max()) or 1.0
        row[name] = {"spmd_ms": statistics.median(ours_ms),
                     "jax_ms": statistics.median(theirs_ms),
                     "largest_difference": float(np.abs(got - want).max()) / scale}
    return row


def _indexing_programs(lib, np_, ops):
    return {
        "embedding_grad": lib.jit(lambda t, i, g: t.at[i].add(g)),
        "at_max_rows": lib.jit(lambda t, i, g: t.at[i].max(g)),
        "segment_sum": lib.jit(lambda d, s: ops.segment_sum(d, s, 1024)),
        "gather_pairs": lib.jit(lambda x, i, j: x[i, j]),
        "quantile_rows": lib.jit(lambda a: np_.quantile(a, np.float32([0.1, 0.5, 0.9]),
                                                        axis=1)),
    }


def indexing(iterations):
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import jax
    import jax.numpy as jnp
    import spmd
    import spmd.numpy as snp
    spmd.distributed.initialize(num_processes=1, num_cpu_devices=1)
    rng = np.random.default_rng(0)
    table = rng.standard_normal((32768, 128)).astype(np.float32)
    rows = rng.integers(0, 32768, 8192).astype(np.int32)
    grads = rng.standard_normal((8192, 128)).astype(np.float32)
    data = rng.standard_normal((65536, 32)).astype(np.float32)
    ids = np.sort(rng.integers(0, 1024, 65536)).astype(np.int32)
    x = rng.standard_normal((2048, 2048)).astype(np.float32)
    i, j = (rng.integers(0, 2048, 1 << 20).astype(np.int32) for _ in range(2))
    a = rng.standard_normal((1024, 1024)).astype(np.float32)
    args = {"embedding_grad": (table, rows, grads), "at_max_rows": (table, rows, grads),
            "segment_sum": (data, ids), "gather_pairs": (x, i, j), "quantile_rows": (a,)}
    ours = _indexing_programs(spmd, snp, spmd.ops)
    theirs = _indexing_programs(jax, jnp, jax.ops)
    row = {}
    for name in ours:
        mine = [spmd.device_put(t, spmd.devices()[0]) for t in args[name]]
        jaxs = [jax.device_put(t, jax.devices()[0]) for t in args[name]]
        equal = np.array_equal(np.asarray(ours[name](*mine)), np.asarray(theirs[name](*jaxs)))
        ours_ms, theirs_ms = [], []
        for _ in range(iterations):
            ours_ms.append(per_call_us(lambda: ours[name](*mine), calls=5) / 1e3)
            theirs_ms.append(per_call_us(lambda: theirs[name](*jaxs).block_until_ready(),
                                         calls=5) / 1e3)
        row[name] = {"spmd_ms": statistics.median(ours_ms),
                     "jax_ms": statistics.median(theirs_ms), "bit_for_bit": bool(equal)}
    return row


def _special_programs(lib):
    special, stats = lib.scipy.special, lib.scipy.stats

    def quiet(x):
        lib.debug.callback(lambda v: None, x)
        return x + 1
    return {
        "lgamma": lib.jit(lib.lax.lgamma),
        "digamma": lib.jit(lib.lax.digamma),
        "erf_inv": lib.jit(lambda x: lib.lax.erf_inv(x * 0.99)),
        "erf": lib.jit(lib.lax.erf),
        "erfc": lib.jit(lib.lax.erfc),
        "norm_logcdf": lib.jit(stats.norm.logcdf),
        "xlogy": lib.jit(lambda x: special.xlogy(x, x + 1)),
        "debug_callback": lib.jit(quiet),
    }


def special(iterations):
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import jax
    import jax.scipy.special  # noqa: F401
    import jax.scipy.stats  # noqa: F401
    import spmd
    spmd.distributed.initialize(num_processes=1, num_cpu_devices=1)
    rng = np.random.default_rng(0)
    big = rng.uniform(-4, 12, 1 << 22).astype(np.float32)
    unit = rng.uniform(-1, 1, 1 << 22).astype(np.float32)
    small = np.arange(8, dtype=np.float32)
    args = {"lgamma": big, "digamma": big, "erf_inv": unit, "erf": big, "erfc": big,
            "norm_logcdf": big, "xlogy": np.abs(big), "debug_callback": small}
    ours, theirs = _special_programs(spmd), _special_programs(jax)
    row = {}
    for name in ours:
        mine = spmd.device_put(args[name], spmd.devices()[0])
        jaxs = jax.device_put(args[name], jax.devices()[0])
        got, want = np.asarray(ours[name](mine)), np.asarray(theirs[name](jaxs))
        equal = np.array_equal(got, want, equal_nan=True)
        calls = 200 if name == "debug_callback" else 5
        ours_ms, theirs_ms = [], []
        for _ in range(iterations):
            ours_ms.append(per_call_us(lambda: ours[name](mine), calls=calls) / 1e3)
            theirs_ms.append(per_call_us(lambda: theirs[name](jaxs).block_until_ready(),
                                         calls=calls) / 1e3)
        row[name] = {"spmd_ms": statistics.median(ours_ms),
                     "jax_ms": statistics.median(theirs_ms), "bit_for_bit": bool(equal)}
    return row


if __name__ == "__main__":
    mode, iterations = sys.argv[1], int(sys.argv[2])
    modes = {"dispatch": dispatch, "step": mlp_step, "transcendentals": transcendentals,
             "derivatives": derivatives, "indexing": indexing, "special": special}
    row = modes[mode](iterations)
    print(json.dumps(row), flush=True)
