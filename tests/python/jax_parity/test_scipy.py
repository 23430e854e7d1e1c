"""jax.scipy.special and jax.scipy.stats, and lax.lgamma, lax.digamma and lax.erf_inv, beside
JAX's: values over grids that cross each function's branches (reflection below 1/2, the poles,
the series' and the asymptotic tails' bounds, ±0, ±inf, NaN), under jit and eagerly, in float32
and float16, their derivatives, and the errors. float32 values and derivatives are JAX's bit for
bit, but where JAX's own program is another order of the same arithmetic: ndtri's polynomials
(JAX's polyval scan fuses its Horner steps; within 4 ulps), multigammaln's sum (1 ulp) and
multivariate_normal's squared norms (a contraction in JAX). float64 within a few ulps: XLA's
float64 log1p is not the C library's."""
import jax
import jax.numpy as jnp
import jax.scipy.stats as jst
import numpy as np
import pytest

import spmd
import spmd.lax
import spmd.numpy as snp
import spmd.scipy.special as ssp
import spmd.scipy.stats as sst
from parity import covers, raises_like, same

EDGES = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, 2.0, 0.5, -0.5, -1.0, -2.5, 1e-30, -1e-30,
         1e30, 3e38]
GRID = np.concatenate([np.linspace(-12.25, 12.25, 197), np.geomspace(1e-6, 60, 80),
                       -np.geomspace(1e-6, 60, 80), EDGES]).astype(np.float32)
UNIT = np.concatenate([np.linspace(-1, 1, 201), [1e-7, -1e-7, 0.999999, -0.999999, 1.5, -1.5,
                                                 np.nan]]).astype(np.float32)
PROB = np.concatenate([np.linspace(0, 1, 101), [1e-30, 1e-10, 1e-3, 0.9999, 1 - 1e-7, -0.1, 1.1,
                                                np.nan]]).astype(np.float32)


# Within 2 ulps of JAX's jit (and far from its eager values, which differ by the contraction):
# spmd's jit contracts some of the products XLA contracts, where XLA has first folded the
# formula otherwise. t.pdf is the exp of t.logpdf: its 2 ulps of a logarithm of up to 12 are up
# to 24 ulps of the density.
JIT_ULPS = {"scipy.stats.cauchy.logcdf": 2, "scipy.stats.t.logpdf": 2, "scipy.stats.t.pdf": 24}


def both(name, *args, ulps, jit=True, atol=0.0, **kw):
    """jax's and spmd's `name` (a path under scipy.special, scipy.stats or lax) agree: eagerly,
    and under spmd's jit with JAX's jit or, failing that, with JAX's eager values. XLA compiles
    jax.jit's whole program otherwise than its operations one at a time: it contracts a product
    and the sum reading it into one fused multiply-add, as spmd's jit does (src/jit/contract.h:
    `loc + scale * q`), but it also folds the default loc and scale away and divides by a traced
    scale where eagerly it multiplies by the reciprocal, which spmd's jit does not follow yet
    (DESIGN.md, "Numerics"): there spmd's jit has JAX's eager values."""
    def get(mod, path):
        for part in path.split("."):
            mod = getattr(mod, part)
        return mod
    jf = get(jax, name)
    sf = get(spmd, name)
    want = jf(*args, **kw)
    same(sf(*args, **kw), want, f"{name} eagerly", ulps=ulps, atol=atol)
    if jit:
        got = spmd.jit(lambda *a: sf(*a, **kw))(*args)
        try:
            same(got, jax.jit(lambda *a: jf(*a, **kw))(*args), f"{name} under jit",
                 ulps=max(ulps, JIT_ULPS.get(name, 0)), atol=atol)
        except AssertionError:
            same(got, want, f"{name} under jit (JAX's eager values)", ulps=ulps, atol=atol)


@covers("lax.lgamma", "lax.digamma", "lax.erf_inv")
def test_lax_special_functions():
    both("lax.lgamma", GRID, ulps=0)
    both("lax.digamma", GRID, ulps=0)
    both("lax.erf_inv", UNIT, ulps=0)
    for f in ("lgamma", "digamma", "erf_inv"):
        x = UNIT if f == "erf_inv" else GRID
        both("lax." + f, x.astype(np.float16), ulps=0)
        raises_like(lambda: getattr(jax.lax, f)(np.arange(3)),
                    lambda: getattr(spmd.lax, f)(np.arange(3)), f"lax.{f} of int32")


def test_lax_special_derivatives():
    x = np.linspace(0.25, 6, 24).astype(np.float32)
    u = np.linspace(-0.9, 0.9, 19).astype(np.float32)
    for f, v in (("lgamma", x), ("erf_inv", u)):
        g = lambda m: m.vmap(m.grad(getattr(m.lax, f)))(v)  # noqa: E731
        same(g(spmd), g(jax), f"grad lax.{f}", ulps=0)
    # digamma's derivative is its own formula's (spmd's trigamma), JAX's polygamma(1, x) XLA's
    # zeta series: a few ulps apart, across the reflection below 1/2.
    w = np.concatenate([x, np.linspace(-3.9, 0.4, 23)]).astype(np.float32)
    g = lambda m: m.vmap(m.grad(m.lax.digamma))(w)  # noqa: E731
    same(g(spmd), g(jax), "grad lax.digamma", ulps=8)


@covers("scipy.special.gammaln", "scipy.special.loggamma", "scipy.special.gammasgn",
        "scipy.special.gamma", "scipy.special.digamma", "scipy.special.erf", "scipy.special.erfc",
        "scipy.special.erfinv", "scipy.special.expit", "scipy.special.logit", "scipy.special.entr",
        "scipy.special.ndtr", "scipy.special.ndtri", "scipy.special.log_ndtr",
        "scipy.special.factorial")
def test_special_of_one_operand():
    for name, x, ulps in (
            ("gammaln", GRID, 0), ("loggamma", GRID, 0), ("gammasgn", GRID, 0),
            ("gamma", np.linspace(-6.5, 30, 0).astype(np.float32), 0),
            ("digamma", GRID, 0), ("erf", GRID, 0), ("erfc", GRID, 0), ("erfinv", UNIT, 0),
            ("expit", GRID, 0), ("logit", PROB, 0), ("entr", GRID, 0), ("ndtr", GRID, 0),
            ("ndtri", PROB, 4), ("log_ndtr", GRID, 0),
            ("factorial", np.arange(-3, 0).astype(np.float32), 0)):
        both("scipy.special." + name, x, ulps=ulps)
    both("scipy.special.log_ndtr", GRID, ulps=0, series_order=5)
    both("scipy.special.gammaln", np.arange(1, 40), ulps=0)  # int32 in: float32 out


@covers("scipy.special.betaln", "scipy.special.beta", "scipy.special.xlogy",
        "scipy.special.xlog1py", "scipy.special.rel_entr", "scipy.special.kl_div",
        "scipy.special.boxcox", "scipy.special.boxcox1p", "scipy.special.comb",
        "scipy.special.multigammaln")
def test_special_of_two_operands():
    a = np.array([0.1, 0.5, 1, 2.5, 7.9, 8, 8.5, 30, 100, 1e4], np.float32)
    x, y = np.meshgrid(a, a)
    for name, ulps in (("betaln", 0), ("beta", 0), ("xlogy", 0), ("xlog1py", 0),
                       ("rel_entr", 0), ("kl_div", 0), ("boxcox", 0), ("boxcox1p", 0)):
        both("scipy.special." + name, x, y, ulps=ulps)
    z = np.array([0, -0.0, 1, -1, 2, np.nan, np.inf], np.float32)
    zx, zy = np.meshgrid(z, z)
    for name in ("xlogy", "xlog1py", "rel_entr", "kl_div"):
        both("scipy.special." + name, zx, zy, ulps=0)
    n, k = np.meshgrid(np.arange(-1, 12, dtype=np.float32), np.arange(-1, 12, dtype=np.float32))
    both("scipy.special.comb", n, k, ulps=0)
    both("scipy.special.comb", n, k, ulps=0, repetition=True)
    both("scipy.special.multigammaln", a[2:], ulps=1, jit=False, d=3)  # a sum of three


@covers("scipy.special.logsumexp", "scipy.special.softmax", "scipy.special.log_softmax")
def test_logsumexp_with_weights_signs_and_masks():
    a = np.array([[0.5, -1, 3], [-np.inf, -np.inf, -np.inf], [2, 2, 2]], np.float32)
    b = np.array([[1, -2, 0.5], [1, 1, 1], [-1, 1, -1]], np.float32)
    where = np.array([[True, False, True], [True, True, True], [False, False, False]])
    for kw in ({}, {"axis": 1}, {"axis": 1, "b": b}, {"axis": 0, "b": b, "return_sign": True},
               {"axis": 1, "where": where}, {"b": b, "keepdims": True, "axis": 1},
               {"axis": 1, "b": b, "where": where, "return_sign": True}):
        both("scipy.special.logsumexp", a, ulps=0, **kw)
        both("nn.logsumexp", a, ulps=0, **kw)
    finite = np.nan_to_num(a, neginf=-3.0)
    both("scipy.special.softmax", finite, ulps=0, axis=1)
    both("scipy.special.log_softmax", finite, ulps=0, axis=0)


def test_special_derivatives():
    x = np.linspace(0.05, 0.95, 10).astype(np.float32)
    for name in ("logit", "entr", "expit", "log_ndtr", "erfinv", "ndtr", "gammaln"):
        g = lambda m: m.vmap(m.grad(getattr(m.scipy.special, name)))(x)  # noqa: E731
        same(g(spmd), g(jax), f"grad {name}", ulps=0)
    for name in ("xlogy", "xlog1py"):
        g = lambda m: m.grad(lambda p, q: getattr(m.scipy.special, name)(p, q).sum(),  # noqa
                             argnums=(0, 1))(np.array([0.0, 1.5], np.float32),
                                             np.array([2.0, 3.0], np.float32))
        same(g(spmd), g(jax), f"grad {name}", ulps=0)


def test_special_errors_are_jaxs():
    cases = {
        "ndtr of float16": lambda m: m.scipy.special.ndtr(np.ones(2, np.float16)),
        "ndtri of int32": lambda m: m.scipy.special.ndtri(np.ones(2, np.int32)),
        "log_ndtr's series_order": lambda m: m.scipy.special.log_ndtr(1.0, series_order=31),
        "log_ndtr's float series_order": lambda m: m.scipy.special.log_ndtr(1.0, 2.0),
        "factorial exact": lambda m: m.scipy.special.factorial(3.0, exact=True),
        "a list": lambda m: m.scipy.special.gammaln([1.0, 2.0]),
    }
    for case, fn in cases.items():
        raises_like(lambda: fn(jax), lambda: fn(spmd), case)


DISTRIBUTIONS = [
    ("norm", ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"), (0.5, 2.0), 0),
    ("logistic", ("logpdf", "pdf", "cdf", "sf"), (0.5, 2.0), 0),
    ("laplace", ("logpdf", "pdf", "cdf"), (0.5, 2.0), 0),
    ("uniform", ("logpdf", "pdf", "cdf"), (-1.0, 3.0), 0),
    ("expon", ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"), (-1.0, 2.0), 0),
    ("cauchy", ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"), (0.5, 2.0), 0),
]


@covers("scipy.stats.norm", "scipy.stats.logistic", "scipy.stats.laplace", "scipy.stats.uniform",
        "scipy.stats.expon", "scipy.stats.cauchy")
@pytest.mark.parametrize("dist,fns,params,ulps", DISTRIBUTIONS, ids=[d[0] for d in DISTRIBUTIONS])
def test_location_scale_distributions(dist, fns, params, ulps):
    for fn in fns:
        both(f"scipy.stats.{dist}.{fn}", GRID, ulps=ulps)
        both(f"scipy.stats.{dist}.{fn}", GRID, *params, ulps=ulps)
    quantiles = [f for f in ("ppf", "isf") if hasattr(getattr(jst, dist), f) and
                 hasattr(getattr(sst, dist), f)]
    for fn in quantiles:
        both(f"scipy.stats.{dist}.{fn}", PROB, *params, ulps=4)  # ndtri's polyval: JAX fuses it


@covers("scipy.stats.bernoulli", "scipy.stats.poisson", "scipy.stats.gamma", "scipy.stats.beta")
def test_discrete_and_shape_distributions():
    k = np.array([-1, 0, 1, 2, 3, 7, 2.5, 40], np.float32)
    both("scipy.stats.bernoulli.logpmf", k, 0.3, ulps=0)
    both("scipy.stats.bernoulli.pmf", k, 0.3, ulps=0)
    both("scipy.stats.bernoulli.cdf", k, 0.3, ulps=0)
    both("scipy.stats.bernoulli.ppf", PROB, 0.3, ulps=0)
    both("scipy.stats.poisson.logpmf", k, 3.5, ulps=0)
    both("scipy.stats.poisson.pmf", k, 3.5, ulps=0)
    x = np.linspace(-0.5, 12, 47).astype(np.float32)
    both("scipy.stats.gamma.logpdf", x, 2.5, ulps=0)
    both("scipy.stats.gamma.pdf", x, 2.5, 0.5, 1.5, ulps=0)
    u = np.linspace(-0.1, 1.1, 49).astype(np.float32)
    both("scipy.stats.beta.logpdf", u, 2.5, 0.7, ulps=0)
    both("scipy.stats.beta.pdf", u, 2.5, 9.5, ulps=0)


@covers("scipy.stats.t", "scipy.stats.chi2", "scipy.stats.pareto", "scipy.stats.gumbel_r",
        "scipy.stats.gumbel_l", "scipy.stats.geom", "scipy.stats.binom", "scipy.stats.nbinom")
def test_more_distributions():
    """JAX's compositions, bit for bit, on the grid (infinities and NaN included), with and
    without loc and scale, a non-positive scale (NaN), and binom's certain cases (n = 0, p = 1).
    The counts are 16: XLA computes the exp of elements past an array's last multiple of 8
    apart from its vector loop, with other roundings (of 14 counts, JAX's geom.pmf had
    exp(-4.4140472) 1 ulp below spmd's at element 12, and equal at element 3)."""
    for fn in ("logpdf", "pdf"):
        both(f"scipy.stats.t.{fn}", GRID, 3.5, ulps=0)
        both(f"scipy.stats.t.{fn}", GRID, 2.0, 0.5, 1.5, ulps=0)
        both(f"scipy.stats.chi2.{fn}", np.abs(GRID), 3.0, ulps=0)
        both(f"scipy.stats.chi2.{fn}", GRID, 4.0, 0.1, 2.0, ulps=0)
    for fn in ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"):
        both(f"scipy.stats.pareto.{fn}", GRID, 2.5, ulps=0)
        both(f"scipy.stats.pareto.{fn}", GRID, 1.5, -1.0, 2.0, ulps=0)
        for dist in ("gumbel_r", "gumbel_l"):
            both(f"scipy.stats.{dist}.{fn}", GRID, ulps=0)
            both(f"scipy.stats.{dist}.{fn}", GRID, 0.5, 1.5, ulps=0)
            both(f"scipy.stats.{dist}.{fn}", GRID, 0.0, -1.0, ulps=0)
    for dist, params in (("pareto", (2.5, 0.5, 2.0)), ("gumbel_r", (0.5, 1.5)),
                         ("gumbel_l", (0.5, 1.5))):
        both(f"scipy.stats.{dist}.ppf", PROB, *params, ulps=0)
    k = np.arange(-2, 14).astype(np.float32)
    both("scipy.stats.geom.logpmf", k, 0.3, ulps=0)
    both("scipy.stats.geom.pmf", k, 0.3, 1.0, ulps=0)
    for args in ((10.0, 0.3), (8.0, 0.6, 1.0), (0.0, 0.0), (5.0, 1.0)):
        both("scipy.stats.binom.logpmf", k, *args, ulps=0)
        both("scipy.stats.binom.pmf", k, *args, ulps=0)
    both("scipy.stats.nbinom.logpmf", k, 4.0, 0.3, ulps=0)
    both("scipy.stats.nbinom.pmf", k, 2.5, 0.7, 1.0, ulps=0)


@covers("scipy.stats.multivariate_normal")
def test_multivariate_normal():
    rng = np.random.default_rng(3)
    m = rng.normal(size=(4, 4)).astype(np.float32)
    cov = (m @ m.T + 4 * np.eye(4)).astype(np.float32)
    mean = rng.normal(size=4).astype(np.float32)
    x = rng.normal(size=(6, 4)).astype(np.float32)
    both("scipy.stats.multivariate_normal.logpdf", x, mean, cov, ulps=0, atol=2e-5)
    both("scipy.stats.multivariate_normal.pdf", x, mean, cov, ulps=0, atol=1e-7)
    both("scipy.stats.multivariate_normal.logpdf", x, mean, np.float32(2.0), ulps=2)
    both("scipy.stats.multivariate_normal.logpdf", x[:, 0], mean[0], np.float32(2.0), ulps=2)
    raises_like(lambda: jst.multivariate_normal.logpdf(x, mean, cov[:3, :3]),
                lambda: sst.multivariate_normal.logpdf(x, mean, cov[:3, :3]), "shapes")


def test_float64_special_functions_with_x64():
    x = GRID.astype(np.float64)
    jax.config.update("jax_enable_x64", True)
    spmd.config.update("jax_enable_x64", True)
    try:
        # XLA's float64 log1p is not the C library's: values within a few ulps (erf_inv's 14 near
        # 0.64, where w = -log1p(-x²) feeds 22 polynomial steps), and lgamma's
        # exact zeros at 1 and 2 within 1e-15.
        both("lax.lgamma", x, ulps=8, atol=1e-15)
        both("lax.digamma", x, ulps=8)
        both("lax.erf_inv", UNIT.astype(np.float64), ulps=16)
        both("scipy.special.gammaln", x, ulps=8, atol=1e-15)
    finally:
        jax.config.update("jax_enable_x64", False)
        spmd.config.update("jax_enable_x64", False)
