"""`explain` against the real API server: priorities resolved by real admission, QoS as the
API server wrote it, the same JSON live as on a dump taken with the real kubectl, and the client
code's reading of a real PDB refusal."""

from __future__ import annotations

import json
import re
import uuid
from datetime import datetime, timedelta, timezone

import pytest
from cluster_helpers import (create, deployment, get_json, pdb, pod, priority_class, wait_pdb_settled,
                             wait_pods_running, wait_until)

from kubectl_safety.cluster.executor import Executor
from kubectl_safety.cluster.live import Connection
from kubectl_safety.model.pods import Pod
from tests.unit.cli_helpers import run_cli

NOW = "2026-11-22T12:00:00Z"
DUMP_KINDS = "nodes,pods,pdb,priorityclasses,replicasets,deployments,statefulsets,daemonsets,jobs,leases"
HEARTBEAT = re.compile(r"(heartbeat|last heartbeat) \d+[smhd]+( ago)?")


def explain(cluster, *args, snapshot=None):
    source = ["--snapshot", str(snapshot)] if snapshot else ["--kubeconfig", str(cluster.kubeconfig)]
    code, out, err = run_cli(["explain", *args, "--as-of", NOW, "-o", "json", *source])
    assert code == 0, err
    return json.loads(out)


def normalized(report):
    """Heartbeats move between two reads of a live cluster; everything else must not."""
    if isinstance(report, dict):
        return {k: normalized(v) for k, v in report.items() if k not in ("heartbeatAgeSeconds", "lastHeartbeatTime")}
    if isinstance(report, list):
        return [normalized(v) for v in report]
    return HEARTBEAT.sub("heartbeat", report) if isinstance(report, str) else report


def dump(cluster, path):
    """The cluster as `kubectl get ... -A -o yaml` writes it (the built kubectl)."""
    path.write_text(cluster.kubectl("get", DUMP_KINDS, "-A", "-o", "yaml").stdout)
    return path


def same_live_and_dump(cluster, tmp_path, *args, attempts=3):
    """Compare live and dump reports; retry when the cluster moved in between (other tests' cleanup)."""
    for _ in range(attempts):
        live = explain(cluster, *args)
        offline = explain(cluster, *args, snapshot=dump(cluster, tmp_path / "dump.yaml"))
        if normalized(live) == normalized(offline):
            return live
    assert normalized(live) == normalized(offline)


@pytest.fixture
def workloads(cluster, namespace, make_node):
    """A priority class, Burstable/Guaranteed/BestEffort pods on a node of their own, a PDB."""
    node = make_node(f"explain-{namespace[-6:]}", zone="zone-x", labels={"pool": namespace})["metadata"]["name"]
    klass = f"explain-{namespace[-6:]}"
    create(cluster, None, priority_class(klass, 5000))
    here = {"node_selector": {"pool": namespace}}
    create(cluster, namespace,
           deployment("web", 3, priority_class=klass, requests={"cpu": "100m", "memory": "64Mi"},
                      limits={"memory": "128Mi"}, **here),
           deployment("db", 1, requests={"cpu": "200m", "memory": "256Mi"},
                      limits={"cpu": "200m", "memory": "256Mi"}, **here),
           pod("scratch", **here),
           pdb("web", {"app": "web"}, min_available=3))
    wait_pods_running(cluster, namespace, count=5)
    wait_pdb_settled(cluster, namespace, "web", current_healthy=3, disruptions_allowed=0)
    yield {"node": node, "class": klass}
    cluster.kubectl("delete", "priorityclass", klass, "--ignore-not-found", check=False)


def pods_of(cluster, namespace, app):
    return [p for p in get_json(cluster, "pods", "-n", namespace, "-l", f"app={app}")["items"]]


def test_admission_resolves_priority_and_status_qos_agrees(cluster, namespace, workloads):
    expected_qos = {"web": "Burstable", "db": "Guaranteed", "scratch": "BestEffort"}
    for app, qos in expected_qos.items():
        raw = pods_of(cluster, namespace, app)[0]
        report = explain(cluster, "pod", raw["metadata"]["name"], "-n", namespace)
        assert report["qos"]["status"] == qos == report["qos"]["computed"]
        assert report["qos"]["matchesStatus"] is True
        if app == "web":
            assert raw["spec"]["priority"] == 5000  # written by the Priority admission plugin
            assert (report["priority"]["value"], report["priority"]["className"]) == (5000, workloads["class"])
            assert report["priority"]["source"] == "spec.priority"
            assert [b["name"] for b in report["pdbs"]] == ["web"]
            assert "PDB_NEVER_ALLOWS" in {f["code"] for f in report["findings"]}


@pytest.mark.parametrize("what", ["pod", "node", "priorities"])
def test_live_equals_dump_taken_with_kubectl(cluster, namespace, workloads, tmp_path, what):
    args = {"pod": ["pod", pods_of(cluster, namespace, "web")[0]["metadata"]["name"], "-n", namespace],
            "node": ["node", workloads["node"]],
            "priorities": ["priorities"]}[what]
    report = same_live_and_dump(cluster, tmp_path, *args)
    assert report["kind"] in ("PodExplanation", "NodeExplanation", "PriorityAudit")


def test_client_reports_a_real_pdb_refusal(cluster, namespace, workloads):
    """The Eviction API answers 429 for a PDB at its minimum; the executor says so, evicts nothing."""
    raw = pods_of(cluster, namespace, "web")[0]
    outcome = Executor(Connection(kubeconfig=str(cluster.kubeconfig))).evict(Pod(raw))
    assert (outcome.result, outcome.status) == ("pdb-blocked", 429)
    assert "disruption budget" in outcome.message.lower()
    assert raw["metadata"]["uid"] in {p["metadata"]["uid"] for p in pods_of(cluster, namespace, "web")}


def test_forbidden_names_verb_and_resource(cluster, namespace, workloads):
    raw = pods_of(cluster, namespace, "web")[0]
    code, _, err = run_cli(["explain", "pod", raw["metadata"]["name"], "-n", namespace,
                            "--kubeconfig", str(cluster.kubeconfig), "--as", "nobody"])
    assert code == 1 and len(err.strip().splitlines()) == 1
    assert 'cannot get resource "pods"' in err and "Forbidden" in err


def test_never_impersonates_unless_asked(cluster, namespace, workloads, audit):
    """Requests carry Impersonate-User only with --as (the tool never escalates by itself)."""
    name = pods_of(cluster, namespace, "web")[0]["metadata"]["name"]
    since = audit.now()
    explain(cluster, "pod", name, "-n", namespace)
    code, _, err = run_cli(["explain", "pod", name, "-n", namespace, "--kubeconfig", str(cluster.kubeconfig),
                            "--as", "alice", "--as-group", "system:masters"])
    assert code == 0, err

    def ours():
        entries = [e for e in audit.entries(since) if "kubectl-safety/" in e.user_agent]
        return entries if {e.impersonated_user for e in entries} >= {None, "alice"} else None

    entries = wait_until(ours, 20, "audit entries of both runs")
    assert {e.impersonated_user for e in entries} == {None, "alice"}


def test_a_ready_node_heartbeat_is_its_lease_renewal_not_its_status_update(cluster, make_node):
    """The kubelet renews its Lease every 10 s and writes the Ready condition's lastHeartbeatTime only every
    5 minutes: the heartbeat is the Lease's (as the node lifecycle controller reads it)."""
    name = make_node(f"beat-{uuid.uuid4().hex[:6]}", ready=False)["metadata"]["name"]  # not kwok's: we beat
    now = datetime.now(timezone.utc)
    stamp = (now - timedelta(seconds=106)).strftime("%Y-%m-%dT%H:%M:%SZ")
    ready = {"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "kubelet is posting ready status",
             "lastHeartbeatTime": stamp, "lastTransitionTime": stamp}
    cluster.kubectl("patch", f"node/{name}", "--subresource=status", "--type=strategic", "-p",
                    json.dumps({"status": {"conditions": [ready]}}))
    create(cluster, "kube-node-lease", {
        "apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": name},
        "spec": {"holderIdentity": name, "leaseDurationSeconds": 40,
                 "renewTime": now.strftime("%Y-%m-%dT%H:%M:%S.%fZ")}})
    try:
        code, out, err = run_cli(["explain", "node", name, "-o", "json", "--kubeconfig", str(cluster.kubeconfig)])
        assert code == 0, err
        state = json.loads(out)["state"]
        assert state["state"] == "Ready" and state["heartbeatAgeSeconds"] < 30, state  # not 106 s
        assert state["message"].endswith("ago (node Lease)"), state
        code, out, err = run_cli(["explain", "node", name, "--kubeconfig", str(cluster.kubeconfig)])
        assert "(node Lease)" in out, out
    finally:
        cluster.kubectl("delete", "lease", name, "-n", "kube-node-lease", "--ignore-not-found", check=False)
