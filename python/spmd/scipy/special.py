"""jax.scipy.special: JAX's compositions of lax and jax.numpy operations, step for step, over
spmd's (python/spmd/_lax_special.py for lgamma, digamma and erf_inv). Values equal JAX's bit for
bit where the composition uses exactly rounded operations, and within the last places of spmd's
transcendental functions elsewhere (tests/python/jax_parity/test_scipy.py states how many).
Real operands only, as these functions accept them in JAX (complex ones are refused)."""
import math

import numpy as _np

from .. import _core
from .. import lax as _lax
from .. import numpy as _jnp
from .._custom_jvp import custom_jvp
from .._lax_special import digamma as _digamma
from .._lax_special import erf_inv as _erf_inv
from .._lax_special import lgamma as _lgamma
from ..nn import log_softmax, logsumexp, softmax  # noqa: F401 - jax.scipy.special's names

__all__ = ["beta", "betaln", "boxcox", "boxcox1p", "comb", "digamma", "entr", "erf", "erfc",
           "erfinv", "expit", "factorial", "gamma", "gammaln", "gammasgn", "kl_div",
           "log_ndtr", "log_softmax", "loggamma", "logit", "logsumexp", "multigammaln", "ndtr",
           "ndtri", "rel_entr", "softmax", "xlog1py", "xlogy"]


def _inexact(name, *args):
    """JAX's promote_args_inexact: the operands in their promoted dtype (Python scalars weak),
    an integer or bool one in the default float."""
    for i, a in enumerate(args):
        if isinstance(a, (list, tuple, str)) or a is None:
            raise TypeError(f"{name} requires ndarray or scalar arguments, got {type(a).__name__} "
                            f"at position {i}.")
    dtype = _np.dtype(_core.canonical_dtype(_jnp.result_type(*args)))
    if dtype.kind == "c":
        raise ValueError(f"{name} does not support complex-valued inputs.")
    if not (dtype.kind == "f" or dtype.name == "bfloat16"):
        dtype = _np.dtype(_core.default_float())
    return [_jnp.asarray(a, dtype) for a in args]


def _const(x, value):
    return _jnp.asarray(value, x.dtype)


def gammaln(x):
    """jax.scipy.special.gammaln: log|Gamma(x)| (lax.lgamma)."""
    (x,) = _inexact("gammaln", x)
    return _lgamma(x)


def loggamma(x):
    """jax.scipy.special.loggamma for real x: log Gamma(x) where x > 0, NaN elsewhere."""
    (x,) = _inexact("loggamma", x)
    return _jnp.where(x > 0, _lgamma(x), _np.nan)


def gammasgn(x):
    """jax.scipy.special.gammasgn: the sign of Gamma(x); NaN at the poles and for NaN."""
    (x,) = _inexact("gammasgn", x)
    floor = _jnp.floor(x)
    negative = x < 0
    return _jnp.select(
        [(negative & (x == floor)) | _jnp.isnan(x),
         (negative & (_jnp.remainder(floor, 2) != 0)) | ((x == 0) & _jnp.signbit(x))],
        [_const(x, _np.nan), _const(x, -1.0)], _const(x, 1.0))


def gamma(x):
    """jax.scipy.special.gamma for real x: gammasgn(x) * exp(lgamma(x))."""
    (x,) = _inexact("gamma", x)
    return gammasgn(x) * _jnp.exp(_lgamma(x))


def digamma(x):
    """jax.scipy.special.digamma (lax.digamma)."""
    (x,) = _inexact("digamma", x)
    return _digamma(x)


def _algdiv(a, b):
    """log(Gamma(b) / Gamma(a + b)) for large b (JAX's third-party betaln's, from TOMS 708)."""
    h = a / b
    c = h / (1 + h)
    x = h / (1 + h)
    d = b + (a - 0.5)
    x2 = x * x
    s3 = 1.0 + (x + x2)
    s5 = 1.0 + (x + x2 * s3)
    s7 = 1.0 + (x + x2 * s5)
    s9 = 1.0 + (x + x2 * s7)
    s11 = 1.0 + (x + x2 * s9)
    t = (1.0 / b) ** 2
    w = ((((-0.165322962780713e-02 * s11 * t + 0.837308034031215e-03 * s9) * t
           + -0.595202931351870e-03 * s7) * t + 0.793650666825390e-03 * s5) * t
         + -0.277777777760991e-02 * s3) * t + 0.833333333333333e-01
    w = w * (c / b)
    u = d * _jnp.log1p(a / b)
    v = a * (_jnp.log(b) - 1.0)
    return _jnp.where(u <= v, (w - v) - u, (w - u) - v)


def betaln(a, b):
    """jax.scipy.special.betaln: log|B(a, b)|."""
    a, b = _inexact("betaln", a, b)
    a, b = _jnp.minimum(a, b), _jnp.maximum(a, b)
    small_b = _lgamma(a) + (_lgamma(b) - _lgamma(a + b))
    large_b = _lgamma(a) + _algdiv(a, b)
    return _jnp.where(b < 8, small_b, large_b)


def beta(a, b):
    """jax.scipy.special.beta: the sign of Gamma(a) Gamma(b) / Gamma(a + b) times exp(betaln)."""
    a, b = _inexact("beta", a, b)
    sign = gammasgn(a) * gammasgn(b) * gammasgn(a + b)
    return sign * _jnp.exp(betaln(a, b))


def factorial(n, exact=False):
    """jax.scipy.special.factorial: Gamma(n + 1) in floating point, 0 for n < 0."""
    if exact:
        raise NotImplementedError("factorial with exact=True")
    (n,) = _inexact("factorial", n)
    return _jnp.where(n < 0, 0, _jnp.exp(_lgamma(n + 1)))


def comb(N, k, *, repetition=False):  # noqa: N803 - SciPy's name
    """jax.scipy.special.comb: N choose k through gammaln (0 outside 0 <= k <= N)."""
    N, k = _inexact("comb", N, k)
    if repetition:
        return _jnp.where((k == 0) & (N >= 0), 1.0, comb(N + k - 1, k))
    ok = (k <= N) & (N >= 0) & (k >= 0)
    n_, k_ = _jnp.where(ok, N, 0.0), _jnp.where(ok, k, 0.0)
    out = _jnp.exp(gammaln(n_ + 1) - gammaln(k_ + 1) - gammaln(n_ + 1 - k_))
    return _jnp.where(ok, out, 0.0)


def multigammaln(a, d):
    """jax.scipy.special.multigammaln: the log of the multivariate gamma function of
    dimension d (a Python int)."""
    if not isinstance(d, (int, _np.integer)) or isinstance(d, bool):
        raise TypeError("d argument of multigammaln must be a concrete Python int")
    a, d_ = _inexact("multigammaln", a, d)
    constant = _lax.mul(_lax.mul(_lax.mul(_const(a, 0.25), d_), _lax.sub(d_, _const(a, 1))),
                        _lax.log(_const(a, _np.pi)))
    b = _jnp.arange(int(d), dtype=d_.dtype) / _const(a, 2)
    terms = gammaln(_jnp.expand_dims(a, -1) - _jnp.expand_dims(b, tuple(range(a.ndim))))
    return _jnp.sum(terms, axis=-1) + constant


def erf(x):
    """jax.scipy.special.erf."""
    (x,) = _inexact("erf", x)
    return _lax.erf(x)


def erfc(x):
    """jax.scipy.special.erfc."""
    (x,) = _inexact("erfc", x)
    return _lax.erfc(x)


def erfinv(x):
    """jax.scipy.special.erfinv (lax.erf_inv)."""
    (x,) = _inexact("erfinv", x)
    return _erf_inv(x)


@custom_jvp
def _logit(x):
    return _jnp.log(x / (_const(x, 1) - x))


_logit.defjvps(lambda g, ans, x: g / (x * (_const(x, 1) - x)))


def logit(x):
    """jax.scipy.special.logit: log(x / (1 - x)), JAX's derivative g / (x (1 - x))."""
    (x,) = _inexact("logit", x)
    return _logit(x)


def expit(x):
    """jax.scipy.special.expit: lax.logistic."""
    (x,) = _inexact("expit", x)
    return _lax.logistic(x)


def _x_times_log(log, denominator):
    """x * log(y), 0 where x = 0 unless y is NaN (xlogy with log, xlog1py with log1p), with
    JAX's derivative dx log(y) + dy x / denominator(y)."""
    @custom_jvp
    def value(x, y):
        return _jnp.where((x != 0.0) | _jnp.isnan(y), x * log(y), _jnp.zeros((), x.dtype))

    @value.defjvp
    def _jvp(primals, tangents):
        (x, y), (dx, dy) = primals, tangents
        out = value(x, y)
        return out, _jnp.astype(dx * log(y) + dy * x / denominator(y), out.dtype)
    return value


_xlogy = _x_times_log(_jnp.log, lambda y: y)
_xlog1py = _x_times_log(_jnp.log1p, lambda y: 1 + y)


def xlogy(x, y):
    """jax.scipy.special.xlogy: x log y, 0 where x = 0 (unless y is NaN)."""
    x, y = _inexact("xlogy", x, y)
    return _xlogy(x, y)


def xlog1py(x, y):
    """jax.scipy.special.xlog1py: x log1p(y), 0 where x = 0 (unless y is NaN)."""
    x, y = _inexact("xlog1py", x, y)
    return _xlog1py(x, y)


@custom_jvp
def _xlogx(x):
    return _xlogy(x, x)


_xlogx.defjvps(lambda g, ans, x: g * (_jnp.log(x) + 1))


def entr(x):
    """jax.scipy.special.entr: -x log x for x >= 0, -inf below."""
    (x,) = _inexact("entr", x)
    return _jnp.where(x < 0, _jnp.full((), -_np.inf, x.dtype), -_xlogx(x))


def rel_entr(p, q):
    """jax.scipy.special.rel_entr: p log(p / q) where both are positive, 0 at p = 0 <= q, inf
    elsewhere."""
    p, q = _inexact("rel_entr", p, q)
    zero = _const(p, 0.0)
    both = (p > zero) & (q > zero)
    one_zero = (p == zero) & (q >= zero)
    safe_p, safe_q = _jnp.where(both, p, 1), _jnp.where(both, q, 1)
    value = _xlogx(safe_p) - _xlogy(safe_p, safe_q)
    return _jnp.where(both, value, _jnp.where(one_zero, zero, _np.inf))


def kl_div(p, q):
    """jax.scipy.special.kl_div: rel_entr(p, q) - p + q."""
    p, q = _inexact("kl_div", p, q)
    return rel_entr(p, q) - p + q


def _float_only(name, x):
    x = _jnp.asarray(x)
    if _np.dtype(x.dtype) not in (_np.float32, _np.float64):
        raise TypeError(f"x.dtype={_np.dtype(x.dtype)} is not supported, see docstring for "
                        "supported types.")
    return x


def _ndtr(x):
    dtype = _np.dtype(x.dtype).type
    half_sqrt_2 = dtype(0.5) * _np.sqrt(2.0, dtype=dtype)
    w = x * half_sqrt_2
    z = _jnp.abs(w)
    y = _jnp.where(z < half_sqrt_2, dtype(1.0) + _lax.erf(w),
                   _jnp.where(w > dtype(0.0), dtype(2.0) - _lax.erfc(z), _lax.erfc(z)))
    return dtype(0.5) * y


def ndtr(x):
    """jax.scipy.special.ndtr: the standard normal CDF, float32 and float64 only."""
    return _ndtr(_float_only("ndtr", x))


_NDTRI = {
    "p0": [-59.96335010141079, 98.00107541859997, -56.67628574690703, 13.931260938727968,
           -1.2391658386738125],
    "q0": [1.0, 1.9544885833814176, 4.676279128988815, 86.36024213908905, -225.46268785411937,
           200.26021238006066, -82.03722561683334, 15.90562251262117, -1.1833162112133],
    "p1": [4.0554489230596245, 31.525109459989388, 57.16281922464213, 44.08050738932008,
           14.684956192885803, 2.1866330685079025, -0.1402560791713545, -0.03504246268278482,
           -0.0008574567851546854],
    "q1": [1.0, 15.779988325646675, 45.39076351288792, 41.3172038254672, 15.04253856929075,
           2.504649462083094, -0.14218292285478779, -0.03808064076915783,
           -0.0009332594808954574],
    "p2": [3.2377489177694603, 6.915228890689842, 3.9388102529247444, 1.3330346081580755,
           0.20148538954917908, 0.012371663481782003, 0.00030158155350823543,
           2.6580697468673755e-06, 6.239745391849833e-09],
    "q2": [1.0, 6.02427039364742, 3.6798356385616087, 1.3770209948908132, 0.21623699359449663,
           0.013420400608854318, 0.00032801446468212774, 2.8924786474538068e-06,
           6.790194080099813e-09],
}


def ndtri(p):
    """jax.scipy.special.ndtri: the standard normal quantile (Cephes' rational approximations,
    as JAX's), -inf at 0 and inf at 1; float32 and float64 only."""
    p = _float_only("ndtri", p)
    dtype = _np.dtype(p.dtype).type
    c = {k: _np.array(v, dtype) for k, v in _NDTRI.items()}
    mcp = _jnp.where(p > dtype(-_np.expm1(-2.0)), dtype(1.0) - p, p)
    mcp = _jnp.where(mcp == dtype(0.0), _jnp.full((), dtype(0.5)), mcp)
    w = mcp - dtype(0.5)
    ww = _jnp.square(w)
    big = w + w * ww * (_jnp.polyval(c["p0"], ww) / _jnp.polyval(c["q0"], ww))
    big = big * -dtype(_np.sqrt(2.0 * _np.pi))
    z = _jnp.sqrt(dtype(-2.0) * _jnp.log(mcp))
    first = z - _jnp.log(z) / z
    small_p = _jnp.polyval(c["p2"], 1 / z) / _jnp.polyval(c["q2"], 1 / z) / z
    otherwise = _jnp.polyval(c["p1"], 1 / z) / _jnp.polyval(c["q1"], 1 / z) / z
    x = _jnp.where(mcp > dtype(_np.exp(-2.0)), big,
                   _jnp.where(z >= dtype(8.0), first - small_p, first - otherwise))
    x = _jnp.where(p > dtype(1.0 - _np.exp(-2.0)), x, -x)
    infinity = _jnp.full((), dtype(_np.inf))
    return _jnp.where(p == dtype(0.0), -infinity, _jnp.where(p == dtype(1.0), infinity, x))


def _norm_logpdf(x):
    return _const(x, -0.5) * _jnp.square(x) - _const(x, math.log(math.sqrt(2 * math.pi)))


def _log_ndtr_series(x, series_order):
    dtype = _np.dtype(x.dtype).type
    if series_order <= 0:
        return _np.array(1, dtype)
    x_2 = _jnp.square(x)
    even = odd = _jnp.zeros((), x.dtype)  # rank 0: nothing the size of x is filled
    x_2n = x_2
    for n in range(1, series_order + 1):
        y = _np.array(_np.prod(_np.arange(2 * n - 1, 1, -2)), dtype) / x_2n
        if n % 2:
            odd = odd + y
        else:
            even = even + y
        x_2n = x_2n * x_2
    return dtype(1.) + even - odd


def _log_ndtr_lower(x, series_order):
    dtype = _np.dtype(x.dtype).type
    log_scale = (-dtype(0.5) * _jnp.square(x) - _jnp.log(-x)
                 - dtype(0.5 * _np.log(2. * _np.pi)))
    return log_scale + _jnp.log(_log_ndtr_series(x, series_order))


def _log_ndtr_value(x, series_order):
    dtype = _np.dtype(x.dtype)
    lower = _np.array(-20 if dtype == _np.float64 else -10, dtype)
    upper = _np.array(8 if dtype == _np.float64 else 5, dtype)
    above = x > upper
    res = _ndtr(_jnp.where(above, -x, _jnp.maximum(x, lower)))
    return _jnp.where(above, -res, _jnp.where(x > lower, _jnp.log(res),
                                              _log_ndtr_lower(_jnp.minimum(x, lower),
                                                              series_order)))


def log_ndtr(x, series_order=3):
    """jax.scipy.special.log_ndtr: log of the standard normal CDF, an asymptotic series of
    `series_order` terms far in the lower tail; JAX's derivative exp(logpdf(x) - log_ndtr(x))."""
    if not isinstance(series_order, int):
        raise TypeError("series_order must be a Python integer.")
    if series_order < 0:
        raise ValueError("series_order must be non-negative.")
    if series_order > 30:
        raise ValueError("series_order must be <= 30.")
    x = _float_only("log_ndtr", x)

    @custom_jvp
    def value(v):
        return _log_ndtr_value(v, series_order)

    @value.defjvp
    def _jvp(primals, tangents):
        (v,), (t,) = primals, tangents
        ans = value(v)
        return ans, t * _jnp.exp(_norm_logpdf(v) - ans)
    return value(x)


def boxcox(x, lmbda):
    """jax.scipy.special.boxcox: (x^lmbda - 1) / lmbda, log x at lmbda = 0."""
    x, lmbda = _inexact("boxcox", x, lmbda)
    zero = lmbda == 0
    safe = _jnp.where(zero, _jnp.ones((), lmbda.dtype), lmbda)
    log_x = _jnp.log(x)
    return _jnp.where(zero, log_x, _jnp.expm1(safe * log_x) / safe)


def boxcox1p(x, lmbda):
    """jax.scipy.special.boxcox1p: boxcox of 1 + x."""
    x, lmbda = _inexact("boxcox1p", x, lmbda)
    zero = lmbda == 0
    safe = _jnp.where(zero, _jnp.ones((), lmbda.dtype), lmbda)
    log1p_x = _jnp.log1p(x)
    return _jnp.where(zero, log1p_x, _jnp.expm1(safe * log1p_x) / safe)
