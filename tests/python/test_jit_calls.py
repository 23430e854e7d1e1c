"""spmd.jit's call paths against JAX: the C++ fast path (positional, committed Arrays laid out as
an earlier call's) and the Python one (_call_slow) for everything else, with the same results.
Which path ran is read from a counting _call_slow on the instance, so that a fast path that
stopped working, or one taken where it must not be, fails a test."""
import gc

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import spmd
import spmd.numpy as snp

RNG = np.random.default_rng(11)
X = RNG.standard_normal((8, 4)).astype(np.float32)
Y = RNG.standard_normal((8, 4)).astype(np.float32)


def counted(f):
    """f, with a list that grows by one per call that went through Python."""
    slow = []
    python_path = f._call_slow

    def call_slow(*args, **kwargs):
        slow.append(1)
        return python_path(*args, **kwargs)

    f._call_slow = call_slow
    return f, slow


def split():
    return spmd.NamedSharding(spmd.sharding.Mesh(spmd.devices()[:4], ("x",)), spmd.P("x"))


def test_a_repeated_call_of_committed_arrays_skips_python_and_equals_jax():
    f, slow = counted(spmd.jit(lambda x, y: x * y + snp.sum(x)))
    x, y = spmd.device_put(X, split()), spmd.device_put(Y, split())
    want = np.asarray(jax.jit(lambda x, y: x * y + jjnp.sum(x))(X, Y))
    first = f(x, y)
    assert len(slow) == 1
    for _ in range(3):
        np.testing.assert_allclose(np.asarray(f(x, y)), want, rtol=1e-6)
    assert len(slow) == 1
    # An equal sharding in another object, and the previous call's output, go fast too.
    again = f(spmd.device_put(X, split()), first)
    np.testing.assert_allclose(
        np.asarray(again), np.asarray(jax.jit(lambda x, y: x * y + jjnp.sum(x))(X, want)),
        rtol=1e-5)
    assert len(slow) == 1
    assert again.sharding == first.sharding and again.committed


def test_calls_the_fast_path_cannot_take_go_through_python():
    f, slow = counted(spmd.jit(lambda x, y=None: x + 1 if y is None else x + y))
    x = spmd.device_put(X, split())
    f(x)
    f(x)
    assert len(slow) == 1
    f(x, y=x)  # a keyword argument
    assert len(slow) == 2
    loose = spmd.device_put(X)  # uncommitted: JAX's placement happens in Python
    assert not loose.committed
    out = f(loose)
    assert len(slow) == 3 and not out.committed
    f(spmd.device_put(X[:4], split()))  # another shape: traced, then fast
    f(spmd.device_put(X[:4], split()))
    assert len(slow) == 4
    f(spmd.device_put(X, spmd.NamedSharding(split().mesh, spmd.P())))  # another layout
    assert len(slow) == 5
    out = f(X)  # a NumPy array: an uncommitted argument, as in JAX, placed in Python
    assert len(slow) == 6 and not out.committed
    np.testing.assert_array_equal(np.asarray(out), X + 1)
    with pytest.raises(TypeError):
        f("X")  # not an array: the Python path's error (JAX's is a TypeError too)
    assert len(slow) == 7


def test_pytree_results_come_back_whole_from_the_fast_path():
    def ours(x):
        return {"a": x + 1, "b": (x * 2, snp.sum(x))}

    f, slow = counted(spmd.jit(ours))
    x = spmd.device_put(X, split())
    for _ in range(3):
        out = f(x)
        assert sorted(out) == ["a", "b"] and isinstance(out["b"], tuple)
        np.testing.assert_allclose(np.asarray(out["a"]), X + 1, rtol=1e-6)
        np.testing.assert_allclose(np.asarray(out["b"][0]), X * 2, rtol=1e-6)
        np.testing.assert_allclose(float(out["b"][1]), float(np.sum(X)), rtol=1e-5)
    assert len(slow) == 1


def test_a_static_argument_keeps_every_call_in_python():
    f, slow = counted(spmd.jit(lambda x, n: x * n, static_argnums=1))
    x = spmd.device_put(X, split())
    np.testing.assert_allclose(np.asarray(f(x, 3)), X * 3, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(f(x, 3)), X * 3, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(f(x, 4)), X * 4, rtol=1e-6)
    assert len(slow) == 3


def test_a_step_over_pytrees_leaves_its_arrays_to_reference_counting():
    """Flattening and unflattening pytrees builds no reference cycles, so a step's arrays are
    freed when dropped, not when the cyclic collector next runs (until then a training step
    allocated fresh memory for every array, and ran 15% slower)."""
    f = spmd.jit(lambda p, x: {"w": p["w"] * x, "b": (p["b"] + 1,)})
    x = spmd.device_put(X, split())
    p = {"w": spmd.device_put(Y, split()), "b": spmd.device_put(X, split())}
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        for _ in range(3):
            out = f(p, x)
            p = {"w": out["w"], "b": out["b"][0]}
        spmd.tree_util.tree_flatten_with_path(p)
        spmd.tree_map(lambda a: a + 1, p)
        gc.collect()
        cycled = [o for o in gc.garbage if isinstance(o, spmd.Array)]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        if enabled:
            gc.enable()
    assert cycled == []
    np.testing.assert_allclose(np.asarray(p["w"]), Y * X ** 3, rtol=1e-5)


THREADS = r"""
import threading, time
import numpy as np
import spmd
spmd.distributed.initialize(num_processes=1, num_cpu_devices=1)

def fn(x):
    if x.shape[0] == 3:
        time.sleep(0.5)  # tracing the new signature, the GIL let go for a while
    return x * 2

f = spmd.jit(fn)
cached = spmd.device_put(np.ones(2, np.float32), spmd.devices()[0])
f(cached)
f(cached)  # now on the fast path
done = []
tracer = threading.Thread(target=lambda: done.append(f(spmd.device_put(
    np.ones(3, np.float32), spmd.devices()[0]))))
tracer.start()
time.sleep(0.1)
for _ in range(200):  # while the other thread traces, holding jit's cache
    assert float(f(cached)[0]) == 2.0
tracer.join()
assert float(done[0][2]) == 2.0
print("ok")
"""


def test_a_cached_call_while_another_thread_traces_does_not_deadlock():
    """A thread tracing a new signature holds the jit's cache and takes the GIL back to run
    Python; a cached call on another thread holds the GIL and must not wait for that cache (it
    takes the Python path, which lets the GIL go first). Run in a process of its own with a
    deadline, since a deadlock would hold the GIL for good."""
    import os
    import subprocess
    import sys
    out = subprocess.run([sys.executable, "-c", THREADS], capture_output=True, text=True,
                         timeout=60, env=dict(os.environ))
    assert out.returncode == 0 and out.stdout.strip().endswith("ok"), out.stdout + out.stderr
