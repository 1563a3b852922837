"""The typed plans: frozen, enums for actions and codes, read by attribute downstream, and published
as the shipped schema says only by the serializer at the output edge."""

import dataclasses
import json

import pytest

from kubectl_safety.analysis.drain import DrainOptions, plan_drain
from kubectl_safety.analysis.plans.common import Action, Risk, RiskCode, Severity
from kubectl_safety.analysis.plans.drain import DrainPlan, PodAction
from kubectl_safety.cli.published import published
from kubectl_safety.cluster.source import load_snapshot
from kubectl_safety.model.meta import parse_time
from tests.schemas import problems
from tests.unit.cli_helpers import DEMO, DEMO_NOW

OPTIONS = [DrainOptions(), DrainOptions(ignore_daemonsets=True, delete_emptydir_data=True),
           DrainOptions(ignore_daemonsets=True, check_capacity=False), DrainOptions(disable_eviction=True, force=True)]


@pytest.fixture(scope="module")
def demo():
    return load_snapshot(snapshot_paths=[DEMO], now=parse_time(DEMO_NOW))


def test_a_drain_plan_is_typed_and_frozen(demo):
    plan = plan_drain(demo, ["node-c2"], OPTIONS[1])
    assert isinstance(plan, DrainPlan) and plan.pods and all(isinstance(p, PodAction) for p in plan.pods)
    assert all(isinstance(p.action, Action) for p in plan.pods)
    assert all(isinstance(r.severity, Severity) for p in plan.pods for r in p.reasons)
    assert all(isinstance(r.code, RiskCode) for r in plan.risks)
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.safe = True
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.pods[0].action = Action.SKIP
    assert isinstance(plan.pods, tuple) and isinstance(plan.risks, tuple) and isinstance(plan.waves, tuple)


@pytest.mark.parametrize("options", OPTIONS, ids=["defaults", "runbook", "no-capacity", "disable-eviction"])
def test_every_published_drain_plan_of_the_demo_fits_its_schema(demo, options):
    for node in demo.nodes:
        plan = plan_drain(demo, [node.name], options)
        data = json.loads(json.dumps(published(plan)))
        assert problems(data) == [], node.name
        assert data["safe"] is plan.safe and len(data["pods"]) == len(plan.pods)
        assert data["summary"] == {"pods": len(plan.pods), **{a.value: n for a, n in plan.counts().items()}}
        assert [p["action"] for p in data["pods"]] == [p.action.value for p in plan.pods]
        assert data["estimatedSeconds"] == sum(w["estimatedSeconds"] for w in data["waves"])


def test_a_report_holding_plans_is_published_at_any_depth(demo):
    plan = plan_drain(demo, ["node-c2"], OPTIONS[1])
    report = {"kind": "X", "batches": [{"drain": plan, "risks": list(plan.risks)}]}
    out = published(report)
    assert out["batches"][0]["drain"] == published(plan) and out["batches"][0]["drain"]["kind"] == "DrainPlan"
    assert all(isinstance(r, dict) and r["code"] == x.code.value for r, x in zip(out["batches"][0]["risks"], plan.risks))


@pytest.mark.parametrize("options", OPTIONS[:2], ids=["defaults", "runbook"])
def test_a_rollout_plan_is_typed_frozen_and_published_as_its_schema(demo, options):
    from kubectl_safety.analysis.plans.rollout import Batch, RolloutPlan
    from kubectl_safety.analysis.rollout_plan import RolloutOptions, plan_rollout

    plan = plan_rollout(demo, [n.name for n in demo.nodes], RolloutOptions(drain=options))
    assert isinstance(plan, RolloutPlan) and plan.batches and all(isinstance(b, Batch) for b in plan.batches)
    assert all(isinstance(b.drain, DrainPlan) for b in plan.batches)
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.safe = True
    data = json.loads(json.dumps(published(dataclasses.replace(plan, rollout="r"))))
    assert problems(data) == []
    assert data["safe"] is plan.safe and [b["nodes"] for b in data["batches"]] == [list(b.nodes) for b in plan.batches]
    assert data["estimatedSeconds"] == sum(b["estimatedSeconds"] for b in data["batches"])


@pytest.mark.parametrize("options", OPTIONS[:2], ids=["defaults", "runbook"])
def test_a_cluster_check_is_typed_frozen_and_published_as_its_schema(demo, options):
    from kubectl_safety.analysis.check import CheckOptions, check
    from kubectl_safety.analysis.plans.check import CheckedNode, ClusterCheck
    from kubectl_safety.analysis.plans.common import Finding

    report = check(demo, CheckOptions(drain=options))
    assert isinstance(report, ClusterCheck) and all(isinstance(n, CheckedNode) for n in report.nodes)
    assert report.findings and all(isinstance(f, Finding) and isinstance(f.severity, Severity)
                                   for f in report.findings + report.other_findings)
    with pytest.raises(dataclasses.FrozenInstanceError):
        report.nodes[0].drainable = True
    data = json.loads(json.dumps(published(report)))
    assert problems(data) == []
    assert [n["drainable"] for n in data["nodes"]] == [n.drainable for n in report.nodes]
    assert data["summary"]["ready"] is report.summary.ready
    failed = published(ClusterCheck(context="east", error="unreachable"))
    assert failed == {"kind": "ClusterCheck", "apiVersion": data["apiVersion"], "context": "east",
                      "error": "unreachable"}


REBALANCE = [dict(), dict(cluster_defaults=True, include_soft=True, evict_local_storage=True),
             dict(cluster_defaults=True, max_evictions=0)]


@pytest.mark.parametrize("options", REBALANCE, ids=["defaults", "cluster-defaults", "capped"])
def test_a_rebalance_plan_is_typed_frozen_and_published_as_its_schema(demo, options):
    from kubectl_safety.analysis.plans.rebalance import RebalancePlan, RebalanceScope, Relocation, SpreadState
    from kubectl_safety.analysis.rebalance import RebalanceOptions, find_workloads, plan_rebalance

    plan = plan_rebalance(demo, find_workloads(demo), RebalanceOptions(**options), demo.taken_at)
    assert isinstance(plan, RebalancePlan) and plan.constraints
    assert all(isinstance(c, SpreadState) for c in plan.constraints + plan.expected)
    assert all(isinstance(e, Relocation) for e in plan.evictions)
    assert all(isinstance(r, Risk) for r in plan.risks) and isinstance(plan.evictions, tuple)
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.safe = False
    data = json.loads(json.dumps(published(dataclasses.replace(plan, scope=RebalanceScope(None, None, None)))))
    assert problems(data) == []
    assert data["safe"] is plan.safe and data["summary"]["evictions"] == len(plan.evictions) == len(data["evictions"])
    assert [c["skew"] for c in data["constraints"]] == [c.skew for c in plan.constraints]


def test_a_rebalance_execution_is_its_own_typed_result_published_as_the_plans_execution(demo):
    from kubectl_safety.analysis.plans.rebalance import RebalanceScope
    from kubectl_safety.analysis.rebalance import RebalanceOptions, find_workloads, plan_rebalance
    from kubectl_safety.engine.rebalance_report import (EvictionResult, ExecutedRebalance, RebalanceExecution,
                                                        RebalanceRound)

    plan = plan_rebalance(demo, find_workloads(demo), RebalanceOptions(cluster_defaults=True), demo.taken_at)
    plan = dataclasses.replace(plan, scope=RebalanceScope(None, None, None))
    first = plan.first_round()
    assert first
    done = tuple(EvictionResult(e, "done", 201, "") for e in first)
    execution = RebalanceExecution((RebalanceRound(1, done),), False, False, plan.constraints, plan)
    with pytest.raises(dataclasses.FrozenInstanceError):
        execution.rounds[0].evictions[0].result = "gone"
    data = json.loads(json.dumps(published(ExecutedRebalance(plan, execution))))
    assert problems(data) == [] and data["kind"] == "RebalancePlan"
    assert {k: v for k, v in data.items() if k != "execution"}.keys() == published(plan).keys()
    ex = data["execution"]
    assert ex["after"] is None and ex["before"] == published(plan)["constraints"] and not ex["interrupted"]
    assert [e["result"] for e in ex["rounds"][0]["evictions"]] == ["done"] * len(first)
    acted = {(e.namespace, e.name) for e in first}  # the plan's own first-round evictions show their result
    assert all(("result" in e) == ((e["namespace"], e["name"]) in acted) for e in data["evictions"])


def test_a_preemption_preview_is_typed_frozen_and_published_as_its_schema():
    from kubectl_safety.analysis.plans.preemption import ExcludedNode, PreemptionCandidate, PreemptionPreview, Victim
    from kubectl_safety.analysis.preemption import preview
    from tests.builders import NOW, make_node, make_pod, snapshot

    snap = snapshot(make_node("n1", cpu="2"), make_node("n2", cpu="2"), make_node("n3", cpu="1"),
                    *(make_pod(f"low-{i}", node=f"n{1 + i % 2}", cpu="1", priority=0, start="2026-11-20T08:00:00Z")
                      for i in range(4)),
                    make_pod("hi", node=None, cpu="2", priority=1000, phase="Pending", start=None, owner=None))
    report = preview(snap.pod("default", "hi"), snap, NOW, 2)
    assert isinstance(report, PreemptionPreview) and report.outcome == "preempt" and len(report.placements) == 2
    assert report.victims and all(isinstance(v, Victim) for v in report.victims)
    assert all(isinstance(c, PreemptionCandidate) for c in report.candidates)
    assert [c.rank for c in report.candidates] == list(range(1, len(report.candidates) + 1))
    assert report.excluded and all(isinstance(e, ExcludedNode) for e in report.excluded)
    with pytest.raises(dataclasses.FrozenInstanceError):
        report.victims[0].terminating = True
    data = json.loads(json.dumps(published(report)))
    assert problems(data) == []
    assert [v["name"] for v in data["victims"]] == [v.name for v in report.victims]
    assert [p["node"] for p in data["placements"]] == [p.node for p in report.placements]
