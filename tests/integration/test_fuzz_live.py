"""Live differential fuzzing: seeded random small scenarios on the real control plane.

Each seed builds one namespace on a two-node pool (a Deployment, maybe a Job, a bare pod, a pod
controlled by a ConfigMap (no scale subresource), an emptyDir volume, zero to two PDBs of random
shape, random drain flags) and compares:
- our PDB recomputation with the disruption controller's status (allowed, expected, desired,
  healthy, and its SyncFailed fail-safe);
- our drain dry run with a real ``kubectl drain`` (what it evicts, and whether it succeeds).
CI runs ``KUBECTL_SAFETY_LIVE_FUZZ`` seeds (default 6); ``scripts/fuzz-fidelity`` runs more.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time
from datetime import datetime, timezone

import pytest
from cluster_helpers import create, get_json, pdb, pod, pool_nodes, pool_web, pods_by_uid, wait_until

from kubectl_safety.analysis.budgets import budget
from tests.builders import snapshot
from tests.integration.test_drain import KUBECTL_TIMEOUT, kubectl_would_evict, safety, with_volume

SEEDS = int(os.environ.get("KUBECTL_SAFETY_LIVE_FUZZ") or 6)
FIRST_SEED = int(os.environ.get("KUBECTL_SAFETY_LIVE_FUZZ_FIRST") or 0)
RULES = [dict(min_available=1), dict(min_available="50%"), dict(max_unavailable=1),
         dict(max_unavailable="50%"), dict(max_unavailable=0), dict(min_available=0)]
FLAGS = ["--ignore-daemonsets", "--delete-emptydir-data", "--force"]


def job(namespace, pods):
    spec = pod("batch", {"app": "batch"}, node_selector={"pool": namespace})["spec"]
    spec["restartPolicy"] = "Never"
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "batch"},
            "spec": {"parallelism": pods, "completions": pods, "template": {"metadata": {"labels": {"app": "batch"}},
                                                                            "spec": spec}}}


def scenario(rng: random.Random, namespace: str):
    """(objects, pod count, PDB names, drain flags, description) for one seed."""
    replicas = rng.randint(1, 3)
    web = pool_web(replicas, namespace)
    if rng.random() < 0.3:
        web = with_volume(web, {"name": "scratch", "emptyDir": {}})
    objects, count, labels = [web], replicas, ["web"]
    if rng.random() < 0.5:
        objects.append(job(namespace, 2))
        count, labels = count + 2, labels + ["batch"]
    if rng.random() < 0.4:
        objects.append(pod("solo", {"app": "solo"}, node_selector={"pool": namespace}))
        count, labels = count + 1, labels + ["solo"]
    if rng.random() < 0.4:  # a controller of a kind without a scale subresource, whose pods keep running
        objects.append(pod("owned", {"app": "owned"}, node_selector={"pool": namespace}))
        count, labels = count + 1, labels + ["owned"]
    pdbs = []
    for i in range(rng.randint(0, 2)):
        app = rng.choice(labels)
        pdbs.append(pdb(f"b{i}-{app}", {"app": app}, **rng.choice(RULES)))
    flags = [f for f in FLAGS if rng.random() < 0.5]
    desc = f"{[o['kind'] + '/' + o['metadata']['name'] for o in objects + pdbs]} " \
           f"{[p['spec'] for p in pdbs]} flags={flags}"
    return objects + pdbs, count, [p["metadata"]["name"] for p in pdbs], flags, desc


def place(cluster, namespace, spare, objects, count):
    """Create the objects with the spare node cordoned; wait for ``count`` pods on the target
    (Running or, for kwok's Job pods, already Succeeded)."""
    cluster.kubectl("cordon", spare)
    for obj in objects:
        if obj["metadata"]["name"] == "owned":
            owner = create(cluster, namespace, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "owner"}})[0]
            obj["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "ConfigMap", "name": "owner",
                                                   "uid": owner["metadata"]["uid"], "controller": True}]
    create(cluster, namespace, *objects)

    def placed():
        pods = get_json(cluster, "pods", "-n", namespace)["items"]
        return len([p for p in pods if p["status"].get("phase") in ("Running", "Succeeded")]) >= count

    wait_until(placed, 60, f"{count} pods placed in {namespace}")
    cluster.kubectl("uncordon", spare)


def live_snapshot(cluster, namespace):
    kinds = "pods,poddisruptionbudgets,replicasets,deployments,jobs,configmaps"
    items = get_json(cluster, kinds, "-n", namespace)["items"]
    return snapshot(*items, now=datetime.now(timezone.utc))


def pdb_disagreements(cluster, namespace):
    """Each PDB where our recomputation differs from the controller's settled status, or []."""
    snap = live_snapshot(cluster, namespace)
    out = []
    shared = {p.key for p in snap.pods if len(snap.pdbs_for(p)) > 1}
    for b in snap.pdbs:
        if any(p.key in shared for p in snap.pods if b.selects(p)):
            continue  # the controller updates only one of the PDBs sharing a pod (docs/deviations.md)
        status = b.status
        failed = any(c.get("reason") == "SyncFailed" for c in status.get("conditions") or [])
        if status.get("observedGeneration") != b.generation and not failed:  # fail-safe leaves it as it was
            return [f"{b.name}: status not observed yet"]
        ours = budget(b, snap)
        theirs = (failed, status.get("disruptionsAllowed", 0)) + (() if failed else (
            status.get("expectedPods", 0), status.get("desiredHealthy", 0), status.get("currentHealthy", 0)))
        mine = (bool(ours["syncFailed"]), ours["disruptionsAllowed"]) + (() if failed else (
            ours["expectedPods"], ours["desiredHealthy"], ours["healthyPods"]))
        if mine != theirs:
            out.append(f"{b.name}: ours {mine} controller {theirs}")
    return out


@pytest.mark.parametrize("seed", range(FIRST_SEED, FIRST_SEED + SEEDS))
def test_live_fuzz(cluster, namespace, make_node, seed):
    started = time.monotonic()
    rng = random.Random(seed)
    nodes = pool_nodes(make_node, namespace, 2, "fz")
    objects, count, pdb_names, flags, desc = scenario(rng, namespace)
    place(cluster, namespace, nodes[1], objects, count)

    # 1. the disruption controller's status (settles within seconds of the pods becoming Ready)
    try:
        wait_until(lambda: not pdb_disagreements(cluster, namespace), 30, "PDB status to match our budget")
    except Exception:
        pass
    assert pdb_disagreements(cluster, namespace) == [], desc

    # 2. our dry run against a real kubectl drain of the first node
    code, plan, err = safety(cluster, nodes[0], "--dry-run", *flags)
    assert plan and plan["kind"] == "DrainPlan", err
    before = pods_by_uid(cluster, namespace)
    on_target = {uid for uid, p in before.items() if p["spec"].get("nodeName") == nodes[0]}
    predicted = kubectl_would_evict(plan)
    try:
        result = cluster.kubectl("drain", nodes[0], f"--timeout={KUBECTL_TIMEOUT}", *flags, check=False, timeout=45)
        succeeded, stderr = result.returncode == 0, result.stderr
    except subprocess.TimeoutExpired as e:  # kubectl can overrun its --timeout; then it did not drain
        succeeded, stderr = False, f"kubectl drain still running after 45s: {e.stderr}"
    after = pods_by_uid(cluster, namespace)
    evicted = {uid for uid in on_target if uid not in after or after[uid]["metadata"].get("deletionTimestamp")}
    assert evicted == predicted, (desc, [(p["name"], p["action"]) for p in plan["pods"]], str(stderr)[-2000:])
    assert succeeded == plan["safe"], (desc, str(stderr)[-2000:])
    print(f"\nlive fuzz seed {seed}: {desc} -> safe={plan['safe']}, {len(evicted)} evicted, "
          f"{time.monotonic() - started:.0f}s", file=sys.stderr)
