"""`kubectl safety snapshot` on the control plane: a file that says what it holds (the kinds read,
empty ones too, the kinds forbidden), read back by every command with the live run's verdicts."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest
from cluster_helpers import create, pdb, pool_nodes, pool_web, wait_pdb_settled, wait_pods_running

from kubectl_safety.cluster.live import RESOURCES
from kubectl_safety.cluster.scopes import engine_scope, snapshot_scope
from kubectl_safety.model.meta import parse_time
from tests.unit.cli_helpers import run_cli

NOW = "2026-11-22T12:00:00Z"


@pytest.fixture
def pool(cluster, namespace, make_node):
    """Two nodes of the test's own pool, web (2 replicas, one per node) and a PDB that never allows."""
    names = pool_nodes(make_node, namespace, 2)
    create(cluster, namespace, pool_web(2, namespace), pdb("web", {"app": "web"}, min_available=2))
    wait_pods_running(cluster, namespace, count=2)
    wait_pdb_settled(cluster, namespace, "web", current_healthy=2, disruptions_allowed=0)
    return names


def snapshot(cluster, path, *flags):
    code, out, err = run_cli(["snapshot", "-o", str(path), "--kubeconfig", str(cluster.kubeconfig), *flags])
    assert code == 0, err
    document = json.loads(path.read_text())
    return document["items"][0], document["items"][1:], out, err


def verdicts(args, source):
    code, out, err = run_cli(args + ["-o", "json", *source])
    assert code in (0, 3), err
    report = json.loads(out)
    return code, {k: v for k, v in report.items() if k not in ("source", "context")}


def test_a_snapshot_reads_back_to_the_live_verdicts(cluster, namespace, pool, tmp_path):
    live = ["--kubeconfig", str(cluster.kubeconfig)]
    offline = ["--snapshot", str(tmp_path / "cluster.json")]
    commands = [["check", "-l", f"pool={namespace}"], ["drain", pool[0], "--dry-run", "--ignore-daemonsets"],
                ["rollout", "-l", f"pool={namespace}", "--dry-run", "--ignore-daemonsets"]]
    for _ in range(3):  # the session's other tests may change the cluster between two reads: try again
        before = [verdicts(c + ["--as-of", NOW], live) for c in commands]
        snapshot(cluster, tmp_path / "cluster.json")
        after = [verdicts(c + ["--as-of", NOW], offline) for c in commands]
        if before == after:
            break
    assert before == after
    assert before[0][0] == 3 and "PDB_NEVER_ALLOWS" in json.dumps(before[0][1])


def test_a_snapshot_records_the_kinds_it_read_and_when(cluster, namespace, pool, tmp_path):
    started = datetime.now(timezone.utc).replace(microsecond=0)
    record, items, out, _ = snapshot(cluster, tmp_path / "cluster.json")
    ended = datetime.now(timezone.utc)
    kinds = {i["kind"] for i in items}
    # the upgrade engines' groups (--engine) are add-ons: a cluster that does not serve them holds none (read, empty)
    engines = {q.resource for q in engine_scope()}
    assert record["kind"] == "Snapshot" and record["unread"] == {} and engines <= set(record["read"])
    assert sorted(record["read"]) == sorted({q.resource for q in snapshot_scope()})
    assert "horizontalpodautoscalers" in record["read"] and "HorizontalPodAutoscaler" not in kinds  # read, empty
    assert record["serverVersion"].startswith("v1.")
    assert started <= parse_time(record["metadata"]["creationTimestamp"]) <= ended
    assert out.startswith(f"{tmp_path / 'cluster.json'}: {len(items)} object(s) of {len(record['read'])} kind(s) read")
    # no --as-of: the snapshot's own time is "now"
    code, report = verdicts(["check", "-l", f"pool={namespace}"], ["--snapshot", str(tmp_path / "cluster.json")])
    assert parse_time(report["takenAt"]) == parse_time(record["metadata"]["creationTimestamp"])
    # what was read and found empty is empty: no kind is unknown
    assert "SNAPSHOT_INCOMPLETE" not in json.dumps(report)


def test_a_snapshot_holds_no_secret_nor_credential(cluster, namespace, pool, tmp_path):
    cluster.kubectl("create", "secret", "generic", "s3cret", "-n", namespace, "--from-literal=password=hunter2-xyz")
    record, items, _, _ = snapshot(cluster, tmp_path / "cluster.json")
    text = (tmp_path / "cluster.json").read_text()
    assert "Secret" not in {i["kind"] for i in items} and "hunter2-xyz" not in text
    config = json.loads(cluster.kubectl("config", "view", "--raw", "--minify", "-o", "json").stdout)
    user = config["users"][0]["user"]
    for secret in (user.get("client-key-data"), user.get("client-certificate-data"), user.get("token")):
        assert not secret or secret[:40] not in text


def test_a_kind_the_user_may_not_read_is_recorded_and_the_verdict_is_not_safe(cluster, namespace, pool, tmp_path):
    """A least-privilege user who may read everything but PDBs: the snapshot says PDBs are forbidden,
    and a verdict read from it names them (SNAPSHOT_INCOMPLETE), as a live run names what it could not read."""
    user = f"snapshot-reader-{namespace[-6:]}"
    groups = {}
    for q in snapshot_scope():
        if q.resource != "poddisruptionbudgets":
            prefix = RESOURCES[q.resource][0]
            groups.setdefault("" if prefix == "/api/v1" else prefix.split("/")[2], []).append(q.resource)
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": user},
            "rules": [{"apiGroups": [g], "resources": r, "verbs": ["list"]} for g, r in sorted(groups.items())]}
    binding = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": user},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": user},
               "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}]}
    create(cluster, None, role, binding)
    try:
        record, items, out, err = snapshot(cluster, tmp_path / "cluster.json", "--as", user)
    finally:
        cluster.kubectl("delete", "clusterrolebinding,clusterrole", user, "--ignore-not-found", check=False)
    engines = {q.resource for q in engine_scope()}
    assert {r: why for r, why in record["unread"].items() if r not in engines} == {"poddisruptionbudgets": "forbidden"}
    assert "poddisruptionbudgets" not in record["read"] and "PodDisruptionBudget" not in {i["kind"] for i in items}
    assert "forbidden" in err and "poddisruptionbudgets (forbidden)" in out
    code, report = verdicts(["drain", pool[0], "--dry-run", "--ignore-daemonsets"],
                            ["--snapshot", str(tmp_path / "cluster.json")])
    risk = next(r for r in report["risks"] if r["code"] == "SNAPSHOT_INCOMPLETE")
    assert code == 3 and "poddisruptionbudgets (forbidden)" in risk["message"]
