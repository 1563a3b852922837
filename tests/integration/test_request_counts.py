"""API requests per command, from the audit log, must not grow with the cluster (issue 8).

The same commands run against a small cluster and again after it grew (more nodes, more pods
on the same node, in the namespace and elsewhere); each makes exactly as many requests both
times. Lists stay below one page (500 objects) here: beyond that a LIST costs one request per
page, by design.
"""

from __future__ import annotations

import json
import time

import pytest
from cluster_helpers import create, deployment, get_json, pdb, wait_pods_running

from tests.unit.cli_helpers import run_cli


def requests_of(audit, args) -> list:
    """Run ``kubectl safety ARGS`` in-process; the (verb, resource) of each API request it made."""
    since = audit.now()
    code, _, err = run_cli(args)
    assert code in (0, 3), err
    seen, stable_since = None, time.monotonic()
    while time.monotonic() - stable_since < 1.0:  # the audit log is written as requests complete
        now = sorted((e.verb, e.resource) for e in audit.entries(since) if "kubectl-safety/" in e.user_agent)
        if now != seen:
            seen, stable_since = now, time.monotonic()
        time.sleep(0.2)
    return seen


def grow(cluster, make_node, namespace, target, nodes, replicas):
    """More nodes and more pods: on the target node, in the namespace and in another namespace."""
    for i in range(nodes):
        make_node(f"rc-{namespace[-6:]}-x{i}", labels={"pool": namespace})
    other = f"{namespace}-other"
    cluster.kubectl("create", "namespace", other)
    filler = deployment("filler", replicas, node_selector={"pool": namespace}, requests={"cpu": "10m"})
    create(cluster, namespace, filler)
    create(cluster, other, deployment("elsewhere", replicas, node_selector={"pool": namespace}, requests={"cpu": "10m"}))
    on_target = deployment("pinned", 5, requests={"cpu": "10m"})
    on_target["spec"]["template"]["spec"]["nodeName"] = target
    create(cluster, namespace, on_target)
    wait_pods_running(cluster, namespace, count=3 + replicas + 5, ready=False, timeout=120)
    wait_pods_running(cluster, other, count=replicas, ready=False, timeout=120)
    return other


@pytest.fixture
def small_cluster(cluster, make_node, namespace):
    """Two nodes labelled pool=<namespace>, a 3-replica Deployment with a PDB."""
    nodes = [make_node(f"rc-{namespace[-6:]}-{i}", labels={"pool": namespace})["metadata"]["name"] for i in range(2)]
    create(cluster, namespace, deployment("web", 3, node_selector={"pool": namespace}, requests={"cpu": "100m"}),
           pdb("web", {"app": "web"}, max_unavailable=1))
    pods = wait_pods_running(cluster, namespace, "app=web", count=3, ready=False)
    return nodes, pods


def test_requests_per_command_do_not_grow(cluster, audit, make_node, namespace, small_cluster, tmp_path):
    nodes, pods = small_cluster
    target = pods[0]["spec"]["nodeName"]
    preemptor = tmp_path / "preemptor.json"
    preemptor.write_text(json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "urgent", "namespace": namespace},
                                     "spec": {"containers": [{"name": "main", "image": "app:1",
                                                              "resources": {"requests": {"cpu": "3900m"}}}]}}))
    base = ["--kubeconfig", str(cluster.kubeconfig), "-o", "json"]
    ns = ["-n", namespace]  # only where a command reads one namespace ('kubectl safety options')
    commands = {
        "explain pod": ["explain", "pod", pods[0]["metadata"]["name"], *ns],
        "explain node": ["explain", "node", target],
        "drain --dry-run": ["drain", target, "--dry-run", "--ignore-daemonsets"],
        "drain --dry-run --no-capacity": ["drain", target, "--dry-run", "--ignore-daemonsets", "--no-capacity"],
        "preemption -f": ["preemption", "-f", str(preemptor), *ns],
        "rebalance --dry-run": ["rebalance", "deployment/web", "--dry-run", *ns],
    }
    small = {name: requests_of(audit, args + base) for name, args in commands.items()}
    other = grow(cluster, make_node, namespace, target, nodes=6, replicas=30)
    try:
        assert len(get_json(cluster, "pods", "-A")["items"]) >= 3 + 30 + 30 + 5
        large = {name: requests_of(audit, args + base) for name, args in commands.items()}
    finally:
        cluster.kubectl("delete", "namespace", other, "--wait=false", check=False)
    for name in commands:
        assert small[name], f"{name}: no requests seen in the audit log"
        assert large[name] == small[name], f"{name}: requests grew with the cluster"


def drain_requests(cluster, audit, make_node, namespace, name, flags) -> list:
    """A node with a 2-replica Deployment under a PDB, really drained: the requests of the drain."""
    node = make_node(f"rd-{namespace[-6:]}-{name}")["metadata"]["name"]
    create(cluster, namespace, deployment(name, 2, node_selector={"kubernetes.io/hostname": node},
                                          requests={"cpu": "100m"}),
           pdb(name, {"app": name}, max_unavailable=2))
    wait_pods_running(cluster, namespace, f"app={name}", count=2)
    deadline = time.monotonic() + 60  # the budget's status allows both: no refusal, no retry
    while (get_json(cluster, f"pdb/{name}", "-n", namespace).get("status") or {}).get("disruptionsAllowed") != 2:
        assert time.monotonic() < deadline, "the PDB's status was not computed"
        time.sleep(0.5)
    return requests_of(audit, ["drain", node, "--yes", "--ignore-daemonsets", "--timeout", "60s", *flags,
                               "--kubeconfig", str(cluster.kubeconfig), "-o", "json"])


@pytest.mark.parametrize("flags, only_plans_list", [
    (["--no-capacity"], "daemonsets"),
    (["--accept-risk=unplaceable"], "replicasets"),
], ids=["node-scoped", "capacity-aware"])
def test_a_real_drain_makes_the_same_requests_whatever_the_cluster_size(cluster, audit, make_node, namespace, flags,
                                                                        only_plans_list):
    """The plan, its re-plan once cordoned and the wait: from watches, never re-reading the cluster."""
    small = drain_requests(cluster, audit, make_node, namespace, "before", flags)
    other = f"{namespace}-other"
    cluster.kubectl("create", "namespace", other)
    try:
        for i in range(6):
            make_node(f"rd-{namespace[-6:]}-x{i}", labels={"pool": other})
        for i in range(8):  # more PDBs and pods elsewhere
            create(cluster, other, deployment(f"filler-{i}", 5, node_selector={"pool": other},
                                              requests={"cpu": "10m"}), pdb(f"filler-{i}", {"app": f"filler-{i}"},
                                                                             max_unavailable=1))
        wait_pods_running(cluster, other, count=40, ready=False, timeout=120)
        large = drain_requests(cluster, audit, make_node, namespace, "after", flags)
    finally:
        cluster.kubectl("delete", "namespace", other, "--wait=false", check=False)
    assert ("create", "pods/eviction") in small, small
    assert small.count(("list", only_plans_list)) == 1  # listed once, then watched: the re-plan reads nothing
    assert large == small, "a drain's requests grew with the cluster"
