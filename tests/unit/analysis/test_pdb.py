"""PDB arithmetic as the disruption controller does it."""

import pytest

from kubectl_safety.analysis.budgets import budget, never_allows, scaled
from kubectl_safety.model.policy import PodDisruptionBudget
from tests.builders import make_pdb, make_pod, make_workload, snapshot


@pytest.mark.parametrize("value,total,expected", [(2, 5, 2), ("50%", 3, 2), ("10%", 5, 1), ("0%", 5, 0), ("100%", 3, 3)])
def test_scaled_rounds_up(value, total, expected):
    assert scaled(value, total) == expected


def _world(replicas, ready, pdb):
    deploy = make_workload("Deployment", "web", replicas=replicas)
    rs = make_workload("ReplicaSet", "rs", replicas=replicas, labels={"app": "web"}, owner=("Deployment", "web"))
    pods = [make_pod(f"web-{i}", labels={"app": "web"}, ready=i < ready) for i in range(replicas)]
    return snapshot(deploy, rs, pdb, *pods)


CASES = [
    ("minAvailable int", dict(min_available=2), 3, 3, 2, 1),
    ("minAvailable with unready pod", dict(min_available=2), 3, 2, 2, 0),
    ("maxUnavailable percent of replicas", dict(max_unavailable="50%"), 3, 3, 1, 2),
    ("minAvailable percent", dict(min_available="50%"), 3, 3, 2, 1),
    ("maxUnavailable zero", dict(max_unavailable=0), 3, 3, 3, 0),
]


@pytest.mark.parametrize("spec,replicas,ready,desired,allowed", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_budget_recomputed(spec, replicas, ready, desired, allowed):
    pdb = make_pdb("web", **spec)
    snap = _world(replicas, ready, pdb)
    b = budget(PodDisruptionBudget(snap.pdbs[0].raw), snap)
    assert (b["desiredHealthy"], b["disruptionsAllowed"]) == (desired, allowed)


@pytest.mark.parametrize("spec,replicas,blocks", [
    (dict(min_available=3), 3, True), (dict(min_available=2), 3, False), (dict(max_unavailable=0), 3, True),
    (dict(min_available="100%"), 2, True), (dict(max_unavailable="10%"), 5, False), (dict(min_available=1), 1, True),
], ids=["minAvailable equals replicas", "room for one", "maxUnavailable 0", "100 percent", "10 percent rounds up to 1", "issue 66811 single replica"])
def test_never_allows(spec, replicas, blocks):
    snap = _world(replicas, replicas, make_pdb("web", **spec))
    assert bool(never_allows(snap.pdbs[0], snap)) is blocks


def test_policy_v1_selector_semantics():
    snap = snapshot(make_pdb("all", selector={}), make_pod("a"), make_pod("b", namespace="other"))
    assert [b.name for b in snap.pdbs_for(snap.pod("default", "a"))] == ["all"]
    assert snap.pdbs_for(snap.pod("other", "b")) == []


NEVER_CASES = [
    ("minAvailable equals replicas", dict(min_available=3), 3, True),
    ("room for one", dict(min_available=2), 3, False),
    ("maxUnavailable 0", dict(max_unavailable=0), 3, True),
    ("100 percent", dict(min_available="100%"), 2, True),
    ("10 percent rounds up to 1", dict(max_unavailable="10%"), 5, False),
]


@pytest.mark.parametrize("spec,replicas,blocks", [c[1:] for c in NEVER_CASES], ids=[c[0] for c in NEVER_CASES])
def test_never_allows_from_status_on_a_node_scoped_snapshot(spec, replicas, blocks):
    """Without every pod of the namespace, the status (as the controller wrote it) decides, the same way."""
    full = _world(replicas, replicas, make_pdb("web", **spec))
    status = budget(full.pdbs[0], full)
    pdb = make_pdb("web", **spec, allowed=status["disruptionsAllowed"], healthy=status["healthyPods"],
                   desired=status["desiredHealthy"], expected=status["expectedPods"])
    scoped = _world(replicas, replicas, pdb)
    scoped = scoped.replace(pods=scoped.pods[:1], complete_pod_namespaces=frozenset())
    assert bool(never_allows(scoped.pdbs[0], scoped)) is blocks
    assert budget(scoped.pdbs[0], scoped)["matchingPods"] is None


def _job_world(pdb, kind="Job", api="batch/v1"):
    ref = {"apiVersion": api, "kind": kind, "name": "batch", "uid": "uid-batch", "controller": True}
    pods = [make_pod(f"b-{i}", labels={"app": "batch"}, owner=None, meta={"ownerReferences": [ref]}) for i in range(3)]
    return snapshot(make_workload(kind, "batch", labels={"app": "batch"}), pdb, *pods)


@pytest.mark.parametrize("spec,kind,api", [
    (dict(max_unavailable=1), "Job", "batch/v1"), (dict(min_available="50%"), "Job", "batch/v1"),
    (dict(max_unavailable="30%"), "DaemonSet", "apps/v1")],
    ids=["job maxUnavailable", "job minAvailable percent", "daemonset maxUnavailable percent"])
def test_pdb_over_pods_whose_owner_has_no_scale_subresource_never_allows(spec, kind, api):
    """The disruption controller fails safe (SyncFailed, 0 allowed): evictions are refused forever."""
    snap = _job_world(make_pdb("batch", selector={"app": "batch"}, allowed=1, **spec), kind, api)
    b = budget(snap.pdbs[0], snap)
    assert b["disruptionsAllowed"] == 0 and "does not implement the scale subresource" in b["syncFailed"]
    assert "SyncFailed" in never_allows(snap.pdbs[0], snap)


def test_pdb_over_job_pods_with_integer_min_available_is_computed():
    snap = _job_world(make_pdb("batch", selector={"app": "batch"}, min_available=1))
    assert (budget(snap.pdbs[0], snap)["disruptionsAllowed"], never_allows(snap.pdbs[0], snap)) == (2, None)


def test_pdb_max_unavailable_over_bare_pods_never_allows():
    """Pods without a controller are skipped: expectedPods 0, so 0 allowed whatever maxUnavailable says."""
    pods = [make_pod(f"bare-{i}", labels={"app": "bare"}, owner=None) for i in range(2)]
    snap = snapshot(make_pdb("bare", selector={"app": "bare"}, max_unavailable=1), *pods)
    assert budget(snap.pdbs[0], snap)["disruptionsAllowed"] == 0
    assert "no controller" in never_allows(snap.pdbs[0], snap)


def test_pdb_status_sync_failed_never_allows_on_a_node_scoped_read():
    raw = make_pdb("batch", selector={"app": "batch"}, max_unavailable=1)
    raw["status"]["conditions"] = [{"type": "DisruptionAllowed", "status": "False", "reason": "SyncFailed",
                                    "message": "jobs.batch does not implement the scale subresource"}]
    snap = snapshot(raw).replace(complete_pod_namespaces=())
    assert "SyncFailed" in never_allows(snap.pdbs[0], snap)


def test_expired_disrupted_pod_entry_counts_as_healthy_again():
    """disruptedPods entries older than the controller's 2-minute DeletionTimeout no longer count."""
    pdb = make_pdb("web", min_available=1, disrupted={"web-0": "2026-11-22T08:00:00Z", "web-1": "2026-11-22T08:59:30Z"})
    snap = _world(3, 3, pdb)
    assert budget(snap.pdbs[0], snap)["healthyPods"] == 2


def test_pdb_integer_min_available_over_a_bare_pod_never_allows():
    """Found by the live fuzzer: minAvailable 1 over one pod without a controller refuses forever."""
    snap = snapshot(make_pdb("solo", selector={"app": "solo"}, min_available=1),
                    make_pod("solo", labels={"app": "solo"}, owner=None))
    assert "no pod may ever be evicted" in never_allows(snap.pdbs[0], snap)
