#!/usr/bin/python3
"""Reads a checkpoint that checkpoint_probe saved with Debian's python3-zarr, a reader nobody
here wrote, and compares every value with the formula the probe used. bfloat16 arrays, whose
dtype NumPy does not know, are read chunk by chunk as raw uint16 values.

usage: read_with_zarr.py DIR   (exit 0: every value matches; 77: python3-zarr is missing)
"""
import json
import os
import sys

try:
    import numcodecs
    import numpy as np
    import zarr
except ImportError as e:  # the test set-up installs them; say why when it did not
    print(f"skipped: {e}; install python3-zarr and python3-numpy")
    sys.exit(77)


def values(dtype, shape):
    n = int(np.prod(shape, dtype=np.int64))
    i = np.arange(n, dtype=np.int64)
    v = (i * 7 + 3) % 101
    if dtype == "bool":
        out = i % 3 == 0
    elif dtype in ("float16", "float32", "float64"):
        out = v.astype(dtype) + np.array(0.5, dtype=dtype)
    else:
        out = v.astype(dtype)
    return out.reshape(shape)


def bfloat16_bits(shape):
    f = ((np.arange(int(np.prod(shape, dtype=np.int64))) * 7 + 3) % 101).astype(np.float32) + 0.5
    bits = f.view(np.uint32)  # exact in bfloat16: the upper half, no rounding needed
    return (bits >> 16).astype(np.uint16).reshape(shape)


def main(root):
    meta = json.load(open(os.path.join(root, "spmd_checkpoint.json")))
    group = zarr.open_group(root, mode="r")
    checked = 0
    for name, rec in meta["arrays"].items():
        shape = tuple(rec["shape"])
        if rec["dtype"] == "bfloat16":
            chunks = tuple(rec["chunks"])
            codec = numcodecs.Zstd() if rec["compressor"] == "zstd" else None
            got = np.zeros(shape, dtype=np.uint16)
            for key in rec["checksums"]:
                raw = open(os.path.join(root, name, key), "rb").read()
                data = codec.decode(raw) if codec else raw
                block = np.frombuffer(data, dtype="<u2").reshape(chunks)
                at = [int(k) * c for k, c in zip(key.split("."), chunks)] if shape else []
                sl = tuple(slice(a, min(a + c, s)) for a, c, s in zip(at, chunks, shape))
                got[sl] = block[tuple(slice(0, x.stop - x.start) for x in sl)]
            want = bfloat16_bits(shape)
        else:
            got = group[name][...]
            want = values(rec["dtype"], shape)
        if got.shape != want.shape or not np.array_equal(got, want):
            print(f"error {name}: python3-zarr read {got!r}, expected {want!r}")
            return 1
        checked += 1
    print(f"ok python3-zarr {zarr.__version__} read all {checked} arrays and every value matches")
    return 0


sys.exit(main(sys.argv[1]))
