#!/usr/bin/env python3
"""The fault campaign: random faults in random phases of a 4-process job on 3 hosts.

  campaign.py FAULT_PROBE [--faults N] [--seed S] [--cover] [--report FILE] [--transport T]

Hosts are network namespaces on a bridge (netns_hosts.py): host0 runs process 0 (and the
coordination service, bound to host0's interface only), host1 runs processes 1 and 2 (shared
memory between them), host2 runs process 3. Every process runs `fault_probe run`: rounds of a
barrier, an all_reduce, a jit step and a checkpoint save, each result checked. For each fault the
job starts afresh; the campaign waits until the target announces the chosen phase, waits a random
0-150 ms, and injects one of:

  kill     SIGKILL to the target process
  stop     SIGSTOP to the target process (killed by the campaign once the others have ended)
  term     SIGTERM to the target process: a preemption the job must save at and exit 0 from (or,
           before the handler is installed in round 1, a plain death)
  netdrop  every packet of the target's host dropped, both ways (iptables in its namespace)
  linkdown the target's host's interface taken down (a pulled cable: no FIN, no RST)

It counts, and every count must be 0:
  hangs     a process (other than a stopped target) still running 30 s after the fault
  wrong     a "WRONG" line: a collective, jit or checkpoint value that differs from the expected
  corrupt   `fault_probe verify` fails: a committed checkpoint that does not restore its values
            (a half-written step must not be listed at all)
  unnamed   a survivor that failed without naming the faulty process (for netdrop and linkdown: a
            process on the cut host), or a preemption the processes did not agree on
  early     the target ended on its own before its fault landed

--transport sets SPMD_TRANSPORT for every process (auto by default; shm+ucx carries what crosses
hosts over UCX, with UCX's own variables left as they are).

The report lists every fault and the totals; the exit code is 1 when any count is not 0, and 77
(skipped) when network namespaces cannot be made here (not root), saying why.
"""
import argparse
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import netns_hosts  # noqa: E402

PLACEMENT = [0, 1, 1, 2]  # host of each process
KINDS = ("kill", "stop", "term", "netdrop", "linkdown")
PHASES = ("init", "barrier", "collective", "jit", "checkpoint")
HEARTBEAT_S = 3
FAULT_DEADLINE_S = 30


class Process:
    """One fault_probe process and its output, read on a thread of its own."""

    def __init__(self, hosts, index, argv, env):
        self.index = index
        self.lines = []
        self.popen = hosts.start(PLACEMENT[index], argv, env)
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        for line in self.popen.stdout:
            self.lines.append(line)

    def text(self):
        return "".join(self.lines)

    def saw_phase(self, phase):
        return any(line.startswith(f"phase {phase} ") for line in list(self.lines))


TRANSPORT = "auto"  # SPMD_TRANSPORT of every job (--transport)


def job_env(hosts, index, port, token):
    env = dict(os.environ)
    env["SPMD_TRANSPORT"] = TRANSPORT
    address = f"{hosts.address(0)}:{port}"
    env.update({
        "SPMD_COORDINATOR_ADDRESS": address, "SPMD_COORDINATOR_BIND_ADDRESS": address,
        "SPMD_NUM_PROCESSES": "4", "SPMD_PROCESS_ID": str(index), "SPMD_AUTH_TOKEN": token,
        "SPMD_HEARTBEAT_TIMEOUT": str(HEARTBEAT_S), "SPMD_COLLECTIVE_TIMEOUT": "20",
        "SPMD_INITIALIZATION_TIMEOUT": "10", "SPMD_SHUTDOWN_TIMEOUT": "20",
    })
    env.pop("SPMD_HOST_ID", None)  # hosts differ by their hostnames
    return env


def inject(hosts, target, kind):
    pid = target.popen.pid
    if kind == "kill":
        os.kill(pid, signal.SIGKILL)
    elif kind == "stop":
        os.kill(pid, signal.SIGSTOP)
    elif kind == "term":
        os.kill(pid, signal.SIGTERM)
    elif kind == "netdrop":
        hosts.drop_packets(PLACEMENT[target.index])
    else:
        hosts.link_down(PLACEMENT[target.index])


def names(text, process):
    """Whether an error in `text` names `process`: by host and pid once it registered, among the
    processes that never registered, or as the host of an unreachable service (process 0)."""
    if f"process {process} (host host{PLACEMENT[process]}" in text:
        return True
    m = re.search(r"missing process ids: ([0-9, ]+)", text)
    if m and str(process) in m.group(1).replace(" ", "").split(","):
        return True
    return process == 0 and ("Check that process 0 (or spmd-coordinator) is running" in text
                             or "process 0, which hosts it," in text)


def judge(kind, target, procs, codes):
    """Returns (outcome, unnamed): what happened, and whether an error failed to name the fault."""
    if kind == "term":
        preempted = {re.search(r"preempted at (\d+)", p.text()).group(1)
                     for p in procs if re.search(r"preempted at (\d+)", p.text())}
        if all(c == 0 for c in codes) and len(preempted) == 1:
            return f"all saved and exited 0 at step {preempted.pop()}", False
        if codes[target.index] != -signal.SIGTERM:
            return f"preemption not agreed: codes {codes}, steps {sorted(preempted)}", True
    faulty = {target.index}
    if kind in ("netdrop", "linkdown"):
        faulty = {i for i, h in enumerate(PLACEMENT) if h == PLACEMENT[target.index]}
    unnamed = False
    for p, code in zip(procs, codes):
        if p.index in faulty:
            continue
        if code == 0 or not any(names(p.text(), f) for f in faulty):
            unnamed = True
    return (f"survivors exited {[c for p, c in zip(procs, codes) if p.index not in faulty]}",
            unnamed)


def one_fault(hosts, probe, rng, number, workdir, cover):
    # --cover: every kind and every phase in turn (the short run's guarantee), else at random.
    kind = KINDS[number % len(KINDS)] if cover else rng.choice(KINDS)
    phase = PHASES[(number + number // len(KINDS)) % len(PHASES)] if cover else rng.choice(PHASES)
    target_index = rng.randrange(4)
    delay = rng.uniform(0, 0.15)
    directory = os.path.join(workdir, f"fault{number}")
    os.makedirs(directory)
    port = 7000 + number % 20000
    procs = [Process(hosts, i, [probe, "run", directory, "100000"],
                     job_env(hosts, i, port, f"campaign-{number}")) for i in range(4)]
    target = procs[target_index]
    start = time.monotonic()
    if phase != "init":
        while not target.saw_phase(phase) and target.popen.poll() is None \
                and time.monotonic() - start < 30:
            time.sleep(0.005)
    time.sleep(delay if phase != "init" else rng.uniform(0, 0.1))
    early = target.popen.poll() is not None  # it ended before its fault: a failure of its own
    if not early:
        inject(hosts, target, kind)
    injected = time.monotonic()
    codes = []
    hung = []
    for p in procs:
        if kind == "stop" and p is target:
            codes.append(None)
            continue
        try:
            codes.append(p.popen.wait(timeout=max(0.1, injected + FAULT_DEADLINE_S
                                                  - time.monotonic())))
        except subprocess.TimeoutExpired:
            hung.append(p.index)
            p.popen.kill()
            codes.append(p.popen.wait())
    if kind == "stop":
        target.popen.kill()
        codes[target.index] = target.popen.wait()
    took = time.monotonic() - injected
    for p in procs:
        p.thread.join(timeout=5)
    if kind in ("netdrop", "linkdown"):
        hosts.heal(PLACEMENT[target_index])
    wrong = sum(p.text().count("WRONG") for p in procs)
    verify = subprocess.run([probe, "verify", directory], capture_output=True, text=True,
                            timeout=120, env={k: v for k, v in os.environ.items()
                                              if not k.startswith("SPMD_")})
    corrupt = verify.returncode != 0
    outcome, unnamed = judge(kind, target, procs, codes)
    if early:
        outcome = f"the target ended on its own before the fault (exit {codes[target_index]})"
    record = {"n": number, "kind": kind, "phase": phase, "target": target_index,
              "hangs": len(hung), "wrong": wrong, "corrupt": int(corrupt), "early": int(early),
              "unnamed": int(unnamed), "took": took, "outcome": outcome,
              "verified": verify.stdout.strip() or verify.stderr.strip()}
    if hung or wrong or corrupt or unnamed or early:
        record["outputs"] = {p.index: p.text()[-3000:] for p in procs}
    shutil.rmtree(directory, ignore_errors=True)
    return record


def report(records, seconds):
    lines = [f"{len(records)} faults in {seconds:.0f} s"]
    for r in records:
        lines.append(f"  #{r['n']:>3} {r['kind']:<7} in {r['phase']:<10} of process "
                     f"{r['target']}: ended in {r['took']:4.1f} s; {r['outcome']}; "
                     f"{r['verified']}" + ("  <-- " + ", ".join(
                         k for k in ("hangs", "wrong", "corrupt", "unnamed", "early") if r[k])
                         if any(r[k] for k in ("hangs", "wrong", "corrupt", "unnamed", "early")) else ""))
    totals = {k: sum(r[k] for r in records) for k in ("hangs", "wrong", "corrupt", "unnamed", "early")}
    by_kind = {k: sum(1 for r in records if r["kind"] == k) for k in KINDS}
    by_phase = {p: sum(1 for r in records if r["phase"] == p) for p in PHASES}
    lines.append("by kind: " + ", ".join(f"{k} {v}" for k, v in by_kind.items()))
    lines.append("by phase: " + ", ".join(f"{k} {v}" for k, v in by_phase.items()))
    lines.append("totals: " + ", ".join(f"{k} {v}" for k, v in totals.items()))
    for r in records:
        for index, text in r.get("outputs", {}).items():
            lines.append(f"--- fault #{r['n']} process {index} ---\n{text}")
    return "\n".join(lines), totals


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("probe")
    parser.add_argument("--faults", type=int, default=8)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--report")
    parser.add_argument("--cover", action="store_true",
                        help="take the kinds in turn and the phases in turn, shifted each round "
                             "of kinds: every 10 faults cover every kind and phase twice")
    parser.add_argument("--transport", default="auto")
    args = parser.parse_args()
    global TRANSPORT
    TRANSPORT = args.transport
    why = netns_hosts.available()
    if why:
        print(f"SKIPPED: {why}")
        sys.exit(77)
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    print(f"seed {seed} (rerun with --seed {seed}); SPMD_TRANSPORT={TRANSPORT}", flush=True)
    rng = random.Random(seed)
    records = []
    start = time.monotonic()
    with netns_hosts.Hosts(3) as hosts, tempfile.TemporaryDirectory() as workdir:
        for number in range(args.faults):
            records.append(one_fault(hosts, os.path.abspath(args.probe), rng, number, workdir,
                                     args.cover))
            r = records[-1]
            print(f"fault {number}: {r['kind']} in {r['phase']} of process {r['target']}: "
                  f"{r['outcome']} ({r['took']:.1f} s)", flush=True)
    text, totals = report(records, time.monotonic() - start)
    print(text)
    if args.report:
        with open(args.report, "w") as f:
            f.write(f"seed {seed}\n{text}\n")
    sys.exit(1 if any(totals.values()) else 0)


if __name__ == "__main__":
    main()
