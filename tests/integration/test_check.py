"""`check` against the real control plane: the same report live as on a kubectl dump of the same
cluster, and a PDB fixed live turns its nodes drainable on the next run."""

from __future__ import annotations

import json

import pytest
from cluster_helpers import (create, get_json, pdb, pod, pool_nodes, pool_web, wait_pdb_settled, wait_pods_running,
                             wait_until)

from tests.integration.test_fuzz_live import pdb_disagreements
from tests.unit.cli_helpers import run_cli

NOW = "2026-11-22T12:00:00Z"
DUMP_KINDS = ("nodes,pods,pdb,priorityclasses,replicasets,deployments,statefulsets,daemonsets,jobs,"
              "pvc,pv,storageclass")


def check(cluster, namespace, snapshot=None):
    source = ["--snapshot", str(snapshot)] if snapshot else ["--kubeconfig", str(cluster.kubeconfig)]
    code, out, err = run_cli(["check", "-l", f"pool={namespace}", "--as-of", NOW, "-o", "json", *source])
    report = json.loads(out)
    assert code == (0 if report["summary"]["ready"] else 3), err
    return report


def comparable(report):
    """What must not differ between the live read and the dump (not where it came from)."""
    return {k: v for k, v in report.items() if k not in ("source", "context")}


def nodes(report) -> dict:
    return {n["name"]: n for n in report["nodes"]}


@pytest.fixture
def pool(cluster, namespace, make_node):
    """Two nodes of the test's own pool, web (2 replicas, one per node) and a PDB that never allows."""
    names = pool_nodes(make_node, namespace, 2)
    create(cluster, namespace, pool_web(2, namespace),
           pdb("web", {"app": "web"}, min_available=2))
    wait_pods_running(cluster, namespace, count=2)
    wait_pdb_settled(cluster, namespace, "web", current_healthy=2, disruptions_allowed=0)
    return names


def test_live_check_equals_check_on_a_kubectl_dump(cluster, namespace, pool, tmp_path):
    for _ in range(3):  # other tests may change the cluster between the two reads: try again
        live = check(cluster, namespace)
        path = tmp_path / "dump.yaml"
        path.write_text(cluster.kubectl("get", DUMP_KINDS, "-A", "-o", "yaml").stdout)
        offline = check(cluster, namespace, snapshot=path)
        if comparable(live) == comparable(offline):
            break
    assert comparable(live) == comparable(offline)
    assert sorted(nodes(live)) == sorted(pool)


def test_a_pdb_fixed_live_turns_its_nodes_drainable(cluster, namespace, pool):
    before = nodes(check(cluster, namespace))
    hosting = [n for n in pool if before[n]["pods"]]
    assert hosting and all(not before[n]["drainable"] for n in hosting)
    assert all("PDB_NEVER_ALLOWS" in {r["code"] for r in before[n]["risks"]} for n in hosting)
    cluster.kubectl("patch", "pdb", "web", "-n", namespace, "--type=merge", "-p", '{"spec":{"minAvailable":1}}')
    wait_pdb_settled(cluster, namespace, "web", current_healthy=2, disruptions_allowed=1)
    after = nodes(check(cluster, namespace))
    assert all(after[n]["drainable"] and after[n]["risks"] == [] for n in pool)


@pytest.mark.parametrize("command", [["check"], ["drain", "--dry-run"], ["drain", "--dry-run", "--no-capacity"],
                                     ["rollout", "--dry-run"]], ids=["check", "drain", "drain-no-capacity", "rollout"])
def test_a_selector_that_matches_no_node_passes_the_gate(cluster, namespace, pool, command):
    """Live too: a -l typo is an error naming the selector, never `0/0 node(s) READY`."""
    code, out, err = run_cli(command + ["-l", f"pool={namespace}-typo", "--kubeconfig", str(cluster.kubeconfig)])
    assert (code, out) == (1, "") and len(err.splitlines()) == 1, (code, out, err)
    assert err.startswith(f"error: no node matches the selector pool={namespace}-typo")


@pytest.mark.parametrize("rule", [dict(max_unavailable=1), dict(min_available="50%")],
                         ids=["maxUnavailable", "minAvailable-percent"])
def test_live_scaled_pdb_over_a_deployment_plus_an_unmanaged_pod_allows_disruptions(cluster, namespace, make_node,
                                                                                      rule):
    """The disruption controller counts the Deployment's scale, emits UnmanagedPods for the bare pod and
    still allows disruptions: our budget equals its status, and check warns without blocking."""
    pool_nodes(make_node, namespace, 2)
    create(cluster, namespace, pool_web(2, namespace),
           pod("solo", {"app": "web"}, node_selector={"pool": namespace}), pdb("web", {"app": "web"}, **rule))
    wait_pods_running(cluster, namespace, count=3)
    settled = wait_pdb_settled(cluster, namespace, "web", current_healthy=3, expected_pods=2)
    assert settled["status"]["disruptionsAllowed"] == 2
    wait_until(lambda: not pdb_disagreements(cluster, namespace), 30, "PDB status to match our budget")
    wait_until(lambda: get_json(cluster, "events", "-n", namespace, "--field-selector", "reason=UnmanagedPods")["items"],
               30, "the UnmanagedPods event")
    report = check(cluster, namespace)
    found = {f["code"]: f for f in report["findings"]}
    assert "PDB_CONTROLLER_NO_SCALE" not in found and "PDB_NEVER_ALLOWS" not in found, found
    assert found["PDB_UNMANAGED_PODS"]["severity"] == "warning"
    assert not [r for n in report["nodes"] for r in n["risks"] if r["code"].startswith("PDB_")]
