"""jax.Array and jax.sharding beside spmd's: indexing and .at[], the array methods, the mesh's
device grid, Mesh as a context manager, shardings' and arrays' attributes, donation and deletion,
DLPack."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import spmd
import spmd.numpy as snp
from parity import covers, raises_like, same

X = np.arange(60, dtype=np.float32).reshape(3, 4, 5) / 7

INDICES = [0, -1, (1, 2), (slice(None), 1), (Ellipsis, None), (None, 1, Ellipsis, 2),
           slice(1, None), (slice(None, None, 2), slice(3, 0, -1)), (slice(None), slice(None),
           slice(None, None, -2)), np.array([2, 0]), ([1, 1, 0],), (slice(None), np.array([3, -1])),
           (0, np.array([[1, 2], [0, 3]])), (Ellipsis, np.array([4, 0, 1]))]


@covers("numpy.ndarray")
@pytest.mark.parametrize("index", INDICES, ids=range(len(INDICES)))
def test_indexing_matches_jax(index):
    same(snp.asarray(X)[index], jnp.asarray(X)[index], f"x[{index!r}]")
    same(spmd.jit(lambda a: a[index] * 2)(X), jax.jit(lambda a: a[index] * 2)(X),
         f"traced x[{index!r}]")


@pytest.mark.parametrize("index,values", [
    (1, 5.0), ((0, slice(1, 3)), np.ones((2, 5), np.float32)), ((Ellipsis, 0), -1.0),
    ((slice(None), 2, slice(1, 4)), np.arange(3, dtype=np.float32))])
def test_at_updates_match_jax(index, values):
    for op in ("set", "add", "multiply", "min", "max"):
        same(getattr(snp.asarray(X).at[index], op)(values),
             getattr(jnp.asarray(X).at[index], op)(values), f"x.at[{index!r}].{op}")
    grad = spmd.grad(lambda a: snp.sum(a.at[index].set(values) * a))(X)
    same(grad, jax.grad(lambda a: jnp.sum(a.at[index].set(values) * a))(X), "its gradient")


@pytest.mark.parametrize("index,values", [
    (np.array([0, 3, 2], np.int32), np.float32([[1, 2, 3, 4, 5]])),
    ((np.array([[1, 2], [-1, 0]]), slice(None)), 2.5),
    (np.array([0, 9, -9, 1], np.int32), np.arange(20, dtype=np.float32).reshape(4, 5)),
    (([2, 2, 1],), np.float32([1.0, 2.0, 4.0, 8.0, 16.0]))])
def test_at_add_at_integer_arrays_matches_jax(index, values):
    """x.at[integer array].add: a scatter-add into the leading axis (embedding gradients),
    negative indices from the end, out-of-range ones dropped, repeated ones added to x in turn,
    as JAX's, bit for bit; eagerly, under jit, and its gradient (the cotangent taken at the
    indices; within an ulp where a broadcast value sums it)."""
    same(snp.asarray(X).at[index].add(values), jnp.asarray(X).at[index].add(values),
         f"x.at[{index!r}].add")
    same(spmd.jit(lambda a, v: a.at[index].add(v))(X, values),
         jax.jit(lambda a, v: a.at[index].add(v))(X, values), "under jit")
    if not isinstance(values, float):
        loss = lambda np_: lambda a, v: np_.sum(a.at[index].add(v) ** 2)
        # (a broadcast value's cotangent is a sum over the indices, in XLA's reduction order)
        same(spmd.grad(loss(snp), argnums=(0, 1))(X, values),
             jax.grad(loss(jnp), argnums=(0, 1))(X, values), "its gradient", ulps=1)


def test_array_methods_match_jax():
    s, j = snp.asarray(X), jnp.asarray(X)
    for name, args in (("sum", ()), ("mean", (1,)), ("max", ()), ("argmin", (2,)),
                       ("astype", (np.int32,)), ("reshape", (5, 12)), ("reshape", ((60,),)),
                       ("transpose", ()), ("transpose", (2, 0, 1)), ("ravel", ()),
                       ("prod", (0,)), ("clip", (1.0, 2.0)), ("swapaxes", (0, 1))):
        same(getattr(s, name)(*args), getattr(j, name)(*args), f"x.{name}{args}", ulps=2)
    same(s.T, j.T, "x.T")
    same(spmd.jit(lambda a: a.T.sum(axis=0).astype(np.float16))(X),
         jax.jit(lambda a: a.T.sum(axis=0).astype(jnp.float16))(X), "traced methods", ulps=1)


def test_an_index_out_of_range_is_refused_where_jax_clamps_it():
    """JAX reads x[3] of 3 rows as x[2] without a word; spmd raises NumPy's IndexError, eagerly
    and under jit (a static index is known while tracing)."""
    for index in (3, -4, (1, 7), (0, np.array([0, 9]))):
        jnp.asarray(X)[index]  # JAX answers
        with pytest.raises(IndexError, match="out of bounds"):
            snp.asarray(X)[index]
        with pytest.raises(IndexError, match="out of bounds"):
            spmd.jit(lambda a: a[index])(X)
    raises_like(lambda: jnp.asarray(X)[0, 0, 0, 0], lambda: snp.asarray(X)[0, 0, 0, 0],
                "too many indices")
    # A NumPy mask is static: its nonzero() indexes, under jit too; a traced one has no shape.
    same(spmd.jit(lambda a: a[X > 1])(X), jax.jit(lambda a: a[X > 1])(X), "a NumPy mask")
    for jit in (jax.jit, spmd.jit):  # JAX's NonConcreteBooleanIndexError is an IndexError
        with pytest.raises(IndexError, match="must be concrete"):
            jit(lambda a: a[a > 1])(X)


@covers("sharding.Mesh", "sharding.NamedSharding", "sharding.PartitionSpec")
def test_mesh_and_sharding_attributes_match_jax():
    jm = jax.sharding.Mesh(np.array(jax.devices()[:8]).reshape(2, 4), ("a", "b"))
    sm = spmd.sharding.Mesh(np.array(spmd.devices()[:8]).reshape(2, 4), ("a", "b"))
    assert isinstance(sm.devices, np.ndarray) and sm.devices.shape == jm.devices.shape == (2, 4)
    assert [d.id for d in sm.devices.flat] == [d.id for d in jm.devices.flat]
    assert sm.shape == dict(jm.shape) and sm.size == jm.size
    js = jax.sharding.NamedSharding(jm, jax.sharding.PartitionSpec("b", None))
    ss = spmd.NamedSharding(sm, spmd.P("b", None))
    assert tuple(ss.spec) == tuple(js.spec) and ss.mesh.axis_names == js.mesh.axis_names
    assert ss.shard_shape((8, 3)) == js.shard_shape((8, 3))
    assert ss.is_fully_replicated == js.is_fully_replicated
    assert {d.id for d in ss.addressable_devices} == {d.id for d in js.addressable_devices}
    with sm:
        assert spmd.sharding.get_mesh() is not None
        out = spmd.jit(lambda a: a * 2, in_shardings=spmd.P("a"))(X[:2])
        assert tuple(out.sharding.spec) == ("a",)
    assert spmd.sharding.get_mesh() is None


@covers("device_put", "block_until_ready", "devices", "device_count", "local_devices",
        "local_device_count", "process_index", "process_count", "make_mesh")
def test_array_attributes_match_jax():
    jm = jax.sharding.Mesh(np.array(jax.devices()[:4]), ("x",))
    sm = spmd.sharding.Mesh(np.array(spmd.devices()[:4]), ("x",))
    j = jax.device_put(X[0], jax.sharding.NamedSharding(jm, jax.sharding.PartitionSpec("x")))
    s = spmd.device_put(X[0], spmd.NamedSharding(sm, spmd.P("x")))
    assert s.is_fully_addressable == j.is_fully_addressable
    js, ss = j.addressable_shards, s.addressable_shards
    assert [x.index for x in ss] == [x.index for x in js]
    assert [x.device.id for x in ss] == [x.device.id for x in js]
    for a, b in zip(ss, js):
        same(a.data, b.data, "shard data")
    same(np.asarray(s), np.asarray(j), "np.asarray")
    same(np.from_dlpack(s), np.from_dlpack(jax.device_put(X[0])), "DLPack to NumPy")
    same(snp.from_dlpack(X), jnp.from_dlpack(X), "DLPack from NumPy")
    assert spmd.block_until_ready({"a": s, "b": [s]})["a"] is s
    assert s.block_until_ready() is s
    gone, jax_gone = spmd.device_put(X[0]), jax.device_put(X[0])
    gone.delete()
    jax_gone.delete()
    for wait in (jax_gone.block_until_ready, gone.block_until_ready):  # JAX's JaxRuntimeError
        with pytest.raises(RuntimeError, match="deleted"):
            wait()
    assert spmd.device_count() == spmd.local_device_count() == len(spmd.local_devices()) == \
        len(spmd.devices()) == 8 and spmd.process_index() == 0 and spmd.process_count() == 1
    assert [d.id for d in spmd.make_mesh((2, 4), ("a", "b")).devices.flat] == list(range(8))
    for shape, pick in (((2,), slice(2, 4)), ((2, 2), slice(4, 8))):
        jmesh = jax.make_mesh(shape, tuple("xy"[:len(shape)]), devices=jax.devices()[pick])
        smesh = spmd.make_mesh(shape, tuple("xy"[:len(shape)]), devices=spmd.devices()[pick])
        assert [d.id for d in smesh.devices.flat] == [d.id for d in jmesh.devices.flat]
        assert smesh.axis_types == tuple(getattr(spmd.AxisType, t.name) for t in
                                         jmesh.axis_types)
    raises_like(lambda: jax.make_mesh((2,), ("x",), devices=jax.devices()[:1]),
                lambda: spmd.make_mesh((2,), ("x",), devices=spmd.devices()[:1]),
                "fewer devices than the mesh holds")
    s.delete()
    assert s.is_deleted()
    with pytest.raises(Exception, match="deleted"):
        np.asarray(s)


def test_an_empty_array_split_over_devices_reshapes():
    """A (0,) array split over 4 devices, reshaped to (1, 0) (expand_dims, mean over no axes):
    the reshape's layout divided by the empty dimension's size (SIGFPE; the API fuzzer found
    it)."""
    mesh = spmd.make_mesh((4,), ("x",), axis_types=(spmd.AxisType.Auto,))
    x = spmd.device_put(np.zeros((0,), np.float32), spmd.NamedSharding(mesh, spmd.P("x")))
    same(snp.expand_dims(x, 0), jnp.expand_dims(np.zeros((0,), np.float32), 0), "expand_dims")
    same(snp.mean(x, ()), jnp.mean(np.zeros((0,), np.float32), ()), "mean over no axes")
    same(spmd.jit(lambda v: snp.reshape(v, (0, 5)))(x), np.zeros((0, 5), np.float32),
         "reshape to (0, 5)")


@covers("sharding.AxisType", "sharding.Sharding", "sharding.SingleDeviceSharding",
        "sharding.get_mesh", "sharding.set_mesh", "sharding.reshard",
        "sharding.make_single_device_sharding", "reshard", "set_mesh")
def test_sharding_helpers_match_jax():
    js = jax.sharding.make_single_device_sharding(jax.devices()[1])
    ss = spmd.sharding.make_single_device_sharding(spmd.devices()[1])
    assert isinstance(ss, spmd.sharding.SingleDeviceSharding)
    assert isinstance(ss, spmd.sharding.Sharding) and isinstance(js, jax.sharding.Sharding)
    assert [d.id for d in ss.device_set] == [d.id for d in js.device_set]
    same(spmd.device_put(X, ss), jax.device_put(X, js), "on device 1")
    assert {t.name for t in spmd.sharding.AxisType} >= {"Auto", "Explicit"}
    jm = jax.make_mesh((2, 4), ("a", "b"), devices=jax.devices()[:8],
                       axis_types=(jax.sharding.AxisType.Explicit,) * 2)
    sm = spmd.make_mesh((2, 4), ("a", "b"), axis_types=(spmd.AxisType.Explicit,) * 2)
    with jax.sharding.set_mesh(jm), spmd.sharding.set_mesh(sm):
        assert spmd.sharding.get_mesh().axis_names == ("a", "b")
        jx = jax.sharding.reshard(X[:2, :4], jax.P("a"))
        sx = spmd.sharding.reshard(X[:2, :4], spmd.P("a"))
        same(sx, jx, "reshard to P('a')")
        assert _spec(sx) == _spec(jx)
        sy = spmd.jit(lambda v: spmd.reshard(v * 2, spmd.P(None, "b")))(sx)
        jy = jax.jit(lambda v: jax.reshard(v * 2, jax.P(None, "b")))(jx)
        same(sy, jy, "reshard inside jit")
        assert _spec(sy) == _spec(jy)
    assert spmd.sharding.get_mesh() is None


def _spec(x):
    """A result's partition spec without trailing Nones: JAX writes a resharded value's spec at
    full rank (P('a', None, None)), spmd as given (P('a',)); the layouts are the same."""
    spec = list(x.sharding.spec)
    while spec and spec[-1] is None:
        spec.pop()
    return tuple(spec)


def test_devices_say_their_platform_and_kind_as_jax():
    """jax.devices()[i].platform and .device_kind: "cpu" and "cpu" on CPU devices."""
    for ours, theirs in zip(spmd.devices(), jax.devices()):
        assert ours.platform == theirs.platform
        assert ours.device_kind == theirs.device_kind
        assert ours.id == theirs.id


@covers("experimental.multihost_utils.process_allgather")
def test_process_allgather_in_one_process_matches_jax():
    """One process: each leaf as NumPy, stacked on a new first axis (tiled=False) or as it is
    (tiled=True); a global Array is whole. (Across processes: multiprocess_check.py.)"""
    from jax.experimental import multihost_utils as jmu
    from spmd.experimental import multihost_utils as smu
    tree = {"a": np.arange(6, dtype=np.int32).reshape(2, 3), "s": 7.5,
            "l": [np.ones(2, np.float32)]}
    for tiled in (False, True):
        same(smu.process_allgather(tree, tiled=tiled), jmu.process_allgather(tree, tiled=tiled),
             f"process_allgather(tiled={tiled})")
    x = np.arange(8, dtype=np.float32).reshape(4, 2)
    same(smu.process_allgather(spmd.device_put(x), tiled=True),
         jmu.process_allgather(jax.device_put(x), tiled=True), "a global array")


@covers("typeof")
def test_typeof_matches_jax():
    """jax.typeof's text (Explicit axes named per dimension, Auto ones not; "~" for weak), shape,
    dtype, weak bit and spec: on arrays of an Explicit and a mixed mesh, inside jit (a Python
    scalar argument weak, and what is computed from it), of Python and NumPy scalars and arrays;
    a string, None or a list is JAX's TypeError."""
    E, A = jax.sharding.AxisType.Explicit, jax.sharding.AxisType.Auto
    SE, SA = spmd.AxisType.Explicit, spmd.AxisType.Auto
    x = np.ones((8, 12), np.float32)
    pairs = []
    for kinds, skinds, spec in (((E, E), (SE, SE), (("a", "b"),)), ((E, A), (SE, SA), ("a", "b"))):
        jm = jax.make_mesh((2, 4), ("a", "b"), devices=jax.devices()[:8], axis_types=kinds)
        sm = spmd.make_mesh((2, 4), ("a", "b"), axis_types=skinds)
        pairs.append((spmd.device_put(x, spmd.NamedSharding(sm, spmd.P(*spec))),
                      jax.device_put(x, jax.NamedSharding(jm, jax.P(*spec)))))
    for value in (True, 2, 2.5, np.float64(2), np.ones(3), np.arange(3)):
        pairs.append((value, value))
    seen = []

    def probe(lib, a, b):
        seen.append([lib.typeof(v) for v in (a, b, a * 2, b + a)])
        return b
    for sx, jx in pairs[:2]:
        spmd.jit(lambda a, b: probe(spmd, a, b))(1.5, sx)
        jax.jit(lambda a, b: probe(jax, a, b))(1.5, jx)
    got = [spmd.typeof(s) for s, _ in pairs] + [t for row in seen[0::2] for t in row]
    want = [jax.typeof(j) for _, j in pairs] + [t for row in seen[1::2] for t in row]
    for g, w in zip(got, want):
        assert (str(g), g.shape, g.dtype, g.weak_type, g.ndim, g.size) == \
            (str(w), w.shape, w.dtype, w.weak_type, w.ndim, w.size), f"{g} vs JAX's {w}"
    assert _spec(pairs[0][0]) == _spec(pairs[0][1])
    assert spmd.typeof(pairs[0][0]) == spmd.typeof(pairs[0][0])
    assert spmd.typeof(pairs[0][0]) != spmd.typeof(pairs[1][0])
    for bad in ("s", None, [1, 2]):
        raises_like(lambda: jax.typeof(bad), lambda: spmd.typeof(bad), f"typeof({bad!r})")
