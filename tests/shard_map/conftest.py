"""One process: spmd with 4 CPU devices, JAX beside it on 4 host devices."""
import os

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=4")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import pytest  # noqa: E402

import spmd  # noqa: E402


@pytest.fixture(scope="session", autouse=True)
def cluster():
    spmd.distributed.initialize(num_processes=1, num_cpu_devices=4)
    yield
