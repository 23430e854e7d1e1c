"""jax.random beside spmd.random: the same key gives the same values, bit for bit where JAX's
sampler is spmd::random's (the others within the ulps stated), for raw and typed keys, from NumPy
key data too, eagerly and under jit with sharded outputs; and the errors for bad keys."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import spmd
from parity import covers, raises_like, same

LOGITS = np.log(np.array([[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]], np.float32))
P = np.array([0.1, 0.0, 0.6, 0.3], np.float32)
A = np.arange(12, dtype=np.float32).reshape(4, 3)
GAMMA_A = np.array([[0.3, 1.0, 2.5], [0.05, 7.0, 0.9]], np.float32)

# (name, args after the key, kwargs, ulps)
CASES = [
    ("bits", ((3, 5),), {}, 0), ("bits", ((7,),), {"dtype": np.uint8}, 0),
    ("uniform", ((4, 3),), {}, 0), ("uniform", ((5,),), {"minval": -2.0, "maxval": 3.0}, 0),
    ("normal", ((4, 3),), {}, 0), ("normal", ((6,),), {"dtype": jnp.bfloat16}, 0),
    ("truncated_normal", (-1.5, 2.0, (4, 3)), {}, 0),
    ("bernoulli", (0.3, (20,)), {}, 0), ("bernoulli", (P,), {}, 0),
    ("randint", ((10,), -5, 17), {}, 0), ("gumbel", ((4, 3),), {}, 0),
    ("categorical", (LOGITS,), {}, 0), ("categorical", (LOGITS,), {"axis": 0}, 0),
    ("permutation", (10,), {}, 0), ("permutation", (A,), {}, 0),
    ("permutation", (A,), {"axis": 1}, 0),
    ("choice", (10, (4,)), {}, 0), ("choice", (10, (4,)), {"replace": False}, 0),
    ("choice", (4, (6,)), {"p": P}, 0), ("choice", (A, (2,)), {"replace": False}, 0),
    ("rademacher", ((12,),), {}, 0),
    ("exponential", ((500,),), {}, 0), ("laplace", ((500,),), {}, 0),
    ("logistic", ((500,),), {}, 0), ("lognormal", (0.5, (500,)), {}, 0),
    ("cauchy", ((500,),), {}, 0), ("cauchy", ((60,),), {"dtype": np.float16}, 0),
    ("exponential", ((60,),), {"dtype": jnp.bfloat16}, 0),
    ("laplace", ((60,),), {"dtype": np.float16}, 0),
    ("logistic", ((60,),), {"dtype": jnp.bfloat16}, 0),
    ("lognormal", (1.5, (60,), np.float16), {}, 0),
    ("exponential", ((),), {}, 0), ("laplace", ((0, 3),), {}, 0),
    ("logistic", ((2, 0),), {"dtype": np.float16}, 0), ("lognormal", (0.0, (7,)), {}, 0),
    # An array sigma: normal times sigma through jnp.exp (XLA's).
    ("lognormal", (np.array([0.5, 1.0, 2.0], np.float32),), {}, 0),
    # Other sigmas: sqrt(2) * sigma folded first, as XLA folds it (in bfloat16 JAX's order).
    ("lognormal", (np.array([0.3, 0.7, 1.9], np.float32), (400, 3)), {}, 0),
    ("lognormal", (np.array([0.3, 0.7, 1.9], np.float16), (400, 3), np.float16), {}, 0),
    ("lognormal", (jnp.array([0.3, 0.7, 1.9], jnp.bfloat16), (400, 3), jnp.bfloat16), {}, 0),
    # The gamma family: JAX's draws, rejections and values (XLA's rsqrt in c = (1/3) rsqrt(d),
    # and its exp, kernels/xla_math.h). dirichlet's softmax and ball's norm are XLA's (rows
    # summed in order up to 31, in windows of 32 beyond; a product by the reciprocal or by
    # (sum + e)^(-1/p)) below 4,096 elements. From 4,096 XLA hands the reduction, and the
    # logarithms and exp fused around it, to YNNPACK: its exp, log and sum order
    # (kernels/ynn_reduce.h), over rows of 3, 4, 300 and 5,000 values. JAX's bits throughout.
    ("gamma", (GAMMA_A,), {}, 0), ("gamma", (2.0,), {"shape": (4, 5)}, 0),
    ("loggamma", (GAMMA_A,), {}, 0), ("beta", (GAMMA_A, GAMMA_A[::-1]), {}, 0),
    ("beta", (0.5, 2.0), {"shape": (50,)}, 0), ("dirichlet", (GAMMA_A,), {}, 0),
    ("dirichlet", (np.array([0.2, 1.0, 4.0], np.float32),), {"shape": (7,)}, 0),
    ("dirichlet", (np.linspace(0.3, 3.0, 31).astype(np.float32),), {"shape": (6,)}, 0),
    ("dirichlet", (np.linspace(0.3, 3.0, 40).astype(np.float32),), {"shape": (6,)}, 0),
    ("dirichlet", (np.linspace(0.3, 3.0, 100).astype(np.float32),), {"shape": (30,)}, 0),
    ("dirichlet", (np.linspace(0.3, 3.0, 3).astype(np.float32),), {"shape": (3000,)}, 0),
    ("dirichlet", (np.linspace(0.3, 3.0, 3).astype(np.float32),), {"shape": (1365,)}, 0),
    ("dirichlet", (np.linspace(0.2, 5.0, 4).astype(np.float32),), {"shape": (1024,)}, 0),
    ("dirichlet", (np.linspace(0.1, 3.0, 300).astype(np.float32),), {"shape": (14,)}, 0),
    ("dirichlet", (np.linspace(0.5, 2.0, 5000).astype(np.float32),), {}, 0),
    ("generalized_normal", (1.5, (40,)), {}, 0), ("ball", (3,), {"shape": (20,)}, 0),
    ("ball", (2, 1.0), {"shape": (5,)}, 0), ("ball", (40, 1.5), {"shape": (6,)}, 0),
    ("ball", (5, 3.0), {"shape": (40,)}, 0), ("ball", (3,), {"shape": (2000,)}, 0),
    ("ball", (300, 1.5), {"shape": (14,)}, 0), ("ball", (4096, 3.0), {}, 0),
]


@covers("random.bits", "random.uniform", "random.normal", "random.truncated_normal",
        "random.bernoulli", "random.randint", "random.gumbel", "random.categorical",
        "random.permutation", "random.choice", "random.rademacher", "random.exponential",
        "random.laplace", "random.logistic", "random.lognormal", "random.cauchy",
        "random.gamma", "random.loggamma", "random.beta", "random.dirichlet",
        "random.generalized_normal", "random.ball", "random.PRNGKey")
@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
@pytest.mark.parametrize("typed", [False, True], ids=["raw", "typed"])
def test_matches_jax(case, typed):
    name, args, kwargs, ulps = case
    skey = spmd.random.key(42) if typed else spmd.random.PRNGKey(42)
    got = getattr(spmd.random, name)(skey, *args, **kwargs)
    same(got, _jax_draw(case), f"random.{name}", ulps)


_JAX_DRAWS = {}


def _jax_draw(case):
    """JAX's draw for `case` from PRNGKey(42), compiled once for the raw and the typed key: JAX's
    key(42) holds PRNGKey(42)'s data and its samplers draw the same bits from either
    (test_a_typed_key_draws_what_its_raw_key_draws_in_jax), and each compile of a sampler cost
    up to 1.8 s."""
    if id(case) not in _JAX_DRAWS:
        name, args, kwargs, _ = case
        _JAX_DRAWS[id(case)] = getattr(jax.random, name)(jax.random.PRNGKey(42), *args, **kwargs)
    return _JAX_DRAWS[id(case)]


def test_a_typed_key_draws_what_its_raw_key_draws_in_jax():
    for name, args, kwargs in (("normal", ((4, 3),), {}), ("gamma", (GAMMA_A,), {}),
                               ("permutation", (10,), {})):
        draws = [getattr(jax.random, name)(k, *args, **kwargs)
                 for k in (jax.random.key(42), jax.random.PRNGKey(42))]
        same(draws[0], draws[1], f"jax.random.{name} from key(42) and PRNGKey(42)")


@covers("random.key", "random.key_data", "random.wrap_key_data", "random.split",
        "random.fold_in")
def test_keys_split_and_fold_in_match_jax():
    jk, sk = jax.random.key(7), spmd.random.key(7)
    same(spmd.random.key_data(sk), jax.random.key_data(jk), "key_data(key(7))")
    same(spmd.random.key_data(spmd.random.split(sk, 3)), jax.random.key_data(
        jax.random.split(jk, 3)), "split(key, 3)")
    same(spmd.random.key_data(spmd.random.fold_in(sk, 5)),
         jax.random.key_data(jax.random.fold_in(jk, 5)), "fold_in(key, 5)")
    data = np.array([[1, 2], [3, 4]], np.uint32)
    jw, sw = jax.random.wrap_key_data(data), spmd.random.wrap_key_data(data)
    assert sw.shape == jw.shape == (2,)
    same(spmd.random.normal(sw[1], (3,)), jax.random.normal(jw[1], (3,)), "normal(wrapped[1])")
    same(spmd.random.uniform(np.array([0, 9], np.uint32), (3,)),
         jax.random.uniform(np.array([0, 9], np.uint32), (3,)), "a NumPy raw key")
    same(spmd.random.split(spmd.random.PRNGKey(3)), jax.random.split(jax.random.PRNGKey(3)),
         "split of a raw key")


def test_typed_keys_pass_through_jit():
    k = spmd.random.key(11)
    out = spmd.jit(lambda key: spmd.random.normal(spmd.random.split(key)[1], (4,)))(k)
    same(out, jax.jit(lambda key: jax.random.normal(jax.random.split(key)[1], (4,)))(
        jax.random.key(11)), "normal under jit of a typed key")


def test_sharded_samples_under_jit_equal_unsharded_jax():
    mesh = spmd.make_mesh((8,), ("x",))
    f = spmd.jit(lambda key: (spmd.random.normal(key, (16, 3)),
                              spmd.random.uniform(key, (16,))),
                 out_shardings=spmd.NamedSharding(mesh, spmd.P("x")))
    got = f(spmd.random.PRNGKey(5))
    assert tuple(got[0].sharding.spec) == ("x",)
    same(got, (jax.random.normal(jax.random.PRNGKey(5), (16, 3)),
               jax.random.uniform(jax.random.PRNGKey(5), (16,))), "sharded normal, uniform")


def test_sharded_dirichlet_and_ball_of_4096_values_under_jit_equal_unsharded_jax():
    # YNNPACK's exp, log and sums (kernels/ynn_reduce.h) inside a sharded program.
    mesh = spmd.make_mesh((8,), ("x",))
    alpha = np.linspace(0.2, 5.0, 4).astype(np.float32)
    f = spmd.jit(lambda key: (spmd.random.dirichlet(key, alpha, (1024,)),
                              spmd.random.ball(key, 4, 2.0, (1024,))),
                 out_shardings=spmd.NamedSharding(mesh, spmd.P("x")))
    got = f(spmd.random.PRNGKey(9))
    assert tuple(got[0].sharding.spec) == ("x",)
    same(got, (jax.random.dirichlet(jax.random.PRNGKey(9), alpha, (1024,)),
               jax.random.ball(jax.random.PRNGKey(9), 4, 2.0, (1024,))), "sharded dirichlet, ball")


def test_dirichlet_and_ball_of_4096_values_at_their_edges_are_jaxs():
    """From 4,096 values (YNNPACK's program): NaN, inf, 0, negative and tiny alphas give JAX's
    NaN rows and values, and a p below 1 its powers."""
    alpha = np.tile(np.array([0.5, np.nan, 2.0, 1e-30], np.float32), 1024).reshape(1024, 4)
    alpha[5], alpha[6], alpha[7] = [np.inf, 1, 1, 1], [0, 1, 1, 1], [-1, 1, 1, 1]
    alpha[8] = [3.0, 1.0, 0.7, 2.5]
    same(spmd.random.dirichlet(spmd.random.PRNGKey(3), alpha),
         jax.random.dirichlet(jax.random.PRNGKey(3), alpha), "dirichlet at its edges")
    same(spmd.random.ball(spmd.random.PRNGKey(3), 4, 0.5, (1024,)),
         jax.random.ball(jax.random.PRNGKey(3), 4, 0.5, (1024,)), "ball with p = 0.5")


@pytest.mark.parametrize("name,args", [("normal", ((2,),)), ("uniform", ((2,),)),
                                       ("split", ())])
def test_a_bad_key_is_refused_as_jax_refuses_it(name, args):
    bad = np.array([1.0, 2.0], np.float32)
    raises_like(lambda: getattr(jax.random, name)(bad, *args),
                lambda: getattr(spmd.random, name)(bad, *args), f"random.{name} of floats")


def test_bad_arguments_are_refused_as_jax_refuses_them():
    raises_like(lambda: jax.random.normal(jax.random.PRNGKey(0), (2,), jnp.int32),
                lambda: spmd.random.normal(spmd.random.PRNGKey(0), (2,), np.int32),
                "normal of int32")
    raises_like(lambda: jax.random.fold_in(jax.random.PRNGKey(0), 2**33),
                lambda: spmd.random.fold_in(spmd.random.PRNGKey(0), 2**33), "fold_in 2**33")


def test_under_x64_the_default_float_is_float64_or_a_clear_refusal():
    """With jax_enable_x64 JAX samples float64 by default: spmd's uniform does too (JAX's
    values); normal, gumbel and truncated_normal, which spmd samples in float32 only, refuse the
    default with NotImplementedError naming the fix, rather than answer in float32."""
    jax.config.update("jax_enable_x64", True)
    spmd.config.update("jax_enable_x64", True)
    try:
        same(spmd.random.uniform(spmd.random.PRNGKey(4), (5,)),
             jax.random.uniform(jax.random.PRNGKey(4), (5,)), "uniform under x64")
        for name in ("normal", "gumbel", "lognormal"):
            with pytest.raises(NotImplementedError, match="float64"):
                getattr(spmd.random, name)(spmd.random.PRNGKey(4), shape=(5,))
        same(spmd.random.normal(spmd.random.PRNGKey(4), (5,), np.float32),
             jax.random.normal(jax.random.PRNGKey(4), (5,), jnp.float32), "normal float32")
    finally:
        jax.config.update("jax_enable_x64", False)
        spmd.config.update("jax_enable_x64", False)


@covers("random.gamma", "random.loggamma")
def test_gamma_over_a_range_of_shapes_takes_jaxs_draws_and_its_errors():
    """Shape parameters from 1e-3 (boosted, in log space for loggamma) to 100, 300 samples:
    every rejection loop takes JAX's draws and every value is JAX's bit for bit; a vmap over
    keys; JAX's errors for a
    shape the parameters do not broadcast to and a 0-d dirichlet alpha; float16, which spmd
    does not sample, refused by name."""
    a = np.tile(np.array([1e-3, 0.1, 0.5, 0.9, 1.0, 1.5, 3.0, 10.0, 100.0, 0.0], np.float32), 30)
    for name in ("gamma", "loggamma"):
        same(getattr(spmd.random, name)(spmd.random.PRNGKey(3), a),
             getattr(jax.random, name)(jax.random.PRNGKey(3), a), f"{name} over a range", 0)
    keys = np.asarray(jax.random.split(jax.random.PRNGKey(5), 3))
    same(spmd.vmap(lambda k: spmd.random.gamma(k, GAMMA_A))(keys),
         jax.vmap(lambda k: jax.random.gamma(k, GAMMA_A))(keys), "vmap of gamma over keys", 0)
    raises_like(lambda: jax.random.gamma(jax.random.PRNGKey(0), np.ones(3), shape=(2,)),
                lambda: spmd.random.gamma(spmd.random.PRNGKey(0), np.ones(3), shape=(2,)),
                "gamma of a shape a does not broadcast to")
    raises_like(lambda: jax.random.dirichlet(jax.random.PRNGKey(0), 1.0),
                lambda: spmd.random.dirichlet(spmd.random.PRNGKey(0), 1.0), "0-d dirichlet")
    with pytest.raises(NotImplementedError, match="float32 only"):
        spmd.random.gamma(spmd.random.PRNGKey(0), 1.0, dtype=np.float16)


@covers("random.poisson")
def test_poisson_takes_jaxs_draws_in_both_algorithms():
    """Rates below 10 (Knuth's products), above (Hormann's rejection, whose rounds all elements
    share) and mixed in one array, 0 and a NaN rate; every count equal to JAX's, int32 and
    int64 under x64; JAX's error for a float dtype."""
    lam = np.array([0.0, 0.3, 2.0, 9.5, 10.0, 35.0, 1e3, 4e5, np.nan], np.float32)
    for rates in (lam, np.tile(lam[:4], 40), np.tile(lam[4:8], 40),
                  np.random.default_rng(6).uniform(0, 60, (5, 30)).astype(np.float32)):
        same(spmd.random.poisson(spmd.random.PRNGKey(9), rates),
             jax.random.poisson(jax.random.PRNGKey(9), rates), f"poisson of {rates.shape}")
    same(spmd.random.poisson(spmd.random.PRNGKey(2), 4.0, (3, 7)),
         jax.random.poisson(jax.random.PRNGKey(2), 4.0, (3, 7)), "a rate broadcast to a shape")
    raises_like(lambda: jax.random.poisson(jax.random.PRNGKey(0), 1.0, dtype=np.float32),
                lambda: spmd.random.poisson(spmd.random.PRNGKey(0), 1.0, dtype=np.float32),
                "poisson of float32")
    jax.config.update("jax_enable_x64", True)
    spmd.config.update("jax_enable_x64", True)
    try:
        same(spmd.random.poisson(spmd.random.PRNGKey(1), lam[:7]),
             jax.random.poisson(jax.random.PRNGKey(1), lam[:7]), "poisson under x64")
    finally:
        jax.config.update("jax_enable_x64", False)
        spmd.config.update("jax_enable_x64", False)


@covers("random.rademacher", "random.beta", "random.dirichlet", "random.generalized_normal",
        "random.ball", "random.orthogonal", "random.multivariate_normal", "random.lognormal")
def test_compositions_at_their_edges_are_jaxs():
    """spmd::random's compositions at the edges: empty samples and zero dimensions, one
    category, p = inf, a zero or NaN shape parameter, infinite and NaN sigmas, float16 signs and
    a 0-d bfloat16 sigma; the same values, shapes and dtypes as JAX's, bit for bit."""
    f32 = np.float32
    cases = [
        ("orthogonal", (0,), {}), ("orthogonal", (1,), {}), ("orthogonal", (3, (0,)), {}),
        ("multivariate_normal", (np.zeros(0, f32), np.zeros((0, 0), f32)), {}),
        ("multivariate_normal", (np.zeros(2, f32), np.eye(2, dtype=f32), (0,)), {}),
        ("dirichlet", (np.ones(1, f32),), {}), ("dirichlet", (np.ones(3, f32), (0,)), {}),
        ("dirichlet", (np.ones(0, f32),), {}),
        ("ball", (0,), {}), ("ball", (3,), {"shape": (0,)}), ("ball", (3, np.inf, (5,)), {}),
        ("beta", (0.5, 0.5), {}), ("beta", (0.0, 1.0, (4,)), {}), ("beta", (np.nan, 1.0, (4,)), {}),
        ("generalized_normal", (np.inf, (4,)), {}), ("generalized_normal", (0.5, (50,)), {}),
        ("rademacher", ((0,),), {}), ("rademacher", ((9,), jnp.float16), {}),
        ("lognormal", (np.zeros(0, f32),), {}),
        ("lognormal", (np.array([np.inf, np.nan, 0, -1], f32), (2, 4)), {}),
        ("lognormal", (jnp.array(0.3, jnp.bfloat16),), {"dtype": jnp.bfloat16}),
    ]
    for name, args, kwargs in cases:
        want = getattr(jax.random, name)(jax.random.PRNGKey(3), *args, **kwargs)
        got = getattr(spmd.random, name)(spmd.random.PRNGKey(3), *args, **kwargs)
        same(got, want, f"random.{name}{args}{kwargs}")


@covers("random.orthogonal", "random.multivariate_normal")
def test_orthogonal_and_multivariate_normal_match_jax():
    """orthogonal of square, tall (m < n) and wide matrices and a batch: JAX's values bit for bit
    (both factor with OpenBLAS's LAPACK); multivariate_normal of one mean and of batched means
    and covariances (one draw per factor: a matrix-vector product, XLA's own loop, summed in its
    order: JAX's bits), and with draws sharing a factor (a shape): within 2 ulps, the product
    (draws × n) · (n × n)ᵀ being YNNPACK's GEMM in JAX, whose summation order changes with the
    shape (DESIGN.md, "Matrix products in JAX's order"); JAX's errors for mismatched shapes."""
    for n, shape, m in ((4, (), None), (5, (3,), None), (3, (), 5), (5, (2,), 3)):
        same(spmd.random.orthogonal(spmd.random.PRNGKey(4), n, shape, m=m),
             jax.random.orthogonal(jax.random.PRNGKey(4), n, shape, m=m),
             f"orthogonal({n}, {shape}, m={m})")
    rng = np.random.default_rng(5)
    g = rng.standard_normal((2, 3, 3)).astype(np.float32)
    cov = g @ np.swapaxes(g, -1, -2) + np.eye(3, dtype=np.float32)
    mean = rng.standard_normal((2, 3)).astype(np.float32)
    for args, kw, ulps in (((mean[0], cov[0]), {}, 0), ((mean, cov), {}, 0),
                           ((mean, cov), {"shape": (2,)}, 0),
                           ((mean[0], cov[0]), {"shape": (4,)}, 2),
                           ((mean, cov[0]), {"shape": (5, 2)}, 2)):
        same(spmd.random.multivariate_normal(spmd.random.PRNGKey(6), *args, **kw),
             jax.random.multivariate_normal(jax.random.PRNGKey(6), *args, **kw),
             f"multivariate_normal of {[np.shape(a) for a in args]}, {kw}", ulps=ulps)
    for n in (8, 13, 33):  # one draw of a larger factor: a tile of eight rows and lanes
        g = rng.standard_normal((n, n)).astype(np.float32)
        c = g @ g.T + n * np.eye(n, dtype=np.float32)
        mu = rng.standard_normal(n).astype(np.float32)
        same(spmd.random.multivariate_normal(spmd.random.PRNGKey(n), mu, c),
             jax.random.multivariate_normal(jax.random.PRNGKey(n), mu, c),
             f"multivariate_normal of one draw, n = {n}")
    raises_like(lambda: jax.random.multivariate_normal(jax.random.PRNGKey(0), mean[0], cov[0, :2]),
                lambda: spmd.random.multivariate_normal(spmd.random.PRNGKey(0), mean[0],
                                                        cov[0, :2]), "cov of the wrong shape")


@covers("random.gamma", "random.poisson")
def test_gamma_and_poisson_at_their_edges_are_jaxs():
    """NaN, negative, zero and infinite parameters: the loops end and give JAX's values."""
    a = np.array([np.nan, -0.5, -2.0, np.inf, 0.0], np.float32)
    same(spmd.random.gamma(spmd.random.PRNGKey(1), a), jax.random.gamma(jax.random.PRNGKey(1), a),
         "gamma at its edges", 8)
    lam = np.array([np.inf, -1.0, 0.0, np.nan], np.float32)
    same(spmd.random.poisson(spmd.random.PRNGKey(1), lam),
         jax.random.poisson(jax.random.PRNGKey(1), lam), "poisson at its edges")


@pytest.mark.parametrize("name,args", [
    ("lognormal", (np.float32(2.0), (3,), np.float16)),
    ("lognormal", (jnp.array([1.0, 2.0], jnp.bfloat16), (2,), jnp.float16)),
    ("beta", (np.float32(2.0), 1.0, (2,), np.float16)),
])
def test_a_parameter_that_would_not_cast_safely_is_jaxs_type_promotion_error(name, args):
    """JAX refuses a parameter its promotion would not cast to the sampled dtype without loss
    (float32 to float16, bfloat16 to float16: TypePromotionError, a ValueError); spmd raises
    its TypePromotionError with JAX's message. A Python scalar is weak and takes the dtype
    (CASES' float16 lognormal)."""
    with pytest.raises(jax.dtypes.TypePromotionError) as theirs:
        getattr(jax.random, name)(jax.random.PRNGKey(0), *args)
    with pytest.raises(spmd.errors.TypePromotionError) as ours:
        getattr(spmd.random, name)(spmd.random.PRNGKey(0), *args)
    assert isinstance(ours.value, ValueError)
    assert str(ours.value) == str(theirs.value)


DF = np.array([[0.7, 1.0, 3.0], [5.5, 12.0, 40.0]], np.float32)
# (name, args after the key, kwargs, ulps, relative tolerance): JAX's draws throughout. maxwell's
# norm and double_sided_maxwell's scale-and-shift round as XLA's fused multiply-adds do not
# here (a last place, 8 after the scaling); wald's x = mean + mean² y / 2 - mean / 2 sqrt(...)
# cancels, so that such a last place grows (1e-5 of the values' largest).
COMPOSED = [
    ("chisquare", (DF,), {}, 0, 0), ("chisquare", (3.0, (500,)), {}, 0, 0),
    ("f", (DF, DF[::-1]), {}, 0, 0), ("f", (3.0, 5.0, (500,)), {}, 0, 0),
    ("t", (DF,), {}, 0, 0), ("t", (4.0, (500,)), {}, 0, 0),
    ("t", (DF[0], (4, 3)), {}, 0, 0), ("pareto", (2.0, (500,)), {}, 0, 0),
    ("pareto", (DF,), {}, 0, 0), ("rayleigh", (1.5, (500,)), {}, 0, 0),
    ("rayleigh", (DF,), {}, 0, 0), ("weibull_min", (1.5, 2.0, (500,)), {}, 0, 0),
    ("weibull_min", (DF, 1.5), {}, 0, 0), ("geometric", (0.3, (500,)), {}, 0, 0),
    ("geometric", (DF / 50,), {}, 0, 0), ("geometric", (0.5, (9,), np.int16), {}, 0, 0),
    ("triangular", (0.0, 0.3, 1.0, (500,)), {}, 0, 0),
    ("triangular", (-DF, 0.0, DF), {}, 0, 0),
    ("maxwell", ((500,),), {}, 1, 0), ("double_sided_maxwell", (0.5, 2.0, (500,)), {}, 8, 0),
    ("double_sided_maxwell", (DF[0], 2.0), {}, 8, 0), ("wald", (1.5, (500,)), {}, 0, 1e-5),
    ("wald", (DF,), {}, 0, 1e-5),
]


@covers("random.chisquare", "random.f", "random.t", "random.pareto", "random.rayleigh",
        "random.weibull_min", "random.geometric", "random.triangular", "random.maxwell",
        "random.double_sided_maxwell", "random.wald")
@pytest.mark.parametrize("case", COMPOSED, ids=[f"{c[0]}-{i}" for i, c in enumerate(COMPOSED)])
def test_composed_samplers_take_jaxs_draws(case):
    name, args, kwargs, ulps, rtol = case
    traced = [i for i, a in enumerate(args) if isinstance(a, (float, np.ndarray))]

    def sample(m, k, *values):
        full = list(args)
        for i, v in zip(traced, values):
            full[i] = v
        return getattr(m.random, name)(k, *full, **kwargs)
    # Under jit the parameters are the program's arguments (as constants each compiler folds
    # them its own way: XLA's rewrites of divisions by constants are not spmd's).
    values = [args[i] for i in traced]
    for how, got, want in (
            ("eagerly", sample(spmd, spmd.random.key(3)), sample(jax, jax.random.key(3))),
            ("under jit", spmd.jit(lambda k, *v: sample(spmd, k, *v))(spmd.random.key(3),
                                                                        *values),
             jax.jit(lambda k, *v: sample(jax, k, *v))(jax.random.key(3), *values))):
        atol = rtol * float(np.nanmax(np.abs(np.asarray(want)))) if rtol else 0.0
        same(got, want, f"random.{name} {how}", ulps, atol)


def test_composed_samplers_refuse_as_jax_does():
    cases = {
        "an int dtype for t": lambda m: m.random.t(m.random.key(0), 3.0, (2,), np.int32),
        "a float dtype for geometric": lambda m: m.random.geometric(m.random.key(0), 0.5, (2,),
                                                                    np.float32),
        "a shape the parameters do not broadcast to": lambda m: m.random.chisquare(
            m.random.key(0), DF, (5,)),
        "not a key": lambda m: m.random.pareto(3, 2.0),
    }
    for case, fn in cases.items():
        raises_like(lambda: fn(jax), lambda: fn(spmd), case)
