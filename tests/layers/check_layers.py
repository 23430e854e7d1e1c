#!/usr/bin/env python3
"""Fails on every #include that breaks the layer table of the design (../shared/DESIGN.md).

A layer may include itself, the vocabulary, and the layers its "depends on" column names, with
theirs in turn (the closure). Files under tools/ may include the public headers and only those
internal headers that declare themselves open to tools (a line "// Open to tools/: <why>").
Files under python/src (the Python module) follow the same rule as tools/ ("// Open to python/:").
Outside src/kernels, nothing calls a kernel function (elementwise.h, reduce.h, layout.h, ...)
directly: every kernel is reached through a kernels::Backend (backend.h), the device seam a GPU
backend implements; tools/ may (a benchmark's baseline measures the bare kernel).
src/lib (the libraries above the compiler core: numpy, random, optim) is a layer this repository
adds above jit (ADDED below; DESIGN.md, "Layers"). Its files include the public headers, their own
room's headers, and only those internal headers of the layers below that declare themselves open
to it (a line "// Open to lib/: <why>"): the core's tracing API, not its internals.
Each breach prints as "file:line: ...". When the design's table is beside the repository
(DESIGN_MD below), the table here must equal it, so the two cannot drift apart silently.
Usage: check_layers.py SOURCE_DIR
"""
import pathlib
import re
import sys

# The design's table, bottom up, with each layer's "depends on" column (spmd layers only).
DEPENDS = {
    "vocabulary": [],
    "coord": [],
    "cluster": [],
    "runtime": ["coord", "cluster"],
    "comm": ["runtime"],
    "sharding": [],
    "array": ["sharding", "comm"],
    "kernels": [],
    "compute": ["array", "comm", "kernels"],
    "jit": ["array", "comm", "kernels", "compute"],
    "multihost": ["array", "comm"],
    "checkpoint": ["array", "coord"],
    "data": ["array"],
}
# Layers this repository adds to the design's table, with their "depends on" column (DESIGN.md,
# "Layers"); not compared with the design's table, which does not have them.
ADDED = {
    "lib": ["jit"],
}
DEPENDS.update(ADDED)
# Edges this repository takes beyond the design's column, each with its reason (DESIGN.md,
# "Layers").
DECLARED = {
    # CheckpointManager asks multihost's preemption sync point whether to save (as Orbax's does).
    "checkpoint": ["multihost"],
}
DESIGN_MD = "../shared/DESIGN.md"

# Each public header's layer. A new public header must be placed here (the check says so).
PUBLIC = {
    "dtype.h": "vocabulary", "error.h": "vocabulary", "device.h": "vocabulary",
    "shape.h": "vocabulary", "memory_space.h": "vocabulary", "tree.h": "vocabulary",
    "coordination_client.h": "coord",
    "distributed.h": "runtime", "runtime.h": "runtime",
    "communicator.h": "comm", "reduce_op.h": "comm", "comm_memory.h": "comm",
    "mesh.h": "sharding", "mesh_utils.h": "sharding", "partition_spec.h": "sharding",
    "sharding.h": "sharding",
    "array.h": "array", "host_array.h": "array",
    "block.h": "compute", "block_ops.h": "compute", "named_collectives.h": "compute",
    "shard_map.h": "compute",
    "tensor.h": "jit", "jit.h": "jit", "config.h": "jit", "grad.h": "jit", "traced_shard_map.h": "jit",
    "numpy.h": "lib", "numpy_eager.h": "lib", "optim.h": "lib", "random.h": "lib",
    "random_key.h": "lib", "convolution.h": "lib", "linalg.h": "lib",
    "tensor_leaves.h": "jit", "vmap.h": "jit", "eval_shape.h": "jit", "host_callback.h": "jit",
    "mesh_context.h": "sharding",
    "multihost.h": "multihost",
    "checkpoint.h": "checkpoint", "checkpoint_manager.h": "checkpoint",
    "data_loader.h": "data", "data_source.h": "data",
    "spmd.h": "umbrella",
}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
OPEN_TO = {"tools": "// Open to tools/:", "python/src": "// Open to python/:"}
LIB_OPENER = "// Open to lib/:"
# The CPU kernel functions of src/kernels/ that compute; their names beside kernels:: outside that
# folder are a call around the device seam.
KERNEL_CALL = re.compile(
    r"\bkernels::(run_chain|unary|binary|select|convert|reduce|argmax|broadcast|transpose|slice|"
    r"concatenate|random_bits|random_sample|random_permute|matmul|cumsum|search_sorted|top_k|"
    r"take|unary_kernel|binary_kernel|select_kernel|convert_kernel)\s*\(")


def allowed(layer):
    """The layers `layer` may include: its column's closure, itself and the vocabulary."""
    if layer == "umbrella":
        return set(DEPENDS) | {"umbrella"}
    seen, todo = set(), [layer]
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        todo += DEPENDS[current] + DECLARED.get(current, [])
    return seen | {"vocabulary"}


def layer_of_header(name):
    """The layer of an included header, or None for one outside the project."""
    if name.startswith("spmd/"):
        return PUBLIC.get(name[len("spmd/"):], "unknown public header")
    if name == "protocol.pb.h":
        return "coord"
    first = name.split("/")[0]
    return first if first in DEPENDS else None


def layer_of_file(path, root):
    rel = path.relative_to(root)
    if rel.parts[0] == "include":
        return PUBLIC.get(rel.name, "unknown public header")
    return rel.parts[1]  # src/<layer>/...


def design_table(root):
    """The design's table as {layer: [spmd layers it depends on]}, or None when it is absent."""
    path = root / DESIGN_MD
    if not path.exists():
        return None
    table = {}
    for line in path.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3:
            continue
        name = cells[0].strip("`").rstrip("/")
        if name in DEPENDS:
            table[name] = [d.strip() for d in re.split(r"[,(]", cells[2])
                           if d.strip() in DEPENDS]
    return table


def check_sources(root, problems):
    files = sorted(root.glob("include/spmd/*.h")) + sorted(
        p for p in root.glob("src/**/*") if p.suffix in (".h", ".cc"))
    for path in files:
        own = layer_of_file(path, root)
        if own not in DEPENDS and own != "umbrella":
            problems.append(f"{path.relative_to(root)}: not in the layer table ({own}); add it to "
                            "check_layers.py's table")
            continue
        ok = allowed(own)
        for number, line in enumerate(path.read_text().splitlines(), 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            other = layer_of_header(m.group(1))
            if other is None or other in ok:
                if own == "lib" and other not in (None, "lib", "vocabulary"):
                    check_lib_include(root, path, number, m.group(1), problems)
                continue
            if other not in DEPENDS:
                problems.append(f"{path.relative_to(root)}:{number}: {m.group(1)} is {other}")
            else:
                problems.append(f"{path.relative_to(root)}:{number}: {own} -> {other} "
                                f"({m.group(1)}): {own} depends on "
                                f"{', '.join(sorted(ok - {own, 'vocabulary'})) or 'nothing'}")
    return len(files)


def check_lib_include(root, path, number, name, problems):
    """A library's include of a lower layer: a public header, or one opened to lib/."""
    if name.startswith("spmd/"):
        return
    header = root / "src" / name
    if not header.exists() or LIB_OPENER not in header.read_text():
        problems.append(f"{path.relative_to(root)}:{number}: lib/ includes {name}, an internal "
                        f"header not open to it: build through the core's tracing API (lax.h), "
                        f"or open the header with a line '{LIB_OPENER} <why>'")


def check_outside(root, folder, problems):
    """tools/ or python/src: public headers, and internal ones that open themselves to it."""
    opener = OPEN_TO[folder]
    files = sorted(p for p in root.glob(f"{folder}/**/*") if p.suffix in (".h", ".cc"))
    for path in files:
        for number, line in enumerate(path.read_text().splitlines(), 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            name = m.group(1)
            layer = layer_of_header(name)
            if layer is None or name.startswith("spmd/"):
                continue
            header = root / "src" / name
            if not header.exists() or opener not in header.read_text():
                problems.append(f"{path.relative_to(root)}:{number}: {folder}/ includes {name}, "
                                f"an internal header of {layer} not open to it (a line "
                                f"'{opener} <why>' in it opens it)")
    return len(files)


def check_kernel_calls(root, problems):
    """No kernel function called around the device seam, outside src/kernels and tools/."""
    files = sorted(p for p in list(root.glob("src/**/*")) + list(root.glob("python/src/**/*"))
                   if p.suffix in (".h", ".cc") and p.relative_to(root).parts[:2] != ("src", "kernels"))
    for path in files:
        for number, line in enumerate(path.read_text().splitlines(), 1):
            code = line.split("//")[0]
            m = KERNEL_CALL.search(code)
            if m:
                problems.append(f"{path.relative_to(root)}:{number}: calls kernels::{m.group(1)} "
                                f"directly; reach it through a kernels::Backend (backend.h), the "
                                f"device seam")


def main():
    root = pathlib.Path(sys.argv[1])
    problems = []
    design = design_table(root)
    if design is None:
        print(f"note: {DESIGN_MD} is not beside the repository; the table here is not compared")
    elif design != {k: v for k, v in DEPENDS.items() if k not in ADDED}:
        problems.append(f"the table here differs from {DESIGN_MD}'s: {design}")
    count = (check_sources(root, problems) + check_outside(root, "tools", problems) +
             check_outside(root, "python/src", problems))
    check_kernel_calls(root, problems)
    for p in problems:
        print(p)
    print(f"{count} files checked, {len(problems)} includes against the layer table or kernel "
          "calls around the device seam")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
