"""Issue 55's rows that once killed the process, each run in a subprocess of its own under a
memory cap (so a crash fails the case, not the session): every shape product beyond int64 is a
ValueError (spmd.errors.InvalidArgument) naming the shape, before any allocation; a mesh axis of
size <= 0 is a ValueError saying so; a scan of an empty array is empty; device_put refuses an
uneven split and a mesh of an earlier initialize()."""
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
    "device_put(arange(6)) over 4 devices, which JAX refuses": (
        "spmd.device_put(np.arange(6), spmd.NamedSharding(spmd.make_mesh((4,), ('x',)), "
        "spmd.P('x')))",
        "dimension 0 of size 6 is split over axes (x) into 4 shards, which does not divide it"),
    "the same for an Array": (
        "a = spmd.device_put(np.arange(6)); "
        "spmd.device_put(a, spmd.NamedSharding(spmd.make_mesh((4,), ('x',)), spmd.P('x')))",
        "dimension 0 of size 6 is split over axes (x) into 4 shards, which does not divide it"),
    "device_put onto a mesh of an earlier initialize": (
        "s = spmd.NamedSharding(spmd.make_mesh((4,), ('x',)), spmd.P('x')); "
        "spmd.distributed.shutdown(); "
        "spmd.distributed.initialize(num_processes=1, num_cpu_devices=2); "
        "spmd.device_put(np.arange(8.0), s)",
        "CpuDevice(id=2, process_index=0, local_hardware_id=2) is not a device of this cluster"),
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


# Issue 55's rows that answered wrongly or pointed the wrong way, in this process.

def test_tree_map_over_mismatched_trees_is_a_value_error_not_a_truncation():
    import jax

    import spmd
    for a, b in (({"a": [1, 2]}, {"a": [1]}), ({"a": 1}, {"b": 1}), ([1, 2], (1, 2))):
        with pytest.raises(ValueError):
            jax.tree_util.tree_map(lambda x, y: x, a, b)
        with pytest.raises(ValueError, match="tree_map: the trees differ at"):
            spmd.tree_map(lambda x, y: x, a, b)
    # The first tree a prefix of the second, as JAX allows.
    assert spmd.tree_map(lambda x, y: (x, y), {"a": 1}, {"a": [2, 3]}) == \
        jax.tree_util.tree_map(lambda x, y: (x, y), {"a": 1}, {"a": [2, 3]})
    _, treedef = spmd.tree_util.tree_flatten([1, 2, 3])
    with pytest.raises(ValueError, match="Too few leaves for PyTreeDef; expected 3, got 2"):
        spmd.tree_util.tree_unflatten(treedef, [1, 2])


def test_make_array_from_single_device_arrays_places_by_device_and_refuses_one_device_twice():
    import numpy as np

    import spmd
    n = spmd.device_count()
    sharding = spmd.NamedSharding(spmd.make_mesh((n,), ("x",)), spmd.P("x"))
    devices = sharding.addressable_devices
    on_zero = [spmd.device_put(np.ones(1, np.float32)) for _ in range(n)]
    with pytest.raises(ValueError, match=r"arrays\[1\] is on device 0, which another array "
                                         r"is on too"):
        spmd.make_array_from_single_device_arrays((n,), sharding, on_zero)
    placed = [spmd.device_put(np.full(1, i, np.float32), d) for i, d in enumerate(devices)]
    out = spmd.make_array_from_single_device_arrays((n,), sharding, placed[::-1])
    assert np.asarray(out).tolist() == list(range(n))  # matched by device, as JAX does
    with pytest.raises(TypeError, match="sharding must be a Sharding"):
        spmd.make_array_from_single_device_arrays((4,), (1,), on_zero)


def test_an_array_beside_a_traced_value_is_a_constant_not_a_recursion():
    import numpy as np

    import spmd
    import spmd.numpy as snp
    c = snp.astype(snp.arange(2), snp.float32)
    x = snp.ones(2)
    for f, want in ((lambda x: c + x, [1, 2]), (lambda x: c * x, [0, 1]),
                    (lambda x: snp.exp(c) + x, [2, np.e + 1]),
                    (lambda x: snp.concatenate([x, np.zeros(1, np.float32), c]), [1, 1, 0, 0, 1]),
                    (lambda x: snp.where(x > 0, c, 5.0), [0, 1]),
                    (lambda x: snp.maximum(x, c), [1, 1])):
        np.testing.assert_allclose(np.asarray(spmd.jit(f)(x)), want, rtol=1e-6)
    assert np.asarray(snp.concatenate([x, np.zeros(1, np.float32)])).tolist() == [1, 1, 0]


def test_where_with_a_python_scalar_branch_has_jaxs_dtype():
    import jax.numpy as jnp
    import numpy as np

    import spmd.numpy as snp
    for a, b in ((np.arange(2.0, dtype=np.float32), 5), (2, 5.0), (np.arange(2), 2.5),
                 (True, 2)):
        ours = snp.where(snp.ones(2) > 1, a, b)
        theirs = jnp.where(jnp.ones(2) > 1, a, b)
        assert ours.dtype == theirs.dtype and np.asarray(ours).tolist() == \
            np.asarray(theirs).tolist(), (a, b)


def test_wrong_arguments_name_the_public_function_never_a_binding():
    import numpy as np

    import spmd
    import spmd.numpy as snp
    calls = {
        "spmd.make_mesh: cannot take arguments of types (list, dict); it takes spmd.make_mesh(":
            lambda: spmd.make_mesh([[1]], {}),
        "spmd.device_count: cannot take arguments of types (dict)":
            lambda: spmd.device_count({}),
        "sum requires ndarray or scalar arguments, got <class 'dict'> at position 0.":
            lambda: snp.sum({}),
        "add requires ndarray or scalar arguments, got <class 'spmd.sharding.PartitionSpec'> at "
        "position 1.": lambda: snp.add(snp.ones(2), spmd.P()),
        "spmd.numpy.var(a, axis=None": lambda: snp.var(),
        "'str' object cannot be interpreted as an integer": lambda: snp.sum(snp.ones(2), "a"),
        "reshape: shapes must be 1D sequences of concrete values of integer type":
            lambda: snp.reshape(snp.ones(2), ("a",)),
        "spmd.sharding.NamedSharding: cannot take arguments of types (int, int)":
            lambda: spmd.NamedSharding(1, 2),
        "spmd.Array cannot be constructed directly": lambda: spmd.Array(),
        "PartitionSpec: None, a mesh axis name (a str) or a tuple of them expected, got 1j":
            lambda: spmd.P(1j),
        "Expected a callable value, got []": lambda: spmd.jit([]),
        "device_put: the device must be a Device, a Sharding, a PartitionSpec or None, got tuple":
            lambda: spmd.device_put(np.ones(2), (1,)),
        "spmd.random.normal: a PRNG key": lambda: spmd.random.normal(1j),
        "spmd.sharding.Sharding.shard_shape: cannot take arguments of types (dict)":
            lambda: snp.ones(2).sharding.shard_shape({}),
    }
    for expected, call in calls.items():
        with pytest.raises(TypeError) as caught:
            call()
        message = str(caught.value)
        assert expected in message, message
        assert "incompatible function arguments" not in message and "_spmd" not in message


def test_a_collective_outside_a_mapped_function_is_jaxs_unbound_axis_name():
    import jax

    import spmd
    import spmd.numpy as snp
    with pytest.raises(NameError, match="unbound axis name: x"):
        jax.lax.psum(jax.numpy.ones(2), "x")
    with pytest.raises(NameError, match="unbound axis name: x"):
        spmd.lax.psum(snp.ones(2), "x")
    with pytest.raises(NameError, match="unbound axis name: x"):
        jax.jit(lambda v: jax.lax.pmean(v, "x"))(jax.numpy.ones(2))
    with pytest.raises(NameError, match="unbound axis name: x"):
        spmd.jit(lambda v: spmd.lax.pmean(v, "x"))(snp.ones(2))


def test_prng_seeds_and_fold_in_data_out_of_range_are_overflow_errors_as_in_jax():
    import jax
    import numpy as np

    import spmd
    for bad in (2**70, -2**70):
        with pytest.raises(OverflowError):
            jax.random.PRNGKey(bad)
        with pytest.raises(OverflowError):
            spmd.random.PRNGKey(bad)
    with pytest.raises(TypeError, match="PRNG key seed must be an integer"):
        spmd.random.PRNGKey(1.5)
    for bad in (2**40, -1):
        with pytest.raises(OverflowError, match=f"Python integer {bad} out of bounds for uint32"):
            spmd.random.fold_in(spmd.random.PRNGKey(0), bad)
    raw = np.array([0, 1], np.uint32)  # a NumPy key, as JAX takes one
    assert np.asarray(spmd.random.normal(raw)) == np.asarray(jax.random.normal(raw))
    assert np.asarray(spmd.random.PRNGKey(-1)).tolist() == \
        np.asarray(jax.random.PRNGKey(-1)).tolist()


def test_an_array_index_is_numpys_a_mask_selects_and_out_of_bounds_is_an_index_error():
    """An Array as an index was taken as a sequence: a boolean mask Array gave a (1, 0, 2, 0, 2)
    array where JAX's selection is (0,). Out of bounds, JAX clamps without a word; spmd raises
    NumPy's IndexError."""
    import jax.numpy as jnp
    import numpy as np

    import spmd
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    for index in (x > 2, np.array([1, 0]), (np.array([0, 1]), np.array([2, 2]))):
        ours = spmd.device_put(x)[as_spmd_index(spmd, index)]
        theirs = jnp.asarray(x)[index]
        assert np.asarray(ours).tolist() == np.asarray(theirs).tolist(), index
    with pytest.raises(IndexError, match="out of bounds"):
        spmd.device_put(x)[spmd.device_put(np.array([5]))]


def as_spmd_index(spmd, index):
    """The index with its NumPy arrays as spmd Arrays."""
    if isinstance(index, tuple):
        return tuple(as_spmd_index(spmd, i) for i in index)
    return spmd.device_put(index)


def test_an_eager_operation_names_itself_not_an_internal_jit():
    import numpy as np

    import spmd
    import spmd.numpy as snp
    devices = spmd.local_devices()
    a = spmd.device_put(np.ones(4, np.float32), devices[0])
    b = spmd.device_put(np.ones(4, np.float32), devices[1])
    for call, name in ((lambda: snp.add(a, b), "spmd.numpy.add"),
                       (lambda: snp.floor_divide(a, b), "spmd.numpy.floor_divide"),
                       (lambda: a * b, "spmd.Array.__mul__")):
        with pytest.raises(ValueError) as info:
            call()
        message = str(info.value)
        assert name + ")" in message or message.startswith(name + ":"), message
        assert "different" in message and "(call)" not in message, message


def test_python_ints_beyond_the_default_integer_are_overflow_errors_as_in_jax():
    """device_put([2**63]) was a uint32 0 without a word."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    import spmd
    import spmd.numpy as snp
    for call in ("device_put([2**63])", "device_put(2**40)", "device_put(2**31)"):
        with pytest.raises(OverflowError) as theirs:
            eval("jax." + call)
        with pytest.raises(OverflowError) as ours:
            eval("spmd." + call)
        assert str(ours.value) == str(theirs.value)
    with pytest.raises(OverflowError):
        snp.asarray([2**40, 1])
    assert int(np.asarray(spmd.device_put(-2**31))) == int(jnp.asarray(-2**31))
    big = np.array([2**40 + 5])  # NumPy's int64 narrows as in JAX: it wraps
    assert np.asarray(snp.asarray(big)).tolist() == np.asarray(jnp.asarray(big)).tolist()


def test_arrays_of_objects_strings_and_complex_numbers_are_type_errors_naming_the_dtype():
    import numpy as np

    import spmd
    import spmd.numpy as snp
    for bad in (np.array([object(), 1], dtype=object), np.array(["a"]), np.array([1j])):
        for put in (spmd.device_put, snp.asarray):
            with pytest.raises(TypeError, match=f"Dtype {bad.dtype} is not a valid spmd array"):
                put(bad)


def test_a_partition_spec_indexes_as_jaxs_a_tuple_of_its_entries():
    import jax

    import spmd
    ours, theirs = spmd.P("x", None, ("y", "z")), jax.P("x", None, ("y", "z"))
    for index in (0, 1, -1, -3, slice(1, None), slice(None, None, -1)):
        assert ours[index] == theirs[index], index
    for index, error in ((3, IndexError), (-4, IndexError), ("a", TypeError)):
        with pytest.raises(error):
            ours[index]
    assert list(ours) == list(theirs)


def test_a_loader_batch_of_zero_says_it_must_be_positive():
    import numpy as np

    import spmd
    mesh = spmd.make_mesh((4,), ("x",))
    with pytest.raises(ValueError, match="global_batch_size must be a positive number of "
                                         "records, got 0"):
        spmd.data.DistributedDataLoader(np.zeros((16, 1), np.float32), 0,
                                        spmd.NamedSharding(mesh, spmd.P("x")))
