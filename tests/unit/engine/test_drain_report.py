"""The DrainReport of real drains against the in-memory API: each scenario publishes (``-o json``) and
renders (text) exactly what ``golden/drain-reports.json`` pins (``elapsedSeconds`` zeroed: it varies),
and exits with its code."""

import json
import os
import time
from dataclasses import replace
from types import SimpleNamespace

import pytest

from kubectl_safety.analysis.drain import DrainOptions
from kubectl_safety.analysis.plans.common import Action, Reason, Severity
from kubectl_safety.analysis.plans.drain import CapacityCheck, DrainPlan, DrainedNode, Losses, Removal, Surge, SurgeMechanism, SurgePlan, Wave
from tests.unit.fake_api import FakeApi, entry, node, pod

GOLDEN = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "golden", "drain-reports.json")


def plan_of(api, nodes, actions=None, reasons=None, surges=(), returns=()):
    """A SAFE DrainPlan of the pods ``api`` holds on ``nodes``: ``actions`` {pod: (action, pdb)}, ``reasons``
    {pod: (Reason, ...)}; ``returns``: the pods whose replacement comes back to the node."""
    surged = {k for s in surges for k in s.keys}
    actions, reasons = actions or {}, reasons or {}
    pods = sorted((p for p in api.store["pods"].values() if p["spec"]["nodeName"] in nodes),
                  key=lambda p: p["metadata"]["name"])
    entries = tuple(replace(entry(p, *actions.get(p["metadata"]["name"], ("evict",))),
                            reasons=reasons.get(p["metadata"]["name"], ()), returns=p["metadata"]["name"] in returns,
                            surged=(p["metadata"]["namespace"], p["metadata"]["name"]) in surged) for p in pods)
    moving = tuple(e.ref for e in entries if e.action is not Action.BLOCKED)
    return DrainPlan(
        safe=True, options=DrainOptions(ignore_daemonsets=True, surge=bool(surges)),
        nodes=tuple(DrainedNode(n, True, False, sum(e.node == n for e in entries), ()) for n in nodes),
        pods=entries, pdbs=(), capacity=CapacityCheck(False, None), waves=(Wave(1, moving, (), 30, 5, 35),),
        warnings=(), taken_at="2026-11-22T09:00:00Z", risks=(), losses=Losses((), ()),
        surge=SurgePlan(tuple(surges), {"pods": len(surges)}) if surges else None)


def drained():
    api = FakeApi([pod("a", "n1"), pod("b", "n1")], [node("n1")])
    return api, ["n1"], plan_of(api, ["n1"]), {}


def blocked():
    api = FakeApi([pod("a", "n1"), pod("bare", "n1", owner=None)], [node("n1")])
    why = (Reason("UNMANAGED", Severity.ERROR, "not managed by a controller: needs --force"),)
    return api, ["n1"], plan_of(api, ["n1"], {"bare": ("blocked",)}, {"bare": why}), {}


def timeout():
    budget = {"metadata": {"name": "db", "namespace": "ns"}, "spec": {"selector": {"matchLabels": {"app": "db"}}},
              "status": {"disruptionsAllowed": 0}}
    api = FakeApi([pod("a", "n1"), pod("db-0", "n1", labels={"app": "db"})], [node("n1")], pdbs=[budget])
    why = {"db-0": (Reason("PDB_WAIT", Severity.WARNING, "ns/db allows 0 disruptions now"),)}
    return api, ["n1"], plan_of(api, ["n1"], {"db-0": ("wait", "ns/db")}, why), {"timeout": 1}


def cordon_refused():
    api = FakeApi([pod("a", "n1"), pod("b", "n2")], [node("n1")])  # n2 cannot be read: its cordon fails
    return api, ["n1", "n2"], plan_of(api, ["n1", "n2"]), {}


def appeared():
    def comes_back(api, p):  # the replacement tolerates the cordon: back on the drained node
        api.delete("pods", p)
        api.put("pods", pod(p["metadata"]["name"] + "-new", "n1", owner="sticky"))

    api = FakeApi([pod("s0", "n1", owner="sticky"), pod("s1", "n1", owner="sticky")], [node("n1")],
                  on_evict=comes_back)
    returns = (Reason("REPLACEMENT_RETURNS_TO_NODE", Severity.WARNING, "tolerates the cordon"),)
    return api, ["n1"], plan_of(api, ["n1"], reasons={"s0": returns, "s1": returns}, returns=("s0", "s1")), {}


def surged():
    a, c = pod("a", "n1"), pod("c", "n2")  # c: a Ready pod of the workload on a node that stays
    api = FakeApi([a, c, pod("other", "n1", owner="rs-b")], [node("n1"), node("n2")])
    api.put("deployments", {"metadata": {"name": "web", "namespace": "ns", "annotations": {}},
                            "spec": {"replicas": 2}, "status": {"replicas": 2}})
    web = Surge(kind="Deployment", namespace="ns", name="web", pods=("a",), uids=("uid-a",), from_replicas=2,
                to_replicas=3, mechanism=SurgeMechanism.SCALE, removal=Removal.EVICT, hpa=None, hpa_min_from=None,
                hpa_min_to=None, pdb=None, selector="app=a", expected_seconds=1, resumed=False, ready_before=1)
    return api, ["n1"], plan_of(api, ["n1"], surges=[web]), {}


SCENARIOS = {  # name: (the scenario, drain's exit code)
    "drained": (drained, 0), "blocked": (blocked, 4), "timeout": (timeout, 4), "cordon-refused": (cordon_refused, 1),
    "appeared": (appeared, 0), "surge": (surged, 0)}


def drain_report(api, nodes, plan, timeout=0):
    """The DrainReport of a real drain of ``nodes`` (the plan re-planned once cordoned is ``plan``)."""
    from kubectl_safety.engine.drain import drain_nodes
    from kubectl_safety.engine.drainer import Drainer

    try:
        return drain_nodes(Drainer(api), nodes, SimpleNamespace(replan=lambda group: plan), plan=plan,
                           timeout=timeout)
    finally:
        api.closed = True


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_drain_report_publishes_and_exits_as_pinned(name):
    from kubectl_safety.cli.published import published
    from kubectl_safety.cli.render import to_json
    from kubectl_safety.cli.views.drain import drain_code
    from kubectl_safety.cli.views.drain import render_report

    with open(GOLDEN) as f:
        pinned = json.load(f)
    scenario, code = SCENARIOS[name]
    api, nodes, plan, kwargs = scenario()
    started = time.monotonic()
    report = drain_report(api, nodes, plan, **kwargs)
    assert time.monotonic() - started < 10
    data = dict(published(report), elapsedSeconds=0)
    assert {"json": to_json(data), "text": render_report(data)} == pinned[name]
    assert drain_code(report) == code
