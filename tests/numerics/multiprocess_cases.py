"""Run by spmdrun -n 2 --cpu-devices 2 (Numerics.NamedCasesAcrossTwoProcesses): issue 54's named
cases of test_table.py on a 2 x 2 mesh over two processes of two devices, each result gathered
(process_allgather) and compared, as the table compares, with JAX's value for the same program
on 2 x 2 devices of one process (JAX runs inside each process too). Prints "ok: N cases" or
names each case that differs and exits 1."""
import os
import sys

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=4")
os.environ.setdefault("JAX_PLATFORMS", "cpu")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import spmd  # noqa: E402
import test_table as table  # noqa: E402
from spmd.experimental import multihost_utils  # noqa: E402


def run_across_processes(fn, inputs, specs):
    """fn under spmd.jit on the two processes' 2 x 2 mesh; the whole result in every process."""
    mesh = table.Spmd.mesh((2, 2))
    args = [table.Spmd.put(x, mesh, spec) for x, spec in zip(inputs, specs)]
    try:
        out = spmd.jit(lambda *xs: fn(table.Spmd, *xs))(*args)
    except Exception as e:  # noqa: BLE001 - the class is compared with JAX's
        return type(e)
    outs = out if isinstance(out, (tuple, list)) else [out]
    got = [np.asarray(multihost_utils.process_allgather(o, tiled=True)) for o in outs]
    return got if isinstance(out, (tuple, list)) else got[0]


def main():
    spmd.distributed.initialize()
    assert spmd.process_count() == 2 and spmd.device_count() == 4, "want 2 processes x 2 devices"
    failed = []
    for row in table.ROWS:
        name, call, inputs, tolerance = getattr(row, "values", row)
        specs = [("a",) if x.ndim else () for x in inputs]
        want = table.run(table.Jax, call, inputs, (2, 2), specs)
        got = run_across_processes(call, inputs, specs)
        try:
            table.compare(got, want, tolerance, f"{name} across 2 processes")
        except AssertionError as e:
            failed.append(str(e).splitlines()[0])
    where = f"process {spmd.process_index()}"
    for f in failed:
        print(f"{where}: FAILED {f}", file=sys.stderr)
    if failed:
        sys.exit(1)
    print(f"{where} ok: {len(table.ROWS)} cases")


if __name__ == "__main__":
    main()
