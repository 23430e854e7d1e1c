"""The differential table runs spmd beside JAX in one process: spmd with 8 CPU devices of its own,
JAX on its CPU backend with 8 host devices, both with x64 off (JAX's default)."""
import os

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import pytest  # noqa: E402

import spmd  # noqa: E402


@pytest.fixture(scope="session", autouse=True)
def cluster():
    spmd.distributed.initialize(num_processes=1, num_cpu_devices=8)
    yield
