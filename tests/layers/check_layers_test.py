#!/usr/bin/env python3
"""check_layers.py on a small tree it must judge: src/lib's includes (the layer this repository
adds) are held both to the layer table and to the headers opened to lib/; the rest of the real
tree only proves the check finds nothing there, so the breaches are made here.
Usage: check_layers_test.py (exits 1 naming what the check missed or refused wrongly)."""
import pathlib
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import check_layers  # noqa: E402


def write(root, rel, text):
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp)
        write(root, "src/jit/lax.h", "// Open to lib/: the tracing API.\n#pragma once\n")
        write(root, "src/jit/partition.h", "#pragma once\n")
        write(root, "src/checkpoint/chunk_io.h", "// Open to lib/: (wrongly).\n#pragma once\n")
        write(root, "src/lib/numpy/own.h", "#pragma once\n")
        write(root, "src/lib/numpy/a.cc", "\n".join([
            '#include "jit/lax.h"',             # 1: opened to lib: allowed
            '#include "spmd/tensor.h"',         # 2: public, below: allowed
            '#include "lib/numpy/own.h"',       # 3: its own layer: allowed
            '#include "jit/partition.h"',       # 4: internal, not opened: refused
            '#include "spmd/checkpoint.h"',     # 5: public but above lib: refused
            '#include "checkpoint/chunk_io.h"', # 6: opened but above lib: refused
            '#include "spmd/spmd.h"',           # 7: the umbrella is above every layer: refused
            "",
        ]))
        write(root, "src/jit/b.cc", '#include "spmd/numpy.h"\n')  # the core under a library: refused
        problems = []
        check_layers.check_sources(root, problems)
    flagged = {p.split(": ")[0] for p in problems}
    want = {"src/lib/numpy/a.cc:4", "src/lib/numpy/a.cc:5", "src/lib/numpy/a.cc:6",
            "src/lib/numpy/a.cc:7", "src/jit/b.cc:1"}
    ok = flagged == want
    print("\n".join(problems))
    if not ok:
        print(f"FAILED: flagged {sorted(flagged)}, wanted {sorted(want)}")
        return 1
    print(f"check_layers refused exactly the {len(want)} breaches and allowed the rest")
    return 0


if __name__ == "__main__":
    sys.exit(main())
