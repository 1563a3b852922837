"""The published JSON of typed plans: one serializer per kind, used only at the output edge.

``published(report)`` turns every typed plan in a report (a dict that may embed them) into the JSON
the schemas in ``kubectl_safety/schemas`` describe. Each command's view (``cli/views/<module>.py``)
declares its serializers in its ``SERIALIZERS``, keyed by the typed class's module and name;
``serializers()`` merges them, importing the views on the first kind met. The serializers name the
typed kinds only in annotations: publishing a kind imports no other kind's module (a dry-run drain
loads neither the explanations nor the engine's reports).
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache
from typing import TYPE_CHECKING

from kubectl_safety.model.constants import API_VERSION

if TYPE_CHECKING:
    from kubectl_safety.analysis.plans.check import Blocker, CheckedNode, ClusterCheck
    from kubectl_safety.analysis.explanations.delete import DeleteAssessment
    from kubectl_safety.analysis.plans.common import BudgetSummary, Finding, ObjectRef, Reason, Risk
    from kubectl_safety.analysis.plans.drain import CapacityCheck, DrainPlan, PodAction, SurgePlan, Wave
    from kubectl_safety.analysis.plans.preemption import ExcludedNode, PreemptionCandidate, PreemptionPreview, Victim
    from kubectl_safety.analysis.plans.rebalance import RebalancePlan, Relocation, SpreadBlock, SpreadState
    from kubectl_safety.analysis.plans.rollout import Batch, BatchRisk, CapacityLeft, Cause, RolloutPlan
    from kubectl_safety.analysis.scheduling.failure import Failure
    from kubectl_safety.engine.drain_report import (AppearedPod, DrainReport, LeftPod, RequestCounts, RequestOutcome,
                                                    SurgeRecord)
    from kubectl_safety.engine.delete_report import DeleteReport, PodDeletion
    from kubectl_safety.engine.rebalance_report import EvictionResult, ExecutedRebalance, RebalanceExecution
    from kubectl_safety.engine.rollout_report import BatchProgress, NodeProgress, RolloutReport


def published(value):
    """``value`` with each typed plan in it (at any depth of dicts and lists) as its JSON."""
    kind = type(value)
    if kind is dict:
        return {k: published(v) for k, v in value.items()}
    if kind is list:
        return [published(v) for v in value]
    serializer = _BY_CLASS.get(kind)
    if serializer is None:
        serializer = _BY_CLASS[kind] = serializers().get(f"{kind.__module__}.{kind.__qualname__}", False)
    return serializer(value) if serializer else value


def drain_plan(plan: DrainPlan) -> dict:
    o = plan.options
    out = {
        "kind": "DrainPlan", "apiVersion": API_VERSION,
        "safe": plan.safe,
        "nodes": [_with_dry_run({"name": n.name, "found": n.found, "unschedulable": n.unschedulable, "pods": n.pods,
                                 "filterErrors": list(n.filter_errors)}, n) for n in plan.nodes],
        "options": {"ignoreDaemonsets": o.ignore_daemonsets, "deleteEmptydirData": o.delete_emptydir_data,
                    "force": o.force, "gracePeriod": o.grace_period, "disableEviction": o.disable_eviction,
                    "skipWaitForDeleteTimeout": o.skip_wait_for_delete_timeout,
                    "podSelector": str(o.pod_selector) if o.pod_selector is not None else None},
        "summary": plan_summary(plan),
        "pods": [pod_action(p) for p in plan.pods],
        "pdbs": [dict(budget_summary(b.summary), neverAllows=b.never_allows, podsToEvict=b.pods_to_evict,
                      waves=b.waves, lostForGood=b.lost_for_good) for b in plan.pdbs],
        "capacity": capacity(plan.capacity),
        "waves": [wave(w) for w in plan.waves],
        "estimatedSeconds": plan.estimated_seconds,
        "warnings": [reason(w) for w in plan.warnings],
        "takenAt": plan.taken_at,
        "risks": [risk(r) for r in plan.risks],
        "losses": {"emptyDirData": list(plan.losses.empty_dir_data),
                   "unmanagedPods": list(plan.losses.unmanaged_pods)},
    }
    if plan.surge is not None:
        out["options"].update(surge=True, surgeLimit=o.surge_limit)
        out["surge"] = surge_plan(plan.surge)
    if plan.safe_with_surge is not None:
        out["surgeable"] = surgeable(plan.surgeable, plan.safe_with_surge)
    if plan.server_dry_run is not None:
        out["serverDryRun"] = {"sent": plan.server_dry_run.sent, "refused": plan.server_dry_run.refused}
    return out


def surgeable(workloads, unblocks) -> dict:
    """What --surge, not used, would do for a plan that is not safe."""
    return {"workloads": list(workloads), "unblocks": unblocks}


def plan_summary(plan: DrainPlan) -> dict:
    return {"pods": len(plan.pods), **{a.value: n for a, n in plan.counts().items()}}


def pod_action(p: PodAction) -> dict:
    return _with_dry_run({"namespace": p.namespace, "name": p.name, "node": p.node, "uid": p.uid,
                          "priority": p.priority, "action": p.action.value, "reasons": [reason(r) for r in p.reasons],
                          "pdb": p.pdb, "wave": p.wave, "replacementNode": p.replacement_node,
                          "gracePeriodSeconds": p.grace_period_seconds}, p)


def _with_dry_run(out, item) -> dict:
    if item.server_dry_run is not None:
        out["serverDryRun"] = item.server_dry_run.to_dict()
    return out


def reason(r: Reason) -> dict:
    return {"code": r.code, "severity": r.severity.value, "message": r.message}


def capacity(c: CapacityCheck) -> dict:
    if not c.checked:
        return {"checked": False, "ok": None, "unplaceable": []}
    return {"nodesConsidered": c.nodes_considered, "replacementsPlaced": c.replacements_placed,
            "placedOn": dict(c.placed_on), "checked": True, "ok": c.ok,
            "unplaceable": [{"namespace": u.namespace, "name": u.name, "node": u.node, "reason": u.reason,
                             "nodes": u.nodes, "nodesNotListed": u.not_listed} for u in c.unplaceable]}


def wave(w: Wave) -> dict:
    return {"wave": w.number, "pods": list(w.pods), "pdbs": list(w.pdbs), "gracePeriodSeconds": w.grace_period_seconds,
            "readySeconds": w.ready_seconds, "estimatedSeconds": w.estimated_seconds}


def surge_plan(s: SurgePlan) -> dict:
    return {"peak": dict(s.peak), "workloads": [
        {"kind": x.kind, "namespace": x.namespace, "name": x.name, "wave": x.wave, "pods": list(x.pods),
         "from": x.from_replicas, "to": x.to_replicas, "mechanism": x.mechanism.value,
         "autoscaler": ({"name": x.hpa, "minReplicasFrom": x.hpa_min_from, "minReplicasTo": x.hpa_min_to}
                        if x.hpa else None),
         "removal": x.removal.value, "pdb": x.pdb, "expectedSeconds": x.expected_seconds, "resumed": x.resumed,
         "gitops": x.gitops or None} for x in s.surges]}


def risk(r: Risk) -> dict:
    out = {"code": r.code.value, "message": r.message, "objects": [object_ref(o) for o in r.objects]}
    if r.nodes is not None:
        out["nodes"] = r.nodes
    if r.nodes_not_listed is not None:
        out["nodesNotListed"] = r.nodes_not_listed
    out["accepted"] = r.accepted
    return out


def batch_risk(r: BatchRisk) -> dict:
    return {**risk(r.risk), "batch": r.batch, "workload": r.workload}


def rollout_plan(plan: RolloutPlan) -> dict:
    o = plan.options
    out = {
        "kind": "RolloutPlan", "apiVersion": API_VERSION,
        "safe": plan.safe, "nodes": list(plan.nodes), "done": list(plan.done), "missing": list(plan.missing),
        "options": {"maxUnavailable": str(o.max_unavailable), "batchSize": plan.batch_size, "byZone": o.by_zone,
                    "precordon": o.precordon, "maintenance": o.maintenance, "skipBlocked": o.skip_blocked},
        "risks": [batch_risk(r) for r in plan.risks], "causes": [cause(c) for c in plan.causes],
        "stopsAtBatch": plan.stops_at_batch, "leftNodes": list(plan.left_nodes),
        "batches": [batch(b) for b in plan.batches], "estimatedSeconds": plan.estimated_seconds,
        "takenAt": plan.taken_at, "rollout": plan.rollout,
    }
    if plan.surge_peak is not None:
        out["options"].update(surge=True, surgeLimit=o.drain.surge_limit)
        out["surgePeak"] = dict(plan.surge_peak)
    if plan.gates is not None:
        out["gates"] = rollout_gates(plan.gates)
    return out


def rollout_gates(g) -> dict:
    return {"windows": list(g.windows), "outsideWindow": g.outside_window, "windowClosesAt": g.window_closes_at,
            "nextWindowOpensAt": g.next_window_opens_at, "batchStarts": list(g.batch_starts),
            "alertsUrl": g.alerts_url, "alertFilter": g.alert_filter, "blockingPodSelector": g.blocking_pod_selector,
            "heldNodes": [{"node": h.node, "pods": list(h.pods)} for h in g.held_nodes]}


def batch(b: Batch) -> dict:
    out = {"batch": b.number, "nodes": list(b.nodes), "zones": list(b.zones), "safe": b.safe,
           "blockedNodes": list(b.blocked_nodes), "capacity": capacity_left(b.capacity),
           "estimatedSeconds": b.estimated_seconds, "drain": drain_plan(b.drain)}
    if b.surge is not None:
        out["surge"] = surge_plan(b.surge)
    return out


def capacity_left(c: CapacityLeft) -> dict:
    return {"schedulableNodes": c.schedulable_nodes, "cpuFree": c.cpu_free, "memoryFree": c.memory_free,
            "cpuNeeded": c.cpu_needed, "memoryNeeded": c.memory_needed}


def cause(c: Cause) -> dict:
    return {"code": c.code.value, "batch": c.batch, "safeWithout": c.safe_without, "message": c.message,
            "buys": c.buys, "alternatives": list(c.alternatives)}


def object_ref(o: ObjectRef) -> dict:
    return {"kind": o.kind, "namespace": o.namespace, "name": o.name}


def finding(f: Finding) -> dict:
    return {"code": f.code, "severity": f.severity.value, "message": f.message}

def budget_summary(b: BudgetSummary) -> dict:
    return {"name": b.name, "namespace": b.namespace, "minAvailable": b.min_available,
            "maxUnavailable": b.max_unavailable, "unhealthyPodEvictionPolicy": b.unhealthy_pod_eviction_policy,
            "selector": b.selector, "disruptionsAllowed": b.disruptions_allowed, "currentHealthy": b.current_healthy,
            "desiredHealthy": b.desired_healthy, "expectedPods": b.expected_pods, "matchingPods": b.matching_pods,
            "neverAllows": b.never_allows}

def delete_assessment(a: DeleteAssessment) -> dict:
    """One pod's delete assessment (a ForceDeleteAssessment's or DeleteReport's pod, explain pod's forceDelete)."""
    n, t, owner = a.node, a.terminating, a.owner
    return {
        "namespace": a.namespace, "name": a.name, "uid": a.uid, "phase": a.phase,
        "owner": delete_owner(owner),
        "node": {"name": n.name, "state": n.state.value, "partitioned": n.partitioned,
                 "heartbeatAgeSeconds": n.heartbeat_age_seconds, "message": n.message},
        "force": a.force,
        "gracePeriodSeconds": a.grace_period_seconds, "graceWhy": a.grace_why,
        "timeline": [{"at": x.at, "event": x.event} for x in a.timeline],
        "terminating": None if t is None else {"deletionTimestamp": t.deletion_timestamp,
                                               "gracePeriodSeconds": t.grace_period_seconds,
                                               "forSeconds": t.for_seconds, "overdueSeconds": t.overdue_seconds},
        "forceNeeded": a.force_needed,
        "verdict": a.verdict,
        "risks": [finding(r) for r in a.risks],
    }

def delete_owner(o):
    if o is None:
        return None
    return {"kind": o.kind, "name": o.name, **({"via": o.via} if o.via is not None else {})}


def cluster_check(c: ClusterCheck) -> dict:
    head = {"kind": "ClusterCheck", "apiVersion": API_VERSION}
    if c.context is not None:
        head["context"] = c.context
    if c.error is not None:
        return {**head, "error": c.error}
    a, s = c.assumes, c.summary
    return {
        **head,
        "source": c.source, "takenAt": c.taken_at,
        "assumes": {"ignoreDaemonsets": a.ignore_daemonsets, "deleteEmptydirData": a.delete_emptydir_data,
                    "force": a.force, "disableEviction": a.disable_eviction, "gracePeriod": a.grace_period,
                    "timeout": a.timeout, "skipWaitForDeleteTimeout": a.skip_wait_for_delete_timeout,
                    "podSelector": str(a.pod_selector) if a.pod_selector else None,
                    "acceptRisks": sorted(a.accept_risks), **({"surge": True} if a.surge else {})},
        "summary": {"nodes": s.nodes, "drainable": s.drainable, "notDrainable": s.not_drainable,
                    "removable": s.removable, "unreachable": s.unreachable, "blockers": s.blockers,
                    "findings": dict(s.findings), "failOn": s.fail_on, "failing": s.failing, "scope": s.scope,
                    "otherFindings": dict(s.other_findings), "ready": s.ready},
        "blockers": [blocker(b) for b in c.blockers],
        "nodes": [checked_node(n) for n in c.nodes],
        "findings": [check_finding(f) for f in c.findings],
        "otherFindings": [check_finding(f) for f in c.other_findings],
    }


def blocker(b: Blocker) -> dict:
    return {"object": object_ref(b.object), "nodes": list(b.nodes), "codes": list(b.codes), "blocks": b.blocks}


def checked_node(n: CheckedNode) -> dict:
    out = {"name": n.name, "state": n.state, "unschedulable": n.unschedulable, "drainable": n.drainable,
           "removable": n.removable, "pods": n.pods, "risks": [risk(r) for r in n.risks],
           "estimatedSeconds": n.estimated_seconds}
    if n.surges is not None:
        out["surges"] = list(n.surges)
    out.update({"unplaceable": list(n.unplaceable), "notRecreated": list(n.not_recreated)})
    if n.stuck_pods is not None:
        out["stateMessage"] = n.state_message
        out["stuckPods"] = [{"namespace": p.namespace, "name": p.name, "owner": delete_owner(p.owner),
                             "forceNeeded": p.force_needed,
                             "verdict": p.verdict, "risks": list(p.risks)} for p in n.stuck_pods]
    if n.drainable_without_surge is not None:
        out["drainableWithoutSurge"] = n.drainable_without_surge
    out["liftedBy"] = list(n.lifted_by)
    if n.drainable_with_surge is not None:
        out["surgeable"] = surgeable(n.surgeable, n.drainable_with_surge)
    return out


def check_finding(f: Finding) -> dict:
    """A finding of ``check``: with the objects it names."""
    out = {**finding(f), "objects": [object_ref(o) for o in f.objects]}
    if f.reason is not None:
        out["reason"] = f.reason
    return out


def rollout_report(r: RolloutReport) -> dict:
    out = {"kind": "RolloutReport", "apiVersion": API_VERSION, "rollout": r.rollout, "lease": r.lease,
           "holder": r.holder, "status": r.status.value, "message": r.message, "resumed": r.resumed,
           "elapsedSeconds": r.elapsed_seconds, "batches": [batch_progress(b) for b in r.batches],
           "nodes": [node_progress(n) for n in r.nodes], "requests": request_counts(r.requests)}
    if r.plan is not None:
        out["plan"] = {"batches": r.plan.batches, "estimatedSeconds": r.plan.estimated_seconds,
                       "done": list(r.plan.done)}
    return out


def batch_progress(b: BatchProgress) -> dict:
    return {"batch": b.number, "nodes": list(b.nodes), "status": b.status.value,
            "gate": None if b.gate is None else {"passed": b.gate.passed, "message": b.gate.message}}


def node_progress(n: NodeProgress) -> dict:
    out = {"name": n.name, "batch": n.batch, "state": n.state}
    if n.drain is not None:
        d = n.drain
        out["drain"] = {"status": d.status.value, "evicted": list(d.evicted),
                        "appeared": [appeared_pod(a) for a in d.appeared], "left": [left_pod(p) for p in d.left]}
    if n.exec is not None:
        out["exec"] = {"exitCode": n.exec.exit_code, "seconds": n.exec.seconds, "output": n.exec.output}
    if n.ready is not None:
        out["ready"] = n.ready
    if n.uncordoned is not None:
        out["uncordoned"] = n.uncordoned
    if n.surges is not None:
        out["surges"] = list(n.surges)
    return out


APPEARED = "came onto the drained node afterwards (it tolerates the cordon): reported, not evicted"


def drain_report(r: DrainReport) -> dict:
    """The pods that appeared on the drained nodes are listed in ``left`` too (the nodes are not empty)."""
    out = {
        "kind": "DrainReport", "apiVersion": API_VERSION,
        "nodes": list(r.nodes), "status": r.status.value, "drained": r.drained, "message": r.message,
        "elapsedSeconds": r.elapsed_seconds, "evicted": list(r.evicted), "goneMeanwhile": list(r.gone),
        "left": [left_pod(p) for p in r.left] + [{"namespace": a.namespace, "name": a.name, "node": a.node,
                                                  "action": "appeared", "reason": APPEARED} for a in r.appeared],
        "appeared": [appeared_pod(a) for a in r.appeared],
        "outcomes": [request_outcome(o) for o in r.outcomes],
        "requests": {} if r.requests is None else request_counts(r.requests),
        "plan": {"summary": plan_summary(r.plan), "waves": len(r.plan.waves),
                 "estimatedSeconds": r.plan.estimated_seconds},
    }
    if r.surge is not None:
        out["surge"] = surge_record(r.surge)
    return out


def left_pod(p: LeftPod) -> dict:
    return {"namespace": p.namespace, "name": p.name, "node": p.node, "action": p.action.value, "reason": p.reason}


def appeared_pod(a: AppearedPod) -> dict:
    return {"pod": a.ref, "node": a.node, "owner": a.owner}


def request_outcome(o: RequestOutcome) -> dict:
    return {"pod": o.target, "action": o.request.value, "result": o.result.value, "status": o.status,
            "message": o.message}


def request_counts(c: RequestCounts) -> dict:
    return {"lists": c.lists, "watches": c.watches, "evictions": c.evictions}


def surge_record(s: SurgeRecord) -> dict:
    return {"status": s.status.value, "message": s.message, "raised": list(s.raised), "restored": list(s.restored),
            "changedByOthers": list(s.changed_by_others), "removedByScaleBack": list(s.removed)}


def rebalance_plan(plan: RebalancePlan, results=None) -> dict:
    """``results``: {id of an eviction: its EvictionResult} for the evictions acted on."""
    o, s, results = plan.options, plan.summary, results or {}
    out = {
        "kind": "RebalancePlan", "apiVersion": API_VERSION, "source": plan.source, "takenAt": plan.taken_at,
        "options": {"includeSoft": o.include_soft, "clusterDefaults": o.cluster_defaults,
                    "evictLocalStorage": o.evict_local_storage, "maxEvictions": o.max_evictions},
        "workloads": [{"kind": w.kind, "namespace": w.namespace, "name": w.name, "pods": w.pods}
                      for w in plan.workloads],
        "constraints": [spread_state(c) for c in plan.constraints],
        "evictions": [eviction_result(results[id(e)]) if id(e) in results else relocation(e) for e in plan.evictions],
        "expected": [spread_state(c) for c in plan.expected],
        "blocked": [spread_block(b) for b in plan.blocked],
        "findings": [finding(f) for f in plan.findings],
        "assumptions": list(plan.assumptions),
        "risks": [risk(r) for r in plan.risks],
        "safe": plan.safe,
        "summary": {"violated": s.violated, "evictions": s.evictions, "rounds": s.rounds, "fixed": s.fixed},
    }
    if plan.scope is not None:
        out["scope"] = {"namespace": plan.scope.namespace, "selector": plan.scope.selector,
                        "workload": plan.scope.workload}
    if plan.server_dry_run is not None:
        out["serverDryRun"] = {"sent": plan.server_dry_run.sent, "refused": plan.server_dry_run.refused}
    return out


def spread_state(c: SpreadState) -> dict:
    return {"workload": c.workload, "topologyKey": c.topology_key, "maxSkew": c.max_skew,
            "whenUnsatisfiable": c.when_unsatisfiable, "minDomains": c.min_domains, "domains": dict(c.domains),
            "skew": c.skew, "violated": c.violated, "labelSelector": c.label_selector,
            "nodeAffinityPolicy": c.node_affinity_policy, "nodeTaintsPolicy": c.node_taints_policy,
            "source": c.source, "rebalanced": c.rebalanced, "pods": c.pods}


def relocation(e: Relocation) -> dict:
    out = {"namespace": e.namespace, "name": e.name, "node": e.node, "domain": e.domain, "topologyKey": e.topology_key,
           "workload": e.workload, "round": e.round, "expectedNode": e.expected_node,
           "expectedDomain": e.expected_domain, "tiedNodes": list(e.tied_nodes)}
    if e.server_dry_run is not None:
        out["serverDryRun"] = e.server_dry_run.to_dict()
    return out


def spread_block(b: SpreadBlock) -> dict:
    out = {"workload": b.workload, "topologyKey": b.topology_key, "reason": b.reason}
    if b.name is not None:
        out.update(namespace=b.namespace, name=b.name, node=b.node, domain=b.domain)
    return out


def eviction_result(r: EvictionResult) -> dict:
    return {**relocation(r.eviction), "result": r.result, "status": r.status, "message": r.message}


def executed_rebalance(r: ExecutedRebalance) -> dict:
    """The plan with its ``execution``; the plan's first-round evictions show what became of them."""
    ex = r.execution
    first = {id(e.eviction): e for e in ex.rounds[0].evictions} if ex.rounds else {}
    return {**rebalance_plan(r.plan, first), "execution": rebalance_execution(ex)}


def rebalance_execution(ex: RebalanceExecution) -> dict:
    return {"rounds": [{"round": n.number, "evictions": [eviction_result(e) for e in n.evictions]} for n in ex.rounds],
            "waited": ex.waited, "interrupted": ex.interrupted, "before": [spread_state(c) for c in ex.before],
            "after": None if ex.after is None else [spread_state(c) for c in ex.after]}


def preemption_preview(r: PreemptionPreview) -> dict:
    p, s = r.pod, r.sampling
    return {
        "kind": "PreemptionPreview", "apiVersion": API_VERSION,
        "pod": {"namespace": p.namespace, "name": p.name, "priority": p.priority,
                "priorityClassName": p.priority_class_name, "prioritySource": p.priority_source,
                "preemptionPolicy": p.preemption_policy, "nominatedNodeName": p.nominated_node_name,
                "requests": p.requests},
        "replicas": r.replicas, "placed": r.placed, "outcome": r.outcome,
        "fitsWithoutPreemption": r.fits_without_preemption, "feasibleNodes": list(r.feasible_nodes),
        "eligible": r.eligible, "eligibility": r.eligibility, "node": r.node,
        "victims": [victim(v) for v in r.victims],
        "candidates": [preemption_candidate(c) for c in r.candidates],
        "excluded": [excluded_node(e) for e in r.excluded],
        "sampling": {"potentialNodes": s.potential_nodes, "minCandidates": s.min_candidates,
                     "tiedBest": list(s.tied_best), "mayDiffer": s.may_differ, "note": s.note},
        "placements": [{"replica": x.replica, "name": x.name, "outcome": x.outcome, "node": x.node,
                        "victims": [victim(v) for v in x.victims], "candidates": x.candidates} for x in r.placements],
        "notes": list(r.notes),
        "findings": [finding(f) for f in r.findings],
    }


def victim(v: Victim) -> dict:
    return {"namespace": v.namespace, "name": v.name, "node": v.node, "priority": v.priority,
            "pdbViolation": v.pdb_violation, "pdbs": list(v.pdbs), "startTime": v.start_time,
            "terminating": v.terminating, "gracePeriodSeconds": v.grace_period_seconds}


def preemption_candidate(c: PreemptionCandidate) -> dict:
    return {"node": c.node, "victims": [victim(v) for v in c.victims], "pdbViolations": c.pdb_violations,
            "highestPriority": c.highest_priority, "prioritySum": c.priority_sum, "earliestStart": c.earliest_start,
            "rank": c.rank}


def excluded_node(e: ExcludedNode) -> dict:
    return {"node": e.node, "reason": e.reason, "equalPriorityBlocks": e.equal_priority_blocks,
            "plugins": list(e.plugins), "failures": [failure(f) for f in e.failures]}


def failure(f: Failure) -> dict:
    return {"plugin": f.plugin, "code": f.code, "message": f.message, "resolvable": f.resolvable}


def delete_report(r: DeleteReport) -> dict:
    head = ({"kind": "DeleteReport", "apiVersion": API_VERSION} if r.deleted else  # DELETEs sent
            {"kind": "ForceDeleteAssessment", "apiVersion": API_VERSION})
    return {**head, "namespace": r.namespace, "force": r.force, "confirmed": r.confirmed, "dryRun": r.dry_run,
            "reason": r.reason, "pods": [pod_deletion(p) for p in r.pods],
            "summary": {a.value: n for a, n in r.counts().items()}}


def pod_deletion(p: PodDeletion) -> dict:
    out = delete_assessment(p.assessment)
    if p.outcome is not None:
        out.update(result=p.outcome.result, message=p.outcome.message)
    out["action"] = p.action.value
    if p.event is not None:
        out["event"] = p.event
    if p.gone is not None:
        out["gone"] = p.gone
    return out


# Each published kind by its class's module and name (imported when an object of it exists, not here).
SERIALIZERS = {
    "kubectl_safety.analysis.plans.drain.DrainPlan": drain_plan, "kubectl_safety.analysis.plans.common.Risk": risk,
    "kubectl_safety.analysis.plans.rollout.BatchRisk": batch_risk,
    "kubectl_safety.analysis.plans.rollout.RolloutPlan": rollout_plan,
    "kubectl_safety.analysis.plans.check.ClusterCheck": cluster_check,
    "kubectl_safety.engine.rollout_report.RolloutReport": rollout_report,
    "kubectl_safety.analysis.plans.rebalance.RebalancePlan": rebalance_plan,
    "kubectl_safety.engine.rebalance_report.ExecutedRebalance": executed_rebalance,
    "kubectl_safety.analysis.plans.preemption.PreemptionPreview": preemption_preview,
    "kubectl_safety.engine.drain_report.DrainReport": drain_report,
    "kubectl_safety.analysis.explanations.delete.DeleteAssessment": delete_assessment,
    "kubectl_safety.engine.delete_report.DeleteReport": delete_report,
}


@cache
def serializers() -> dict:
    """Every published kind's serializer: the table above and each view's ``SERIALIZERS`` (the views found by
    name, as ``main`` finds the commands: they render with ``cli/render.py``, which publishes with this)."""
    views = importlib.import_module(f"{__package__}.views")
    merged = dict(SERIALIZERS)
    for view in pkgutil.iter_modules(views.__path__):
        merged.update(getattr(importlib.import_module(f"{views.__name__}.{view.name}"), "SERIALIZERS", {}))
    return merged


_BY_CLASS = {}  # each class met: its serializer, or False (as is); published() visits every value of a report
