"""The published JSON of explain's and delete's assessments (kinds PodExplanation, NodeExplanation,
PriorityAudit, ForceDeleteAssessment), and the parts other kinds share with them (findings, PDB summaries)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kubectl_safety.model.constants import API_VERSION

if TYPE_CHECKING:
    from kubectl_safety.analysis.explanations.common import NodeHealth
    from kubectl_safety.analysis.explanations.delete import DeleteAssessment
    from kubectl_safety.analysis.explanations.node import NodeExplanation
    from kubectl_safety.analysis.explanations.pod import PodExplanation
    from kubectl_safety.analysis.explanations.priority import PriorityAudit
    from kubectl_safety.analysis.explanations.spread import SpreadConstraint
    from kubectl_safety.analysis.explanations.termination import TerminationTimeline
    from kubectl_safety.analysis.plans.common import BudgetSummary, Finding


def finding(f: Finding) -> dict:
    return {"code": f.code, "severity": f.severity.value, "message": f.message}


def pod_explanation(e: PodExplanation) -> dict:
    p, q, pr, o, r = e.pod, e.qos, e.priority, e.oom, e.eviction_rank
    return {
        "kind": "PodExplanation", "apiVersion": API_VERSION,
        "pod": {"namespace": p.namespace, "name": p.name, "node": p.node, "phase": p.phase, "ready": p.ready,
                "terminating": p.terminating},
        "qos": {"class": q.qos_class, "computed": q.computed.value, "status": q.status,
                "matchesStatus": q.matches_status, "reason": q.reason,
                "containers": [{"name": c.name, "init": c.init, "class": c.qos_class.value, "reason": c.reason}
                               for c in q.containers]},
        "priority": {"value": pr.value, "className": pr.class_name, "source": pr.source.value,
                     "preemptionPolicy": pr.preemption_policy, "classMissing": pr.class_missing,
                     "systemCritical": pr.system_critical},
        "termination": termination_timeline(e.termination),
        "oomScoreAdj": o.max,
        "oom": {"max": o.max, "containers": [{"name": c.name, "oomScoreAdj": c.oom_score_adj} for c in o.containers],
                "nodeMemoryCapacity": o.node_memory_capacity},
        "evictionRank": None if r is None else {"rank": r.rank, "of": r.of, "reason": r.reason,
                                                "usageKnown": r.usage_known, "assumption": r.assumption},
        "requests": dict(e.requests),
        "pdbs": [budget_summary(b) for b in e.pdbs],
        "owners": [{"kind": x.kind, "name": x.name, "found": x.found,
                    **({"replicas": x.replicas} if x.replicas is not None else {})} for x in e.owners],
        "topologySpread": [spread_constraint(c) for c in e.topology_spread],
        "nodeState": None if e.node_state is None else node_health(e.node_state),
        "forceDelete": delete_assessment(e.force_delete),
        "findings": [finding(f) for f in e.findings],
    }


def termination_timeline(t: TerminationTimeline) -> dict:
    return {
        "gracePeriodSeconds": t.grace_period_seconds, "why": t.why,
        "preStop": [{"container": h.container, "hook": h.hook, "sidecar": h.sidecar} for h in t.pre_stop],
        "steps": [{"at": x.at, "event": x.event} for x in t.steps],
        **{key: {"gracePeriodSeconds": g.grace_period_seconds, "note": g.note}
           for key, g in (("eviction", t.eviction), ("kubeletSoftEviction", t.kubelet_soft_eviction),
                          ("kubeletHardEviction", t.kubelet_hard_eviction))},
        "probeFailure": [{"container": x.container, "probe": x.probe.value,
                          "gracePeriodSeconds": x.grace_period_seconds, "probeOverride": x.probe_override}
                         for x in t.probe_failure],
    }


def budget_summary(b: BudgetSummary) -> dict:
    return {"name": b.name, "namespace": b.namespace, "minAvailable": b.min_available,
            "maxUnavailable": b.max_unavailable, "unhealthyPodEvictionPolicy": b.unhealthy_pod_eviction_policy,
            "selector": b.selector, "disruptionsAllowed": b.disruptions_allowed, "currentHealthy": b.current_healthy,
            "desiredHealthy": b.desired_healthy, "expectedPods": b.expected_pods, "matchingPods": b.matching_pods,
            "neverAllows": b.never_allows}


def spread_constraint(c: SpreadConstraint) -> dict:
    return {"topologyKey": c.topology_key, "maxSkew": c.max_skew, "whenUnsatisfiable": c.when_unsatisfiable,
            "minDomains": c.min_domains, "nodeAffinityPolicy": c.node_affinity_policy,
            "nodeTaintsPolicy": c.node_taints_policy, "labelSelector": c.label_selector,
            "selectsOwnPod": c.selects_own_pod, "domains": dict(c.domains), "podDomain": c.pod_domain,
            "skew": c.skew, "violated": c.violated}


def node_health(h: NodeHealth) -> dict:
    out = {"state": h.state.value, "partitioned": h.partitioned, "heartbeatAgeSeconds": h.heartbeat_age_seconds}
    if h.unschedulable is not None:  # a gone node has no spec
        out["unschedulable"] = h.unschedulable
    out["message"] = h.message
    return out


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


def node_explanation(e: NodeExplanation) -> dict:
    n = e.node
    return {
        "kind": "NodeExplanation", "apiVersion": API_VERSION,
        "node": {"name": n.name, "unschedulable": n.unschedulable, "labels": n.labels,
                 "taints": [{"key": t.key, "value": t.value, "effect": t.effect} for t in n.taints]},
        "state": node_health(e.state),
        "conditions": [{"type": c.type, "status": c.status, "reason": c.reason,
                        "lastHeartbeatTime": c.last_heartbeat_time} for c in e.conditions],
        "allocation": [{"resource": a.resource, "allocatable": a.allocatable, "requested": a.requested,
                        "percent": a.percent} for a in e.allocation],
        "pods": [{"rank": p.rank, "namespace": p.namespace, "name": p.name, "qos": p.qos, "priority": p.priority,
                  "oomScoreAdj": p.oom_score_adj, "pdb": p.pdb, "reason": p.reason} for p in e.pods],
        "evictionOrderAssumption": e.eviction_order_assumption,
        "findings": [finding(f) for f in e.findings],
    }


def priority_audit(a: PriorityAudit) -> dict:
    defaults = a.global_defaults
    return {
        "kind": "PriorityAudit", "apiVersion": API_VERSION,
        "classes": [{"name": c.name, "value": c.value, "globalDefault": c.global_default,
                     "preemptionPolicy": c.preemption_policy, "pods": c.pods} for c in a.classes],
        "globalDefault": defaults[0] if len(defaults) == 1 else (list(defaults) or None),
        "levels": list(a.levels),
        "podsWithoutClass": a.pods_without_class,
        "podsAtZero": list(a.pods_at_zero),
        "podsAtZeroCount": a.pods_at_zero_count,
        "findings": [finding(f) for f in a.findings],
    }
