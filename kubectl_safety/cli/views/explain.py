"""``explain pod|node|priorities``'s view: its text, read from the typed explanations (their strings made
printable), and their published JSON (kinds PodExplanation, NodeExplanation, PriorityAudit)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kubectl_safety.cli.published import budget_summary, finding
from kubectl_safety.cli.render import table
from kubectl_safety.cli.views.delete import delete_assessment
from kubectl_safety.model.constants import API_VERSION
from kubectl_safety.model.duration import human_duration

if TYPE_CHECKING:
    from kubectl_safety.analysis.explanations.common import NodeHealth
    from kubectl_safety.analysis.explanations.node import NodeExplanation
    from kubectl_safety.analysis.explanations.pod import PodExplanation
    from kubectl_safety.analysis.explanations.priority import PriorityAudit
    from kubectl_safety.analysis.explanations.spread import SpreadConstraint
    from kubectl_safety.analysis.explanations.termination import TerminationTimeline


def findings(report) -> str:
    rows = [[f.severity.value, f.code, f.message] for f in report.findings]
    return "\nFindings:\n" + (table(rows, ["severity", "code", "message"]) if rows else "  none\n")


def render_pod(r, wide=False) -> str:
    p, q, pr, t = r.pod, r.qos, r.priority, r.termination
    state = f"{p.phase}{', ready' if p.ready else ''}{', terminating' if p.terminating else ''}"
    lines = [f"Pod:          {p.namespace}/{p.name} on {p.node or '(unscheduled)'} ({state})",
             f"QoS:          {q.qos_class}: {q.reason}"
             + ("" if q.matches_status else f" (status says {q.status}, spec computes {q.computed.value})")]
    for c in q.containers:
        lines.append(f"  {'init ' if c.init else ''}{c.name}: {c.qos_class.value} ({c.reason})")
    cls = f" (class {pr.class_name})" if pr.class_name else ""
    lines.append(f"Priority:     {pr.value} from {pr.source.value}{cls}; preemptionPolicy {pr.preemption_policy}")
    lines.append(f"Termination:  grace {human_duration(t.grace_period_seconds)} ({t.why})")
    times = [f"t+{human_duration(step.at)}" for step in t.steps]
    width = max(map(len, times), default=0)
    for at, step in zip(times, t.steps):  # one column: t+0s and t+30s alike
        lines.append(f"  {at:<{width}}  {step.event}")
    lines.append(f"  eviction: {human_duration(t.eviction.grace_period_seconds)}; kubelet soft eviction: "
                 f"{t.kubelet_soft_eviction.note}; hard: 1s")
    for probe in t.probe_failure:
        lines.append(f"  {probe.probe.value} failure on {probe.container}: {human_duration(probe.grace_period_seconds)}"
                     + (" (probe-level)" if probe.probe_override else ""))
    lines.append(f"OOM score:    oom_score_adj {r.oom.max}")
    if r.eviction_rank:
        e = r.eviction_rank
        lines.append(f"Eviction:     rank {e.rank or '-'} of {e.of} under memory pressure: {e.reason}")
    if r.node_state:
        lines.append(f"Node state:   {r.node_state.message}")
    fd = r.force_delete
    lines.append(f"Force delete: {fd.verdict}")
    for risk in fd.risks:
        lines.append(f"  {risk.code}: {risk.message}")
    owners = " <- ".join(f"{o.kind}/{o.name}" for o in r.owners) or "none (unmanaged pod)"
    lines.append(f"Owners:       {owners}")
    for b in r.pdbs:
        spec = (f"minAvailable {b.min_available}" if b.min_available is not None
                else f"maxUnavailable {b.max_unavailable}")
        lines.append(f"PDB:          {b.name} ({spec}): disruptionsAllowed {b.disruptions_allowed}, healthy "
                     f"{b.current_healthy}/{b.desired_healthy} desired, {b.unhealthy_pod_eviction_policy}")
    if not r.pdbs:
        lines.append("PDB:          none")
    for c in r.topology_spread:
        domains = ", ".join(f"{k}={v}" for k, v in c.domains.items())
        lines.append(f"Spread:       {c.topology_key} maxSkew {c.max_skew} {c.when_unsatisfiable}: skew {c.skew}"
                     f"{' VIOLATED' if c.violated else ''} [{domains}]")
    return "\n".join(lines) + "\n" + findings(r)


def render_node(r, wide=False) -> str:
    n, st = r.node, r.state
    lines = [f"Node:   {n.name}{' (cordoned)' if n.unschedulable else ''}",
             f"State:  {st.message}{' (partitioned?)' if st.partitioned else ''}"]
    lines.append("\nConditions:")
    lines.append(table([[c.type, c.status, c.reason or ""] for c in r.conditions],
                       ["type", "status", "reason"]).rstrip() or "  none")
    lines.append("\nAllocated (sum of the pods' requests, as kubectl describe node):")
    lines.append(table([[a.resource, a.requested, a.allocatable, "" if a.percent is None else f"{a.percent}%"]
                        for a in r.allocation], ["resource", "requests", "allocatable", "requests%"]).rstrip())
    lines.append("\nPods in memory-pressure eviction order (" + r.eviction_order_assumption + "):")
    headers = ["rank", "namespace", "name", "qos", "priority", "oom_score_adj", "pdb"] + (["reason"] if wide else [])
    rows = [[p.rank or "-", p.namespace, p.name, p.qos, p.priority, p.oom_score_adj, p.pdb or ""]
            + ([p.reason] if wide else []) for p in r.pods]
    lines.append(table(rows, headers).rstrip() or "  none")
    return "\n".join(lines) + "\n" + findings(r)


def render_priorities(r, wide=False) -> str:
    rows = [[c.name, c.value, "yes" if c.global_default else "", c.preemption_policy, c.pods] for c in r.classes]
    out = table(rows, ["name", "value", "global-default", "preemption-policy", "pods"])
    out += f"\nPods without a class: {r.pods_without_class}; at priority 0: {r.pods_at_zero_count}\n"
    return out + findings(r)


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


SERIALIZERS = {"kubectl_safety.analysis.explanations.pod.PodExplanation": pod_explanation,
               "kubectl_safety.analysis.explanations.node.NodeExplanation": node_explanation,
               "kubectl_safety.analysis.explanations.priority.PriorityAudit": priority_audit}
