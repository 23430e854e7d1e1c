"""spmd.random: jax.random over spmd::random, on Arrays and inside traced functions, with JAX's
values (Threefry-2x32, partitionable).

Keys are raw (PRNGKey: uint32 data of shape (2,), also from NumPy) or typed (key: a KeyArray of
dtype key<fry>, whose key_data is that uint32 data); every function takes either and a typed key
gives typed keys back. A key made by PRNGKey or key is uncommitted (on the first local device);
samples are committed as their key is. Seeds and fold_in data out of range are OverflowErrors,
as in JAX.

Exactness against JAX 0.10.2 (tests/python/jax_parity/test_random.py runs both): PRNGKey, key,
split, fold_in, bits, uniform, normal, truncated_normal, bernoulli, randint, gumbel, categorical,
permutation, choice, rademacher, exponential, laplace, logistic, cauchy, lognormal (a scalar
sigma), gamma, loggamma and generalized_normal are bit for bit (spmd::random's own samplers, with
XLA's log, log1p, exp and rsqrt; random.h says how). beta, dirichlet and ball go on through
spmd.numpy's exp, softmax and powers (Eigen's and the C library's), within a few ulps of JAX's;
so does lognormal with an array sigma. poisson's counts equal JAX's (its Knuth and rejection
loops over JAX's draws; spmd::random::poisson). orthogonal and multivariate_normal (its
'cholesky' method) compose spmd.numpy.linalg's qr and cholesky as JAX composes LAPACK's: within a
few ulps of JAX's values."""
import functools as _functools
import operator as _operator

import numpy as _np

from . import _arguments, _core, _spmd
from .tree_util import register_pytree_node as _register

_r = _spmd.random


def _integer(x, what):
    try:
        return _operator.index(x)
    except TypeError:
        raise TypeError(f"{what} must be an integer; got {x!r}") from None


class KeyArray:
    """jax.random.key's typed keys: an array whose elements are whole keys (dtype key<fry>),
    over its uint32 key data of shape shape + (2,). A pytree of one leaf, the data, so jit takes
    and returns it."""

    dtype = "key<fry>"

    def __init__(self, data):
        if not (isinstance(data, (_core.Array, _core.Tensor)) and str(data.dtype) == "uint32"
                and data.shape[-1:] == (2,)):
            raise TypeError(f"spmd.random: key data must be uint32 with a last dimension of 2, "
                            f"got {getattr(data, 'dtype', type(data).__name__)}"
                            f"{list(getattr(data, 'shape', ()))}")
        self._data = data

    @property
    def shape(self):
        return tuple(self._data.shape[:-1])

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return int(_np.prod(self.shape, dtype=_np.int64))

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __getitem__(self, i):
        if not self.shape:
            raise IndexError("Too many indices: a single key has no elements")
        i = _integer(i, "a key array's index")
        if not -self.shape[0] <= i < self.shape[0]:
            raise IndexError(f"index {i} is out of bounds for axis 0 with size {self.shape[0]}")
        return KeyArray(_row(self._data, i % self.shape[0]))

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def __repr__(self):
        return f"Array({self.shape}, dtype=key<fry>) overlaying:\n{_np.asarray(self._data)}"


_register(KeyArray, lambda k: ([k._data], None), lambda _, children: KeyArray(children[0]))


def _row(data, i):
    from . import numpy as jnp
    return jnp.take(data, _np.int32(i), axis=0, mode="clip")


def _raw(key, name):
    """The raw key data of `key` (a KeyArray, an Array, a Tensor or NumPy uint32 data)."""
    if isinstance(key, KeyArray):
        return key._data
    if isinstance(key, (_core.Array, _core.Tensor)):
        return key
    if isinstance(key, _np.ndarray) and key.dtype == _np.uint32 and key.shape[-1:] == (2,):
        return _core.device_put(key)
    raise TypeError(f"spmd.random.{name}: a PRNG key (spmd.random.key(seed) or PRNGKey(seed), "
                    f"or its uint32 data of shape (2,)) expected, got {type(key).__name__}")


def _like_key(out, key):
    return _core.committed_like([out], [key])[0] if isinstance(out, _core.Array) else out


def _sample(name, call, key, *args):
    raw = _raw(key, name)
    try:
        return _like_key(call(raw, *args), raw)
    except TypeError as error:
        if not _arguments.is_overload_error(error):
            raise
        raise TypeError(f"spmd.random.{name}: a key of {raw.dtype} data and shape {raw.shape} "
                        f"is not a single PRNG key (uint32 words of shape (2,))") from None


def _shape(shape, name):
    return list(_arguments.shape_tuple(shape, name))


def _float_dtype(dtype, name, float64=True):
    """The sampled dtype: `dtype`, or JAX's default float (float64 under x64). A sampler that
    does not make float64 (float64=False) refuses that default with a clear error rather than
    give float32 where JAX would give float64."""
    d = _np.dtype(_core.dtype_of(_core.canonical_name(
        _core.default_float() if dtype is None else dtype)))
    if not (d.kind == "f" or d.name == "bfloat16"):
        raise ValueError(f"dtype argument to `{name}` must be a float dtype, got {d}")
    if dtype is None and d == _np.float64 and not float64:
        raise NotImplementedError(
            f"spmd.random.{name}: with jax_enable_x64 on, JAX's default dtype is float64, which "
            f"spmd's {name} does not sample yet; pass dtype=spmd.numpy.float32")
    return d


# --- keys ---

def PRNGKey(seed):  # noqa: N802 - jax.random.PRNGKey's name
    seed = _integer(seed, "PRNG key seed")
    if not -2**63 <= seed < 2**64:
        raise OverflowError(f"spmd.random.PRNGKey: the seed {seed} is beyond 64 bits")
    if seed >= 2**63:
        seed -= 2**64  # the same 64 bits
    return _core.uncommitted(_r.PRNGKey(seed))


def key(seed, *, impl=None):
    """jax.random.key: a typed key (KeyArray of shape ()) for `seed`."""
    if impl not in (None, "threefry2x32"):
        raise ValueError(f"spmd.random.key: only the threefry2x32 implementation, not {impl!r}")
    return KeyArray(PRNGKey(seed))


def key_data(keys):
    """The uint32 data of typed keys (of raw ones, themselves)."""
    return _raw(keys, "key_data")


def wrap_key_data(key_bits_array, *, impl=None):
    """Typed keys over uint32 key data of shape (..., 2)."""
    if impl not in (None, "threefry2x32"):
        raise ValueError(f"spmd.random.wrap_key_data: only threefry2x32, not {impl!r}")
    data = key_bits_array
    if isinstance(data, _np.ndarray):
        if data.dtype != _np.uint32:
            raise TypeError(f"wrap_key_data: key data must be uint32, got {data.dtype}")
        data = _core.device_put(data)
    return KeyArray(data)


def _typed_like(out, key):
    return KeyArray(out) if isinstance(key, KeyArray) else out


def split(key, num=2):
    return _typed_like(_sample("split", _r.split, key, _integer(num, "split: num")), key)


def fold_in(key, data):
    data = _integer(data, "fold_in: data")
    if not 0 <= data < 2**32:
        raise OverflowError(f"Python integer {data} out of bounds for uint32")
    return _typed_like(_sample("fold_in", _r.fold_in, key, data), key)


# --- spmd::random's samplers ---

def bits(key, shape=(), dtype=None):
    return _sample("bits", _r.bits, key, _shape(shape, "bits"),
                   _core.dtype_name(_np.uint32 if dtype is None else dtype))


def normal(key, shape=(), dtype=None):
    return _sample("normal", _r.normal, key, _shape(shape, "normal"),
                   _core.dtype_name(_float_dtype(dtype, "normal", float64=False)))


def uniform(key, shape=(), dtype=None, minval=0.0, maxval=1.0):
    return _sample("uniform", _r.uniform, key, _shape(shape, "uniform"),
                   _core.dtype_name(_float_dtype(dtype, "uniform")), float(minval),
                   float(maxval))


def randint(key, shape, minval, maxval, dtype=_np.int32):
    return _sample("randint", _r.randint, key, _shape(shape, "randint"),
                   _integer(minval, "randint: minval"), _integer(maxval, "randint: maxval"),
                   _core.dtype_name(dtype))


def truncated_normal(key, lower, upper, shape=(), dtype=None):
    return _sample("truncated_normal", _r.truncated_normal, key, float(lower), float(upper),
                   _shape(shape, "truncated_normal"),
                   _core.dtype_name(_float_dtype(dtype, "truncated_normal", float64=False)))


def gumbel(key, shape=(), dtype=None, mode="low"):
    if mode != "low":
        raise NotImplementedError(f"spmd.random.gumbel: mode={mode!r} (JAX's default 'low' "
                                  "only)")
    return _sample("gumbel", _r.gumbel, key, _shape(shape, "gumbel"),
                   _core.dtype_name(_float_dtype(dtype, "gumbel", float64=False)))


def bernoulli(key, p=0.5, shape=None):
    """True with probability p: a Python or NumPy scalar p gives shape `shape` (() by default);
    an array p broadcasts to `shape`, whose default is p's shape."""
    if isinstance(p, (int, float)) or (isinstance(p, (_np.ndarray, _np.generic)) and
                                       _np.ndim(p) == 0):
        return _sample("bernoulli", _r.bernoulli, key, float(p),
                       _shape(() if shape is None else shape, "bernoulli"))
    return _traced("bernoulli", key, _bernoulli_p, (_static_shape(shape, "bernoulli"),), p)


def categorical(key, logits, axis=-1, shape=None):
    axis = _integer(axis, "categorical: axis")
    return _traced("categorical", key, _categorical,
                   (axis, _static_shape(shape, "categorical")), logits)


def permutation(key, x, axis=0, independent=False):
    if independent:
        raise NotImplementedError("spmd.random.permutation: independent=True is not supported")
    if isinstance(x, (int, _np.integer)):
        return _sample("permutation", _r.permutation, key, _integer(x, "permutation: x"))
    return _traced("permutation", key, _r.permutation, (_integer(axis, "permutation: axis"),),
                   x)


def choice(key, a, shape=(), replace=True, p=None, axis=0):
    shape = tuple(_shape(shape, "choice"))
    if isinstance(a, (int, _np.integer)) and not isinstance(a, bool):
        n = _integer(a, "choice: a")
        if p is None:
            return _sample("choice", _r.choice, key, n, list(shape), bool(replace))
        return _traced("choice", key, _choice_of_n, (n, shape, bool(replace)), p)
    axis = _integer(axis, "choice: axis")
    if p is None:
        return _traced("choice", key, _choice_of_array, (shape, bool(replace), axis), a)
    return _traced("choice", key, _choice_of_array_by_p, (shape, bool(replace), axis), a, p)


# What the array-taking samplers record: body(key, *arrays, *statics), module functions so that
# an eager call's compiled program is found again (_compiled).
def _bernoulli_p(k, q, shape):
    return _r.bernoulli(k, q, None if shape is None else list(shape))


def _categorical(k, x, axis, shape):
    return _r.categorical(k, x, axis, None if shape is None else list(shape))


def _choice_of_n(k, q, n, shape, replace):
    return _r.choice(k, n, list(shape), replace, q)


def _choice_of_array(k, x, shape, replace, axis):
    return _r.choice(k, x, list(shape), replace, None, axis)


def _choice_of_array_by_p(k, x, q, shape, replace, axis):
    return _r.choice(k, x, list(shape), replace, q, axis)


def _static_shape(shape, name):
    return None if shape is None else tuple(_shape(shape, name))


def _traced(name, key, body, statics, *arrays):
    """body(raw key, *arrays, *statics): at once inside a traced function, else through a jit
    kept per (body, statics), as spmd.numpy keeps its eager operations' (arrays may be NumPy
    data)."""
    raw = _raw(key, name)
    if isinstance(raw, _core.Tensor) or any(isinstance(a, _core.Tensor) for a in arrays):
        return body(raw, *[_as_traced(a) for a in arrays], *statics)
    arrays = [a if isinstance(a, _core.Array) else _core.device_put(_np.asarray(a))
              for a in arrays]
    return _like_key(_compiled(body, statics)(raw, *arrays), raw)


@_functools.lru_cache(maxsize=256)
def _compiled(body, statics):
    from ._jit import jit

    def sample(k, *arrays):
        return body(k, *arrays, *statics)
    sample.__name__ = body.__name__
    return jit(sample)


def _as_traced(a):
    if isinstance(a, _core.Tensor):
        return a
    from ._operators import _traced as constant
    return constant(_np.asarray(a) if not isinstance(a, _core.Array) else a)


# --- JAX's compositions of the samplers above ---

def _finfo(dtype):
    import ml_dtypes
    return ml_dtypes.finfo(dtype)


def _uniform_function(name, call, key, shape, dtype, composed):
    """exponential, laplace, logistic or cauchy: spmd::random's sampler, JAX's bit for bit, for
    float32 and the half types; under x64 a float64 one composed as JAX composes it."""
    d = _float_dtype(dtype, name)
    shape = _shape(shape, name)
    if d == _np.float64:
        return composed(d)
    return _sample(name, call, key, shape, _core.dtype_name(d))


def exponential(key, shape=(), dtype=None):
    """JAX's: -log1p(-u), u uniform on [0, 1)."""
    def composed(d):
        from . import numpy as jnp
        return -jnp.log1p(-uniform(key, shape, d))
    return _uniform_function("exponential", _r.exponential, key, shape, dtype, composed)


def laplace(key, shape=(), dtype=None):
    """JAX's: sign(u) * log1p(-|u|), u uniform on [-1 + epsneg, 1)."""
    def composed(d):
        from . import numpy as jnp
        u = uniform(key, shape, d, minval=-1.0 + float(_finfo(d).epsneg), maxval=1.0)
        return jnp.sign(u) * jnp.log1p(-jnp.abs(u))
    return _uniform_function("laplace", _r.laplace, key, shape, dtype, composed)


def cauchy(key, shape=(), dtype=None):
    """JAX's: tan(pi (u - 1/2)), u uniform on [eps, 1)."""
    def composed(d):
        from . import numpy as jnp
        u = uniform(key, shape, d, minval=float(_finfo(d).eps), maxval=1.0)
        return jnp.tan(_np.asarray(_np.pi, d) * (u - _np.asarray(0.5, d)))
    return _uniform_function("cauchy", _r.cauchy, key, shape, dtype, composed)


def logistic(key, shape=(), dtype=None):
    """JAX's: log(x) - log1p(-x), x uniform on [tiny, 1)."""
    def composed(d):
        from . import numpy as jnp
        x = uniform(key, shape, d, minval=float(_finfo(d).tiny), maxval=1.0)
        return jnp.log(x) - jnp.log1p(-x)
    return _uniform_function("logistic", _r.logistic, key, shape, dtype, composed)


def lognormal(key, sigma=1.0, shape=None, dtype=None):
    """JAX's: exp(normal * sigma). A scalar sigma is spmd::random's sampler, JAX's bit for bit;
    an array sigma spmd::random's: erf_inv(u) times sqrt(2) sigma (folded first, as XLA folds
    it) through XLA's exp, also JAX's bit for bit."""
    d = _float_dtype(dtype, "lognormal", float64=False)
    _check_all_safe_to_cast("lognormal", d, sigma)
    shape = _np.shape(sigma) if shape is None else shape
    if _np.ndim(sigma) == 0 and not isinstance(sigma, _core.Tensor):
        return _sample("lognormal", _r.lognormal, key, float(sigma), _shape(shape, "lognormal"),
                       _core.dtype_name(d))
    return _traced("lognormal", key, _lognormal_body,
                   (tuple(_shape(shape, "lognormal")), _core.dtype_name(d)), sigma)


def _lognormal_body(k, sigma, shape, dtype):
    return _r.lognormal_of_sigmas(k, sigma, list(shape), dtype)


def _rademacher_body(k, shape, dtype):
    return _r.rademacher(k, list(shape), dtype)


def rademacher(key, shape=(), dtype=None):
    """±1 with equal probability (JAX's: 2 * bernoulli(0.5) - 1), int32 by default
    (spmd::random::rademacher)."""
    d = _np.dtype(_core.dtype_of(_core.canonical_name(
        _core.default_int() if dtype is None else dtype)))
    shape = tuple(_shape(shape, "rademacher"))
    return _traced("rademacher", key, _rademacher_body, (shape, _core.dtype_name(d)))


# --- the gamma family: spmd::random's gamma, composed as JAX composes the rest ---

def _check_all_safe_to_cast(name, dtype, *args):
    """JAX's check of a sampler's parameters: each must cast to the sampled `dtype` with no loss
    under JAX's promotion, or it is a TypePromotionError. A Python scalar, or a weak traced
    value, takes the dtype (weak); an array of float32 does not go to float16. spmd's eager arrays
    carry no weak bit, so spmd.numpy.asarray(2.0) counts as a strong float32 here, where JAX's
    jnp.asarray(2.0) is weak."""
    from . import _weak, errors
    from . import numpy as jnp
    for a in args:
        if isinstance(a, (bool, int, float)) or _weak.is_weak(a):
            continue
        src = getattr(a, "dtype", None)
        src = _np.asarray(a).dtype if src is None else src
        if jnp.promote_types(src, dtype) != dtype:
            raise errors.TypePromotionError(
                f"In arguments to {name}, cannot safely cast argument of type "
                f"{_core.canonical_name(src)} to {_core.canonical_name(dtype)}")


def _gamma_dtype(dtype, name):
    d = _float_dtype(dtype, name, float64=False)
    if d != _np.float32:
        raise NotImplementedError(f"spmd.random.{name}: samples float32 only ({d} is not here "
                                  "yet); pass dtype=spmd.numpy.float32")
    return d


def _sample_shape(name, shape, *param_shapes):
    """The sample's shape: `shape`, which the parameters' shapes must broadcast to (JAX's
    _check_shape), or, with none, theirs broadcast together."""
    if shape is None:
        return tuple(_np.broadcast_shapes(*param_shapes))
    shape = tuple(_shape(shape, name))
    try:
        joint = _np.broadcast_shapes(shape, *param_shapes)
    except ValueError:
        joint = None
    if joint != shape:
        raise ValueError(f"{name} parameter shapes must be broadcast-compatible with shape "
                         f"argument, and the result of broadcasting the shapes must equal the "
                         f"shape argument, but got result {joint} for shape argument {shape}.")
    return shape


def _gamma_body(k, a, shape, log_space):
    from . import numpy as jnp
    a = jnp.astype(a, "float32")
    if tuple(a.shape) != shape:
        a = jnp.broadcast_to(a, list(shape))
    return _r.gamma(k, a, log_space)


def gamma(key, a, shape=None, dtype=None):
    """Gamma(a, 1) samples (jax.random.gamma): JAX's draws and values, bit for bit (float32;
    spmd::random::gamma)."""
    _gamma_dtype(dtype, "gamma")
    shape = _sample_shape("gamma", shape, _np.shape(a))
    return _traced("gamma", key, _gamma_body, (shape, False), a)


def loggamma(key, a, shape=None, dtype=None):
    """The logarithms of Gamma(a, 1) samples, computed in log space (jax.random.loggamma)."""
    _gamma_dtype(dtype, "loggamma")
    shape = _sample_shape("loggamma", shape, _np.shape(a))
    return _traced("loggamma", key, _gamma_body, (shape, True), a)


def _beta_body(k, a, b, shape):
    from . import numpy as jnp
    a, b = (jnp.broadcast_to(jnp.astype(x, "float32"), list(shape)) for x in (a, b))
    return _r.beta(k, a, b)


def beta(key, a, b, shape=None, dtype=None):
    """JAX's: the log-gammas of a and b from the two keys of split(key), then
    exp(la - m) / (exp(la - m) + exp(lb - m)), m their maximum (spmd::random::beta)."""
    _check_all_safe_to_cast("beta", _float_dtype(dtype, "beta", float64=False), a, b)
    _gamma_dtype(dtype, "beta")
    shape = _sample_shape("beta", shape, _np.shape(a), _np.shape(b))
    return _traced("beta", key, _beta_body, (shape,), a, b)


def _dirichlet_body(k, alpha, shape):
    from . import numpy as jnp
    return _r.dirichlet(k, jnp.broadcast_to(jnp.astype(alpha, "float32"), list(shape)))


def dirichlet(key, alpha, shape=None, dtype=None):
    """JAX's: the softmax of log-gammas of alpha along its last axis (spmd::random::dirichlet)."""
    _gamma_dtype(dtype, "dirichlet")
    if _np.ndim(alpha) < 1:
        raise ValueError(f"dirichlet requires alpha.ndim >= 1, got alpha.ndim == "
                         f"{_np.ndim(alpha)}")
    batch = _np.shape(alpha)[:-1]
    shape = batch if shape is None else _sample_shape("dirichlet", shape, batch)
    return _traced("dirichlet", key, _dirichlet_body,
                   (tuple(shape) + _np.shape(alpha)[-1:],), alpha)


def _generalized_normal_body(k, p, shape):
    return _r.generalized_normal(k, p, list(shape))


def generalized_normal(key, p, shape=(), dtype=None):
    """JAX's: r * g ** (1 / p), g gamma(1 / p) from split(key)[0], r rademacher from [1], in
    float32 as JAX's jit computes them (spmd::random::generalized_normal)."""
    _gamma_dtype(dtype, "generalized_normal")
    shape = tuple(_shape(shape, "generalized_normal"))
    return _traced("generalized_normal", key, _generalized_normal_body, (float(p), shape))


def _ball_body(k, d, p, shape):
    return _r.ball(k, d, p, list(shape))


def ball(key, d, p=2, shape=(), dtype=None):
    """Points uniform in the d-dimensional unit p-ball (JAX's: generalized normals over their
    p-norm grown by an exponential draw), of shape (*shape, d) (spmd::random::ball)."""
    _gamma_dtype(dtype, "ball")
    d = _integer(d, "ball: d")
    shape = tuple(_shape(shape, "ball"))
    return _traced("ball", key, _ball_body, (d, float(p), shape))


def _poisson_body(k, lam, shape):
    from . import numpy as jnp
    lam = jnp.astype(lam, "float32")
    if tuple(lam.shape) != shape:
        lam = jnp.broadcast_to(lam, list(shape))
    return _r.poisson(k, lam)


def poisson(key, lam, shape=None, dtype=None):
    """Poisson samples (jax.random.poisson): JAX's Knuth and rejection algorithms over the whole
    array from JAX's draws; int32 by default (int64 under x64), or `dtype`."""
    from . import numpy as jnp
    d = _np.dtype(_core.dtype_of(_core.canonical_name(
        _core.default_int() if dtype is None else dtype)))
    if d.kind not in "iu":
        raise ValueError(f"dtype argument to `poisson` must be an int dtype, got {d}")
    shape = _np.shape(lam) if shape is None else tuple(_shape(shape, "poisson"))
    out = _traced("poisson", key, _poisson_body, (shape,), lam)
    return out if d == _np.int32 else jnp.astype(out, d)


def _orthogonal_body(k, n, m, shape):
    return _r.orthogonal(k, n, m, list(shape))


def orthogonal(key, n, shape=(), dtype=None, m=None):
    """JAX's: the Q of a normal matrix's QR, its columns' signs set by R's diagonal (n×m; m
    defaults to n), float32 (spmd::random::orthogonal)."""
    _gamma_dtype(dtype, "orthogonal")
    n = _integer(n, "orthogonal: n")
    m = n if m is None else _integer(m, "orthogonal: m")
    shape = tuple(_shape(shape, "orthogonal"))
    return _traced("orthogonal", key, _orthogonal_body, (n, m, shape))


def _multivariate_normal_body(k, mean, cov, shape):
    from . import numpy as jnp
    return _r.multivariate_normal(k, jnp.astype(mean, "float32"), jnp.astype(cov, "float32"),
                                  list(shape))


def multivariate_normal(key, mean, cov, shape=None, dtype=None, method="cholesky"):
    """JAX's, with its default method: mean + L z, L the Cholesky factor of cov and z standard
    normal of shape + mean.shape[-1:], float32 ('svd' and 'eigh' are not here yet)."""
    from . import numpy as jnp
    d = _gamma_dtype(dtype, "multivariate_normal")
    if method not in ("cholesky", "svd", "eigh"):
        raise ValueError(f"method must be one of {{'svd', 'eigh', 'cholesky'}}, got {method}")
    if method != "cholesky":
        raise NotImplementedError(f"spmd.random.multivariate_normal: method={method!r} needs a "
                                  "decomposition spmd does not have; the default 'cholesky' works")
    mean, cov = jnp.asarray(mean, d), jnp.asarray(cov, d)
    if _np.ndim(mean) < 1:
        raise ValueError(f"multivariate_normal requires mean.ndim >= 1, got mean.ndim == "
                         f"{_np.ndim(mean)}")
    if _np.ndim(cov) < 2:
        raise ValueError(f"multivariate_normal requires cov.ndim >= 2, got cov.ndim == "
                         f"{_np.ndim(cov)}")
    k = mean.shape[-1]
    if tuple(cov.shape[-2:]) != (k, k):
        raise ValueError(f"multivariate_normal requires cov.shape == (..., n, n) for n={k}, "
                         f"but got cov.shape == {tuple(cov.shape)}.")
    batch = (tuple(mean.shape[:-1]), tuple(cov.shape[:-2]))
    shape = _np.broadcast_shapes(*batch) if shape is None else \
        _sample_shape("normal", shape, *batch)
    return _traced("multivariate_normal", key, _multivariate_normal_body, (tuple(shape),),
                   mean, cov)


from ._random_composed import *  # noqa: E402,F401,F403 - chisquare, f, t, pareto and the rest
