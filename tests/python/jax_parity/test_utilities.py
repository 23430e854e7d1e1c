"""jax's top-level utilities beside spmd's: eval_shape and ShapeDtypeStruct, device_get,
default_backend, process_indices, named_scope, named_call and ensure_compile_time_eval."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import spmd
import spmd.numpy as snp
from parity import covers, raises_like

X = np.arange(12, dtype=np.float32).reshape(4, 3)


def _types(tree):
    """A pytree of JAX's ShapeDtypeStructs as comparable tuples (the sharding's spec, or
    None)."""
    return [(t.shape, np.dtype(t.dtype).name, t.weak_type,
             None if t.sharding is None else tuple(t.sharding.spec))
            for t in jax.tree_util.tree_leaves(tree)]


def _spmd_types(tree):
    leaves = spmd.tree_util.tree_leaves(tree)
    return [(t.shape, t.dtype.name, t.weak_type,
             None if t.sharding is None else tuple(t.sharding.spec)) for t in leaves]


@covers("eval_shape", "ShapeDtypeStruct")
@pytest.mark.parametrize("case", ["pytree", "struct", "scalar", "huge", "float64", "keywords"])
def test_eval_shape_matches_jax(case):
    """The result types of a function, for arrays, ShapeDtypeStructs (one too large for the
    machine: nothing is allocated), a weak Python scalar, a float64 struct (canonical, as
    JAX's) and keyword arguments."""
    fn, args, kwargs = {
        "pytree": (lambda np_: lambda a: (a.sum(0), {"i": a.astype(np_.int32)}), (X,), {}),
        "struct": (lambda np_: lambda a, k: a * k, ("S", 2.0), {}),
        "scalar": (lambda np_: np_.sin, (1.0,), {}),
        "huge": (lambda np_: lambda a: a @ a.T, ("HUGE",), {}),
        "float64": (lambda np_: lambda a: a + 1, ("F64",), {}),
        "keywords": (lambda np_: lambda a, *, b: a - b, (X,), {"b": np.float32(1)}),
    }[case]

    def made(lib):
        out = []
        for a in args:
            if not isinstance(a, str):
                pass
            elif a == "S":
                a = lib.ShapeDtypeStruct((4, 3), np.float32)
            elif a == "HUGE":
                a = lib.ShapeDtypeStruct((1 << 20, 4096), np.float32)
            elif a == "F64":
                a = lib.ShapeDtypeStruct((2,), np.float64)
            out.append(a)
        return out
    want = jax.eval_shape(fn(jnp), *made(jax), **kwargs)
    got = spmd.eval_shape(fn(snp), *made(spmd), **kwargs)
    assert _spmd_types(got) == _types(want), f"{case}: {got} vs JAX's {want}"
    assert spmd.tree_util.tree_structure(got).num_leaves == len(_types(want))


@covers("eval_shape")
def test_eval_shape_keeps_the_sharding_of_explicit_axes_as_jax():
    """On a mesh of Explicit axes a result's sharding is its type's; on Auto axes, None."""
    for kind in (spmd.AxisType.Explicit, spmd.AxisType.Auto):
        j_kind = getattr(jax.sharding.AxisType, kind.name)
        j_mesh = jax.make_mesh((8,), ("x",), devices=jax.devices()[:8], axis_types=(j_kind,))
        s_mesh = spmd.make_mesh((8,), ("x",), axis_types=(kind,))
        for fn in (lambda a: a * 2, lambda a: a.sum(0)):
            want = jax.eval_shape(fn, jax.ShapeDtypeStruct(
                (8, 4), np.float32, sharding=jax.sharding.NamedSharding(j_mesh, jax.P("x"))))
            got = spmd.eval_shape(fn, spmd.ShapeDtypeStruct(
                (8, 4), np.float32, sharding=spmd.NamedSharding(s_mesh, spmd.P("x"))))
            assert _spmd_types(got) == _types(want), f"{kind}: {got} vs JAX's {want}"


@covers("eval_shape", "ShapeDtypeStruct")
def test_shape_dtype_struct_and_eval_shape_errors_are_jaxs():
    s, j = spmd.ShapeDtypeStruct((4, 3), np.float32), jax.ShapeDtypeStruct((4, 3), np.float32)
    assert (s.shape, s.dtype, s.ndim, s.size, s.sharding, s.weak_type) == (
        j.shape, j.dtype, j.ndim, j.size, j.sharding, j.weak_type)
    assert repr(s) == repr(j) and len(s) == len(j)
    assert s == spmd.ShapeDtypeStruct((4, 3), np.float32) and hash(s) == hash(
        spmd.ShapeDtypeStruct((4, 3), np.float32))
    assert s != spmd.ShapeDtypeStruct((4, 3), np.int32)
    mesh = spmd.make_mesh((8,), ("x",))
    split = [spmd.ShapeDtypeStruct((8,), np.float32, sharding=spmd.NamedSharding(mesh, spmd.P("x")))
             for _ in range(2)]  # equal shardings, distinct objects: equal, one hash
    assert split[0] == split[1] and len(set(split)) == 1
    raises_like(lambda: jax.eval_shape(lambda a: a * 2, "x"),
                lambda: spmd.eval_shape(lambda a: a * 2, "x"), "a string argument")
    raises_like(lambda: jax.eval_shape(lambda a: a.reshape(5), X),
                lambda: spmd.eval_shape(lambda a: a.reshape(5), X), "a shape error")
    raises_like(lambda: len(jax.ShapeDtypeStruct((), np.float32)),
                lambda: len(spmd.ShapeDtypeStruct((), np.float32)), "len of a scalar")


@covers("device_get", "default_backend", "process_indices")
def test_device_get_default_backend_and_process_indices_are_jaxs():
    tree = lambda np_: {"a": np_.arange(3.0), "b": 3, "c": "text", "d": np.ones(2)}
    got, want = spmd.device_get(tree(snp)), jax.device_get(tree(jnp))
    assert {k: type(v) for k, v in got.items()} == {k: type(v) for k, v in want.items()}
    np.testing.assert_array_equal(got["a"], want["a"])
    assert spmd.default_backend() == jax.default_backend() == "cpu"
    assert spmd.process_indices() == jax.process_indices() == [0]


@covers("named_scope", "named_call", "ensure_compile_time_eval")
def test_scopes_change_nothing_as_in_jax():
    """named_scope and named_call name things for profilers; ensure_compile_time_eval; the
    values are the function's, and a name that is not a string is JAX's TypeError."""
    def f(lib, np_):
        def g(a):
            with lib.named_scope("layer"):
                with lib.ensure_compile_time_eval():
                    c = np_.cos(np_.float32(0.5))
                return np_.sin(a) * c
        return lib.jit(lib.named_call(g, name="block"))
    np.testing.assert_array_equal(np.asarray(f(spmd, snp)(X)), np.asarray(f(jax, jnp)(X)))
    assert spmd.named_call(np.sin).__name__ == jax.named_call(np.sin).__name__

    def bad(lib):
        with lib.named_scope(3):
            pass
    raises_like(lambda: bad(jax), lambda: bad(spmd), "a name that is not a string")


@covers("dtypes", "typing")
def test_dtypes_helpers_and_typing_annotations_match_jax():
    for d in ("float64", "int64", "uint64", "float16", "bool", np.int8, jnp.bfloat16):
        assert spmd.dtypes.canonicalize_dtype(d) == jax.dtypes.canonicalize_dtype(d), d
        assert spmd.dtypes.itemsize_bits(d) == jax.dtypes.itemsize_bits(d), d
    for args in ((np.float16(1), 2.0), (2.0, 3), (np.int8(1), np.uint8(2)), (True, 1)):
        assert (spmd.dtypes.result_type(*args, return_weak_type_flag=True)
                == jax.dtypes.result_type(*args, return_weak_type_flag=True)), args
    for x in (np.float32(1), np.int16(2), True, 3.0, np.complex64(1)):
        assert spmd.dtypes.scalar_type_of(x) is jax.dtypes.scalar_type_of(x), x
    assert spmd.dtypes.float0 == jax.dtypes.float0
    assert spmd.dtypes.bfloat16 == jax.dtypes.bfloat16
    for a, b in ((np.float32, np.floating), (np.int8, np.signedinteger), (jnp.bfloat16,
                                                                          np.floating)):
        assert spmd.dtypes.issubdtype(a, b) == jax.dtypes.issubdtype(a, b), (a, b)
    assert spmd.dtypes.finfo(np.float16).eps == jax.dtypes.finfo(np.float16).eps
    assert spmd.dtypes.iinfo(np.int16).max == jax.dtypes.iinfo(np.int16).max
    assert issubclass(spmd.dtypes.TypePromotionError, ValueError)
    import typing
    arrays = set(typing.get_args(spmd.typing.ArrayLike))
    assert {spmd.Array, np.ndarray, bool, int, float, complex} <= arrays
    assert str in typing.get_args(spmd.typing.DTypeLike)
