"""Live differential fuzzing of what finishes a drain: finalizers, NotReady nodes, the out-of-service taint.

Each seed makes one node to drain: a Ready kwok node, or a NotReady node no kubelet serves, with or
without the ``node.kubernetes.io/out-of-service`` taint (then the pod GC force-deletes its
terminating pods). One to three bare pods are bound to it (a grace period of 30 s on a NotReady
node), each with no finalizer, a finalizer no
one removes, or one the garbage collector removes (``foregroundDeletion``), maybe a pod already
Failed. Our dry run (``--force``) plans the drain; then ``kubectl drain --force`` runs it. Once it
has ended:
- the plan is SAFE only if ``kubectl drain`` finished (exit 0) and no pod of the node is left;
- every pod our plan says a finalizer holds (POD_HELD_BY_FINALIZER) is still there, Terminating;
- every pod left is named by one of the plan's risks (held, or its node cannot confirm deletions).
CI runs ``KUBECTL_SAFETY_LIVE_FUZZ`` seeds (default 4 here); ``scripts/fuzz-fidelity --live N`` runs more.
"""

from __future__ import annotations

import json
import os
import random
import sys
import time

import pytest
from cluster_helpers import create, get_json, pod, wait_until

from tests.integration.test_drain import safety

SEEDS = int(os.environ.get("KUBECTL_SAFETY_LIVE_FUZZ") or 4)
FIRST_SEED = int(os.environ.get("KUBECTL_SAFETY_LIVE_FUZZ_FIRST") or 0)
OUT_OF_SERVICE = {"key": "node.kubernetes.io/out-of-service", "value": "nodeshutdown", "effect": "NoExecute"}
FINALIZERS = {"none": None, "held": "fuzz.example/hold", "gc": "foregroundDeletion"}
DRAIN_TIMEOUT = 45  # longer than the pod GC's 20 s period (it force-deletes on out-of-service nodes)


KINDS = ["ready", "out-of-service", "not-ready", "ready", "out-of-service"]


def scenario(seed: int):
    """(node kind, [(pod suffix, finalizer kind, failed)]) for one seed: the kinds in turn (any
    four seeds in a row meet each), the rest drawn."""
    rng = random.Random(seed)
    pods = [(f"p{i}", rng.choice(["none", "held", "gc"]), rng.random() < 0.15) for i in range(rng.randint(1, 3))]
    return KINDS[seed % len(KINDS)], pods


def pods_left(cluster, namespace, uids) -> list:
    return [p for p in get_json(cluster, "pods", "-n", namespace)["items"] if p["metadata"]["uid"] in uids]


def release(cluster, namespace):
    """Remove every finalizer left in the namespace (so that it can be deleted)."""
    for p in get_json(cluster, "pods", "-n", namespace)["items"]:
        if p["metadata"].get("finalizers"):
            cluster.kubectl("patch", "pod", p["metadata"]["name"], "-n", namespace, "--type=merge",
                            "-p", json.dumps({"metadata": {"finalizers": None}}), check=False)


@pytest.mark.parametrize("seed", range(FIRST_SEED, FIRST_SEED + SEEDS))
def test_live_fuzz_drain_deletion(cluster, namespace, make_node, seed):
    started = time.monotonic()
    kind, specs = scenario(seed)
    target = make_node(f"del-{namespace[-6:]}", ready=kind == "ready",
                       taints=[OUT_OF_SERVICE] if kind == "out-of-service" else None)["metadata"]["name"]
    objects = []
    for suffix, finalizer, _ in specs:
        obj = pod(suffix, node_name=target)
        if kind != "ready":  # its deletion then waits for a kubelet (or the pod GC), as a real pod's does
            obj["spec"]["terminationGracePeriodSeconds"] = 30
        obj["spec"]["tolerations"] = [{**OUT_OF_SERVICE, "operator": "Equal"}]  # not evicted before the plan
        if FINALIZERS[finalizer]:
            obj["metadata"]["finalizers"] = [FINALIZERS[finalizer]]
        objects.append(obj)
    create(cluster, namespace, *objects)
    try:
        if kind == "ready":
            wait_until(lambda: all(p["status"].get("phase") == "Running"
                                   for p in get_json(cluster, "pods", "-n", namespace)["items"]) or None,
                       60, "the pods to run")
        for suffix, _, failed in specs:
            if failed:
                patch = json.dumps({"status": {"phase": "Failed"}})
                cluster.kubectl("patch", "pod", suffix, "-n", namespace, "--subresource=status", "--type=merge",
                                "-p", patch)
        uids = {p["metadata"]["uid"]: p["metadata"]["name"] for p in get_json(cluster, "pods", "-n", namespace)["items"]}
        desc = f"node {kind}, pods {specs}"

        code, plan, err = safety(cluster, target, "--dry-run", "--force")
        assert plan and plan["kind"] == "DrainPlan", err
        held = {o["name"] for r in plan["risks"] if r["code"] == "POD_HELD_BY_FINALIZER"
                for o in r["objects"] if o["kind"] == "Pod"}
        named = {o["name"] for r in plan["risks"] for o in r["objects"] if o["kind"] == "Pod"}
        node_named = any(o["kind"] == "Node" and o["name"] == target for r in plan["risks"] for o in r["objects"])

        result = cluster.kubectl("drain", target, "--force", f"--timeout={DRAIN_TIMEOUT}s", check=False,
                                 timeout=DRAIN_TIMEOUT + 30)
        left = {p["metadata"]["name"] for p in pods_left(cluster, namespace, uids)}
        finished = result.returncode == 0 and not left
        risks = sorted(r["code"] for r in plan["risks"])
        if plan["safe"]:
            assert finished, (desc, risks, left, result.stderr[-500:])
        assert held <= left, (desc, risks, held, left)
        assert all(name in named or node_named for name in left), (desc, risks, left)
        print(f"\nlive drain-deletion fuzz seed {seed}: {desc}: plan {'SAFE' if plan['safe'] else 'not safe'} {risks}, "
              f"kubectl drain exit {result.returncode}, left {sorted(left)}, {time.monotonic() - started:.0f}s",
              file=sys.stderr)
    finally:
        release(cluster, namespace)
