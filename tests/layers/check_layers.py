#!/usr/bin/env python3
"""Fails on every #include in src/ and include/ that points up the layer table of DESIGN.md.

A layer may include only itself, the layers listed before it, and the vocabulary. Each arrow
that breaks this is printed as "file:line: layer -> other layer (header)". Usage:
check_layers.py SOURCE_DIR
"""
import pathlib
import re
import sys

# DESIGN.md's table, bottom up.
ORDER = ["vocabulary", "coord", "cluster", "runtime", "comm", "sharding", "array", "kernels",
         "compute", "jit", "multihost", "checkpoint", "data", "umbrella"]

# Each public header's layer. A new public header must be placed here (the check says so).
PUBLIC = {
    "dtype.h": "vocabulary", "error.h": "vocabulary", "device.h": "vocabulary",
    "shape.h": "vocabulary", "memory_space.h": "vocabulary",
    "coordination_client.h": "coord",
    "distributed.h": "runtime", "runtime.h": "runtime",
    "communicator.h": "comm", "reduce_op.h": "comm",
    "mesh.h": "sharding", "mesh_utils.h": "sharding", "partition_spec.h": "sharding",
    "sharding.h": "sharding",
    "array.h": "array", "host_array.h": "array",
    "block.h": "compute", "block_ops.h": "compute", "named_collectives.h": "compute",
    "shard_map.h": "compute",
    "tensor.h": "jit", "numpy.h": "jit", "jit.h": "jit", "numpy_eager.h": "jit", "tree.h": "jit", "grad.h": "jit", "optim.h": "jit", "traced_shard_map.h": "jit",
    "multihost.h": "multihost",
    "checkpoint.h": "checkpoint", "checkpoint_manager.h": "checkpoint",
    "data_loader.h": "data", "data_source.h": "data",
    "spmd.h": "umbrella",
}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def layer_of_header(name):
    """The layer of an included header, or None for one outside the project."""
    if name.startswith("spmd/"):
        return PUBLIC.get(name[len("spmd/"):], "unknown public header")
    if name == "protocol.pb.h":
        return "coord"
    first = name.split("/")[0]
    return first if first in ORDER else None


def layer_of_file(path, root):
    rel = path.relative_to(root)
    if rel.parts[0] == "include":
        return PUBLIC.get(rel.name, "unknown public header")
    return rel.parts[1]  # src/<layer>/...


def main():
    root = pathlib.Path(sys.argv[1])
    files = sorted(root.glob("include/spmd/*.h")) + sorted(
        p for p in root.glob("src/**/*") if p.suffix in (".h", ".cc"))
    problems = []
    for path in files:
        own = layer_of_file(path, root)
        if own not in ORDER:
            problems.append(f"{path.relative_to(root)}: not in the layer table ({own}); add it to "
                            "check_layers.py's table")
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            other = layer_of_header(m.group(1))
            if other is None or other == own or other == "vocabulary":
                continue
            if other not in ORDER:
                problems.append(f"{path.relative_to(root)}:{number}: {m.group(1)} is {other}")
            elif ORDER.index(other) > ORDER.index(own):
                problems.append(f"{path.relative_to(root)}:{number}: {own} -> {other} "
                                f"({m.group(1)}) points up the layer table")
    for p in problems:
        print(p)
    print(f"{len(files)} files checked, {len(problems)} upward or unplaced includes")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
