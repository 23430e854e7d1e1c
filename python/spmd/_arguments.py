"""Arguments in the user's terms (issue 55). A public function's wrong argument is a TypeError
naming that function and what it takes, as JAX's are: never nanobind's overload listing, with
its binding names (`_device_put_bytes()`), C++ types (`spmd._spmd.Tensor`) and argument slots
(`arg0`).

- check_arraylike: jax.numpy's check: an array, a NumPy array or scalar, or a Python scalar.
- check_callable: a transformation's function is callable, else JAX's TypeError.
- shape_tuple, axis_list: a shape or axes of integers (anything with __index__), else JAX's
  TypeError.
- public: a binding exported as is (spmd.make_mesh, spmd.device_count) with its type errors
  restated: the public name, the types it was called with, its signature in Python's terms.
- restated: the same for a Python function over bindings.
- public_methods: the same for a bound class's methods.
- public_init: the same for a bound class's constructor."""
import functools
import inspect
import operator
import re

import numpy as np

from . import _spmd

_SCALARS = (bool, int, float, complex, np.generic, np.ndarray, _spmd.Array, _spmd.Tensor)


def check_arraylike(name, *args, first=0):
    """jax.numpy's check_arraylike, with its message: each of args (the call's positions `first`
    onwards) is an array or a scalar; a list, a tuple or anything else is a TypeError."""
    for i, x in enumerate(args):
        if not isinstance(x, _SCALARS):
            raise TypeError(f"{name} requires ndarray or scalar arguments, got {type(x)} at "
                            f"position {first + i}.")


def concrete(x, what):
    """x as a NumPy array; JAX's ConcretizationTypeError, naming `what`, when it is traced (a
    shape or a length that depends on it cannot be known while tracing)."""
    if isinstance(x, _spmd.Tensor):
        from .errors import ConcretizationTypeError
        raise ConcretizationTypeError(
            f"Abstract tracer value encountered where concrete value is expected: {what}")
    return np.asarray(x)


def check_callable(fun):
    """JAX's check on a transformation's function, with its message."""
    if not callable(fun):
        raise TypeError(f"Expected a callable value, got {fun!r}")


def shape_tuple(shape, name):
    """A shape as a tuple of ints: an int, or a sequence of objects with __index__; else
    JAX's TypeError (negative and huge sizes are the C++ shape check's)."""
    if isinstance(shape, (int, np.integer)):
        return (operator.index(shape),)
    try:
        return tuple(operator.index(d) for d in shape)
    except TypeError:
        raise TypeError(f"{name}: shapes must be 1D sequences of concrete values of integer "
                        f"type, got {shape!r}.") from None


def axis_list(axis):
    """None (every axis), an int or a sequence of ints as a list; a non-integer axis is
    Python's TypeError ("'str' object cannot be interpreted as an integer"), as in JAX."""
    if axis is None:
        return []
    if isinstance(axis, (int, np.integer)) or not hasattr(axis, "__iter__"):
        return [operator.index(axis)]
    return [operator.index(a) for a in axis]


_NANOBIND_TYPES = [
    (r"spmd\._spmd\.(\w+\.)*Tensor", "Array"), (r"spmd\._spmd\.(\w+\.)*(\w+)", r"\2"),
    (r"collections\.abc\.", ""), (r"numpy\.typing\.", ""), (r"\\\d+", "..."),
]


def _python_signature(binding, public_name):
    """A binding's first overload as Python would print it under its public name."""
    text = binding.__nb_signature__[0][0] if hasattr(binding, "__nb_signature__") else ""
    match = re.match(r"def \w+(\(.*\))(?: -> .*)?$", text, re.S)
    if not match:
        return public_name + "(...)"
    params = match.group(1)
    for pattern, replacement in _NANOBIND_TYPES:
        params = re.sub(pattern, replacement, params)
    params = re.sub(r"\bself(: \w+)?(, )?", "", params).replace(", /", "").replace("/, ", "")
    return public_name + params


def type_error(public_name, signature, args, kwargs):
    kinds = [type(a).__name__ for a in args] + [f"{k}={type(v).__name__}"
                                               for k, v in kwargs.items()]
    return TypeError(f"{public_name}: cannot take arguments of types ({', '.join(kinds)}); "
                     f"it takes {signature}")


def is_overload_error(error):
    return "incompatible function arguments" in str(error)


def _restating(fn, public_name, signature, skip=0):
    """`fn` with an overload error from the bindings it reaches restated as type_error (the
    first `skip` arguments, a bound method's self, left out of the types listed)."""
    @functools.wraps(fn)
    def call(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except TypeError as error:
            if not is_overload_error(error):
                raise
            raise type_error(public_name, signature, args[skip:], kwargs) from None
    return call


def public(public_name, binding, method=False):
    """`binding` under `public_name`, its overload errors restated in Python's terms (for a
    method, without self among the types called with)."""
    call = _restating(binding, public_name, _python_signature(binding, public_name),
                      skip=1 if method else 0)
    call.__name__ = call.__qualname__ = public_name.rsplit(".", 1)[-1]
    return call


def restated(public_name):
    """A decorator: the Python function's overload errors from the bindings it calls restated
    with its public name and its own signature."""
    return lambda fn: _restating(fn, public_name, public_name + str(inspect.signature(fn)))


def public_methods(cls, public_name):
    """Each public method bound in C++ on `cls` with its overload errors restated (the Python
    ones, and dunders, as they are)."""
    for name, attribute in list(vars(cls).items()):
        if name.startswith("_") or type(attribute).__name__ != "nb_method":
            continue
        setattr(cls, name, public(f"{public_name}.{name}", attribute, method=True))


def public_init(cls, public_name, hint=None):
    """A bound class whose construction with wrong arguments is a TypeError in Python's terms;
    with `hint`, a class users do not construct says how they get one instead."""
    construct = _restating(cls.__init__, public_name,
                           _python_signature(cls.__init__, public_name), skip=1)

    def __init__(self, *args, **kwargs):  # noqa: N807 - the constructor itself
        if hint is not None:
            raise TypeError(f"{public_name} cannot be constructed directly: {hint}")
        construct(self, *args, **kwargs)
    __init__.__signature__ = inspect.Signature()
    cls.__init__ = __init__
