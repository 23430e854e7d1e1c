"""jax.lax's special functions lgamma, digamma and erf_inv, each the program XLA compiles for
it on CPU (JAX 0.10.2), operation for operation: the CHLO decomposition (Lanczos' approximation
with g = 7 and nine coefficients and Euler's reflection for lgamma and digamma; Giles'
polynomials for erf_inv) after XLA's simplifier (a division by a constant made a multiplication
by its reciprocal), with the multiply-adds LLVM fuses computed as fused (_fused.py), float16 and
bfloat16 computed in float32. With spmd's log and log1p, XLA's own, the float32 values are
JAX's bit for bit but for a double rounding in about one multiply-add in 2^29
(tests/python/jax_parity/test_scipy.py). lgamma's and erf_inv's derivatives are JAX's rules
(digamma; sqrt(pi)/2 exp(erf_inv(x)^2)); digamma's is its composition's (JAX's uses polygamma,
which spmd lacks)."""
import math

import numpy as _np

from . import _core
from . import numpy as _numpy
from ._custom_jvp import custom_jvp
from ._fused import fma as _fma
from ._lax_elementwise import _operands

_LANCZOS_G = 7.0
_LANCZOS_BASE = 0.99999999999980993227684700473478
_LANCZOS = (676.520368121885098567009190444019, -1259.13921672240287047156078755283,
            771.3234287776530788486528258894, -176.61502916214059906584551354,
            12.507343278686904814458936853, -0.13857109526572011689554707,
            9.984369578019570859563e-6, 1.50563273514931155834e-7)


def _in_float32(fn, x):
    """fn(x) computed in float32 for half-precision x (XLA's upcast), in x's dtype otherwise."""
    dtype = _np.dtype(x.dtype)
    if dtype.itemsize >= 4:
        return fn(x)
    return _numpy.astype(fn(_numpy.astype(x, _np.float32)), dtype)


def _lanczos_sum(z):
    """a(z), Lanczos' sum, in XLA's order: c1 / (z + 1) + base, then each c_k / (z + k)."""
    a = _LANCZOS[0] / (z + 1.0) + _LANCZOS_BASE
    for i, c in enumerate(_LANCZOS[1:], start=2):
        a = a + c / (z + float(i))
    return a


def _lanczos_terms(x):
    """z (x - 1, or -x when reflected), t = z + 7.5 and log(t) as log1p(z / 7.5) + log(7.5)."""
    reflect = x < 0.5
    z = _numpy.where(reflect, -x, x + -1.0)
    t = z + (_LANCZOS_G + 0.5)
    log_t = _numpy.log1p(z * (1 / (_LANCZOS_G + 0.5))) + math.log(_LANCZOS_G + 0.5)
    return reflect, z, t, log_t


def _lgamma(x):
    reflect, z, t, log_t = _lanczos_terms(x)
    a = _lanczos_sum(z)
    r = _fma((z + 0.5) - t / log_t, log_t, (math.log(2) + math.log(math.pi)) / 2)
    lgamma = r + _numpy.log(a)
    frac = _numpy.abs(x) - _numpy.floor(_numpy.abs(x))
    frac = _numpy.where(0.5 < frac, 1.0 - frac, frac)
    denom = _numpy.log(_numpy.sin(frac * math.pi))
    reflected = (math.log(math.pi) - denom) - lgamma
    reflected = _numpy.where(_numpy.isfinite(denom), reflected, -denom)
    lgamma = _numpy.where(reflect, reflected, lgamma)
    return _numpy.where(_numpy.abs(x) == _np.inf, _numpy.full_like(x, _np.inf), lgamma)


def _digamma(x):
    reflect, z, t, log_t = _lanczos_terms(x)
    a_prime = _numpy.zeros_like(z)
    for i, c in enumerate(_LANCZOS, start=1):
        term = z + float(i)
        a_prime = a_prime - c / (term * term)
    a = _lanczos_sum(z)
    digamma = (log_t + a_prime / a) - _LANCZOS_G / t
    angle = (x + _numpy.abs(_numpy.floor(x + 0.5))) * math.pi
    reflected = digamma - (_numpy.cos(angle) * math.pi) / _numpy.sin(angle)
    digamma = _numpy.where(reflect, reflected, digamma)
    pole = (x <= 0.0) & (x == _numpy.floor(x))
    return _numpy.where(pole, _numpy.full_like(x, _np.nan), digamma)


_ERF_INV_32 = ((2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
                -0.00125372503, -0.00417768164, 0.246640727, 1.50140941),
               (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
                -0.0076224613, 0.00943887047, 1.00167406, 2.83297682))
_ERF_INV_64 = (
    (-3.6444120640178196996e-21, -1.685059138182016589e-19, 1.2858480715256400167e-18,
     1.115787767802518096e-17, -1.333171662854620906e-16, 2.0972767875968561637e-17,
     6.6376381343583238325e-15, -4.0545662729752068639e-14, -8.1519341976054721522e-14,
     2.6335093153082322977e-12, -1.2975133253453532498e-11, -5.4154120542946279317e-11,
     1.051212273321532285e-09, -4.1126339803469836976e-09, -2.9070369957882005086e-08,
     4.2347877827932403518e-07, -1.3654692000834678645e-06, -1.3882523362786468719e-05,
     0.0001867342080340571352, -0.00074070253416626697512, -0.0060336708714301490533,
     0.24015818242558961693, 1.6536545626831027356),
    (2.2137376921775787049e-09, 9.0756561938885390979e-08, -2.7517406297064545428e-07,
     1.8239629214389227755e-08, 1.5027403968909827627e-06, -4.013867526981545969e-06,
     2.9234449089955446044e-06, 1.2475304481671778723e-05, -4.7318229009055733981e-05,
     6.8284851459573175448e-05, 2.4031110387097893999e-05, -0.0003550375203628474796,
     0.00095328937973738049703, -0.0016882755560235047313, 0.0024914420961078508066,
     -0.0037512085075692412107, 0.005370914553590063617, 1.0052589676941592334,
     3.0838856104922207635),
    (-2.7109920616438573243e-11, -2.5556418169965252055e-10, 1.5076572693500548083e-09,
     -3.7894654401267369937e-09, 7.6157012080783393804e-09, -1.4960026627149240478e-08,
     2.9147953450901080826e-08, -6.7711997758452339498e-08, 2.2900482228026654717e-07,
     -9.9298272942317002539e-07, 4.5260625972231537039e-06, -1.9681778105531670567e-05,
     7.5995277030017761139e-05, -0.00021503011930044477347, -0.00013871931833623122026,
     1.0103004648645343977, 4.8499064014085844221))


def _erf_inv32(x):
    w = -_numpy.log1p(x * -x)
    small = w < 5.0
    w = _numpy.where(small, w + -2.5, _numpy.sqrt(w) + -3.0)
    low, high = _ERF_INV_32
    p = _numpy.where(small, low[0], high[0])
    for a, b in zip(low[1:], high[1:]):
        p = _fma(p, w, _numpy.where(small, a, b))
    return _numpy.where(_numpy.abs(x) == 1.0, x * _np.inf, p * x)


def _erf_inv64(x):
    w = -_numpy.log1p(x * -x)
    lt625, lt16 = w < 6.25, w < 16.0
    low, mid, high = _ERF_INV_64

    def coefficient(i):
        c = _numpy.full_like(x, low[i])
        if i < 19:
            c = _numpy.where(lt625, c, mid[i])
        if i < 17:
            c = _numpy.where(lt16, c, high[i])
        return c
    w = _numpy.where(lt625, w - 3.125,
                     _numpy.sqrt(w) - _numpy.where(lt16, _numpy.full_like(w, 3.25), 5.0))
    p = coefficient(0)
    for i in range(1, 17):
        p = _fma(p, w, coefficient(i))
    for i in range(17, 19):
        p = _numpy.where(lt16, _fma(p, w, coefficient(i)), p)
    for i in range(19, 23):
        p = _numpy.where(lt625, _fma(p, w, coefficient(i)), p)
    return _numpy.where(_numpy.abs(x) == 1.0, x * _np.inf, p * x)


def _erf_inv(x):
    return _erf_inv64(x) if _np.dtype(x.dtype) == _np.float64 else _erf_inv32(x)


def _float_operand(name, x):
    (a,) = _operands(name, name, (x,), (("floating",),))
    return a


@custom_jvp
def _lgamma_rule(x):
    return _in_float32(_lgamma, x)


@_lgamma_rule.defjvp
def _lgamma_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return _lgamma_rule(x), t * digamma(x)


@custom_jvp
def _erf_inv_rule(x):
    return _in_float32(_erf_inv, x)


@_erf_inv_rule.defjvp
def _erf_inv_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    y = _erf_inv_rule(x)
    return y, t * (math.sqrt(math.pi) / 2) * _numpy.exp(_numpy.square(y))


def _jitted(fn, name):
    from ._jit import jit
    compiled = jit(fn)

    def call(x):
        a = _float_operand(name, x)
        return fn(a) if isinstance(a, _core.Tensor) else compiled(a)
    call.__name__ = name
    return call


lgamma = _jitted(_lgamma_rule, "lgamma")
lgamma.__doc__ = "jax.lax.lgamma: log|Gamma(x)| (XLA's Lanczos composition; see above)."
digamma = _jitted(lambda x: _in_float32(_digamma, x), "digamma")
digamma.__doc__ = "jax.lax.digamma: psi(x) = d/dx log Gamma(x); NaN at the poles 0, -1, -2, …"
erf_inv = _jitted(_erf_inv_rule, "erf_inv")
erf_inv.__doc__ = "jax.lax.erf_inv: the inverse of erf on (-1, 1); ±inf at ±1, NaN beyond."
