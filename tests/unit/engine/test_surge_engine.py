"""The engine's surges against the in-memory API: a count is raised only as planned, only this drain's
record is taken as its own, and a surge that stops early leaves nothing raised or tainted."""

import json
import time
from types import SimpleNamespace

from kubectl_safety.analysis.plans.drain import Removal, Surge, SurgeMechanism
from kubectl_safety.analysis.surge import ANNOTATION, TAINT
from kubectl_safety.engine.drainer import Drainer
from kubectl_safety.engine.surge import Surger
from kubectl_safety.engine.watch import WatchGroup
from tests.unit.fake_api import FakeApi, entry, node, pod


def deployment(name="web", replicas=1, record=None):
    annotations = {ANNOTATION: json.dumps(record)} if record else {}
    return {"metadata": {"name": name, "namespace": "ns", "annotations": annotations},
            "spec": {"replicas": replicas}, "status": {"replicas": replicas}}


def surge(name="web", pods=("a",), from_replicas=1, to_replicas=2, removal=Removal.EVICT, **kw):
    return Surge(kind="Deployment", namespace="ns", name=name, pods=pods, uids=tuple(f"uid-{p}" for p in pods),
                 from_replicas=from_replicas, to_replicas=to_replicas, mechanism=SurgeMechanism.SCALE,
                 removal=removal, hpa=None, hpa_min_from=None, hpa_min_to=None, pdb=None, selector="app=a",
                 expected_seconds=1, **{"resumed": False, **kw})


def run(api, surges, pods=(), nodes=("n1",), seconds=2):
    drainer = Drainer(api)
    plan = SimpleNamespace(surge=SimpleNamespace(surges=tuple(surges)), pods=[entry(p) for p in pods])
    with WatchGroup(api) as group:
        try:
            return Surger(drainer, group, nodes).run(plan, deadline=time.monotonic() + seconds)
        finally:
            api.closed = True


def stored(api, name="web"):
    return api.store["deployments"][f"ns/{name}"]


def test_a_count_changed_since_the_plan_is_not_overwritten():
    api = FakeApi([pod("a", "n1")], [node("n1"), node("n2")])
    api.put("deployments", deployment(replicas=5))
    result = run(api, [surge()], [api.store["pods"]["ns/a"]])
    assert result.status == "failed" and "changed since the plan" in result.message
    assert stored(api)["spec"]["replicas"] == 5 and ANNOTATION not in stored(api)["metadata"]["annotations"]



def test_a_surge_recorded_by_a_drain_of_other_nodes_is_not_taken_as_this_runs():
    api = FakeApi([pod("a", "n1")], [node("n1"), node("n9")])
    api.put("deployments", deployment(replicas=2, record={"replicas": 1, "to": 2, "nodes": ["n9"]}))
    result = run(api, [surge()], [api.store["pods"]["ns/a"]])
    assert result.status == "failed" and "surged by a drain of n9" in result.message
    assert json.loads(stored(api)["metadata"]["annotations"][ANNOTATION])["nodes"] == ["n9"]



def test_a_restore_retried_after_a_conflict_reports_a_count_changed_by_others_once():
    api = FakeApi([], [node("n1")])
    api.put("deployments", deployment(replicas=7, record={"replicas": 1, "to": 2, "nodes": ["n1"]}))
    api.conflicts["deployments"] = 1
    result = SimpleNamespace(changed_by_others=[], restored=[])
    Surger(Drainer(api), None, ["n1"])._restore(surge(), result)
    assert result.changed_by_others == ["Deployment ns/web: replicas 7, not 2 as the surge set them: left as they are"]



def test_a_taint_that_fails_on_the_second_node_is_lifted_from_the_first():
    api = FakeApi([pod("a", "n1")], [node("n1")])  # n2 cannot be read
    api.put("deployments", deployment())
    result = run(api, [surge(tolerates_cordon=True)], [api.store["pods"]["ns/a"]], nodes=("n1", "n2"))
    assert result.status == "failed"
    assert not [t for t in api.store["nodes"]["/n1"]["spec"].get("taints") or () if t["key"] == TAINT]



def test_a_failure_before_any_old_pod_goes_restores_the_counts_this_run_raised():
    api = FakeApi([pod("a", "n1")], [node("n1"), node("n2")])
    api.put("deployments", deployment())  # ns/gone cannot be read: the second surge fails
    result = run(api, [surge(), surge("gone", pods=())], [api.store["pods"]["ns/a"]])
    assert result.status == "failed"
    assert stored(api)["spec"]["replicas"] == 1 and ANNOTATION not in stored(api)["metadata"]["annotations"]



def test_a_workload_with_a_crash_looping_replica_waits_for_the_ready_count_it_had():
    """Two replicas, one never Ready: one surge pod Ready on a node that stays is what it had."""
    a, b, c = pod("a", "n1"), pod("b", "n2", ready=False), pod("c", "n2")
    api = FakeApi([a, b, c], [node("n1"), node("n2")])
    api.put("deployments", deployment(replicas=2))
    result = run(api, [surge(from_replicas=2, to_replicas=3, ready_before=1)], [a], seconds=5)
    assert result.status == "done", result.message
    assert stored(api)["spec"]["replicas"] == 2 and ANNOTATION not in stored(api)["metadata"]["annotations"]


class RanksNotReadyFirst(FakeApi):
    """The ReplicaSet controller on a scale-back to ``count``: it removes the not-Ready pod ``b`` first."""

    def __init__(self, *args, count, **kwargs):
        super().__init__(*args, **kwargs)
        self.count = count

    def _workload(self, method, resource, key, body):
        status, obj = super()._workload(method, resource, key, body)
        if method == "PATCH" and ((body or {}).get("spec") or {}).get("replicas") == self.count:
            self.delete("pods", self.store["pods"]["ns/b"])
        return status, obj


def test_a_scale_back_that_removed_a_not_ready_sibling_says_which_pods_went_and_which_stayed():
    a, b, c = pod("a", "n1"), pod("b", "n2", ready=False), pod("c", "n2")  # c: the surge pod, Ready
    api = RanksNotReadyFirst([a, b, c], [node("n1"), node("n2")], count=2)
    api.put("deployments", deployment(replicas=2))
    result = run(api, [surge(from_replicas=2, to_replicas=3, ready_before=1, removal=Removal.DELETION_COST)],
                 [api.store["pods"]["ns/a"]], seconds=5)
    assert result.status == "failed"
    assert "ns/b went, ns/a stayed on the drained nodes" in result.message, result.message
    assert result.removed == []


def test_a_restored_deployment_leaves_no_record_on_the_replicaset_the_controller_copied_it_to():
    api = FakeApi([pod("a", "n1"), pod("b", "n2")], [node("n1"), node("n2")])
    api.put("deployments", deployment())
    owner = {"kind": "Deployment", "name": "web", "controller": True}
    copy = {ANNOTATION: json.dumps({"replicas": 1, "to": 2, "nodes": ["n1"]}), "other": "kept"}
    api.put("replicasets", {"metadata": {"name": "web-1", "namespace": "ns", "labels": {"app": "a"},
                                         "ownerReferences": [owner], "annotations": copy}})
    result = run(api, [surge()], [api.store["pods"]["ns/a"]], seconds=5)
    assert result.status == "done", result.message
    assert api.store["replicasets"]["ns/web-1"]["metadata"]["annotations"] == {"other": "kept"}


def taints(api, name="n1"):
    return [t["key"] for t in api.store["nodes"][f"/{name}"]["spec"].get("taints") or ()]


def test_a_stopped_surge_of_a_workload_tolerating_the_cordon_keeps_the_taint_until_a_rerun_finishes_it():
    """Stopped while its surge pod is not Ready: the count stays raised and the drained node tainted (its
    pending surge pod cannot start there); the rerun finishes, restores the count and lifts the taint."""
    api = FakeApi([pod("a", "n1")], [node("n1"), node("n2")])
    api.put("deployments", deployment())
    stopped = run(api, [surge(tolerates_cordon=True)], [api.store["pods"]["ns/a"]], seconds=1)
    assert stopped.status == "timeout" and f"n1 keeps the taint {TAINT}:NoSchedule" in stopped.message
    assert taints(api) == [TAINT] and stored(api)["spec"]["replicas"] == 2
    tainted = [e for e in api.events if e["reason"] == "Tainted"]  # our evidence on the node: why node names us
    assert [(e["regarding"]["name"], e["action"]) for e in tainted] == [("n1", "Taint")]
    assert f"tainted {TAINT}:NoSchedule while surge pods start" in tainted[0]["note"]
    api.closed = False
    api.put("pods", pod("b", "n2"))  # the surge pod, Ready on the node that stays
    finished = run(api, [surge(tolerates_cordon=True)], [api.store["pods"]["ns/a"]], seconds=5)  # resumed
    assert finished.status == "done", finished.message
    assert taints(api) == [] and stored(api)["spec"]["replicas"] == 1
    assert ANNOTATION not in stored(api)["metadata"]["annotations"]


def test_a_resumed_surge_whose_surge_pod_started_on_the_drained_node_sends_it_elsewhere_first():
    """The taint was lifted by hand: web's surge pod b started beside the old pod a on n1. The rerun
    evicts b first (its controller starts it again on n2, the node tainted once more), then a."""
    a, b = pod("a", "n1"), pod("b", "n1")
    a["metadata"]["creationTimestamp"], b["metadata"]["creationTimestamp"] = "2026-01-01T00:00:00Z", \
        "2026-01-01T00:05:00Z"

    def evicted(api, p):
        FakeApi.remove(api, p)
        if p["metadata"]["name"] == "b":
            api.put("pods", pod("c", "n2"))

    api = FakeApi([a, b], [node("n1"), node("n2")], on_evict=evicted)
    web = deployment(replicas=2, record={"replicas": 1, "to": 2, "nodes": ["n1"]})
    web["status"]["replicas"] = 1  # as the controller will report it once scaled back: settled at once
    api.put("deployments", web)
    result = run(api, [surge(pods=("a", "b"), tolerates_cordon=True, resumed=True)], [a, b], seconds=5)
    assert result.status == "done", result.message
    assert [p.rsplit("/", 2)[-2] for p in api.evictions()] == ["b", "a"]
    assert stored(api)["spec"]["replicas"] == 1 and taints(api) == []
