#!/usr/bin/env python3
"""examples/k8s/train_mlp.yaml holds together as spmd's Kubernetes detection needs it
(src/cluster/k8s.cc): an indexed Job whose completions all run at once, its pods' subdomain a
headless Service that selects them and publishes them before they are ready, and a service
account allowed to get jobs. Run with a Python that has PyYAML (the build tree's venv).

  k8s_manifest_test.py MANIFEST
"""
import sys

import yaml


def fail(message):
    print("FAILED: " + message)
    sys.exit(1)


def main():
    with open(sys.argv[1]) as f:
        docs = {d["kind"]: d for d in yaml.safe_load_all(f) if d}
    for kind in ("ServiceAccount", "Role", "RoleBinding", "Service", "Job"):
        if kind not in docs:
            fail(f"no {kind}")
    job, svc = docs["Job"], docs["Service"]
    spec, pod = job["spec"], job["spec"]["template"]["spec"]
    if spec.get("completionMode") != "Indexed":
        fail("the Job is not Indexed: its pods get no JOB_COMPLETION_INDEX")
    if spec.get("parallelism") != spec.get("completions"):
        fail("parallelism differs from completions: spmd's processes must all run at once")
    if pod.get("subdomain") != svc["metadata"]["name"]:
        fail("the pods' subdomain is not the headless Service: pod 0 has no name to reach")
    if svc["spec"].get("clusterIP") != "None" or not svc["spec"].get("publishNotReadyAddresses"):
        fail("the Service is not headless, or hides pods until ready")
    if svc["spec"].get("selector", {}).get("job-name") != job["metadata"]["name"]:
        fail("the Service does not select the Job's pods")
    account = pod.get("serviceAccountName")
    binding = docs["RoleBinding"]
    if account != docs["ServiceAccount"]["metadata"]["name"] or \
            binding["subjects"][0]["name"] != account or \
            binding["roleRef"]["name"] != docs["Role"]["metadata"]["name"]:
        fail("the pods' service account is not the one bound to the Role")
    rules = docs["Role"]["rules"]
    if not any("batch" in r["apiGroups"] and "jobs" in r["resources"] and "get" in r["verbs"]
               for r in rules):
        fail("the Role does not allow get on jobs: the pods cannot read the process count")
    print(f"ok: {job['metadata']['name']}, {spec['completions']} indexed pods, subdomain "
          f"{pod['subdomain']}, service account {account} may get jobs")


if __name__ == "__main__":
    main()
