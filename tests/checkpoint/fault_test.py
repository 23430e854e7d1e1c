#!/usr/bin/env python3
"""Randomized faults against checkpoint saves (issue 53): concurrent jobs saving the same steps, a
process SIGKILLed or shut down at a random moment, a full disk (a small tmpfs this test mounts
when it runs as root; otherwise it says why that part is skipped), and random damage to the
files. After every round, every directory with COMMIT restores bit-exactly to exactly one step's
values (or, if this test damaged it, is an error naming the file), and the user's files beside
and inside the targets are byte for byte what they were.

usage: fault_test.py SPMDRUN PROBE WORKDIR [ROUNDS] [SEED]
Prints "N passed, M failed" last; exits 1 when any round failed."""
import hashlib
import os
import random
import shutil
import subprocess
import sys

SPMDRUN, PROBE, WORK = sys.argv[1], sys.argv[2], sys.argv[3]
ROUNDS = int(sys.argv[4]) if len(sys.argv) > 4 else 12
SEED = int(sys.argv[5]) if len(sys.argv) > 5 else random.SystemRandom().randrange(1 << 30)


def manifest(root):
    """Every user file under root (spmd's own entries excluded) with its digest."""
    out = {}
    for top in ("notes.txt", "userdir", "step9.tmp-user"):
        path = os.path.join(root, top)
        for dirpath, _, files in os.walk(path) if os.path.isdir(path) else [(root, [], [top])]:
            for f in files:
                p = os.path.join(dirpath, f)
                if os.path.exists(p):
                    with open(p, "rb") as fh:
                        out[os.path.relpath(p, root)] = hashlib.sha256(fh.read()).hexdigest()
    return out


def plant_user_files(root):
    os.makedirs(os.path.join(root, "userdir"), exist_ok=True)
    with open(os.path.join(root, "userdir", "keep.bin"), "wb") as f:
        f.write(os.urandom(1000))
    with open(os.path.join(root, "notes.txt"), "w") as f:
        f.write("the user's notes\n")
    os.makedirs(os.path.join(root, "step9.tmp-user"), exist_ok=True)
    with open(os.path.join(root, "step9.tmp-user", "mine"), "w") as f:
        f.write("named like a temporary, but the user's\n")


def run_job(root, seed):
    # 20 s: a job ends in about 2 s (a peer that shut down is named at once by the save's
    # barrier); the limit only bounds a round that went wrong.
    return subprocess.Popen(
        [SPMDRUN, "-n", "2", "--cpu-devices", "2", "--timeout", "20", "--", PROBE, "fault", root,
         str(seed)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def verify(root):
    """The verifier's lines; a verifier that did not run to its end is a line saying so."""
    out = subprocess.run([SPMDRUN, "-n", "1", "--cpu-devices", "2", "--timeout", "60", "--", PROBE,
                          "verify", root], capture_output=True, text=True, timeout=90)
    lines = [line for line in out.stdout.splitlines() if line.startswith("[0] ")]
    if out.returncode != 0:
        lines.append(f"the verifier exited {out.returncode}: {out.stdout[-500:]}")
    return lines


def damage(root, rng):
    """Flips one byte of a chunk file of a random committed step; returns the step's path."""
    steps = [d for d in os.listdir(root) if os.path.exists(os.path.join(root, d, "COMMIT"))]
    if not steps:
        return None
    step = os.path.join(root, rng.choice(sorted(steps)), "w")
    chunks = sorted(f for f in os.listdir(step) if not f.startswith("."))
    path = os.path.join(step, rng.choice(chunks))
    with open(path, "r+b") as f:
        data = bytearray(f.read())
        i = rng.randrange(len(data))
        data[i] ^= 0xFF
        f.seek(0)
        f.write(data)
    return os.path.dirname(step)


def mount_small_disk(root):
    """A 700 KiB tmpfs at root: two steps fit, the third fills it. None when it cannot be made."""
    if os.geteuid() != 0:
        return "not root"
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=700k", "tmpfs", root],
                       capture_output=True, text=True)
    return None if r.returncode == 0 else r.stderr.strip() or "mount failed"


def round_(n, rng):
    root = os.path.join(WORK, f"round{n}")
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(root)
    small_disk = n % 4 == 3
    mounted = False
    if small_disk:
        why = mount_small_disk(root)
        if why:
            print(f"round {n}: the full-disk part is skipped: cannot mount a tmpfs ({why})")
        mounted = why is None
    try:
        plant_user_files(root)
        before = manifest(root)
        jobs = [run_job(root, rng.randrange(1 << 30)) for _ in range(rng.choice((1, 2)))]
        logs = []
        for j in jobs:
            out, _ = j.communicate(timeout=120)
            logs.append(out)
        problems = []
        for log in logs:
            for line in log.splitlines():
                if "error a save into the user's directory succeeded" in line:
                    problems.append(line)
                if "Segmentation fault" in line or "signal 11" in line or "signal 6" in line:
                    problems.append(line)
        results = verify(root)
        damaged = damage(root, rng) if rng.random() < 0.5 else None
        after_damage = verify(root) if damaged else results
        for line in after_damage:
            path = line.split()[2].rstrip(":") if line.startswith("[0] ") else ""
            if line.startswith("[0] verified"):
                if damaged and path == damaged:
                    problems.append("the damaged checkpoint restored: " + line)
            elif line.startswith("[0] unreadable"):
                if path != damaged:
                    problems.append("a committed checkpoint does not restore: " + line)
            else:
                problems.append(line)
        if manifest(root) != before:
            problems.append("the user's files changed")
        committed = [r.split()[2] for r in results if r.startswith("[0] verified")]
        print(f"round {n}: {len(jobs)} job(s), small disk: {mounted}, committed: "
              f"{len(committed)}, damaged: {damaged is not None} -> "
              f"{'ok' if not problems else 'FAILED'}")
        for p in problems:
            print("   ", p)
        if problems:
            for log in logs:
                print(log[-3000:])
        return len(committed), not problems
    finally:
        if mounted:
            subprocess.run(["umount", root])
        shutil.rmtree(root, ignore_errors=True)


def main():
    rng = random.Random(SEED)
    print(f"seed {SEED}")
    os.makedirs(WORK, exist_ok=True)
    passed = failed = committed = 0
    for n in range(ROUNDS):
        count, ok = round_(n, rng)
        committed += count
        if ok:
            passed += 1
        else:
            failed += 1
    if committed == 0:
        print("no round committed a checkpoint, so nothing was verified")
        failed += 1
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
