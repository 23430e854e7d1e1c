#!/usr/bin/env python3
"""Kubernetes detection (src/cluster/k8s.cc), with the pod simulated as the Slurm tests simulate
srun: the variables Kubernetes sets in an indexed Job's pod, the service account's files and
/etc/hosts under SPMD_K8S_ROOT, and the API server played by an HTTPS server on loopback with a
certificate made here (openssl). k8s_probe prints what detection reads, or its error.

  - a pod of Job "train" (4 completions) in namespace team-a with subdomain "workers":
    process 2 of 4, local 0, coordinator train-0.workers.team-a.svc.cluster.local, port from the
    job's name in [61440, 65535] or SPMD_COORDINATOR_PORT;
  - a token the API server refuses: PermissionDenied saying what to grant;
  - a pod without a subdomain: the error says how to add the headless Service;
  - an API server whose certificate ca.crt did not sign: the TLS handshake fails, named;
  - an index past the completions, and a hostname that is not <job>-<index>: named.
Exits 77 (skipped), saying so, when openssl is not installed.

  k8s_test.py K8S_PROBE
"""
import http.server
import json
import os
import shutil
import ssl
import subprocess
import sys
import tempfile
import threading

TOKEN = "secret-token-of-the-pod"


def fail(message):
    print("FAILED: " + message)
    sys.exit(1)


def certificate(directory, name):
    key, cert = os.path.join(directory, name + ".key"), os.path.join(directory, name + ".crt")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key,
                    "-out", cert, "-days", "2", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1"],
                   check=True, capture_output=True, timeout=60)
    return key, cert


class Api(http.server.BaseHTTPRequestHandler):
    """GET /apis/batch/v1/namespaces/team-a/jobs/train with the pod's token: the Job."""

    def do_GET(self):  # noqa: N802 - http.server's name
        if self.headers.get("Authorization") != "Bearer " + TOKEN:
            self.answer(403, {"kind": "Status", "reason": "Forbidden"})
        elif self.path == "/apis/batch/v1/namespaces/team-a/jobs/train":
            self.answer(200, {"kind": "Job", "metadata": {"name": "train"},
                              "spec": {"completions": 4, "completionMode": "Indexed"}})
        else:
            self.answer(404, {"kind": "Status", "reason": "NotFound"})

    def answer(self, code, body):
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


def serve(key, cert):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Api)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def pod(root, ca, hosts_line, token=TOKEN):
    account = os.path.join(root, "var/run/secrets/kubernetes.io/serviceaccount")
    os.makedirs(account, exist_ok=True)
    os.makedirs(os.path.join(root, "etc"), exist_ok=True)
    for name, text in (("token", token + "\n"), ("namespace", "team-a")):
        with open(os.path.join(account, name), "w") as f:
            f.write(text)
    shutil.copy(ca, os.path.join(account, "ca.crt"))
    with open(os.path.join(root, "etc/hosts"), "w") as f:
        f.write("127.0.0.1\tlocalhost\n" + hosts_line + "\n")


def probe(path, root, port, index=2, hostname="train-2", extra=None):
    env = {"PATH": os.environ.get("PATH", ""), "JOB_COMPLETION_INDEX": str(index),
           "HOSTNAME": hostname, "KUBERNETES_SERVICE_HOST": "127.0.0.1",
           "KUBERNETES_SERVICE_PORT": str(port), "SPMD_K8S_ROOT": root}
    env.update(extra or {})
    out = subprocess.run([path], capture_output=True, text=True, timeout=60, env=env)
    return out.returncode, out.stdout.strip()


def expect_error(result, words, what):
    code, text = result
    if code == 0 or not all(w in text for w in words):
        fail(f"{what}: {text!r} (exit {code}), expected an error saying {words}")


def main():
    path = sys.argv[1]
    if shutil.which("openssl") is None:
        print("SKIPPED: openssl is not installed (make test installs Debian's package)")
        sys.exit(77)
    with tempfile.TemporaryDirectory() as tmp:
        key, cert = certificate(tmp, "api")
        _, other = certificate(tmp, "other")
        server = serve(key, cert)
        port = server.server_address[1]
        named = "10.0.0.7\ttrain-2.workers.team-a.svc.cluster.local\ttrain-2"
        good = os.path.join(tmp, "good")
        pod(good, cert, named)

        code, text = probe(path, good, port)
        fields = dict(w.split("=", 1) for w in text.split()) if code == 0 else {}
        host, _, job_port = fields.get("coordinator", "").rpartition(":")
        if (code != 0 or fields.get("name") != "k8s" or fields.get("id") != "2"
                or fields.get("processes") != "4" or fields.get("local") != "0"
                or host != "train-0.workers.team-a.svc.cluster.local"
                or not 61440 <= int(job_port or 0) <= 65535):
            fail(f"a pod of an indexed Job: {text!r} (exit {code})")
        code, text = probe(path, good, port, extra={"SPMD_COORDINATOR_PORT": "7000"})
        if not text.endswith("coordinator=train-0.workers.team-a.svc.cluster.local:7000"):
            fail(f"SPMD_COORDINATOR_PORT: {text!r}")

        refused = os.path.join(tmp, "refused")
        pod(refused, cert, named, token="another-token")
        expect_error(probe(path, refused, port), ["answered 403", "grant it"], "a refused token")
        alone = os.path.join(tmp, "alone")
        pod(alone, cert, "10.0.0.7\ttrain-2")
        expect_error(probe(path, alone, port), ["no subdomain", "headless Service"],
                     "a pod without a subdomain")
        stranger = os.path.join(tmp, "stranger")
        pod(stranger, other, named)
        expect_error(probe(path, stranger, port), ["TLS handshake"], "an unknown certificate")
        expect_error(probe(path, good, port, index=5, hostname="train-5"),
                     ["JOB_COMPLETION_INDEX=5", "4 completions"], "an index past the completions")
        expect_error(probe(path, good, port, hostname="somebody"), ["is not <job>-2"],
                     "a hostname that is not <job>-<index>")
        server.shutdown()
    print("ok: an indexed Job's pod is process 2 of 4 with pod 0 as coordinator; refusals named")


if __name__ == "__main__":
    main()
