"""Reliability on the real control plane: read-only runs write nothing, signals stop a drain
cleanly (exit 130, nothing unplanned evicted, a rerun finishes), and a user confined to one
namespace gets a clear Forbidden elsewhere.

Every test confines its pods to its own nodes (label ``pool=<namespace>``).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time

import pytest
from cluster_helpers import (place_on, pool_nodes, pool_web, pods_by_uid, create, get_json, grant_namespace_access, pdb, wait_pdb_settled,
                             wait_pods_running, wait_until)

from tests.unit.cli_helpers import run_cli

UA = "kubectl-safety/"


def cli(cluster, *args):
    return run_cli([*args, "--kubeconfig", str(cluster.kubeconfig)])


# -- every read-only command and every dry run: zero mutating requests --------------------------
READ_ONLY = [
    ("explain-pod", "explain", lambda ns, node, pod: ["explain", "pod", pod, "-n", ns]),
    ("explain-pod-json", "explain", lambda ns, node, pod: ["explain", "pod", pod, "-n", ns, "-o", "json"]),
    ("explain-node", "explain", lambda ns, node, pod: ["explain", "node", node, "-o", "wide"]),
    ("explain-priorities", "explain", lambda ns, node, pod: ["explain", "priorities"]),
    ("version", "version", lambda ns, node, pod: ["version"]),
    ("drain-dry-run", "drain", lambda ns, node, pod: ["drain", node, "--dry-run"]),
    ("drain-dry-run-client-flags", "drain", lambda ns, node, pod: [
        "drain", node, "--dry-run=client", "--force", "--ignore-daemonsets", "--delete-emptydir-data",
        "--disable-eviction", "--grace-period", "0"]),
    ("delete-dry-run", "delete", lambda ns, node, pod: ["delete", "pod", pod, "-n", ns, "--dry-run"]),
    ("delete-force-dry-run", "delete", lambda ns, node, pod: [
        "delete", "pod", pod, "-n", ns, "--force", "--dry-run", "--reason", "test"]),
    ("delete-force-no-confirm", "delete", lambda ns, node, pod: ["delete", "pod", pod, "-n", ns, "--force"]),
    ("delete-force-confirm-dry-run", "delete", lambda ns, node, pod: [
        "delete", "pod", pod, "-n", ns, "--force", "--confirm", "--dry-run"]),
    ("rebalance-dry-run", "rebalance", lambda ns, node, pod: ["rebalance", "deployment/web", "-n", ns, "--dry-run"]),
    ("rebalance-all-dry-run", "rebalance", lambda ns, node, pod: ["rebalance", "-A", "--dry-run", "--max-evictions", "5"]),
]


@pytest.fixture(scope="module")
def small_workload(cluster, request):
    """A namespace with a 2-replica deployment and a PDB on two nodes, shared by the read-only runs."""
    from cluster_helpers import create_node

    ns = "reliability-readonly"
    cluster.kubectl("create", "namespace", ns, check=False)
    nodes = [create_node(cluster, f"rel-ro-{i}", labels={"pool": ns})["metadata"]["name"] for i in range(2)]
    create(cluster, ns, pool_web(2, ns), pdb("web", {"app": "web"}, max_unavailable=1))
    wait_pods_running(cluster, ns, count=2, ready=False)
    pod = next(iter(pods_by_uid(cluster, ns).values()))
    yield ns, pod["spec"]["nodeName"], pod["metadata"]["name"]
    cluster.kubectl("delete", "namespace", ns, "--wait=false", check=False)
    cluster.kubectl("delete", "node", *nodes, "--wait=false", check=False)


@pytest.mark.parametrize("command,build", [(c, b) for _, c, b in READ_ONLY], ids=[i for i, _, _ in READ_ONLY])
def test_read_only_runs_send_no_mutating_request(cluster, audit, small_workload, command, build):
    ns, node, pod = small_workload
    before = set(pods_by_uid(cluster, ns))
    started = audit.now()
    code, out, err = cli(cluster, *build(ns, node, pod))
    assert code in (0, 3), err  # 3: a dry run that found blockers / a refused force delete
    assert "Traceback" not in err and "internal error" not in err
    cluster.kubectl("get", "namespace", ns, "-o", "name")  # a marker: once audited, our requests are too
    wait_until(lambda: [e for e in audit.entries(started) if e.resource == "namespaces" and e.name == ns
                        and UA not in e.user_agent], 15, "the marker read in the audit log")
    assert audit.mutating_requests(started, user_agent_contains=UA) == []
    assert set(pods_by_uid(cluster, ns)) == before
    assert not get_json(cluster, f"node/{node}")["spec"].get("unschedulable")


# -- signals: a drain blocked on a PDB is stopped by SIGINT/SIGTERM -----------------------------------
def set_ready(cluster, namespace, name, ready: bool):
    patch = json.dumps({"status": {"conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}})
    cluster.kubectl("patch", "pod", name, "-n", namespace, "--subresource=status", "--type=strategic", "-p", patch)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_signal_stops_a_waiting_drain_cleanly_and_a_rerun_finishes(cluster, namespace, make_node, audit, sig):
    """The drain cordons, waits on a PDB that allows nothing; a signal: exit 130, nothing evicted."""
    nodes = pool_nodes(make_node, namespace, 2, "rel")
    place_on(cluster, namespace, nodes[1:], [pool_web(2, namespace)], 2)
    cluster.kubectl("cordon", nodes[0])
    cluster.kubectl("scale", "deployment/web", "--replicas=3", "-n", namespace)
    wait_pods_running(cluster, namespace, "app=web", count=3)
    cluster.kubectl("uncordon", nodes[0])
    elsewhere = [p["metadata"]["name"] for p in pods_by_uid(cluster, namespace).values() if p["spec"]["nodeName"] == nodes[1]]
    set_ready(cluster, namespace, elsewhere[0], False)  # the PDB allows nothing until it is Ready again
    create(cluster, namespace, pdb("web", {"app": "web"}, min_available=2))
    wait_pdb_settled(cluster, namespace, "web", disruptions_allowed=0, current_healthy=2)

    started = audit.now()
    cmd = ["kubectl-safety", "drain", nodes[0], "--kubeconfig", str(cluster.kubeconfig), "--yes",
           "--timeout", "120s", "-o", "json"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=dict(os.environ))
    wait_until(lambda: [e for e in audit.mutating_requests(started, user_agent_contains=UA)
                        if e.resource == "nodes"], 60, "the cordon")
    time.sleep(1)  # now waiting on the budget
    signalled = time.monotonic()
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, (proc.returncode, err[-2000:])
    assert time.monotonic() - signalled < 10
    assert "Traceback" not in err and "interrupt" in err.lower(), err[-2000:]
    if out.strip():
        assert json.loads(out).get("status") == "interrupted"
    evictions = [e for e in audit.mutating_requests(started, user_agent_contains=UA) if e.resource == "pods/eviction"]
    assert all(e.code != 201 for e in evictions), evictions  # the budget allowed nothing: nothing evicted
    assert get_json(cluster, f"node/{nodes[0]}")["spec"].get("unschedulable") is True

    set_ready(cluster, namespace, elsewhere[0], True)
    code, out, err = cli(cluster, "drain", nodes[0], "--yes", "--timeout", "120s", "-o", "json")
    assert code == 0, err
    assert [p for p in pods_by_uid(cluster, namespace).values() if p["spec"].get("nodeName") == nodes[0]] == []


# -- a user confined to one namespace ---------------------------------------------------------------------
def test_namespace_confined_user_reads_there_and_gets_a_clear_forbidden_elsewhere(cluster, namespace, make_node):
    user = f"alice-{namespace[-6:]}"
    nodes = pool_nodes(make_node, namespace, 1, "rel")
    create(cluster, namespace, pool_web(1, namespace))
    wait_pods_running(cluster, namespace, count=1, ready=False)
    grant_namespace_access(cluster, user, namespace, verbs=("get", "list", "watch"))
    pod = next(iter(pods_by_uid(cluster, namespace).values()))["metadata"]["name"]

    code, out, err = cli(cluster, "explain", "pod", pod, "-n", namespace, "--as", user)
    assert code == 0, err
    assert "Pod:" in out

    code, out, err = cli(cluster, "explain", "pod", "anything", "-n", "kube-system", "--as", user)
    lines = [line for line in err.strip().splitlines() if not line.startswith("warning: ")]
    assert code == 1 and len(lines) == 1 and "Forbidden" in lines[0] and user in lines[0], err

    code, out, err = cli(cluster, "explain", "node", nodes[0], "--as", user)
    lines = [line for line in err.strip().splitlines() if not line.startswith("warning: ")]
    assert code == 1 and len(lines) == 1 and "Forbidden" in lines[0], err

    code, out, err = cli(cluster, "drain", nodes[0], "--yes", "--as", user, "--timeout", "10s")
    assert code in (1, 3) and "Forbidden" in err and "Traceback" not in err, err
    assert not get_json(cluster, f"node/{nodes[0]}")["spec"].get("unschedulable")
