"""spmd.nn: jax.nn's activations and normalisers over spmd.numpy, each composed as jax.nn composes
it (so with JAX's rounding; relu6's and hard_tanh's derivatives JAX's), with JAX's values and
derivatives at the edges (relu's is 0 at 0; logsumexp of a row of -inf is -inf).
spmd.nn.initializers holds the initializers. Not here: the scaled (fp8) dot functions."""
import operator as _operator

import numpy as _np

from . import _spmd
from .numpy import _name_ops, _op, _over

_t = _spmd.tnp


def _softmax(x, axis=-1):
    """jax.nn.softmax over `axis`: an int, a tuple of them, None (every axis) or () (none: each
    element alone, 1 where it is finite)."""
    b, axes = _over(x, axis)
    out = _t.softmax(b, axes)
    return out if b is x else _t.squeeze(out, [0])


def _logsumexp(a, axis=None, keepdims=False):
    """jax.nn.logsumexp; over no elements it is -inf, as JAX's."""
    b, axes = _over(a, axis)
    return _t.logsumexp(b, axes, keepdims and b is a)


def _inexact(x):
    """JAX's promote_args_inexact: an integer or bool operand in the default float."""
    kind = x.dtype
    if kind.kind == "f" or kind.name == "bfloat16":
        return x
    return _t.astype(x, "float64" if _spmd._x64_enabled() else "float32")


def _gelu(x, approximate=True):
    """jax.nn.gelu. approximate: x * 0.5 (1 + tanh(√(2/π) (x + 0.044715 x³))), JAX's grouping;
    exact: 0.5 x erfc(-x √½)."""
    x = _inexact(x)
    name = x.dtype.name
    if approximate:
        c = _t.full([], float(_np.sqrt(2 / _np.pi).astype(_np.float32 if name != "float64"
                                                          else _np.float64)), name)
        cdf = 0.5 * (1.0 + _t.tanh(c * (x + 0.044715 * (x * (x * x)))))
        return x * cdf
    half = _t.full([], float(_np.sqrt(0.5)), name)
    return 0.5 * x * _t.erfc(-x * half)


def _silu(x):
    x = _inexact(x)
    return x * _t.logistic(x)


def _log_softmax(x, axis=-1):
    """jax.nn.log_softmax: x - max, less the log of the sum of its exponentials (the max's
    gradient stopped, as JAX's)."""
    x = _inexact(x)
    b, axes = _over(x, axis)
    shifted = b - _spmd.stop_gradient(_t.max(b, axes, True))
    out = shifted - _t.log(_t.sum(_t.exp(shifted), axes, True))
    return out if b is x else _t.squeeze(out, [0])


def _standardize(x, axis=-1, mean=None, variance=None, epsilon=1e-5, where=None):
    """jax.nn.standardize: (x - mean) * rsqrt(variance + epsilon), the variance as
    mean(x²) - mean², as JAX computes it."""
    if where is not None:
        raise NotImplementedError("spmd.nn.standardize: where= is not yet supported")
    x = _inexact(x)
    b, axes = _over(x, axis)
    if mean is None:
        mean = _t.mean(b, axes, True)
    if variance is None:
        variance = _t.mean(b * b, axes, True) - mean * mean
    out = (b - mean) * _t.rsqrt(variance + epsilon)
    return out if b is x else _t.squeeze(out, [0])


def _one_hot(x, num_classes, dtype=None, axis=-1):
    """jax.nn.one_hot: x[..., None] == arange(num_classes), as `dtype` (the default float); an
    index outside [0, num_classes) is a row of zeros. A floating x compares as it is (JAX
    deprecates it, with a warning)."""
    n = _operator.index(num_classes)
    rank = len(x.shape) + 1
    axis = _operator.index(axis)
    if not -rank <= axis < rank:
        raise ValueError(f"one_hot: axis {axis} is out of bounds for a result of rank {rank}")
    axis %= rank
    shape = [1] * rank
    shape[axis] = n
    classes = _t.reshape(_t.arange(n, "int32"), shape)
    hot = _t.equal(_t.expand_dims(x, axis), classes)
    return _t.astype(hot, dtype or ("float64" if _spmd._x64_enabled() else "float32"))


def _jnp():
    from . import numpy as jnp
    return jnp


def _relu6(x):
    """jax.nn.relu6: min(max(x, 0), 6), its derivative 1 strictly inside (0, 6) and 0 elsewhere
    (JAX's custom JVP), from a select between x and the clipped value held constant."""
    jnp = _jnp()
    clipped = jnp.minimum(jnp.maximum(x, 0), 6.0)
    return jnp.where((x > 0) & (x < 6), x, _spmd.stop_gradient(clipped))


def _softplus(x):
    return _jnp().logaddexp(x, 0)


def _sparse_plus(x):
    jnp = _jnp()
    return jnp.where(x <= -1.0, 0.0, jnp.where(x >= 1.0, x, (x + 1.0) ** 2 / 4))


def _soft_sign(x):
    return x / (_jnp().abs(x) + 1)


def _sparse_sigmoid(x):
    return 0.5 * _jnp().clip(x + 1.0, 0.0, 2.0)


def _mish(x):
    return x * _jnp().tanh(_softplus(x))


def _log_sigmoid(x):
    return -_softplus(-x)


def _elu(x, alpha=1.0):
    jnp = _jnp()
    return jnp.where(x > 0, x, alpha * jnp.expm1(jnp.where(x > 0, 0.0, x)))


def _leaky_relu(x, negative_slope=1e-2):
    return _jnp().where(x >= 0, x, negative_slope * x)


def _hard_tanh(x):
    """jax.nn.hard_tanh: x held to [-1, 1]. XLA makes JAX's nested selects a clamp, whose max and
    min read a subnormal as 0: so is the value here; the derivative stays the selects' (1 on
    [-1, 1], the ends included, and at NaN)."""
    jnp = _jnp()
    clamped = jnp.minimum(jnp.maximum(x, -1), 1)
    inside = jnp.where((x > -1) & (x < 1), clamped, x)  # x itself at ±1 and NaN
    return jnp.where((x > 1) | (x < -1), _spmd.stop_gradient(clamped), inside)


def _celu(x, alpha=1.0):
    jnp = _jnp()
    return jnp.maximum(x, 0.0) + alpha * jnp.expm1(jnp.minimum(x, 0.0) / alpha)


def _selu(x):
    return 1.0507009873554804934193349852946 * _elu(x, 1.6732632423543772848170429916717)


def _hard_sigmoid(x):
    return _relu6(x + 3.0) / 6.0


def _hard_silu(x):
    return x * _hard_sigmoid(x)


def _squareplus(x, b=4):
    jnp = _jnp()
    return (x + jnp.sqrt(jnp.square(x) + b)) / 2


def _log1mexp(x):
    """jax.nn.log1mexp: log(1 - exp(-x)) as log(-expm1(-x)) below log 2, log1p(-exp(-x)) from
    there (its derivative differentiates these, equal to JAX's 1 / expm1(x) up to rounding)."""
    jnp = _jnp()
    return jnp.where(x < jnp.log(2.0), jnp.log(-jnp.expm1(-x)), jnp.log1p(-jnp.exp(-x)))


def _glu(x, axis=-1):
    """jax.nn.glu: the first half of `axis` times the sigmoid of the second."""
    jnp = _jnp()
    if x.shape[axis] % 2:
        raise AssertionError("axis size must be divisible by 2")
    x1, x2 = jnp.split(x, 2, axis)
    return x1 * _t.logistic(x2)


def _axes_of(axis, rank):
    if axis is None:
        return range(rank)
    return [a % rank for a in (axis if isinstance(axis, (tuple, list)) else (axis,))]


relu = _op(lambda x: _t.relu(x))
sigmoid = _op(lambda x: _t.logistic(x))  # jax.nn.sigmoid is lax.logistic
softmax = _op(_softmax)
_plain_logsumexp = _op(_logsumexp)


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False, where=None):
    """jax.nn.logsumexp (jax.scipy.special.logsumexp): log(sum(b * exp(a))) over `axis`, with
    weights `b`, the sign of the sum (return_sign: (log|sum|, sign)) and a mask `where`, JAX's
    composition; without them, one fused operation (over no elements: -inf). With `b` and no
    return_sign, a negative sum gives NaN."""
    if b is None and not return_sign and where is None:
        return _plain_logsumexp(a, axis=axis, keepdims=keepdims)
    return _weighted_logsumexp(a, axis, b, keepdims, return_sign, where)


def _weighted_logsumexp(a, axis, b, keepdims, return_sign, where):
    from . import lax, numpy as jnp
    from .scipy.special import _inexact
    if where is not None:
        a = jnp.where(where, a, 0)
    if b is not None:
        a, b = _inexact("logsumexp", a, b)
        a = jnp.where(b != 0, a, -_np.inf)
    else:
        (a,) = _inexact("logsumexp", a)
    dims = tuple(range(a.ndim)) if axis is None else tuple(
        sorted(d % a.ndim for d in (axis if isinstance(axis, (tuple, list)) else (axis,))))
    amax = jnp.max(a, axis=dims, keepdims=keepdims, where=where, initial=-_np.inf)
    amax = lax.stop_gradient(jnp.where(jnp.isfinite(amax), amax, 0))
    with_dims = amax if keepdims else jnp.expand_dims(amax, dims)
    exp_a = jnp.exp(a - with_dims)
    if b is not None:
        exp_a = exp_a * b
    total = jnp.sum(exp_a, axis=dims, keepdims=keepdims, where=where)
    sign = jnp.sign(total)
    out = jnp.log(jnp.abs(total)) + amax
    if return_sign:
        return out, sign
    return jnp.where(sign < 0, _np.nan, out) if b is not None else out
gelu = _op(_gelu)
silu = swish = _op(_silu)
log_softmax = _op(_log_softmax)
standardize = _op(_standardize, arrays=(0,))
relu6 = _op(_relu6)
softplus = _op(_softplus)
sparse_plus = _op(_sparse_plus)
soft_sign = _op(_soft_sign)
sparse_sigmoid = _op(_sparse_sigmoid)
mish = _op(_mish)
log_sigmoid = _op(_log_sigmoid)
elu = _op(_elu)
leaky_relu = _op(_leaky_relu)
hard_tanh = _op(_hard_tanh)
celu = _op(_celu)
selu = _op(_selu)
hard_sigmoid = _op(_hard_sigmoid)
hard_silu = hard_swish = _op(_hard_silu)
squareplus = _op(_squareplus)
log1mexp = _op(_log1mexp)
glu = _op(_glu)
tanh = _op(lambda x: _t.tanh(x))
identity = _op(lambda x: x)


def logmeanexp(x, axis=None, where=None, keepdims=False):
    """jax.nn.logmeanexp: logsumexp over `axis` less the log of the count of its elements (of
    those `where` keeps)."""
    from . import numpy as jnp
    x = jnp.asarray(x) if not hasattr(x, "shape") else x
    if where is None:
        lse = logsumexp(x, axis=axis, keepdims=keepdims)
        count = _np.prod([x.shape[a] for a in _axes_of(axis, len(x.shape))], dtype=_np.float64)
        return lse - jnp.log(jnp.asarray(count, lse.dtype))
    kept = jnp.broadcast_to(where, x.shape)
    lse = logsumexp(jnp.where(kept, x, -_np.inf), axis=axis, keepdims=keepdims)
    return lse - jnp.log(jnp.sum(jnp.astype(kept, lse.dtype), axis=axis, keepdims=keepdims))
_one_hot_op = _op(_one_hot, arrays=(0,))


def one_hot(x, num_classes, *, dtype=None, axis=-1):
    kind = _np.dtype(getattr(x, "dtype", None) or _np.asarray(x).dtype)
    if kind.kind not in "iu":
        import warnings
        warnings.warn(f"jax.nn.one_hot input should be integer-typed; got dtype={kind}",
                      DeprecationWarning, stacklevel=2)
    return _one_hot_op(x, num_classes, dtype=None if dtype is None else _dtype_key(dtype),
                       axis=axis)


def dot_product_attention(query, key, value, bias=None, mask=None, *, scale=None,
                          is_causal=False, query_seq_lengths=None, key_value_seq_lengths=None,
                          local_window_size=None, implementation=None, return_residual=False):
    """jax.nn.dot_product_attention, its XLA form (implementation None or 'xla'): softmax(q kᵀ ·
    scale + bias, masked) v per head, query heads in groups over the key/value heads (B, T, N, H
    against B, S, K, H; N a multiple of K); logits in float32 at least, the softmax in float32;
    `mask`, `is_causal`, the sequence lengths and `local_window_size` mask logits with JAX's large
    negative number. With return_residual, also the softmax's logsumexp (B, T, N), no gradient.
    'cudnn' is NotImplementedError (no cuDNN here)."""
    from . import numpy as jnp
    if implementation == "cudnn":
        raise NotImplementedError("spmd: dot_product_attention(implementation='cudnn') needs "
                                  "cuDNN; use implementation=None or 'xla'")
    if implementation not in (None, "xla"):
        raise ValueError(f"Unsupported implementation option: {implementation}")
    output_shape = tuple(jnp.shape(query))
    q, k, v = (_four(jnp, t) for t in (query, key, value))
    bias = None if bias is None else _four(jnp, bias)
    mask = None if mask is None else _four(jnp, mask)
    B, S, K, H = k.shape
    _check_attention(q, k, v, bias, mask, query_seq_lengths, key_value_seq_lengths)
    T, N = q.shape[1], q.shape[2]
    G = N // K
    logits_dtype = jnp.promote_types(q.dtype, _np.float32)
    q5 = jnp.reshape(jnp.astype(q, logits_dtype), (B, T, K, G, H))
    logits = jnp.einsum("btkgh,bskh->bkgts", q5, jnp.astype(k, logits_dtype))
    logits = logits * jnp.asarray(1.0 / _np.sqrt(H) if scale is None else scale, logits.dtype)
    if bias is not None:
        logits = jnp.astype(logits + _grouped(jnp, bias, K, G), logits.dtype)
    padded = _masked(jnp, logits, mask, K, G, is_causal, query_seq_lengths,
                     key_value_seq_lengths, local_window_size)
    probs = jnp.astype(softmax(jnp.astype(padded, _np.float32), axis=-1), k.dtype)
    encoded = jnp.einsum("bkgts,bskh->btkgh", probs, v)
    if query_seq_lengths is not None:
        live = jnp.arange(T)[None, :] < jnp.asarray(query_seq_lengths)[:, None]
        encoded = encoded * jnp.astype(live[:, :, None, None, None], encoded.dtype)
    out = jnp.reshape(jnp.reshape(encoded, (B, T, N, H)), output_shape)
    if not return_residual:
        return out
    lse = jnp.astype(logsumexp(padded, axis=-1), k.dtype)  # B K G T
    lse = jnp.reshape(jnp.transpose(lse, (0, 3, 1, 2)), (B, T, N))
    from . import lax
    return out, lax.stop_gradient(jnp.reshape(lse, output_shape[:-1]))


def _four(jnp, t):
    t = jnp.asarray(t) if not hasattr(t, "shape") else t
    missing = 4 - len(t.shape)
    return jnp.expand_dims(t, tuple(range(missing))) if missing > 0 else t


def _check_attention(q, k, v, bias, mask, q_lengths, kv_lengths):
    B, S, K, H = k.shape

    def check(t, shape, dtype, name):
        if t is None:
            return
        t_shape = tuple(_np.shape(t)) if not hasattr(t, "shape") else tuple(t.shape)
        if len(t_shape) != len(shape):
            raise ValueError(f"{name} ndim should be {len(shape)}, but got {len(t_shape)}")
        t_dtype = _np.dtype(t.dtype if hasattr(t, "dtype") else _np.asarray(t).dtype)
        if dtype is not None and t_dtype != _np.dtype(dtype):
            raise ValueError(f"{name} dtype should be {_np.dtype(dtype)}, but got {t_dtype}")
        if any(want != -1 and got != want for got, want in zip(t_shape, shape)):
            raise ValueError(f"{name} shape should be {shape}: but got {t_shape}")
    check(v, [B, S, K, H], k.dtype, "value")
    check(q, [B, -1, -1, H], k.dtype, "query")
    check(mask, [-1] * 4, bool, "mask")
    check(bias, [-1] * 4, None, "bias")
    check(q_lengths, [B], _np.int32, "query_seq_lengths")
    check(kv_lengths, [B], _np.int32, "key_value_seq_lengths")
    if q.shape[-2] % K:
        raise ValueError("The number of query heads must be a multiple of key/value heads, but "
                         f"got {q.shape[-2]} vs {K}")


def _grouped(jnp, t, K, G):
    """A (B, N or 1, T, S) bias or mask as (B, K or 1, G or 1, T, S), against the grouped heads."""
    tB, tN, tT, tS = t.shape
    if tN == 1:
        return jnp.reshape(t, (tB, 1, 1, tT, tS))
    return jnp.reshape(t, (tB, K, G, tT, tS))


def _masked(jnp, logits, mask, K, G, is_causal, q_lengths, kv_lengths, window):
    """logits where every mask keeps them, JAX's large negative number elsewhere."""
    if mask is None and not is_causal and q_lengths is None and kv_lengths is None and \
            window is None:
        return logits
    T, S = logits.shape[-2], logits.shape[-1]
    keep = jnp.ones(logits.shape, bool)
    if mask is not None:
        keep = keep & _grouped(jnp, mask, K, G)
    if is_causal:
        keep = keep & jnp.tril(jnp.ones((T, S), bool))
    if window is not None:
        left, right = (window, window) if isinstance(window, int) else window
        t_pos, s_pos = jnp.arange(T)[:, None], jnp.arange(S)[None, :]
        keep = keep & (t_pos <= s_pos + left) & (t_pos >= s_pos - right)
    if q_lengths is not None or kv_lengths is not None:
        live = jnp.ones((logits.shape[0], T, S), bool)
        if q_lengths is not None:
            live = live & (jnp.arange(T)[None, :, None] < jnp.asarray(q_lengths)[:, None, None])
        if kv_lengths is not None:
            live = live & (jnp.arange(S)[None, None, :] < jnp.asarray(kv_lengths)[:, None, None])
        keep = keep & live[:, None, None, :, :]
    top = min(float(jnp.finfo(logits.dtype).max), float(_np.finfo(_np.float32).max))
    return jnp.where(keep, logits, jnp.asarray(-0.7 * top, logits.dtype))


def _dtype_key(dtype):
    from ._core import dtype_name
    return dtype_name(dtype)


_name_ops(globals(), "spmd.nn")
_plain_logsumexp.public_name = "spmd.nn.logsumexp"

from . import initializers  # noqa: E402,F401 - jax.nn.initializers
