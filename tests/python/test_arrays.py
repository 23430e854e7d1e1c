"""spmd.Array's JAX interface against JAX itself on 8 devices: shards and devices_indices_map
for every sharding kind, make_array_from_single_device_arrays, committed and uncommitted
placement in jit, pmap with psum, vjp outside jit, and checkpoints and the data loader from
Python."""
import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import spmd
import spmd.numpy as snp

X = np.arange(8 * 4, dtype=np.float32).reshape(8, 4)


def meshes():
    return (spmd.sharding.Mesh(np.array(spmd.devices()).reshape(4, 2), ("a", "b")),
            jax.sharding.Mesh(np.array(jax.devices()).reshape(4, 2), ("a", "b")))


def index_map(sharding, shape):
    """{device id: ((start, stop), ...)} of either library's devices_indices_map."""
    return {d.id: tuple(s.indices(n)[:2] for s, n in zip(index, shape))
            for d, index in sharding.devices_indices_map(shape).items()}


@pytest.mark.parametrize("spec", [(), ("a",), ("a", "b"), (None, "b"), (("a", "b"),), ("b", "a")])
def test_shards_and_indices_equal_jax(spec):
    ours_mesh, their_mesh = meshes()
    ours = spmd.device_put(X, spmd.NamedSharding(ours_mesh, spmd.P(*spec)))
    theirs = jax.device_put(X, jax.NamedSharding(their_mesh, jax.P(*spec)))
    assert index_map(ours.sharding, X.shape) == index_map(theirs.sharding, X.shape)
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
    ours_shards = sorted(ours.addressable_shards, key=lambda s: s.device.id)
    their_shards = sorted(theirs.addressable_shards, key=lambda s: s.device.id)
    assert len(ours_shards) == len(their_shards) == 8
    for o, t in zip(ours_shards, their_shards):
        assert o.device.id == t.device.id and o.replica_id == t.replica_id
        assert o.index == t.index
        np.testing.assert_array_equal(np.asarray(o.data), np.asarray(t.data))
        assert o.data.sharding.device_set == {o.device}
    assert ours.sharding.shard_shape(X.shape) == theirs.sharding.shard_shape(X.shape)


def test_single_device_and_positional_shardings():
    d = spmd.devices()[3]
    a = spmd.device_put(X, d)
    assert isinstance(a.sharding, spmd.sharding.SingleDeviceSharding)
    assert a.devices() == {d} and a.committed
    assert index_map(a.sharding, X.shape) == {3: ((0, 8), (0, 4))}
    positional = spmd.sharding.PositionalSharding(spmd.devices()).reshape((4, 2))
    p = spmd.device_put(X, positional)
    named = spmd.device_put(X, spmd.NamedSharding(meshes()[0], spmd.P("a", "b")))
    assert index_map(p.sharding, X.shape) == index_map(named.sharding, X.shape)
    np.testing.assert_array_equal(np.asarray(p), X)
    assert index_map(positional.replicate(1), X.shape)[1] == ((0, 2), (0, 4))


def test_make_array_from_single_device_arrays_equals_jax():
    ours_mesh, their_mesh = meshes()
    ours_s = spmd.NamedSharding(ours_mesh, spmd.P("a"))
    theirs_s = jax.NamedSharding(their_mesh, jax.P("a"))
    blocks = {d.id: X[idx] for d, idx in theirs_s.devices_indices_map(X.shape).items()}
    ours = spmd.make_array_from_single_device_arrays(
        X.shape, ours_s, [spmd.device_put(blocks[d.id], d) for d in ours_s.addressable_devices])
    theirs = jax.make_array_from_single_device_arrays(
        X.shape, theirs_s, [jax.device_put(blocks[d.id], d) for d in theirs_s.addressable_devices])
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))
    with pytest.raises(spmd.errors.InvalidArgument, match="shard"):
        spmd.make_array_from_single_device_arrays(
            X.shape, ours_s, [spmd.device_put(X, d) for d in ours_s.addressable_devices])


def test_committed_follows_jax():
    ours_mesh, their_mesh = meshes()
    for lib, numpy_, mesh, sharding in (
            (spmd, snp, ours_mesh, spmd.NamedSharding(ours_mesh, spmd.P("a"))),
            (jax, jjnp, their_mesh, jax.NamedSharding(their_mesh, jax.P("a")))):
        x = numpy_.ones((8, 6))
        y = lib.device_put(X, sharding)
        key = lib.random.PRNGKey(0)
        flags = [x.committed, y.committed, (x + 1).committed, (y + 1).committed,
                 lib.random.normal(key, (2,)).committed, lib.jit(lambda a: a * 2)(x).committed,
                 lib.device_put(X).committed, lib.device_put(X, lib.devices()[1]).committed]
        if lib is spmd:
            ours = flags
        else:
            assert ours == flags
    # An uncommitted argument joins the committed one's devices.
    z = spmd.jit(lambda a, b: a + b)(snp.ones((8, 4)), y_ours := spmd.device_put(
        X, spmd.NamedSharding(ours_mesh, spmd.P("a"))))
    assert z.sharding == y_ours.sharding
    np.testing.assert_array_equal(np.asarray(z), X + 1)
    with pytest.raises(spmd.errors.InvalidArgument, match="different (devices|meshes).*devices \\[0\\].*devices \\[1\\]"):
        spmd.jit(lambda a, b: a + b)(spmd.device_put(X, spmd.devices()[0]),
                                     spmd.device_put(X, spmd.devices()[1]))


@pytest.mark.parametrize("in_axes", [0, (0, None), (1, 0)])
def test_pmap_with_psum_equals_jax(in_axes):
    rng = np.random.default_rng(1)
    xs = rng.standard_normal((8, 3)).astype(np.float32)
    ys = rng.standard_normal((3,) if in_axes == (0, None) else (8, 3)).astype(np.float32)
    if in_axes == (1, 0):
        xs = np.ascontiguousarray(xs.T)

    def ours_f(x, y):
        return {"s": spmd.lax.psum(x * y, "i"), "p": x + y}

    def theirs_f(x, y):
        return {"s": jax.lax.psum(x * y, "i"), "p": x + y}

    ours = spmd.pmap(ours_f, axis_name="i", in_axes=in_axes)(xs, ys)
    theirs = jax.pmap(theirs_f, axis_name="i", in_axes=in_axes)(xs, ys)
    for k in ("s", "p"):
        assert ours[k].shape == theirs[k].shape
        np.testing.assert_allclose(np.asarray(ours[k]), np.asarray(theirs[k]), rtol=1e-6)
    with pytest.raises(spmd.errors.InvalidArgument, match="local devices"):
        spmd.pmap(ours_f, axis_name="i")(xs[:5], xs[:5])


@pytest.mark.parametrize("scalar", [np.float32(2.5), 2.5, np.array(2.5, np.float32)],
                         ids=["numpy scalar", "python float", "0-d array"])
def test_pmap_takes_a_scalar_unmapped(scalar):
    """in_axes=None for a scalar goes through make_array_from_process_local_data of a rank-0
    value, which once said the process had no devices."""
    xs = np.arange(8, dtype=np.float32).reshape(8, 1)
    ours = spmd.pmap(lambda x, s: x * s, in_axes=(0, None))(xs, scalar)
    theirs = jax.pmap(lambda x, s: x * s, in_axes=(0, None))(xs, scalar)
    assert np.asarray(ours).dtype == np.asarray(theirs).dtype
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))


@pytest.mark.parametrize("out_axes", [1, 2, None, (0, None), {"s": None, "p": 1}])
def test_pmap_out_axes_equal_jax(out_axes):
    xs = np.random.default_rng(2).standard_normal((8, 3, 2)).astype(np.float32)
    ours = spmd.pmap(lambda x: {"s": spmd.lax.psum(x, "i"), "p": x * 2}, axis_name="i",
                     out_axes=out_axes if not isinstance(out_axes, tuple) else
                     {"p": out_axes[0], "s": out_axes[1]})(xs)
    theirs = jax.pmap(lambda x: {"s": jax.lax.psum(x, "i"), "p": x * 2}, axis_name="i",
                      out_axes=out_axes if not isinstance(out_axes, tuple) else
                      {"p": out_axes[0], "s": out_axes[1]})(xs)
    for k in ("s", "p"):
        assert ours[k].shape == theirs[k].shape, k
        np.testing.assert_allclose(np.asarray(ours[k]), np.asarray(theirs[k]), rtol=1e-6)
    for bad in (3, -1):  # past the stacked rank; negative (JAX's pmap returns garbage shapes)
        with pytest.raises(spmd.errors.InvalidArgument, match="out_axes"):
            spmd.pmap(lambda x: x, axis_name="i", out_axes=bad)(xs[:, 0])


def test_vjp_outside_jit_equals_jax():
    rng = np.random.default_rng(2)
    w = rng.standard_normal((4, 3)).astype(np.float32)
    x = rng.standard_normal((5, 4)).astype(np.float32)
    ct = rng.standard_normal((5, 3)).astype(np.float32)
    out, fn = spmd.vjp(lambda w, x: snp.tanh(snp.dot(x, w)), snp.asarray(w), snp.asarray(x))
    jout, jfn = jax.vjp(lambda w, x: jjnp.tanh(jjnp.dot(x, w)), w, x)
    np.testing.assert_allclose(np.asarray(out), np.asarray(jout), rtol=1e-5)
    for got, want in zip(fn(ct), jfn(ct)):
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-6)


def test_checkpoint_round_trip_onto_another_layout(tmp_path):
    ours_mesh, _ = meshes()
    rows = spmd.NamedSharding(ours_mesh, spmd.P("a"))
    cols = spmd.NamedSharding(ours_mesh, spmd.P(None, "b"))
    whole = spmd.NamedSharding(ours_mesh, spmd.P())
    tree = {"layer": {"w": spmd.device_put(X, rows), "b": spmd.device_put(X[0], whole)},
            "steps": [spmd.device_put(np.int32(7), whole)]}
    spmd.checkpoint.save(tmp_path / "ck", tree, step=3, metrics={"loss": 0.5})
    assert spmd.checkpoint.is_committed(str(tmp_path / "ck"))
    assert spmd.checkpoint.read_metadata(str(tmp_path / "ck"))["step"] == 3
    target = {"layer": {"w": cols, "b": spmd.NamedSharding(ours_mesh, spmd.P("a"))},
              "steps": [whole]}
    back = spmd.checkpoint.restore(tmp_path / "ck", target)
    assert back["layer"]["w"].sharding == cols
    np.testing.assert_array_equal(np.asarray(back["layer"]["w"]), X)
    np.testing.assert_array_equal(np.asarray(back["layer"]["b"]), X[0])
    assert int(back["steps"][0]) == 7
    flat = spmd.checkpoint.restore(tmp_path / "ck", whole)
    np.testing.assert_array_equal(np.asarray(flat["layer"]["w"]), X)
    with pytest.raises(spmd.errors.AlreadyExists):
        spmd.checkpoint.save(tmp_path / "ck", tree)


def test_checkpoint_manager_keeps_the_newest(tmp_path):
    mesh, _ = meshes()
    manager = spmd.checkpoint.CheckpointManager(tmp_path, max_to_keep=2)
    for step in range(4):
        params = {"w": spmd.device_put(X + step, spmd.NamedSharding(mesh, spmd.P("a")))}
        assert manager.save(step, params, metrics={"loss": 1.0 / (step + 1)})
    assert manager.all_steps() == [2, 3] and manager.latest_step() == 3
    back = manager.restore(3, {"w": spmd.NamedSharding(mesh, spmd.P())})
    np.testing.assert_array_equal(np.asarray(back["w"]), X + 3)


def test_data_loader_batches_cover_the_records_once_per_epoch():
    mesh, _ = meshes()
    records = np.arange(40 * 3, dtype=np.float32).reshape(40, 3)
    loader = spmd.data.DistributedDataLoader(
        records, 16, spmd.NamedSharding(mesh, spmd.P(("a", "b"))), seed=5)
    assert loader.batches_per_epoch == 3
    seen = []
    for batch in loader:
        data, mask = np.asarray(batch["data"]), np.asarray(batch["mask"])
        assert batch["data"].shape == (16, 3)
        seen.extend(data[mask][:, 0].tolist())
    assert sorted(seen) == records[:, 0].tolist()
    state = loader.state()
    first = np.asarray(loader.next()["data"])
    loader.restore(state)
    np.testing.assert_array_equal(np.asarray(loader.next()["data"]), first)
    with pytest.raises(spmd.errors.InvalidArgument):
        loader.restore("{not json")


def test_zero_copy_view_and_repr():
    a = spmd.device_put(X, spmd.devices()[0])
    view = np.asarray(a)
    assert not view.flags.writeable  # a view of the shard, as JAX's
    assert np.shares_memory(view, np.asarray(a))
    assert repr(snp.asarray(np.float32([1, 2]))) == repr(jjnp.asarray(np.float32([1, 2])))
    assert str(snp.asarray(np.float32([1, 2]))) == str(jjnp.asarray(np.float32([1, 2])))


def shard_views(a):
    return [np.asarray(s.data) for s in a.addressable_shards]


def test_device_put_aliases_numpy_memory_as_jax_does_on_cpu():
    host = X.copy()
    whole = spmd.device_put(host, spmd.devices()[0])
    assert np.shares_memory(np.asarray(whole), host)  # in and out: not a byte copied
    mesh = spmd.sharding.Mesh(np.array(spmd.devices()[:4]), ("x",))
    rows = spmd.device_put(host, spmd.NamedSharding(mesh, spmd.P("x")))
    assert all(np.shares_memory(v, host) for v in shard_views(rows))  # each shard whole rows
    replicated = spmd.device_put(host, spmd.NamedSharding(mesh, spmd.P()))
    assert all(np.shares_memory(v, host) for v in shard_views(replicated))
    columns = spmd.device_put(host, spmd.NamedSharding(mesh, spmd.P(None, "x")))
    assert not any(np.shares_memory(v, host) for v in shard_views(columns))  # not contiguous
    np.testing.assert_array_equal(np.asarray(columns), X)
    from_cb = spmd.make_array_from_callback(host.shape, rows.sharding, lambda i: host[i])
    assert all(np.shares_memory(v, host) for v in shard_views(from_cb))
    local = spmd.make_array_from_process_local_data(rows.sharding, host)
    assert all(np.shares_memory(v, host) for v in shard_views(local))
    # may_alias=False, and jnp.array (copy=True), copy; jnp.asarray does not.
    copied = spmd.device_put(host, spmd.devices()[0], may_alias=False)
    assert not np.shares_memory(np.asarray(copied), host)
    assert not np.shares_memory(np.asarray(snp.array(host)), host)
    assert np.shares_memory(np.asarray(snp.asarray(host)), host)
    with pytest.raises(ValueError):
        spmd.device_put(host, may_alias=True, donate=True)
    # The Array keeps the NumPy memory alive, and computes from it.
    alone = np.arange(6, dtype=np.float32)
    kept = spmd.device_put(alone, spmd.devices()[0])
    del alone
    np.testing.assert_array_equal(np.asarray(spmd.jit(lambda v: v * 2)(kept)),
                                  np.arange(6) * 2)
    # What is not C-contiguous float32/int32 (JAX's default types) is converted: a copy.
    wide = np.arange(4, dtype=np.float64)
    assert not np.shares_memory(np.asarray(spmd.device_put(wide, spmd.devices()[0])), wide)


def test_dlpack_both_ways_without_a_copy():
    host = X.copy()
    a = spmd.device_put(host, spmd.devices()[0])
    out = np.from_dlpack(a)  # DLPack 1.0: read-only, zero-copy
    assert np.shares_memory(out, host) and not out.flags.writeable
    theirs = jjnp.from_dlpack(a)  # JAX asks for an older DLPack: a copy
    np.testing.assert_array_equal(np.asarray(theirs), X)
    with pytest.raises(BufferError):
        a.__dlpack__(copy=False)  # read-only data to a consumer that cannot be told so
    back = snp.from_dlpack(host)
    assert np.shares_memory(np.asarray(back), host) and not back.committed
    copied = snp.from_dlpack(host, copy=True)
    assert not np.shares_memory(np.asarray(copied), host)
    from_jax = snp.from_dlpack(jjnp.arange(4.0, dtype=jjnp.float32))
    np.testing.assert_array_equal(np.asarray(from_jax), np.arange(4, dtype=np.float32))
    assert a.__dlpack_device__() == (1, 0)
