"""``drain``'s view: its text (the plan's pods, budgets, waves, risks and verdict, and the report after
acting), its published JSON (kinds DrainPlan and DrainReport) and a drain's exit code."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kubectl_safety.cli.published import budget_summary, reason, risk
from kubectl_safety.cli.render import table
from kubectl_safety.cli.report import ExitCode
from kubectl_safety.cli.risks import render_risks, unaccepted_codes
from kubectl_safety.model.constants import API_VERSION
from kubectl_safety.model.duration import human_duration

if TYPE_CHECKING:
    from kubectl_safety.analysis.plans.drain import CapacityCheck, DrainPlan, PodAction, SurgePlan, Wave
    from kubectl_safety.engine.drain_report import (AppearedPod, DrainReport, LeftPod, RequestCounts, RequestOutcome,
                                                    SurgeRecord)


def render_plan(r, wide=False) -> str:
    lines = []
    for n in r["nodes"]:
        lines.append(f"Node {n['name']}: {n['pods']} pod(s)" + (" (already cordoned)" if n["unschedulable"] else ""))
    rows, several = [], len(r["nodes"]) > 1  # one node: the heading above names it
    for p in r["pods"]:
        shown = p["reasons"] if wide else [x for x in p["reasons"] if x["severity"] != "info"] or p["reasons"][:1]
        why = "; ".join(f"{x['code']}: {x['message']}" if wide else x["code"] for x in shown)
        row = [p["action"], p["wave"] or "-", f"{p['namespace']}/{p['name']}"] + ([p["node"]] if several else []) \
            + [p["pdb"] or "-", p["replacementNode"] or "-", why]
        if "serverDryRun" in p:
            row.append(p["serverDryRun"]["result"])
        rows.append(row)
    headers = ["action", "wave", "pod"] + (["node"] if several else []) + ["pdb", "replacement", "reasons"] \
        + (["server"] if "serverDryRun" in r else [])
    lines.append("")
    lines.append(table(rows, headers).rstrip() or "no pods")
    if not wide:
        details = [(p, x) for p in r["pods"] for x in p["reasons"] if x["severity"] == "error"]
        if details:
            lines.append("\nBlocked:")
            lines += [f"  {p['namespace']}/{p['name']}: {x['message']}" for p, x in details]
        not_surged = [(p, x) for p in r["pods"] for x in p["reasons"] if x["code"] == "SURGE_NOT_POSSIBLE"]
        if not_surged:
            lines.append("\nNot surged:")
            lines += [f"  {p['namespace']}/{p['name']}: {x['message']}" for p, x in not_surged]
    if r["pdbs"]:
        lines.append("\nPodDisruptionBudgets:")
        lines.append(table([[f"{b['namespace']}/{b['name']}", b["disruptionsAllowed"],
                             f"{b['currentHealthy']}/{b['desiredHealthy']}", b["podsToEvict"], b["waves"],
                             b["neverAllows"] or ""] for b in r["pdbs"]],
                           ["pdb", "allowed", "healthy/desired", "to evict", "waves", "never allows"]).rstrip())
    if not r["capacity"]["checked"]:
        lines.append("\nCapacity: not checked (--no-capacity): replacements are assumed to start somewhere.")
    if r["capacity"]["unplaceable"]:
        lines.append("\nReplacements that fit nowhere:")
        lines += [f"  {u['namespace']}/{u['name']}: {u['reason']}" for u in r["capacity"]["unplaceable"]]
    if r["waves"]:
        from kubectl_safety.analysis.drain import RETRY_SECONDS

        lines.append("\nWaves:")
        lines += [f"  {w['wave']}: {len(w['pods'])} pod(s), grace {human_duration(w['gracePeriodSeconds'])}"
                  + (f", then ~{human_duration(w['readySeconds'])} for replacements to be Ready"
                     if w["readySeconds"] else "")
                  + (f", +{human_duration(RETRY_SECONDS)} eviction retry" if w["wave"] > 1 else "")
                  + f" (~{human_duration(w['estimatedSeconds'])})" for w in r["waves"]]
    lines += render_surges(r.get("surge"))
    for w in r["warnings"]:
        lines.append(f"\n{w['severity']}: {w['message']}")
    lines += render_risks(r.get("risks") or [])
    for what, pods in (r.get("losses") or {}).items():
        if pods:
            label = {"emptyDirData": "emptyDir data lost (--delete-emptydir-data)",
                     "unmanagedPods": "pods not recreated (--force)"}.get(what, what)
            lines.append(f"\nAccepted by flags: {label}: {len(pods)} pod(s): {', '.join(pods[:10])}"
                         + (", ..." if len(pods) > 10 else ""))
    s = r["summary"]
    accepted = sorted({x["code"] for x in r.get("risks") or [] if x["accepted"]})
    verdict = (f"SAFE only with the accepted risks ({', '.join(accepted)})" if r["safe"] and accepted else
               "SAFE: the drain can complete" if r["safe"] else
               f"NOT SAFE ({unaccepted_codes(r)}): exit 3 unless accepted with --accept-risk")
    lines.append(f"\n{verdict}: {s['evict']} evict now, {s['wait']} wait, {s['delete']} delete, "
                 f"{s['skip']} skip, {s['blocked']} blocked; estimated {human_duration(r['estimatedSeconds'])}.")
    return "\n".join(lines) + "\n"


def render_surges(surge) -> list:
    """The plan's surges (--surge): each workload, from -> to, how, and the peak extra capacity."""
    if not surge or not surge["workloads"]:
        return []
    rows = [[f"{w['kind']}/{w['name']}", w["namespace"], f"{w['from']} -> {w['to']}",
             w["mechanism"] + (f" ({w['autoscaler']['name']} min {w['autoscaler']['minReplicasFrom']} -> "
                               f"{w['autoscaler']['minReplicasTo']})" if w["autoscaler"] else ""),
             w["removal"], f"~{human_duration(w['expectedSeconds'])}", "resume" if w["resumed"] else ""]
            for w in surge["workloads"]]
    peak = ", ".join(f"{k} {v}" for k, v in surge["peak"].items())
    return ["\nSurges (wave 1, before its evictions):",
            table(rows, ["workload", "namespace", "replicas", "mechanism", "old pods", "ready in", ""]).rstrip(),
            f"Peak extra capacity: {peak}"]


def render_report(r, wide=False) -> str:
    lines = [f"Drain of {', '.join(r['nodes'])}: {r['status']}" + (f" ({r['message']})" if r["message"] else ""),
             f"Evicted: {len(r['evicted'])} pod(s) in {r['elapsedSeconds']}s"]
    surge = r.get("surge")
    if surge:
        lines += [f"Surged: {x}" for x in surge["raised"]] + [f"Restored: {x}" for x in surge["restored"]]
        lines += [f"Not restored (changed by someone else): {x}" for x in surge["changedByOthers"]]
    if r["left"]:
        lines.append("Left on the nodes:")
        lines += [f"  {p['namespace']}/{p['name']} ({p['action']}): {p['reason']}" for p in r["left"]]
    lines += _cordon_state(r)
    return "\n".join(lines) + "\n"


def _cordon_state(r) -> list:
    """Which nodes a drain that did not finish leaves cordoned: all of them, or, when a cordon was refused,
    those cordoned before it (the rest were NOT cordoned)."""
    if r["drained"]:
        return []
    cordons = [o for o in r["outcomes"] if o["action"] == "cordon"]
    if all(o["result"] == "done" for o in cordons):
        return ["The nodes stay cordoned; run the same command again to resume."]
    cordoned = [o["pod"] for o in cordons if o["result"] == "done"]
    left = [n for n in r["nodes"] if n not in cordoned]
    return [f"Not cordoned: {', '.join(left)} (the cordon was refused); nothing was evicted."] + (
        [f"Cordoned: {', '.join(cordoned)} (kubectl uncordon NODE to undo, or run the same command again)."]
        if cordoned else [])


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


SERIALIZERS = {"kubectl_safety.analysis.plans.drain.DrainPlan": drain_plan,
               "kubectl_safety.engine.drain_report.DrainReport": drain_report}


def drain_code(report) -> ExitCode:
    """A drain's (its typed DrainReport): drained; a cordon refused (error); blocked before anything moved
    (not safe); interrupted; else partly done."""
    from kubectl_safety.engine.drain_report import DrainStatus

    if report.status is DrainStatus.BLOCKED and not (report.evicted or report.gone):
        return ExitCode.UNSAFE
    return {DrainStatus.DRAINED: ExitCode.OK, DrainStatus.INTERRUPTED: ExitCode.INTERRUPTED,
            DrainStatus.ERROR: ExitCode.ERROR}.get(report.status, ExitCode.PARTIAL)
