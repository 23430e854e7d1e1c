"""spmd.nn.initializers: jax.nn.initializers' constructors, each returning init(key, shape,
dtype) with JAX's values for the same key (spmd.random's samplers, truncated_normal included,
are JAX's bit for bit)."""
import numpy as _np

from . import _core, random
from . import numpy as _jnp


def _shape(shape):
    return tuple(int(d) for d in ((shape,) if isinstance(shape, int) else shape))


def _dtype(dtype):
    return _np.dtype(_core.dtype_of(_core.canonical_name(dtype)))


def zeros(key, shape, dtype=_np.float32):
    return _jnp.zeros(_shape(shape), dtype)


def ones(key, shape, dtype=_np.float32):
    return _jnp.ones(_shape(shape), dtype)


def constant(value, dtype=_np.float32):
    def init(key, shape, dtype=dtype):
        return _jnp.full(_shape(shape), value, dtype)
    return init


def uniform(scale=1e-2, dtype=_np.float32):
    def init(key, shape, dtype=dtype):
        d = _dtype(dtype)
        return random.uniform(key, _shape(shape), d) * _np.asarray(scale, d)
    return init


def normal(stddev=1e-2, dtype=_np.float32):
    def init(key, shape, dtype=dtype):
        d = _dtype(dtype)
        return random.normal(key, _shape(shape), d) * _np.asarray(stddev, d)
    return init


def _fans(shape, in_axis, out_axis, batch_axis):
    """JAX's _compute_fans: the in and out axes' sizes times the receptive field (the product of
    the other axes but the batch ones)."""
    rank = len(shape)
    if rank <= 1:
        raise ValueError(f"Can't compute input and output sizes of a {rank}-dimensional weights "
                         "tensor. Must be at least 2D.")
    in_axes = {a % rank for a in ((in_axis,) if isinstance(in_axis, int) else in_axis)}
    out_axes = {a % rank for a in ((out_axis,) if isinstance(out_axis, int) else out_axis)}
    batch = {a % rank for a in ((batch_axis,) if isinstance(batch_axis, int) else batch_axis)}
    field = _np.prod([s for i, s in enumerate(shape) if i not in in_axes | out_axes | batch])
    fan_in = _np.prod([shape[i] for i in in_axes]) * field
    fan_out = _np.prod([shape[i] for i in out_axes]) * field
    return fan_in, fan_out


def variance_scaling(scale, mode, distribution, in_axis=-2, out_axis=-1, batch_axis=(),
                     dtype=_np.float32):
    """jax.nn.initializers.variance_scaling with distribution "normal" (untruncated) or
    "uniform"."""
    if mode not in ("fan_in", "fan_out", "fan_avg"):
        raise ValueError(f"invalid mode for variance scaling initializer: {mode}")
    if distribution not in ("truncated_normal", "normal", "uniform"):
        raise ValueError(f"invalid distribution for variance scaling initializer: "
                         f"{distribution}")

    def init(key, shape, dtype=dtype):
        shape, d = _shape(shape), _dtype(dtype)
        fan_in, fan_out = _fans(shape, in_axis, out_axis, batch_axis)
        denominator = {"fan_in": fan_in, "fan_out": fan_out,
                       "fan_avg": (fan_in + fan_out) / 2}[mode]
        variance = _np.asarray(scale / denominator, d)
        if distribution == "truncated_normal":
            # JAX's: 0.8796… is the standard deviation of a standard normal truncated to
            # (-2, 2).
            stddev = _np.sqrt(variance) / _np.asarray(.87962566103423978, d)
            return random.truncated_normal(key, -2, 2, shape, d) * stddev
        if distribution == "normal":
            return random.normal(key, shape, d) * _np.sqrt(variance)
        return random.uniform(key, shape, d, -1) * _np.sqrt(_np.asarray(3, d) * variance)
    return init


def truncated_normal(stddev=1e-2, dtype=_np.float32, lower=-2.0, upper=2.0):
    def init(key, shape, dtype=dtype):
        d = _dtype(dtype)
        return random.truncated_normal(key, lower, upper, _shape(shape), d) * \
            _np.asarray(stddev, d)
    return init


def glorot_normal(in_axis=-2, out_axis=-1, batch_axis=(), dtype=_np.float32):
    return variance_scaling(1.0, "fan_avg", "truncated_normal", in_axis, out_axis, batch_axis,
                            dtype)


def lecun_normal(in_axis=-2, out_axis=-1, batch_axis=(), dtype=_np.float32):
    return variance_scaling(1.0, "fan_in", "truncated_normal", in_axis, out_axis, batch_axis,
                            dtype)


def he_normal(in_axis=-2, out_axis=-1, batch_axis=(), dtype=_np.float32):
    return variance_scaling(2.0, "fan_in", "truncated_normal", in_axis, out_axis, batch_axis,
                            dtype)


def glorot_uniform(in_axis=-2, out_axis=-1, batch_axis=(), dtype=_np.float32):
    return variance_scaling(1.0, "fan_avg", "uniform", in_axis, out_axis, batch_axis, dtype)


def lecun_uniform(in_axis=-2, out_axis=-1, batch_axis=(), dtype=_np.float32):
    return variance_scaling(1.0, "fan_in", "uniform", in_axis, out_axis, batch_axis, dtype)


def he_uniform(in_axis=-2, out_axis=-1, batch_axis=(), dtype=_np.float32):
    return variance_scaling(2.0, "fan_in", "uniform", in_axis, out_axis, batch_axis, dtype)


xavier_uniform, xavier_normal = glorot_uniform, glorot_normal
kaiming_uniform, kaiming_normal = he_uniform, he_normal
