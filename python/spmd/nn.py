"""spmd.nn: jax.nn's activations and normalisers over spmd.numpy, with JAX's values and
derivatives at the edges (relu's is 0 at 0; logsumexp of a row of -inf is -inf)."""
from . import _spmd
from .numpy import _axes, _name_ops, _op

relu = _op(lambda x: _spmd.tnp.relu(x))
sigmoid = _op(lambda x: _spmd.tnp.logistic(x))  # jax.nn.sigmoid is lax.logistic
softmax = _op(lambda x, axis=-1: _spmd.tnp.softmax(x, axis))
logsumexp = _op(lambda a, axis=None, keepdims=False:
                _spmd.tnp.logsumexp(a, _axes(axis), keepdims))

_name_ops(globals(), "spmd.nn")
