"""spmd-coordinator's token (issue 56, deliverable 5): on the command line it works but warns that
`ps` shows it; from --auth-token-file or SPMD_AUTH_TOKEN it is quiet; in every case spmd-status
with the token gets the table and without it is refused. An empty token file is refused.
Each coordinator this test starts is stopped by its pid."""
import os
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from free_port import free_port  # noqa: E402 - after its folder is on the path

COORDINATOR, STATUS = sys.argv[1], sys.argv[2]
TOKEN = "s3cret-token-42"


def run(args, env_token=None):
    """Starts the coordinator, asks it for status with and without the token, stops it."""
    port = free_port()
    env = dict(os.environ)
    env.pop("SPMD_AUTH_TOKEN", None)
    if env_token:
        env["SPMD_AUTH_TOKEN"] = env_token
    proc = subprocess.Popen([COORDINATOR, "--port", str(port), "--num-processes", "2",
                             "--bind", "127.0.0.1", *args], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.time() + 20
        while time.time() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.05)
        address = f"127.0.0.1:{port}"
        status_env = {k: v for k, v in os.environ.items() if k != "SPMD_AUTH_TOKEN"}
        good = subprocess.run([STATUS, address], env={**status_env, "SPMD_AUTH_TOKEN": TOKEN},
                              capture_output=True, text=True, timeout=30)
        bad = subprocess.run([STATUS, address], env=status_env, capture_output=True, text=True,
                             timeout=30)
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    return good, bad, err


def check(name, good, bad, err, warned):
    failures = []
    if good.returncode != 0 or "process" not in good.stdout:
        failures.append(f"{name}: the right token got no table: {good.stdout}{good.stderr}")
    if bad.returncode == 0:
        failures.append(f"{name}: no token was not refused: {bad.stdout}")
    if ("warning: --auth-token" in err) != warned:
        failures.append(f"{name}: warning {'missing' if warned else 'printed'}: {err}")
    if TOKEN in err:
        failures.append(f"{name}: the token appears in the coordinator's output")
    return failures


def main():
    failures = []
    failures += check("--auth-token", *run(["--auth-token", TOKEN]), warned=True)
    with tempfile.NamedTemporaryFile("w", delete=False) as f:
        f.write(TOKEN + "\n")
    try:
        os.chmod(f.name, 0o600)
        failures += check("--auth-token-file", *run(["--auth-token-file", f.name]), warned=False)
    finally:
        os.unlink(f.name)
    failures += check("SPMD_AUTH_TOKEN", *run([], env_token=TOKEN), warned=False)
    with tempfile.NamedTemporaryFile("w", delete=False) as f:
        pass
    try:
        empty = subprocess.run([COORDINATOR, "--port", "0", "--num-processes", "1",
                                "--auth-token-file", f.name], capture_output=True, text=True,
                               timeout=30)
        if empty.returncode != 2 or "no token" not in empty.stderr:
            failures.append(f"an empty token file was not refused: {empty.returncode} {empty.stderr}")
    finally:
        os.unlink(f.name)
    for f in failures:
        print("FAILED:", f)
    if failures:
        sys.exit(1)
    print("ok: the token from the command line warns; from a file or the environment it does not")


main()
