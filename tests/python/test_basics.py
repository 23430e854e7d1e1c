"""spmd's Python package against JAX itself: NumPy operations eager and under jit, sharded jit
(values and output shardings), grad over pytrees, random numbers, and errors."""
import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import spmd
import spmd.numpy as snp

RNG = np.random.default_rng(0)
A = RNG.standard_normal((8, 16)).astype(np.float32)
B = RNG.standard_normal((8, 16)).astype(np.float32)
W = RNG.standard_normal((16, 4)).astype(np.float32)
POS = (np.abs(A) + 0.5).astype(np.float32)


def on_one_device(x):
    mesh = spmd.sharding.Mesh(spmd.devices()[:1], ("d",))
    return spmd.device_put(x, spmd.NamedSharding(mesh, spmd.P()))


# name: (spmd's function, JAX's, operands)
OPS = {
    "add": (snp.add, jjnp.add, (A, B)),
    "subtract": (snp.subtract, jjnp.subtract, (A, B)),
    "multiply": (snp.multiply, jjnp.multiply, (A, B)),
    "divide": (snp.divide, jjnp.divide, (A, POS)),
    "maximum": (snp.maximum, jjnp.maximum, (A, B)),
    "minimum": (snp.minimum, jjnp.minimum, (A, B)),
    "exp": (snp.exp, jjnp.exp, (A,)),
    "log": (snp.log, jjnp.log, (POS,)),
    "tanh": (snp.tanh, jjnp.tanh, (A,)),
    "sqrt": (snp.sqrt, jjnp.sqrt, (POS,)),
    "abs": (snp.abs, jjnp.abs, (A,)),
    "negative": (snp.negative, jjnp.negative, (A,)),
    "sum": (snp.sum, jjnp.sum, (A,)),
    "mean": (snp.mean, jjnp.mean, (A,)),
    "max": (snp.max, jjnp.max, (A,)),
    "min": (snp.min, jjnp.min, (A,)),
    "argmax": (snp.argmax, jjnp.argmax, (A,)),
    "cumsum": (snp.cumsum, jjnp.cumsum, (A,)),
    "matmul": (snp.matmul, jjnp.matmul, (A, W)),
    "dot": (snp.dot, jjnp.dot, (A, W)),
    "transpose": (snp.transpose, jjnp.transpose, (A,)),
    "where": (lambda a, b: snp.where(snp.greater(a, b), a, b),
              lambda a, b: jjnp.where(a > b, a, b), (A, B)),
    "scalars": (lambda a: 2.0 * a - 1 + a / 4, lambda a: 2.0 * a - 1 + a / 4, (A,)),
    "power": (lambda a: a ** 2, lambda a: a ** 2, (A,)),
}


@pytest.mark.parametrize("name", sorted(OPS))
def test_numpy_operation_equals_jax_eager_and_under_jit(name):
    ours, theirs, operands = OPS[name]
    want = np.asarray(theirs(*operands))
    arrays = [on_one_device(x) for x in operands]
    eager = np.asarray(ours(*arrays))
    traced = np.asarray(spmd.jit(ours)(*arrays))
    for got in (eager, traced):
        assert got.dtype == want.dtype, (got.dtype, want.dtype)
        np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize("dtype", [np.int32, np.float32])
def test_integer_and_float_dtypes_keep_jaxs_promotion(dtype):
    a = (np.arange(12) - 4).astype(dtype).reshape(3, 4)
    got = np.asarray(spmd.jit(lambda x: snp.sum(x * 3 + 1, axis=0))(on_one_device(a)))
    want = np.asarray(jjnp.sum(jjnp.asarray(a) * 3 + 1, axis=0))
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def spec_entries(spec):
    out = [e for e in spec]
    while out and out[-1] is None:
        out.pop()
    return out


SHARDED = {
    "elementwise": (lambda a, b: a * b + 1.0, ("x", "y"), ("x", "y")),
    "reduce_rows": (lambda a, b: snp.sum(a, axis=0) + snp.sum(b, axis=0), ("x", "y"), ("x", "y")),
    "matmul_contracting": (lambda a, b: snp.matmul(a, snp.transpose(b)), (None, "y"), (None, "y")),
    "softmax_like": (lambda a, b: snp.exp(a) / snp.sum(snp.exp(a), axis=1, keepdims=True),
                     ("x", None), ("x", None)),
}
JAX_SHARDED = {
    "elementwise": lambda a, b: a * b + 1.0,
    "reduce_rows": lambda a, b: jjnp.sum(a, axis=0) + jjnp.sum(b, axis=0),
    "matmul_contracting": lambda a, b: a @ b.T,
    "softmax_like": lambda a, b: jjnp.exp(a) / jjnp.sum(jjnp.exp(a), axis=1, keepdims=True),
}


@pytest.mark.parametrize("name", sorted(SHARDED))
def test_sharded_jit_equals_jax_in_values_and_output_sharding(name):
    fn, a_spec, b_spec = SHARDED[name]
    mesh = spmd.make_mesh((2, 4), ("x", "y"), [spmd.AxisType.Auto] * 2)
    a = spmd.device_put(A, spmd.NamedSharding(mesh, spmd.P(*a_spec)))
    b = spmd.device_put(B, spmd.NamedSharding(mesh, spmd.P(*b_spec)))
    out = spmd.jit(fn)(a, b)
    jmesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(jax.sharding.AxisType.Auto,) * 2)
    ja = jax.device_put(A, jax.sharding.NamedSharding(jmesh, jax.sharding.PartitionSpec(*a_spec)))
    jb = jax.device_put(B, jax.sharding.NamedSharding(jmesh, jax.sharding.PartitionSpec(*b_spec)))
    want = jax.jit(JAX_SHARDED[name])(ja, jb)
    np.testing.assert_allclose(np.asarray(out), np.asarray(want), rtol=2e-5, atol=2e-5)
    assert spec_entries(out.sharding.spec) == spec_entries(want.sharding.spec)


def mlp_loss(lib):
    def loss(params, x, y):
        h = lib.tanh(lib.dot(x, params["w1"]) + params["b1"])
        return lib.mean((lib.dot(h, params["w2"]) - y) ** 2)
    return loss


def test_grad_over_a_dict_of_parameters_equals_jax():
    params = {"w1": RNG.standard_normal((16, 8)).astype(np.float32),
              "b1": np.zeros(8, np.float32),
              "w2": RNG.standard_normal((8, 1)).astype(np.float32)}
    y = RNG.standard_normal((8, 1)).astype(np.float32)
    mesh = spmd.sharding.Mesh(spmd.devices(), ("devices",))
    rows = spmd.NamedSharding(mesh, spmd.P("devices"))
    whole = spmd.NamedSharding(mesh, spmd.P())
    ours = spmd.tree_map(lambda p: spmd.device_put(p, whole), params)
    value, grads = spmd.jit(spmd.value_and_grad(mlp_loss(snp)))(
        ours, spmd.device_put(A, rows), spmd.device_put(y, rows))
    want_value, want = jax.value_and_grad(mlp_loss(jjnp))(params, A, y)
    np.testing.assert_allclose(np.asarray(value), np.asarray(want_value), rtol=1e-5)
    assert sorted(grads) == sorted(want)
    for k in want:
        np.testing.assert_allclose(np.asarray(grads[k]), np.asarray(want[k]), rtol=1e-4,
                                   atol=1e-5)


def test_random_equals_jax_bit_for_bit():
    key = spmd.random.PRNGKey(42)
    jkey = jax.random.PRNGKey(42)
    np.testing.assert_array_equal(np.asarray(key), np.asarray(jkey))
    for ours, theirs in [
        (spmd.random.normal(key, (10, 1)), jax.random.normal(jkey, (10, 1))),
        (spmd.random.uniform(key, (7,), minval=-2, maxval=3),
         jax.random.uniform(jkey, (7,), minval=-2, maxval=3)),
        (spmd.random.split(key, 3), jax.random.split(jkey, 3)),
        (spmd.random.randint(key, (5,), 0, 10), jax.random.randint(jkey, (5,), 0, 10)),
    ]:
        np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))
    traced = spmd.jit(lambda k: spmd.random.normal(k, (4,)))(key)
    np.testing.assert_array_equal(np.asarray(traced), np.asarray(jax.random.normal(jkey, (4,))))


def test_static_argnums_and_pytrees_of_results():
    f = spmd.jit(lambda x, n: {"scaled": x * n, "parts": (x + n, None)}, static_argnums=1)
    x = on_one_device(A)
    out = f(x, 3)
    assert set(out) == {"scaled", "parts"} and out["parts"][1] is None
    np.testing.assert_array_equal(np.asarray(out["scaled"]), A * 3)
    np.testing.assert_array_equal(np.asarray(f(x, 2)["parts"][0]), A + 2)


def test_eager_operations_take_list_arguments():
    x = on_one_device(A)
    np.testing.assert_array_equal(np.asarray(snp.reshape(x, [16, 8])), A.reshape(16, 8))
    np.testing.assert_array_equal(np.asarray(snp.transpose(x, [1, 0])), A.T)


def test_errors_are_spmds_classes_and_python_exceptions_pass_through():
    mesh = spmd.make_mesh((2, 4), ("x", "y"))  # Explicit axes: sharding in types
    a = spmd.device_put(A, spmd.NamedSharding(mesh, spmd.P("x", "y")))
    w = spmd.device_put(W, spmd.NamedSharding(mesh, spmd.P("y", None)))
    with pytest.raises(spmd.errors.ShardingTypeError, match="out_sharding"):
        spmd.jit(lambda p, q: snp.matmul(p, q))(a, w)
    assert issubclass(spmd.errors.ShardingTypeError, RuntimeError)

    def fails(x):
        raise KeyError("raised inside the traced function")

    with pytest.raises(KeyError, match="inside the traced function"):
        spmd.jit(fails)(a)
    with pytest.raises(spmd.errors.FailedPrecondition):
        spmd.distributed.initialize(num_processes=1)
    with pytest.raises(TypeError, match="spmd Arrays"):
        spmd.jit(lambda x: x)("A")  # JAX: "is not a valid JAX type", a TypeError too
