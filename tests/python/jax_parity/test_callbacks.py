"""jax.debug.print, jax.debug.callback and jax.pure_callback beside JAX's: what is printed (the
same text, line for line), how often and with which values a callback runs (under jit, on a
sharded value, inside shard_map, under vmap and grad, eagerly), NumPy's print options as traced,
the two-call forms, the results of pure callbacks, their vmap methods, and the errors.

A callback computes with NumPy on its values: spmd computations there (x.mean() on the Array it
is given) stop with a clear error, where JAX runs them, since they would wait for the devices
running the callback."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import spmd
import spmd.numpy as snp
from parity import covers, raises_like, same

X = np.arange(8, dtype=np.float32) / 4 - 0.5
M = np.arange(12, dtype=np.float32).reshape(3, 4)


def printed(capsys, fn):
    """What fn(jax, jnp) and fn(spmd, spmd.numpy) write to stdout, once their effects are done."""
    capsys.readouterr()
    out = []
    for jx, np_ in ((jax, jnp), (spmd, snp)):
        fn(jx, np_)
        jx.effects_barrier()
        out.append(capsys.readouterr().out)
    return out


def same_text(capsys, fn, sort=False):
    want, got = printed(capsys, fn)
    assert want, "JAX printed nothing (the case is wrong)"
    if sort:  # per-device calls run in no set order
        want, got = sorted(want.splitlines()), sorted(got.splitlines())
    assert got == want, f"spmd printed:\n{got}\nJAX printed:\n{want}"


@covers("debug", "debug.print", "debug.callback", "effects_barrier")
def test_print_under_jit_formats_as_jax(capsys):
    def fn(jx, np_):
        def f(x, n):  # ordered: JAX's unordered prints come in the order XLA schedules them
            jx.debug.print("x = {}", x, ordered=True)
            jx.debug.print("sum {s:.3f}, max {m}, n {}", n, s=np_.sum(x), m=np_.max(x),
                           ordered=True)
            jx.debug.print("no placeholders:", x[2], skip_format_check=True, ordered=True)
            jx.debug.print(ordered=True)("plain text")
            return x * 2
        g = jx.jit(f)
        g(X, 3)
        g(X + 1, 4)  # the cached program prints the new values
    same_text(capsys, fn)


def test_print_of_a_sharded_value_prints_it_whole_once(capsys):
    def fn(jx, np_):
        mesh = jx.make_mesh((8,), ("x",))
        x = jx.device_put(X, jx.sharding.NamedSharding(mesh, jx.sharding.PartitionSpec("x")))
        jx.jit(lambda v: (jx.debug.print("{}", v * 2), v + 1)[1])(x)
    same_text(capsys, fn)


def test_print_inside_shard_map_prints_each_block(capsys):
    def fn(jx, np_):
        mesh = jx.make_mesh((8,), ("x",), axis_types=(jx.sharding.AxisType.Auto,))
        P = jx.sharding.PartitionSpec

        def body(b):
            jx.debug.print("block {}", b)
            return b
        jx.jit(jx.shard_map(body, mesh=mesh, in_specs=P("x"), out_specs=P("x")))(X)
    same_text(capsys, fn, sort=True)


def test_print_under_vmap_grad_and_eagerly(capsys):
    def fn(jx, np_):
        jx.vmap(lambda r, s: jx.debug.print("row {} scale {}", r, s), in_axes=(0, None))(
            np_.asarray(M), 2.5)
        jx.jit(jx.vmap(lambda r: (jx.debug.print("r {}", r), r)[1]))(M)

        def loss(x):
            jx.debug.print("primal {x}", x=x)
            return np_.sum(np_.sin(x))
        jx.grad(loss)(X)
        jx.jit(jx.value_and_grad(loss))(X)
        jx.debug.print("eager {} {}", np_.asarray(X[:3]), "text")
    same_text(capsys, fn, sort=True)


def test_print_keeps_the_print_options_it_was_traced_with(capsys):
    def fn(jx, np_):
        f = jx.jit(lambda x: (jx.debug.print("{}", x / 3), x)[1])
        with np.printoptions(precision=2):
            f(X)
        f(X)  # traced above: still two digits
    same_text(capsys, fn)


@covers("debug.log")
def test_debug_log_writes_a_record(caplog):
    for jx in (jax, spmd):
        with caplog.at_level("INFO"):
            jx.jit(lambda x: (jx.debug.log("logged {}", x), x)[1])(X[:2])
            jx.effects_barrier()
    messages = [r.getMessage() for r in caplog.records if "logged" in r.getMessage()]
    assert len(messages) == 2 and messages[0] == messages[1], messages


def test_debug_callback_passes_arrays_and_static_values(capsys):
    def fn(jx, np_):
        def show(a, label, *, k):
            print(type(a).__name__ == "Array" or type(a).__name__ == "ArrayImpl",
                  np.asarray(a).tolist(), label, k.dtype, k.shape)

        def f(x):
            jx.debug.callback(show, x[:2], "static", k=np_.ones((2, 2), np_.int32))
            jx.debug.callback(ordered=True)(show, x[2:4], "two-call form", k=x)
            return x
        jx.jit(f)(X)
        f(np_.asarray(X))
    same_text(capsys, fn, sort=True)


def test_a_failing_debug_callback_fails_the_call_and_is_logged(caplog):
    def boom(x):
        raise ZeroDivisionError("boom")
    for jx in (jax, spmd):
        with pytest.raises(RuntimeError, match="boom"):  # JAX's JaxRuntimeError; spmd's Error
            jx.jit(lambda x: (jx.debug.callback(boom, x), x + 1)[1])(X)
            jx.effects_barrier()
    assert sum("ZeroDivisionError" in (r.exc_text or "") for r in caplog.records) >= 2


def test_print_and_callback_errors_are_jaxs():
    for case, fn in {
        "an unused argument": lambda jx: jx.debug.print("{}", 1, 2),
        "an unused keyword (an f-string)": lambda jx: jx.debug.print("1.0", x=1.0),
        "a missing argument": lambda jx: jx.debug.print("{} {}", 1),
        "not callable": lambda jx: jx.debug.callback(3, 1),
        "two-call form with arguments": lambda jx: jx.debug.print(None, 1),
    }.items():
        raises_like(lambda: fn(jax), lambda: fn(spmd), case)


def _sin_and_sum(a):
    a = np.asarray(a)
    return np.sin(a), {"total": np.sum(a, keepdims=True)}


def _types(jx, x):
    return (jx.ShapeDtypeStruct(x.shape, x.dtype),
            {"total": jx.ShapeDtypeStruct((1,), x.dtype)})


@covers("pure_callback")
def test_pure_callback_results_under_jit_and_eagerly():
    outs = []
    for jx, np_ in ((jax, jnp), (spmd, snp)):
        x = np_.asarray(X)
        traced = jx.jit(lambda v: jx.pure_callback(_sin_and_sum, _types(jx, v), v * 2))(x)
        eager = jx.pure_callback(_sin_and_sum, _types(jx, x), x)
        def product(a, b):
            return np.float32(np.asarray(a) * np.asarray(b))
        scalar = jx.jit(lambda v: jx.pure_callback(product, jx.ShapeDtypeStruct((), np.float32),
                                                   v, 3.0))(np.float32(2))
        # A float64 result where float32 is declared: canonical with x64 off, as JAX takes it.
        wide = jx.jit(lambda v: jx.pure_callback(lambda a: np.asarray(a, np.float64),
                                                 jx.ShapeDtypeStruct(v.shape, v.dtype), v))(x)
        outs.append((traced, eager, scalar, wide))
    same(outs[1], outs[0], "pure_callback")


def test_pure_callback_vmap_methods():
    for method in ("sequential", "expand_dims", "broadcast_all"):
        results = []
        for jx, np_ in ((jax, jnp), (spmd, snp)):
            seen = []

            def cb(a, b):
                seen.append((np.shape(a), np.shape(b)))
                a, b = np.asarray(a), np.asarray(b)
                return a * b.reshape(b.shape + (1,) * (a.ndim - b.ndim))  # b: (), (1,) or (3,)

            def f(r, s):
                return jx.pure_callback(cb, jx.ShapeDtypeStruct(r.shape, r.dtype), r, s,
                                        vmap_method=method)
            out = jx.jit(jx.vmap(f, in_axes=(0, None)))(M, np.float32(2))
            results.append((out, sorted(set(seen))))
        same(results[1][0], results[0][0], f"vmap_method={method}")
        if method != "sequential":  # one call on the batch: the shapes it was given
            assert results[1][1] == results[0][1], (method, results)


def test_pure_callback_errors_are_jaxs():
    def ident(jx, v):
        return jx.pure_callback(lambda a: a, jx.ShapeDtypeStruct(v.shape, v.dtype), v)

    cases = {
        "vmap without a vmap_method": lambda jx: jx.vmap(lambda r: ident(jx, r))(M),
        "grad": lambda jx: jx.grad(lambda v: ident(jx, v).sum())(X),
        "an unknown vmap_method": lambda jx: jx.pure_callback(
            lambda a: a, jx.ShapeDtypeStruct((8,), np.float32), X, vmap_method="loop"),
        "a 64-bit result type with x64 off": lambda jx: jx.pure_callback(
            lambda a: a, jx.ShapeDtypeStruct((8,), np.float64), X),
    }
    for case, fn in cases.items():
        raises_like(lambda: fn(jax), lambda: fn(spmd), case)
    wrong = {
        "a result of another dtype": lambda a: np.zeros(8, np.int32),
        "a result of another shape": lambda a: np.zeros(4, np.float32),
        "two results for one": lambda a: (a, a),
        "an exception": lambda a: 1 / 0,
    }
    for case, cb in wrong.items():
        for jx in (jax, spmd):
            with pytest.raises(RuntimeError):  # JAX's JaxRuntimeError; spmd's Error
                jx.jit(lambda v: jx.pure_callback(cb, jx.ShapeDtypeStruct((8,), np.float32),
                                                  v))(X)


def test_an_unused_pure_callback_never_runs():
    calls = []

    def cb(a):
        calls.append(1)
        return a
    for jx in (jax, spmd):
        jx.jit(lambda v: (jx.pure_callback(cb, jx.ShapeDtypeStruct((8,), np.float32), v),
                          v + 1)[1])(X)
    assert not calls


def test_a_computation_inside_a_callback_is_refused_not_hung():
    def mean(a):
        print(float(a.mean()))

    with pytest.raises(RuntimeError, match="device's thread"):
        spmd.jit(lambda v: (spmd.debug.callback(mean, v), v + 1)[1])(X)
