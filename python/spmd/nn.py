"""spmd.nn: jax.nn's activations and normalisers over spmd.numpy, with JAX's values and
derivatives at the edges (relu's is 0 at 0; logsumexp of a row of -inf is -inf)."""
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


relu = _op(lambda x: _t.relu(x))
sigmoid = _op(lambda x: _t.logistic(x))  # jax.nn.sigmoid is lax.logistic
softmax = _op(_softmax)
logsumexp = _op(_logsumexp)

_name_ops(globals(), "spmd.nn")
