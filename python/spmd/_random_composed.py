"""jax.random's samplers that JAX composes of its others (jax/_src/random/core.py), composed
the same way over spmd.random's: chisquare, f and t of gamma and normal draws, pareto of an
exponential one, rayleigh, weibull_min, geometric and triangular of a uniform one, wald of a
normal and a uniform one, maxwell and double_sided_maxwell of normal and rademacher ones. The
keys split as JAX splits them, so the draws are JAX's; the values are JAX's bit for bit where
the arithmetic after the draws rounds alike (tests/python/jax_parity/test_random.py says where
XLA's fused multiply-adds leave a last place). float32 (the gamma family's dtype in spmd)."""
import numpy as _np

from . import _core
from . import numpy as _jnp
from .random import (_check_all_safe_to_cast, _float_dtype, _gamma_dtype, _sample_shape,
                     _traced, exponential, gamma, loggamma, normal, rademacher, split, uniform)

__all__ = ["chisquare", "double_sided_maxwell", "f", "geometric", "maxwell", "pareto",
           "rayleigh", "t", "triangular", "wald", "weibull_min"]


def _chisquare_body(k, df, shape):
    half_df = _jnp.astype(df, "float32") / _jnp.float32(2)
    return _jnp.exp(loggamma(k, half_df, shape)) * _jnp.float32(2)


def chisquare(key, df, shape=None, dtype=None):
    """jax.random.chisquare: 2 exp(loggamma(key, df / 2))."""
    _check_all_safe_to_cast("chisquare", _gamma_dtype(dtype, "chisquare"), df)
    shape = _sample_shape("chisquare", shape, _np.shape(df))
    return _traced("chisquare", key, _chisquare_body, (shape,), df)


def _f_body(k, dfnum, dfden, shape):
    dfnum, dfden = _jnp.astype(dfnum, "float32"), _jnp.astype(dfden, "float32")
    key_dfd, key_dfn = split(k)
    chi2_dfn = _chisquare_body(key_dfn, dfnum, shape)
    chi2_dfd = _chisquare_body(key_dfd, dfden, shape)
    # (a / b) / (c / d) as XLA's simplifier rewrites it: (a d) / (b c).
    return (chi2_dfn * dfden) / (dfnum * chi2_dfd)


def f(key, dfnum, dfden, shape=None, dtype=None):
    """jax.random.f: (chisquare(dfnum) / dfnum) / (chisquare(dfden) / dfden), the second key of
    split(key) for the numerator."""
    _check_all_safe_to_cast("f", _gamma_dtype(dtype, "f"), dfnum, dfden)
    shape = _sample_shape("f", shape, _np.shape(dfnum), _np.shape(dfden))
    return _traced("f", key, _f_body, (shape,), dfnum, dfden)


def _t_body(k, df, shape):
    df = _jnp.astype(df, "float32")
    key_n, key_g = split(k)
    n = normal(key_n, shape)
    half_df = df / _jnp.float32(2)
    return n * _jnp.sqrt(half_df / gamma(key_g, half_df, shape))


def t(key, df, shape=None, dtype=None):
    """jax.random.t: normal * sqrt((df / 2) / gamma(df / 2)), split(key) for the two draws."""
    _check_all_safe_to_cast("t", _gamma_dtype(dtype, "t"), df)
    shape = _sample_shape("t", shape, _np.shape(df))
    return _traced("t", key, _t_body, (shape,), df)


def _pareto_body(k, b, shape, dtype):
    return _jnp.exp(exponential(k, shape, dtype) / _jnp.astype(b, dtype))


def pareto(key, b, shape=None, dtype=None):
    """jax.random.pareto: exp(exponential / b)."""
    d = _float_dtype(dtype, "pareto", float64=False)
    _check_all_safe_to_cast("pareto", d, b)
    shape = _sample_shape("pareto", shape, _np.shape(b))
    return _traced("pareto", key, _pareto_body, (shape, _core.dtype_name(d)), b)


def _rayleigh_body(k, scale, shape, dtype):
    u = uniform(k, shape, dtype)
    scale = _jnp.broadcast_to(_jnp.astype(scale, dtype), shape)
    return scale * _jnp.sqrt(_jnp.log(u) * _jnp.asarray(-2, dtype))


def rayleigh(key, scale, shape=None, dtype=None):
    """jax.random.rayleigh: scale * sqrt(-2 log u)."""
    d = _float_dtype(dtype, "rayleigh", float64=False)
    _check_all_safe_to_cast("rayleigh", d, scale)
    shape = _sample_shape("rayleigh", shape, _np.shape(scale))
    return _traced("rayleigh", key, _rayleigh_body, (shape, _core.dtype_name(d)), scale)


def _weibull_body(k, scale, concentration, shape, dtype):
    u = uniform(k, shape, dtype)
    return _jnp.power(-_jnp.log1p(-u), 1.0 / concentration) * scale


def weibull_min(key, scale, concentration, shape=(), dtype=None):
    """jax.random.weibull_min: (-log1p(-u)) ** (1 / concentration) * scale."""
    d = _float_dtype(dtype, "weibull_min", float64=False)
    shape = tuple(shape)  # JAX's: the draw's shape alone (the parameters broadcast after)
    return _traced("weibull_min", key, _weibull_body, (shape, _core.dtype_name(d)), scale,
                   concentration)


def _geometric_body(k, p, shape, dtype):
    p = _jnp.astype(p, "float32") if _np.dtype(p.dtype).kind != "f" else p
    u = uniform(k, shape, _core.dtype_name(p.dtype))
    u = _jnp.where(u == 0, _jnp.ones_like(u), u)
    log_one_minus_p = _jnp.broadcast_to(_jnp.log1p(-p), shape)
    return _jnp.astype(_jnp.floor(_jnp.log(u) / log_one_minus_p) + 1, dtype)


def geometric(key, p, shape=None, dtype=None):
    """jax.random.geometric: floor(log(u) / log1p(-p)) + 1 (u = 0 read as 1), as integers."""
    d = _np.dtype(_core.dtype_of(_core.canonical_name(
        _core.default_int() if dtype is None else dtype)))
    if d.kind not in "iu":
        raise ValueError(f"dtype argument to `geometric` must be an int dtype, got {d}")
    shape = _sample_shape("geometric", shape, _np.shape(p))
    return _traced("geometric", key, _geometric_body, (shape, _core.dtype_name(d)), p)


def _triangular_body(k, left, mode, right, shape, dtype):
    left, mode, right = (_jnp.broadcast_to(_jnp.astype(v, dtype), shape)
                         for v in (left, mode, right))
    fc = (mode - left) / (right - left)
    u = uniform(k, shape, dtype)
    out1 = left + _jnp.sqrt(u * (right - left) * (mode - left))
    out2 = right - _jnp.sqrt((1 - u) * (right - left) * (right - mode))
    return _jnp.where(u < fc, out1, out2)


def triangular(key, left, mode, right, shape=None, dtype=None):
    """jax.random.triangular: the inverse CDF of the triangle (left, mode, right) at a uniform
    draw."""
    d = _float_dtype(dtype, "triangular", float64=False)
    _check_all_safe_to_cast("triangular", d, left, mode, right)
    shape = _sample_shape("triangular", shape, _np.shape(left), _np.shape(mode),
                          _np.shape(right))
    return _traced("triangular", key, _triangular_body, (shape, _core.dtype_name(d)), left,
                   mode, right)


def _wald_body(k, mean, shape, dtype):
    k1, k2 = split(k)
    mean = _jnp.broadcast_to(_jnp.astype(mean, dtype), shape)
    v = normal(k1, shape, dtype)
    z = uniform(k2, shape, dtype)
    y = v * v
    y_sq = y * y
    mean_sq = mean * mean
    sqrt_term = _jnp.sqrt(4 * mean * y + mean_sq * y_sq)
    x = mean + mean_sq * y / 2 - mean / 2 * sqrt_term
    return _jnp.where(z <= mean / (mean + x), x, mean_sq / x)


def wald(key, mean, shape=None, dtype=None):
    """jax.random.wald: Michael, Schucany and Haas's transformation of a normal draw, accepted
    against a uniform one, split(key) for the two."""
    d = _float_dtype(dtype, "wald", float64=False)
    _check_all_safe_to_cast("wald", d, mean)
    shape = _sample_shape("wald", shape, _np.shape(mean))
    return _traced("wald", key, _wald_body, (shape, _core.dtype_name(d)), mean)


def _maxwell_body(k, shape, dtype):
    return _jnp.linalg.norm(normal(k, shape + (3,), dtype), axis=-1)


def maxwell(key, shape=(), dtype=None):
    """jax.random.maxwell: the norm of three standard normal draws along a new last axis."""
    d = _float_dtype(dtype, "maxwell", float64=False)
    return _traced("maxwell", key, _maxwell_body, (tuple(shape), _core.dtype_name(d)))


def _double_sided_body(k, loc, scale, shape, dtype):
    maxwell_key, sign_key = split(k)
    return (rademacher(sign_key, shape, dtype) * _maxwell_body(maxwell_key, shape, dtype)
            * scale + loc)


def double_sided_maxwell(key, loc, scale, shape=(), dtype=None):
    """jax.random.double_sided_maxwell: a rademacher sign times a maxwell draw, times scale
    plus loc, of shape + the parameters' broadcast shape."""
    d = _float_dtype(dtype, "double_sided_maxwell", float64=False)
    params = tuple(_np.broadcast_shapes(_np.shape(loc), _np.shape(scale)))
    shape = (tuple(shape) or params) + params
    return _traced("double_sided_maxwell", key, _double_sided_body,
                   (shape, _core.dtype_name(d)), loc, scale)
