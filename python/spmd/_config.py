"""spmd.config: jax.config's switches that spmd has. jax_enable_x64 (off unless JAX_ENABLE_X64
says otherwise) makes 64-bit dtypes JAX's defaults; include/spmd/config.h says what it changes.
Every process of a job must set it alike. jax_disable_jit runs spmd.jit's functions as plain
Python (spmd.disable_jit())."""
from . import _spmd


class Config:
    """jax.config: `update(name, value)`, `read(name)` and each option as an attribute."""

    _OPTIONS = {"jax_enable_x64": (_spmd._x64_enabled, _spmd._set_x64_enabled),
                "jax_disable_jit": (_spmd._jit_disabled, _spmd._set_jit_disabled)}

    def update(self, name, value):
        self._option(name)[1](bool(value))

    def read(self, name):
        return self._option(name)[0]()

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return self.read(name)

    def _option(self, name):
        if name not in self._OPTIONS:
            raise AttributeError(f"Unrecognized config option: {name}")
        return self._OPTIONS[name]


config = Config()
