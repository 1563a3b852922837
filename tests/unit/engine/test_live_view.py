"""Plans from watches (engine/live_view.py): once the shared state is listed, planning a batch again
costs the batch's own reads and none of the cluster's, whatever the cluster's size; a plan made
right after a cordon sees it."""

import time
from datetime import datetime, timezone

import pytest

from kubectl_safety.cluster.scopes import cluster_scope, drain_scope, node_queries
from kubectl_safety.engine import live_view, watch
from kubectl_safety.engine.live_view import LiveView, Seen
from kubectl_safety.engine.watch import WatchGroup
from tests.unit.fake_api import FakeApi, node, pod

NOW = datetime(2026, 11, 22, tzinfo=timezone.utc)


def budget(name, app):
    return {"metadata": {"name": name, "namespace": "ns"}, "spec": {"selector": {"matchLabels": {"app": app}}},
            "status": {"disruptionsAllowed": 1}}


def cluster(other_nodes):
    """The target node n1 with 3 pods under a PDB, and ``other_nodes`` nodes with 2 pods and a PDB each."""
    api = FakeApi([pod(f"a{i}", "n1") for i in range(3)], nodes=[node("n1")], pdbs=[budget("a", "a")])
    for i in range(other_nodes):
        api.put("nodes", node(f"x{i}"))
        api.put("poddisruptionbudgets", budget(f"x{i}", f"x{i}"))
        for j in range(2):
            api.put("pods", pod(f"x{i}-{j}", f"x{i}", owner=f"rs-x{i}", labels={"app": f"x{i}"}))
    return api


def replan_cost(other_nodes, shared, per_batch):
    """(requests, objects read) for planning n1's batch, cordoning it, and planning it again."""
    api = cluster(other_nodes)
    with LiveView(api, shared) as view, WatchGroup(api) as group:
        before = len(api.requests), api.delivered
        view.snapshot(NOW, per_batch, group)
        api.request("PATCH", "/api/v1/nodes/n1", body={"spec": {"unschedulable": True}})
        cordoned = len(api.requests)
        snap = view.snapshot(NOW, per_batch, group, cordoned=["n1"])
        assert snap.node("n1").unschedulable  # the plan sees the cordon it follows
        assert len(snap.pods_on("n1")) == 3
        assert len(api.requests) == cordoned  # the re-plan itself: no request at all
        return len(api.requests) - before[0], api.delivered - before[1]


@pytest.mark.parametrize("scope, shared, per_batch", [
    ("node-scoped (drain --no-capacity)", drain_scope([]), node_queries(["n1"])),
    ("capacity-aware (the whole cluster, listed once per command)", cluster_scope(), []),
])
def test_replanning_a_batch_costs_the_same_whatever_the_cluster_size(scope, shared, per_batch):
    small, large = replan_cost(5, shared, per_batch), replan_cost(150, shared, per_batch)
    assert small == large, scope


def test_a_cordon_the_watch_has_not_shown_yet_is_read_again_before_the_plan(monkeypatch):
    api = cluster(0)
    monkeypatch.setattr(live_view, "SETTLE_SECONDS", 0.2)
    with LiveView(api, drain_scope(["n1"])) as view:
        nodes = next(w for w in view.shared if w.resource == "nodes")
        nodes.stop()  # its stream ends: the cordon never arrives by the watch
        api.request("PATCH", "/api/v1/nodes/n1", body={"spec": {"unschedulable": True}})
        assert view.snapshot(NOW, cordoned=["n1"]).node("n1").unschedulable
        assert nodes.lists == 2


def test_a_resource_rbac_lets_us_list_but_not_watch_is_listed_again_for_each_plan():
    api = cluster(0)
    api.forbid_watch.add("poddisruptionbudgets")
    with LiveView(api, drain_scope(["n1"])) as view:
        budgets = next(w for w in view.shared if w.resource == "poddisruptionbudgets")
        view.group.wait_for(lambda: budgets.forbidden, time.monotonic() + 5)
        api.put("poddisruptionbudgets", budget("b", "b"))
        snap = view.snapshot(NOW)
        assert {b.name for b in snap.pdbs} == {"a", "b"}  # current, by a LIST
        assert budgets.lists == 2 and budgets.watches == 1  # the forbidden WATCH is not retried


def stale(view, resource):
    """The view's watch of ``resource``, stopped: what happens next never arrives by it."""
    w = next(w for w in view.shared if w.resource == resource)
    w.stop()
    return w


def test_the_next_batch_is_planned_on_the_uncordon_and_the_evictions_of_the_batch_before(monkeypatch):
    api = cluster(0)
    api.request("PATCH", "/api/v1/nodes/n1", body={"spec": {"unschedulable": True}})
    monkeypatch.setattr(live_view, "SETTLE_SECONDS", 0.2)
    with LiveView(api, cluster_scope()) as view:
        nodes, pods = stale(view, "nodes"), stale(view, "pods")
        seen = Seen()
        status, node = api.request("PATCH", "/api/v1/nodes/n1", body={"spec": {"unschedulable": False}})
        seen.written("nodes", "/n1", node["metadata"]["resourceVersion"])
        gone = api.store["pods"]["ns/a0"]
        api.delete("pods", gone)
        seen.removed("pods", "ns/a0", gone["metadata"]["uid"])
        snap = view.snapshot(NOW, seen=seen)
        assert not snap.node("n1").unschedulable  # the uncordon the watch had not shown
        assert {p.name for p in snap.pods_on("n1")} == {"a1", "a2"}  # the evicted pod gone
        assert nodes.lists == pods.lists == 2


def test_what_the_watches_show_already_is_not_listed_again():
    api = cluster(3)
    with LiveView(api, cluster_scope()) as view:
        seen = Seen()
        status, node = api.request("PATCH", "/api/v1/nodes/x1", body={"spec": {"unschedulable": True}})
        seen.written("nodes", "/x1", node["metadata"]["resourceVersion"])
        api.delete("pods", api.store["pods"]["ns/x0-0"])
        seen.removed("pods", "ns/x0-0", "no-such-uid")
        listed = len([r for r in api.requests if r[0] == "LIST"])
        assert view.snapshot(NOW, seen=seen).node("x1").unschedulable
        assert len([r for r in api.requests if r[0] == "LIST"]) == listed


@pytest.mark.parametrize("version, than, newer_or_same", [
    ("10", "9", True),  # ordered as numbers, not as text
    ("9", "10", False),
    ("42", "42", True),
    ("", "1", False),  # none yet
    ("abc", "abc", True),  # not well-formed: only equality tells
    ("abd", "abc", False),
    ("012", "11", False),
])
def test_resource_versions_are_compared_as_the_api_machinery_does(version, than, newer_or_same):
    assert watch.newer_or_same(version, than) is newer_or_same
