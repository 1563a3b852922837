"""``preemption``'s view: its text (the outcome, the victims, the candidates in the scheduler's order, the
findings), its published JSON (kind PreemptionPreview) and its exit code."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kubectl_safety.cli.published import finding
from kubectl_safety.cli.render import table
from kubectl_safety.cli.report import ExitCode
from kubectl_safety.model.constants import API_VERSION
from kubectl_safety.model.duration import human_duration

if TYPE_CHECKING:
    from kubectl_safety.analysis.plans.preemption import (ExcludedNode, PreemptionCandidate, PreemptionPreview,
                                                          Victim)
    from kubectl_safety.analysis.scheduling.failure import Failure


PRIORITY_OFFSET = 2 ** 31  # kube-scheduler adds it to each victim's priority so that sums stay positive


OUTCOMES = {
    "fits": "fits without preemption",
    "preempt": "fits by preempting lower-priority pods",
    "waiting": "waits: lower-priority pods on its nominated node are already terminating by preemption",
    "not-eligible": "cannot be placed: no node fits and the pod may not preempt",
    "unschedulable": "cannot be placed: no node fits and preemption cannot make room",
    "partial": "only some copies can be placed",
    "not-scheduled": "never scheduled: the pod is being deleted or has finished",
    "bound": "runs on its spec.nodeName node: the kubelet admits it (no scheduler, no preemption)",
    "rejected": "fails: the kubelet of its spec.nodeName node rejects it (no scheduler, no preemption)",
}


def _priority_sum(candidate) -> int:
    """The victims' priorities summed as written (JSON ``prioritySum`` keeps the scheduler's +2^31 per victim)."""
    return candidate["prioritySum"] - len(candidate["victims"]) * PRIORITY_OFFSET


def render_list(r, wide=False) -> str:
    """One preview per workload of a stream, each under a heading naming it."""
    blocks = []
    for item in r["items"]:
        p = item["pod"]
        copies = f" ({item['replicas']} copies)" if item["replicas"] > 1 else ""
        blocks.append(f"=== {p['namespace']}/{p['name']}{copies}\n" + render(item, wide))
    return "\n".join(blocks)


def render(r, wide=False) -> str:
    p = r["pod"]
    cls = f"class {p['priorityClassName']}, " if p["priorityClassName"] else ""
    lines = [f"Pod:        {p['namespace']}/{p['name']}: priority {p['priority']} ({cls}{p['prioritySource']}), "
             f"preemptionPolicy {p['preemptionPolicy']}",
             f"Result:     {OUTCOMES.get(r['outcome'], r['outcome'])}"
             + (f" ({r['placed']} of {r['replicas']} copies placed)" if r["replicas"] > 1 else "")]
    if r["feasibleNodes"]:
        lines.append(f"Feasible:   {len(r['feasibleNodes'])} node(s): {', '.join(r['feasibleNodes'][:10])}"
                     + (" ..." if len(r["feasibleNodes"]) > 10 else ""))
    if r["eligible"] is not None:
        lines.append(f"Eligible:   {r['eligibility']}")
    if r["placements"]:
        lines.append("\nCopies, placed one after another:")
        rows = [[p["replica"], p["name"], OUTCOMES.get(p["outcome"], p["outcome"]).split(":")[0], p["node"] or "-",
                 ", ".join(f"{v['namespace']}/{v['name']}" for v in p["victims"]) or "-"] for p in r["placements"]]
        lines.append(table(rows, ["copy", "name", "outcome", "node", "victims"]).rstrip())
        lines.append("Below: all copies' victims, then candidates and excluded nodes for copy 1.")
    elif r["node"] and not r["fitsWithoutPreemption"]:
        lines.append(f"Node:       {r['node']} (status.nominatedNodeName; the pod may still land elsewhere)")
    for note in r["notes"]:
        lines.append(f"Note:       {note}")
    if r["victims"]:
        lines.append(f"\nVictims{' of all copies' if r['placements'] else ''} (deleted by the scheduler with their "
                     "own grace period; PDBs are not enforced):")
        rows = [[v["node"], v["namespace"], v["name"], v["priority"], v["startTime"] or "-",
                 ", ".join(v["pdbs"]) if v["pdbViolation"] else "", human_duration(v["gracePeriodSeconds"])]
                for v in r["victims"]]
        lines.append(table(rows, ["node", "namespace", "name", "priority", "started", "pdb-violated",
                                  "grace"]).rstrip())
    if r["candidates"]:
        lines.append("\nCandidates in the scheduler's order (fewest PDB violations, lowest highest priority, "
                     "lowest priority sum, fewest victims, latest start):")
        rows = [[c["rank"], c["node"], len(c["victims"]), c["pdbViolations"], c["highestPriority"],
                 _priority_sum(c), c["earliestStart"] or "-"]
                + ([", ".join(f"{v['namespace']}/{v['name']}" for v in c["victims"])] if wide else [])
                for c in r["candidates"]]
        headers = ["rank", "node", "victims", "pdb-violations", "highest-priority", "priority-sum", "earliest-start"]
        lines.append(table(rows, headers + (["victim-pods"] if wide else [])).rstrip())
        lines.append(f"Scheduler:  {r['sampling']['note']}")
    if r["excluded"] and not r["fitsWithoutPreemption"] or wide:
        lines.append("\nExcluded nodes:" if not r["fitsWithoutPreemption"] else "\nNodes that do not fit:")
        lines.append(table([[e["node"], e["reason"]] for e in r["excluded"]], ["node", "reason"]).rstrip() or "  none")
    rows = [[f["severity"], f["code"], f["message"]] for f in r["findings"]]
    lines.append("\nFindings:\n" + (table(rows, ["severity", "code", "message"]) if rows else "  none\n"))
    return "\n".join(lines).rstrip() + "\n"


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


SERIALIZERS = {"kubectl_safety.analysis.plans.preemption.PreemptionPreview": preemption_preview}


PLACED = ("fits", "preempt", "waiting", "bound")  # a PreemptionPreview's outcomes that place the pod


def preemption_code(previews, accepted=False) -> ExitCode:
    """PreemptionPreviews': OK when every pod is placed and no snapshot was incomplete (unless accepted)."""
    unheld = any(f.code == "SNAPSHOT_INCOMPLETE" for r in previews for f in r.findings)
    return ExitCode.OK if all(r.outcome in PLACED for r in previews) and (not unheld or accepted) \
        else ExitCode.UNSAFE
