#!/usr/bin/env python3
"""OpenBLAS's kernels against the processor (src/kernels/blas_core.h): on a processor with
AVX-512, a process whose OPENBLAS_CORETYPE names AVX2 kernels (Haswell) is warned, naming the
variable; with the variable unset, OpenBLAS picks its kernels itself, and a warning comes exactly
when they lack AVX-512. The warning names float64 products alone where oneDNN computes the
float32 ones (kernels/sgemm.h, the default where it loads), and every product under
SPMD_CPU_SGEMM=openblas.
A job says it once per host, not once per process (issue 49, "a quiet start"): 4 processes of
one host print one line, 4 processes on 2 simulated hosts (SPMD_HOST_ID) two, from each host's
first process.
Exits 77 (skipped), saying so, on a processor without AVX-512, where there is nothing to warn of.

  blas_core_test.py PROBE SPMDRUN JIT_PROGRAM
"""
import os
import re
import subprocess
import sys


def fail(message):
    print("FAILED: " + message)
    sys.exit(1)


def has_avx512():
    with open("/proc/cpuinfo") as f:
        first = f.read(1 << 16).split("\n\n", 1)[0]
    fields = {k.strip(): v.strip() for k, _, v in (ln.partition(":") for ln in first.splitlines())}
    return {"avx512f", "avx512bw", "avx512dq", "avx512vl"} <= set(fields.get("flags", "").split())


def probe(argv, env):
    out = subprocess.run(argv, capture_output=True, text=True, timeout=60, env=env)
    if out.returncode != 0:
        fail(f"{argv} exited {out.returncode}:\n{out.stdout}{out.stderr}")
    found = (re.search(r"\b(core|warning|sgemm)=(.*)", line) for line in out.stdout.splitlines())
    return {m.group(1): m.group(2).strip() for m in found if m}


def main():
    probe_path = sys.argv[1]
    if not has_avx512():
        print("SKIPPED: this processor has no AVX-512; OpenBLAS's AVX2 kernels are its best")
        sys.exit(77)
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_CORETYPE"}
    forced = probe([probe_path], dict(env, OPENBLAS_CORETYPE="Haswell"))
    if forced["core"] != "Haswell" or "OPENBLAS_CORETYPE=Haswell" not in forced["warning"]:
        fail(f"OPENBLAS_CORETYPE=Haswell on an AVX-512 processor: {forced}")
    said_float64 = "float64 matrix products (float32 ones run on oneDNN)" in forced["warning"]
    if said_float64 != (forced["sgemm"] == "oneDNN"):
        fail(f"float32 products on {forced['sgemm']}, but the warning says: {forced['warning']}")
    both = probe([probe_path], dict(env, OPENBLAS_CORETYPE="Haswell", SPMD_CPU_SGEMM="openblas"))
    if both["sgemm"] != "OpenBLAS" or "half the speed" not in both["warning"] \
            or "float64 matrix products" in both["warning"]:
        fail(f"SPMD_CPU_SGEMM=openblas with OPENBLAS_CORETYPE=Haswell: {both}")
    chosen = probe([probe_path], env)  # OpenBLAS 0.3.21 knows most AVX-512 processors
    avx512 = chosen["core"] in ("SkylakeX", "Cooperlake", "SapphireRapids")
    if avx512 == bool(chosen["warning"]):
        fail(f"OpenBLAS left to choose: {chosen}")
    print(f"forced Haswell: warned; left to choose: {chosen['core']}, "
          f"{'nothing said' if avx512 else 'warned'}")
    once_per_host(sys.argv[2], sys.argv[3], dict(env, OPENBLAS_CORETYPE="Haswell"))


def warned_by(spmdrun, argv, env):
    """The process indices whose lines say the warning, in a 4-process job of `argv`."""
    out = subprocess.run([spmdrun, "-n", "4", "--cpu-devices", "1", "--timeout", "60", "--"]
                         + argv, capture_output=True, text=True, timeout=90, env=env)
    if out.returncode != 0:
        fail(f"{argv} exited {out.returncode}:\n{out.stdout}{out.stderr}")
    lines = (out.stdout + out.stderr).splitlines()
    return sorted(int(m.group(1)) for m in
                  (re.match(r"\[(\d+)\] spmd warning: OpenBLAS", ln) for ln in lines) if m)


def once_per_host(spmdrun, program, env):
    one = warned_by(spmdrun, [program], env)
    if one != [0]:
        fail(f"4 processes of one host: the warning came from processes {one}, not from 0 alone")
    two_hosts = 'SPMD_HOST_ID=host$((SPMD_PROCESS_ID / 2)) exec "$0"'
    two = warned_by(spmdrun, ["/bin/sh", "-c", two_hosts, program], env)
    if two != [0, 2]:
        fail(f"4 processes on 2 hosts: the warning came from processes {two}, not from 0 and 2")
    print("a job says it once per host: 4 processes of 1 host, 1 line; of 2 hosts, 2 lines")


if __name__ == "__main__":
    main()
