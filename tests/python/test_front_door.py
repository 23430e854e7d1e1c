"""Issue 55's rows that once killed the process, each run in a subprocess of its own under a
memory cap (so a crash fails the case, not the session): every shape product beyond int64 is a
ValueError (spmd.errors.InvalidArgument) naming the shape, before any allocation; a mesh axis of
size <= 0 is a ValueError saying so; a scan of an empty array is empty."""
import os
import subprocess
import sys
import textwrap

import pytest

PRELUDE = """
import resource
resource.setrlimit(resource.RLIMIT_AS, (8 << 30, 8 << 30))
import numpy as np, spmd, spmd.numpy as snp
spmd.distributed.initialize(num_processes=1, num_cpu_devices=4)
try:
{body}
    print("no error")
except ValueError as e:
    print("ValueError:", e)
"""

CASES = {
    "broadcast_to (2^62, 4), then sum": (
        "r = snp.broadcast_to(snp.ones((1,)), (2**62, 4)); snp.sum(r)",
        "the shape (4611686018427387904, 4) has more elements than int64 can count"),
    "the same under jit": (
        "spmd.jit(lambda x: snp.sum(snp.broadcast_to(x, (2**62, 4))))(snp.ones((1,)))",
        "the shape (4611686018427387904, 4) has more elements than int64 can count"),
    "random.normal of (2^62 + 1, 4)": (
        "snp.sum(spmd.random.normal(spmd.random.PRNGKey(0), (2**62 + 1, 4)))",
        "the shape (4611686018427387905, 4) has more elements than int64 can count"),
    "make_mesh((2^62, 4))": (
        "spmd.make_mesh((2**62, 4), ('a', 'b'))",
        "the shape (4611686018427387904, 4) has more elements than int64 can count"),
    "make_mesh((2^62 + 1, 4)), which wrapped to 4 devices": (
        "spmd.make_mesh((2**62 + 1, 4), ('a', 'b'))",
        "the shape (4611686018427387905, 4) has more elements than int64 can count"),
    "make_mesh((2^32, 2^32))": (
        "spmd.make_mesh((2**32, 2**32), ('a', 'b'))",
        "the shape (4294967296, 4294967296) has more elements than int64 can count"),
    "make_mesh((-4,))": (
        "spmd.make_mesh((-4,), ('a',))", "make_mesh: axis sizes must be positive, got (-4)"),
    "zeros of 2^62 float32 (bytes beyond int64)": (
        "spmd.jit(lambda x: x + snp.zeros((2**62,)))(snp.ones((1,)))",
        "float32[4611686018427387904] array needs more bytes than int64 can count"),
    "cumsum of zeros((2, 0)) along axis 0, eager and under jit": (
        "a = snp.zeros((2, 0)); r = snp.cumsum(a, axis=0); "
        "s = spmd.jit(lambda x: snp.cumsum(x, axis=0))(a); print(r.shape, s.shape)",
        "no error"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_the_call_raises_or_returns_and_never_kills_the_process(name):
    body, expected = CASES[name]
    script = PRELUDE.format(body=textwrap.indent(body.replace("; ", "\n"), "    "))
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=120, env=dict(os.environ))
    assert run.returncode == 0, f"{name}: the process died ({run.returncode}): {run.stderr[-800:]}"
    assert expected in run.stdout, f"{name}: {run.stdout[-800:]}"


def test_an_initialization_timeout_of_nan_or_inf_is_a_value_error_before_anything_starts():
    """float('nan') was cast to -2^63 ms and reported as 'must be positive, got
    -9223372036854775808 ms'; now it is refused as what the user passed, and a valid
    initialize still follows in the same process."""
    script = textwrap.dedent("""
        import spmd
        for v in (float("nan"), float("inf"), -float("inf")):
            try:
                spmd.distributed.initialize(num_processes=1, num_cpu_devices=1,
                                            initialization_timeout=v)
                print("no error")
            except ValueError as e:
                print("ValueError:", e)
        spmd.distributed.initialize(num_processes=1, num_cpu_devices=1, initialization_timeout=5)
        print("devices", spmd.device_count())
    """)
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=120, env=dict(os.environ))
    assert run.returncode == 0, run.stderr[-800:]
    lines = run.stdout.splitlines()
    assert lines[:3] == [f"ValueError: initialize: initialization_timeout must be a finite "
                         f"number of seconds, got {v}" for v in ("nan", "inf", "-inf")], lines
    assert lines[3] == "devices 1", lines


def test_jit_statics_are_keyed_by_hash_and_equality_and_numbered_as_jax_numbers_them():
    """The cache was keyed by repr: two objects with one repr shared a program (the second call
    returned the first's result), and long NumPy arrays (whose repr elides) were taken as
    statics. Now as JAX: unhashable statics are a ValueError, equal values of one type share a
    program, negative static_argnums count from the end, out-of-range ones are refused."""
    import jax
    import numpy as np

    import spmd

    class Scale:
        def __init__(self, k):
            self.k = k

        def __repr__(self):
            return "Scale"  # one repr for every value

        def __hash__(self):
            return hash(self.k)

        def __eq__(self, other):
            return isinstance(other, Scale) and other.k == self.k

    f = spmd.jit(lambda x, s: x * s.k, static_argnums=1)
    x = spmd.device_put(np.ones(2, np.float32))
    assert np.asarray(f(x, Scale(2))).tolist() == [2, 2]
    assert np.asarray(f(x, Scale(3))).tolist() == [3, 3]
    with pytest.raises(ValueError, match="Non-hashable static arguments are not supported"):
        f(x, np.arange(2000))
    g = spmd.jit(lambda x, n: x * n, static_argnums=-1)
    assert np.asarray(g(x, 4)).tolist() == [4, 4]
    assert np.asarray(g(x, 4.5)).tolist() == [4.5, 4.5]  # 4 and 4.5 apart; 4 and 4.0 by type
    assert np.asarray(g(x, 4.0)).dtype == np.float32
    for bad in (5, -3):
        with pytest.raises(ValueError) as ours:
            spmd.jit(lambda x, n: x, static_argnums=bad)
        with pytest.raises(ValueError) as theirs:
            jax.jit(lambda x, n: x, static_argnums=bad)
        assert str(ours.value) == str(theirs.value)
    h = spmd.jit(lambda *a: a[0] * a[-1], static_argnums=-1)  # *args: from each call's end
    assert np.asarray(h(x, 7)).tolist() == [7, 7]
