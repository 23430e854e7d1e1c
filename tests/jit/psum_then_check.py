"""jit's psum_then (src/jit/fuse.h: fuse_psum_chains): a data-parallel step's gradient all-reduce
and the update reading it run as one step, the update computed inside the all-reduce. Its values
must be those of the sum and the update apart, bit for bit: each step's parameters are checked
against the gradients (a program whose psum is an output, so nothing fuses) and the update
computed by NumPy in float32, on every mesh this process count allows — a data axis alone, and
data beside a model axis (the psum over data only, the weights split over model: each data group
applies its own weights). Where jit contracts each product and the difference or sum reading it
into one fused multiply-add (src/jit/contract.h, on a CPU with FMA instructions, as XLA does),
NumPy's update is rounded once too (fma32).

Run alone (one process of 4 CPU devices) or under spmdrun (every process runs it; any process's
failure fails the job). Prints "psum_then: N programs fused and exact" on success."""
import os
import sys
from fractions import Fraction

import numpy as np

import spmd
import spmd.numpy as snp
from spmd.sharding import NamedSharding, PartitionSpec as P


def loss(p, x, y):
    h = snp.maximum(snp.matmul(x, p["w1"]), 0.0)
    d = snp.matmul(h, p["w2"]) - y
    return snp.mean(d * d)


def filled(shape, seed):
    return np.random.default_rng(seed).normal(scale=0.1, size=shape).astype(np.float32)


def host(a):
    """The whole of a global array in this process (gathered where other processes hold parts)."""
    if getattr(a, "is_fully_addressable", True):
        return np.asarray(a)
    from spmd.experimental import multihost_utils
    return np.asarray(multihost_utils.process_allgather(a, tiled=True))


def fma32(a, b, c):
    """float32 a * b + c rounded once. The product of two float32s is exact in float64 and the
    sum is rounded there once, then to float32: a single rounding but where the float64 sum lies
    exactly halfway between two float32s (bits below float32's all 1000…), and there the exact
    sum says which way. For normal float32 results, which this test's are."""
    a, b, c = (np.asarray(v, np.float32) for v in np.broadcast_arrays(a, b, c))
    wide = a.astype(np.float64) * b.astype(np.float64) + c.astype(np.float64)
    out = wide.astype(np.float32)
    low = wide.view(np.uint64) & np.uint64((1 << 29) - 1)
    for i in np.flatnonzero(low == np.uint64(1 << 28)):
        exact = Fraction(float(a.flat[i])) * Fraction(float(b.flat[i])) + Fraction(float(c.flat[i]))
        if exact == Fraction(float(wide.flat[i])):
            continue  # a true tie: float64 → float32 rounds it to even, as one rounding does
        toward = np.inf if exact > Fraction(float(wide.flat[i])) else -np.inf
        near = np.float32(wide.flat[i])
        out.flat[i] = near if (near > wide.flat[i]) == (toward > 0) else np.nextafter(
            near, np.float32(toward))
    return out


def trimmed(spec):
    """A PartitionSpec's entries without trailing Nones (P('a',) is P('a', None))."""
    entries = list(spec)
    while entries and entries[-1] is None:
        entries.pop()
    return tuple(entries)


def same_bits(a, b):
    a, b = host(a), host(b)
    return a.shape == b.shape and np.array_equal(a.view(np.uint32), b.view(np.uint32))


def check_mesh(mesh, model):
    """SGD and momentum steps on `mesh`; `model`: split the weights' columns over 'model'."""
    data = NamedSharding(mesh, P("data"))
    w1_spec = P(None, "model") if model else P()
    w2_spec = P("model", None) if model else P()
    shardings = {"w1": NamedSharding(mesh, w1_spec), "w2": NamedSharding(mesh, w2_spec)}
    params = {"w1": filled((128, 256), 1), "w2": filled((256, 128), 2)}
    p = {k: spmd.device_put(v, shardings[k]) for k, v in params.items()}
    momentum = {k: spmd.device_put(filled(v.shape, 7), shardings[k]) for k, v in params.items()}
    rows = 16 * mesh.shape["data"]
    x = spmd.device_put(filled((rows, 128), 3), data)
    y = spmd.device_put(filled((rows, 128), 4), data)

    grads = spmd.jit(spmd.grad(loss))

    @spmd.jit
    def sgd(p, x, y):
        g = spmd.grad(loss)(p, x, y)
        return {k: p[k] - 0.01 * g[k] for k in p}

    @spmd.jit
    def heavy_ball(p, v, x, y):
        g = spmd.grad(loss)(p, x, y)
        v = {k: 0.9 * v[k] + g[k] for k in v}
        return {k: p[k] - 0.01 * v[k] for k in p}, v

    failures = []
    contracted = {}
    for name, fn, args in (("sgd", sgd, (p, x, y)), ("momentum", heavy_ball, (p, momentum, x, y))):
        text = fn.lower(*args).as_text()
        if "psum_then" not in text:
            failures.append(f"{name} on {dict(mesh.shape)}: no psum_then in\n{text}")
        contracted[name] = "multiply_add" in text
    g = {k: host(v) for k, v in grads(p, x, y).items()}
    rate, decay = np.float32(0.01), np.float32(0.9)
    new = sgd(p, x, y)
    for k in params:
        want = fma32(-rate, g[k], params[k]) if contracted["sgd"] else params[k] - rate * g[k]
        if not same_bits(new[k], want):
            failures.append(f"sgd {k} on {dict(mesh.shape)} differs from the sum and update apart")
        if trimmed(new[k].sharding.spec) != trimmed(shardings[k].spec):
            failures.append(f"sgd {k}: sharding {new[k].sharding.spec}, not {shardings[k].spec}")
    new, v = heavy_ball(p, momentum, x, y)
    for k in params:
        if contracted["momentum"]:
            v_want = fma32(decay, host(momentum[k]), g[k])
            p_want = fma32(-rate, v_want, params[k])
        else:
            v_want = decay * host(momentum[k]) + g[k]
            p_want = params[k] - rate * v_want
        if not same_bits(v[k], v_want):
            failures.append(f"momentum {k} on {dict(mesh.shape)}: the velocity differs")
        if not same_bits(new[k], p_want):
            failures.append(f"momentum {k} on {dict(mesh.shape)}: the parameters differ")
    return failures


def main():
    if "SPMD_PROCESS_ID" in os.environ:
        spmd.distributed.initialize()
    else:
        spmd.distributed.initialize(num_processes=1, num_cpu_devices=4)
    n = spmd.device_count()
    auto = spmd.AxisType.Auto
    meshes = [(spmd.make_mesh((n,), ("data",), [auto]), False)]
    if n % 2 == 0 and n > 2:
        meshes.append((spmd.make_mesh((n // 2, 2), ("data", "model"), [auto] * 2), True))
    failures = []
    for mesh, model in meshes:
        failures += check_mesh(mesh, model)
    where = f"process {spmd.process_index()} of {spmd.process_count()}, {n} devices"
    for f in failures:
        print(f"FAIL ({where}): {f}", flush=True)
    if failures:
        return 1
    print(f"psum_then: {2 * len(meshes)} programs fused and exact ({where})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
