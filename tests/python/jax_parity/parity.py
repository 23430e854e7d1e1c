"""What the parity tests share: `covers` (the names a test compares with JAX, which
tools/jax-surface counts), and comparisons of results and errors between JAX and spmd."""
import numpy as np


def covers(*names):
    """Marks a test as comparing the named public functions ("numpy.sum", "nn.gelu", "jit")
    with JAX's. tools/jax-surface reads these from the source."""
    def mark(fn):
        fn.covers = names
        return fn
    return mark


def _host(x):
    return np.asarray(x)


def product_atol(terms, magnitude, dtype=np.float32):
    """How far two sums of `terms` rounded products may lie apart when each adds them in its own
    order: each is within terms * u * sum(|a*b|) of the exact sum (Higham's bound, u half an ulp
    of 1), so twice that, per output element; `magnitude` is sum(|a*b|) per element (the product
    of the inputs' absolute values). A contraction's order is the library's and the CPU's choice
    (XLA's blocking differs between AVX2 and AVX-512 machines), and where the sum cancels the
    difference is many ulps of the result, yet a wrong term or axis is off by |a*b| itself."""
    u = float(np.finfo(dtype).eps) / 2
    return 2 * terms * u * np.asarray(magnitude, np.float64)


def same(got, want, what, ulps=0, atol=0.0):
    """got (spmd's) equals want (JAX's): one pytree structure, and per leaf the shape, dtype and
    values (bit for bit, NaN where NaN; for floats within `ulps` units in the last place, or
    within `atol` where a formula cancels: 1 + tanh(x) near x = -4 turns tanh's last-place
    difference into a relative one). `atol` may be an array of the result's shape
    (product_atol)."""
    if isinstance(want, (list, tuple)):
        assert isinstance(got, (list, tuple)) and len(got) == len(want), \
            f"{what}: {type(got).__name__} of {len(got)} vs JAX's {len(want)}"
        for i, (g, w) in enumerate(zip(got, want)):
            same(g, w, f"{what}[{i}]", ulps, atol)
        return
    if isinstance(want, dict):
        assert isinstance(got, dict) and sorted(got) == sorted(want), f"{what}: keys differ"
        for k in want:
            same(got[k], want[k], f"{what}[{k!r}]", ulps, atol)
        return
    g, w = _host(got), _host(want)
    assert g.shape == w.shape, f"{what}: shape {g.shape}, JAX's {w.shape}"
    assert g.dtype == w.dtype, f"{what}: dtype {g.dtype}, JAX's {w.dtype}"
    if (ulps or atol) and (w.dtype.kind == "f" or w.dtype.name == "bfloat16"):
        gw, ww = g.astype(np.float64), w.astype(np.float64)
        assert np.array_equal(np.isnan(gw), np.isnan(ww)), f"{what}: NaN in other places"
        finite = np.isfinite(ww)
        assert np.array_equal(gw[~finite & ~np.isnan(ww)], ww[~finite & ~np.isnan(ww)]), \
            f"{what}: infinities differ"
        spacing = np.spacing(np.maximum(np.abs(g), np.abs(w)).astype(w.dtype)).astype(np.float64)
        err = np.abs(gw - ww)[finite]
        bound = np.maximum(ulps * np.abs(spacing[finite]),
                           np.broadcast_to(np.asarray(atol, np.float64), w.shape)[finite])
        assert np.all(err <= bound), \
            f"{what}: beyond {ulps} ulps or {atol}: {g[finite][err > bound]} vs " \
            f"{w[finite][err > bound]}"
        return
    floating = w.dtype.kind == "f" or w.dtype.name == "bfloat16"
    assert np.array_equal(g, w, equal_nan=floating), f"{what}:\n{g}\nJAX's:\n{w}"


def raises_like(jax_call, spmd_call, what):
    """Both calls raise; spmd's error is of JAX's error's type (or a subclass of it)."""
    try:
        jax_call()
    except Exception as e:  # noqa: BLE001 - whatever JAX raises is the reference
        expected = type(e)
    else:
        raise AssertionError(f"{what}: JAX raised nothing (the case is wrong)")
    try:
        spmd_call()
    except Exception as e:  # noqa: BLE001
        assert isinstance(e, expected), \
            f"{what}: spmd raised {type(e).__name__} ({e}), JAX {expected.__name__}"
        return e
    raise AssertionError(f"{what}: spmd raised nothing, JAX {expected.__name__}")
