"""jax.nn beside spmd.nn: activations, normalisers, one_hot and the initializers, values and
gradients, and the inputs both refuse."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import spmd
from parity import covers, raises_like, same

RNG = np.random.default_rng(7)
X = np.concatenate([RNG.standard_normal(40) * 4,
                    [0.0, -0.0, np.inf, -np.inf, np.nan, 30.0, -30.0]]).astype(np.float32)
M = RNG.standard_normal((4, 6)).astype(np.float32)

# (name, args, kwargs, ulps[, atol]). gelu's approximate form cancels in 1 + tanh(...) for
# negative x, where tanh's last-place differences (XLA's polynomial, spmd's Eigen) become absolute
# ones of up to a few float32 epsilons times |x|.
CASES = [
    ("relu", (X,), {}, 0), ("sigmoid", (X,), {}, 4), ("gelu", (X,), {}, 4, 4e-6),
    ("gelu", (X,), {"approximate": False}, 16), ("silu", (X,), {}, 4),
    ("softmax", (M,), {}, 2), ("softmax", (M,), {"axis": 0}, 2), ("log_softmax", (M,), {}, 2),
    ("log_softmax", (M,), {"axis": 0}, 2), ("logsumexp", (M,), {"axis": 1}, 2),
    ("standardize", (M,), {}, 4), ("standardize", (M,), {"axis": 0}, 4),
    ("one_hot", (np.array([0, 2, -1, 5, 1]), 3), {}, 0),
    ("one_hot", (np.array([[0, 1], [2, 0]]), 3), {"axis": 0, "dtype": jnp.int32}, 0),
    # The rest of jax.nn's activations, each composed as JAX composes it: JAX's bits.
    ("relu6", (X,), {}, 0), ("softplus", (X,), {}, 0), ("sparse_plus", (X,), {}, 0),
    ("soft_sign", (X,), {}, 0), ("sparse_sigmoid", (X,), {}, 0), ("mish", (X,), {}, 0),
    ("log_sigmoid", (X,), {}, 0), ("elu", (X,), {}, 0), ("elu", (X,), {"alpha": 0.5}, 0),
    ("leaky_relu", (X,), {}, 0), ("leaky_relu", (X,), {"negative_slope": 0.2}, 0),
    ("hard_tanh", (X,), {}, 0), ("celu", (X,), {}, 0), ("celu", (X,), {"alpha": 2.0}, 0),
    ("selu", (X,), {}, 0), ("hard_sigmoid", (X,), {}, 0), ("hard_silu", (X,), {}, 0),
    ("hard_swish", (X,), {}, 0), ("tanh", (X,), {}, 0), ("identity", (X,), {}, 0),
    ("log1mexp", (np.abs(X[:40]) + 0.01,), {}, 0), ("glu", (M,), {}, 0),
    ("glu", (M,), {"axis": 0}, 0), ("logmeanexp", (M,), {}, 0),
    ("logmeanexp", (M,), {"axis": 1, "keepdims": True}, 0),
    ("logmeanexp", (M,), {"axis": 1, "where": M > 0}, 2),
    # XLA fuses x * x + b into one multiply-add before the square root, and x + sqrt(...)
    # cancels for negative x: a few float32 epsilons absolute.
    ("squareplus", (X,), {}, 4, 4e-6), ("squareplus", (X,), {"b": 1.0}, 4, 4e-6),
]


@covers("nn.relu", "nn.sigmoid", "nn.gelu", "nn.silu", "nn.softmax", "nn.log_softmax",
        "nn.logsumexp", "nn.standardize", "nn.one_hot", "nn.relu6", "nn.softplus",
        "nn.sparse_plus", "nn.soft_sign", "nn.sparse_sigmoid", "nn.mish", "nn.log_sigmoid",
        "nn.elu", "nn.leaky_relu", "nn.hard_tanh", "nn.celu", "nn.selu", "nn.hard_sigmoid",
        "nn.hard_silu", "nn.hard_swish", "nn.tanh", "nn.identity", "nn.log1mexp", "nn.glu",
        "nn.logmeanexp", "nn.squareplus", "nn.swish")
@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_matches_jax(case):
    name, args, kwargs, ulps = case[:4]
    atol = case[4] if len(case) > 4 else 0.0
    kw = dict(kwargs)
    if "dtype" in kw:
        kw_spmd = dict(kw, dtype=np.int32)
    else:
        kw_spmd = kw
    same(getattr(spmd.nn, name)(*args, **kw_spmd), getattr(jax.nn, name)(*args, **kw),
         f"nn.{name}", ulps, atol)


@covers("grad", "value_and_grad")
@pytest.mark.parametrize("name", ["relu", "sigmoid", "gelu", "silu", "log_softmax",
                                  "standardize", "relu6", "softplus", "elu", "leaky_relu",
                                  "hard_tanh", "log_sigmoid", "mish", "celu", "selu",
                                  "hard_silu", "glu", "soft_sign"])
def test_gradients_match_jax(name):
    w = np.linspace(0.5, 1.5, M.size, dtype=np.float32).reshape(M.shape)

    def loss(ns, np_):
        out_w = w[:, :3] if name == "glu" else w  # glu halves the last axis
        return lambda x: np_.sum(getattr(ns.nn, name)(x) * out_w)
    want = jax.grad(loss(jax, jnp))(M)
    # Within 8 ulps, or 2^-20 of the largest gradient where the two differ by cancellation (the
    # numerics table's gradient tolerance); standardize's backward pass subtracts means of
    # reductions added in other orders, 2^-18.
    scale = 2**-18 if name == "standardize" else 2**-20
    same(spmd.grad(loss(spmd, spmd.numpy))(M), want, f"grad nn.{name}", ulps=8,
         atol=float(np.max(np.abs(want))) * scale)
    value, grad = spmd.value_and_grad(loss(spmd, spmd.numpy))(M)
    same(grad, want, f"value_and_grad nn.{name}", ulps=8, atol=float(np.max(np.abs(want))) * scale)
    same(value, jax.value_and_grad(loss(jax, jnp))(M)[0], "its value", ulps=16)


@covers("nn.initializers")
@pytest.mark.parametrize("name,args", [("uniform", ()), ("normal", (0.5,)),
                                       ("glorot_uniform", ()), ("lecun_uniform", ()),
                                       ("he_uniform", ()), ("constant", (0.25,)),
                                       ("variance_scaling", (2.0, "fan_out", "normal")),
                                       ("truncated_normal", (0.5,)), ("glorot_normal", ()),
                                       ("lecun_normal", ()), ("he_normal", ()),
                                       ("xavier_normal", ()), ("kaiming_uniform", ())])
def test_initializers_match_jax(name, args):
    shape = (5, 3, 4, 6)
    want = getattr(jax.nn.initializers, name)(*args)(jax.random.PRNGKey(3), shape, jnp.float32)
    got = getattr(spmd.nn.initializers, name)(*args)(spmd.random.PRNGKey(3), shape, np.float32)
    same(got, want, f"initializers.{name}", ulps=1)


def test_zeros_and_ones_initializers():
    for name in ("zeros", "ones"):
        same(getattr(spmd.nn.initializers, name)(None, (2, 3)),
             getattr(jax.nn.initializers, name)(jax.random.PRNGKey(0), (2, 3)), name)


@pytest.mark.parametrize("name,args,kwargs", [
    ("one_hot", (np.array([0, 1]), 3), {"axis": -3}),
    ("one_hot", (np.array([0, 1]), 3), {"axis": 2}),
    ("softmax", (M,), {"axis": 2}),
    ("relu", ("x",), {}),
    ("glu", (M[:, :5],), {}),
    ("softplus", ("x",), {}),
])
def test_refuses_what_jax_refuses(name, args, kwargs):
    raises_like(lambda: getattr(jax.nn, name)(*args, **kwargs),
                lambda: getattr(spmd.nn, name)(*args, **kwargs), f"nn.{name}")


def test_a_bad_variance_scaling_is_refused_as_jax_refuses_it():
    raises_like(lambda: jax.nn.initializers.variance_scaling(1.0, "fan_in", "cauchy")(
                    jax.random.PRNGKey(0), (2, 3)),
                lambda: spmd.nn.initializers.variance_scaling(1.0, "fan_in", "cauchy")(
                    spmd.random.PRNGKey(0), (2, 3)), "variance_scaling('cauchy')")


ATT = np.random.default_rng(3)
Q = ATT.standard_normal((2, 5, 4, 8)).astype(np.float32)
K_ = ATT.standard_normal((2, 7, 2, 8)).astype(np.float32)
V = ATT.standard_normal((2, 7, 2, 8)).astype(np.float32)
ATTENTION = [
    {}, {"bias": ATT.standard_normal((2, 1, 5, 7)).astype(np.float32)},
    {"mask": ATT.random((2, 4, 5, 7)) > 0.3}, {"is_causal": True},
    {"scale": 0.3, "local_window_size": (2, 1)},
    {"query_seq_lengths": np.array([3, 5], np.int32),
     "key_value_seq_lengths": np.array([7, 4], np.int32)},
    {"is_causal": True, "return_residual": True},
]


@covers("nn.dot_product_attention")
@pytest.mark.parametrize("kw", ATTENTION, ids=[",".join(k) or "plain" for k in ATTENTION])
def test_dot_product_attention_matches_jax(kw):
    """Grouped query heads (4 over 2), each mask form, the residual, and rank-3 inputs: within
    the rounding of the two contractions' orders (a few float32 epsilons); its gradient too."""
    same(spmd.nn.dot_product_attention(Q, K_, V, **kw),
         jax.nn.dot_product_attention(Q, K_, V, **kw), f"dot_product_attention {sorted(kw)}",
         ulps=4, atol=1e-6)
    if not kw:
        same(spmd.nn.dot_product_attention(Q[0], K_[0], V[0]),
             jax.nn.dot_product_attention(Q[0], K_[0], V[0]), "of rank 3", ulps=4, atol=1e-6)

        def loss(ns):
            return lambda q: (ns.nn.dot_product_attention(q, K_, V, is_causal=True) ** 2).sum()
        same(spmd.grad(loss(spmd))(Q), jax.grad(loss(jax))(Q), "its gradient", ulps=8, atol=1e-5)


@pytest.mark.parametrize("what,call", [
    ("heads not a multiple", lambda nn: nn.dot_product_attention(Q[:, :, :3], K_, V)),
    ("value's shape", lambda nn: nn.dot_product_attention(Q, K_, V[:, :6])),
    ("a float mask", lambda nn: nn.dot_product_attention(Q, K_, V, mask=np.ones((2, 4, 5, 7)))),
    ("an unknown implementation", lambda nn: nn.dot_product_attention(Q, K_, V,
                                                                      implementation="x")),
])
def test_dot_product_attention_refuses_what_jax_refuses(what, call):
    raises_like(lambda: call(jax.nn), lambda: call(spmd.nn), what)
