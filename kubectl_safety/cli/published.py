"""The published JSON of typed plans: one serializer per kind, used only at the output edge.

``published(report)`` turns every typed plan in a report (a dict that may embed them) into the JSON
the schemas in ``kubectl_safety/schemas`` describe.
"""

from kubectl_safety.analysis.plans import (BatchRisk, CapacityCheck, DrainPlan, PodAction, Reason, Risk, SurgePlan,
                                          Wave)
from kubectl_safety.model.constants import API_VERSION


def published(value):
    """``value`` with each typed plan in it (at any depth of dicts and lists) as its JSON."""
    kind = type(value)
    if kind is dict:
        return {k: published(v) for k, v in value.items()}
    if kind is list:
        return [published(v) for v in value]
    serializer = SERIALIZERS.get(kind)
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
        "summary": {"pods": len(plan.pods), **{a.value: n for a, n in plan.counts().items()}},
        "pods": [pod_action(p) for p in plan.pods],
        "pdbs": [dict(b.summary, neverAllows=b.never_allows, podsToEvict=b.pods_to_evict, waves=b.waves,
                      lostForGood=b.lost_for_good) for b in plan.pdbs],
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
    if plan.server_dry_run is not None:
        out["serverDryRun"] = {"sent": plan.server_dry_run.sent, "refused": plan.server_dry_run.refused}
    return out


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
    return {**c.figures, "checked": True, "ok": c.ok,
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
    out = {"code": r.code.value, "message": r.message,
           "objects": [{"kind": o.kind, "namespace": o.namespace, "name": o.name} for o in r.objects]}
    if r.nodes is not None:
        out["nodes"] = r.nodes
    if r.nodes_not_listed is not None:
        out["nodesNotListed"] = r.nodes_not_listed
    out["accepted"] = r.accepted
    return out


def batch_risk(r: BatchRisk) -> dict:
    return {**risk(r.risk), "batch": r.batch, "workload": r.workload}


SERIALIZERS = {DrainPlan: drain_plan, Risk: risk, BatchRisk: batch_risk}
