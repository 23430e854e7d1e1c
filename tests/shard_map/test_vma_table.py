"""vma_table.py's rows on one process of 4 devices, each beside JAX 0.10.2 (its docstring says
what is compared)."""
import numpy as np
import pytest

import namespaces
import vma_table


@pytest.mark.parametrize("row", vma_table.ROWS, ids=[r.name for r in vma_table.ROWS])
def test_row_matches_jax(row):
    jax_ns, spmd_ns = namespaces.make()
    want = vma_table.outcome(jax_ns, row, namespaces.jax_host)
    got = vma_table.outcome(spmd_ns, row, np.asarray)
    assert (want[0] == "error") == (row.error is not None), \
        f"{row.name}: the row expects {row.error}, JAX gave {want}"
    vma_table.compare(got, want, row)


def test_the_table_has_the_issues_rows():
    assert len(vma_table.ROWS) >= 26
