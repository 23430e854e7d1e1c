"""Run by spmdrun -n 2 --cpu-devices 2 (ShardMap.TypesAndGradientsMatchJaxAcrossTwoProcesses):
vma_table.py's rows on spmd's 4 devices of two processes, each result gathered to every process
(process_allgather), beside JAX's on 4 host devices inside each process. Prints "ok: N rows" or
names each row that differs and exits 1 (spmdrun then fails the run)."""
import os
import sys

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=4")
os.environ.setdefault("JAX_PLATFORMS", "cpu")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import spmd  # noqa: E402
from spmd.experimental import multihost_utils  # noqa: E402

import namespaces  # noqa: E402
import vma_table  # noqa: E402


def main():
    spmd.distributed.initialize()
    assert spmd.process_count() == 2 and spmd.device_count() == 4, "want 2 processes x 2 devices"
    jax_ns, spmd_ns = namespaces.make()
    failed = []
    for row in vma_table.ROWS:
        want = vma_table.outcome(jax_ns, row, namespaces.jax_host)
        got = vma_table.outcome(spmd_ns, row,
                                lambda a: np.asarray(multihost_utils.process_allgather(a, tiled=True)))
        try:
            vma_table.compare(got, want, row)
        except AssertionError as e:
            failed.append(" ".join(str(e).split())[:600])
    where = f"process {spmd.process_index()}"
    for f in failed:
        print(f"{where}: FAILED {f}", file=sys.stderr)
    if failed:
        sys.exit(1)
    print(f"{where} ok: {len(vma_table.ROWS)} rows")


if __name__ == "__main__":
    main()
