"""``check``'s view: its text (the summary, what blocks a rolling upgrade, every node, the findings and the
verdict), its published JSON (kind ClusterCheck) and its exit code."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kubectl_safety.cli.published import finding, object_ref, risk
from kubectl_safety.cli.render import table
from kubectl_safety.cli.report import ExitCode
from kubectl_safety.cli.risks import render_risks
from kubectl_safety.cli.views.delete import delete_owner
from kubectl_safety.cli.views.drain import surgeable
from kubectl_safety.model.constants import API_VERSION

if TYPE_CHECKING:
    from kubectl_safety.analysis.plans.check import Blocker, CheckedNode, ClusterCheck
    from kubectl_safety.analysis.plans.common import Finding


def render_list(r, wide=False) -> str:
    parts = []
    for item in r["items"]:
        head = f"=== context {item['context']} ==="
        body = "(failed: the error is on stderr)\n" if "error" in item else render_check(item, wide)
        parts.append(f"{head}\n{body}")
    return "\n".join(parts)


def _surge_line(nodes) -> str:
    """Which nodes --surge makes drainable, and which stay blocked."""
    made = [n["name"] for n in nodes if n["drainable"] and not n.get("drainableWithoutSurge", True)]
    blocked = [n["name"] for n in nodes if not n["drainable"]]
    return ("With --surge: " + (f"{', '.join(made)} become(s) drainable" if made else "no blocked node becomes "
                                "drainable") + (f"; still blocked: {', '.join(blocked)}" if blocked else "") + ".")


def _defaults_line(nodes) -> list:
    """Once: the nodes blocked only by kubectl drain's defaults (DaemonSet pods, emptyDir data), and the flags
    that lift those blockers."""
    held = [n for n in nodes if n.get("liftedBy")]
    if not held:
        return []
    lifting = {"--ignore-daemonsets": "DaemonSet-managed pods", "--delete-emptydir-data": "emptyDir data"}
    flags = [f for f in lifting if any(f in n["liftedBy"] for n in held)]
    names = ", ".join(n["name"] for n in held[:6]) + (f" and {len(held) - 6} more" if len(held) > 6 else "")
    return [f"{len(held)} node(s) blocked only by kubectl drain's defaults ({', '.join(lifting[f] for f in flags)}): "
            f"{names}; {' '.join(flags)} would lift these blockers."]


def surgeable_line(items, what) -> list:
    """Without --surge: which blocked items (name, its ``surgeable``) it would make ``what``, and which not."""
    found = [(name, s) for name, s in items if s]
    if not found:
        return []

    def named(unblocks):
        return ", ".join(f"{name} ({', '.join(s['workloads'])})" for name, s in found if s["unblocks"] is unblocks)

    parts = [f"{'would' if unblocks else 'would not'} make {what}: {named(unblocks)}" for unblocks in (True, False)
             if named(unblocks)]
    return ["--surge " + "; ".join(parts) + "."]


def render_check(r, wide=False) -> str:
    s = r["summary"]
    found = s["findings"]
    lines = [f"{s['drainable']}/{s['nodes']} node(s) drainable now, {s['removable']} removable, "
             f"{s['unreachable']} not Ready; findings: {found['error']} error, {found['warning']} warning, "
             f"{found['info']} info."]
    a = r["assumes"]
    flags = [f for f, on in (("--ignore-daemonsets", a["ignoreDaemonsets"]),
                             ("--delete-emptydir-data", a["deleteEmptydirData"]), ("--force", a["force"]),
                             ("--disable-eviction", a["disableEviction"])) if on]
    flags += ["--surge"] if a.get("surge") else []
    lines.append(f"Each node planned as: kubectl safety drain NODE --dry-run {' '.join(flags)}".rstrip())
    if a.get("surge"):
        lines.append(_surge_line(r["nodes"]))
    lines += _defaults_line(r["nodes"])
    lines += surgeable_line([(n["name"], n.get("surgeable")) for n in r["nodes"]], "drainable")
    if r["blockers"]:
        lines.append("\nWhat blocks a rolling upgrade of all nodes:")
        shown = r["blockers"] if wide else r["blockers"][:10]
        rows = [[f"{b['object']['kind']}/{_name(b['object'])}", b["blocks"], ",".join(b["codes"]),
                 ", ".join(b["nodes"][:4]) + (f" and {len(b['nodes']) - 4} more" if len(b["nodes"]) > 4 else "")]
                for b in shown]
        lines.append(table(rows, ["object", "blocks", "codes", "nodes"]).rstrip())  # the JSON's names
        if len(shown) < len(r["blockers"]):
            lines.append(f"  ... {len(r['blockers']) - len(shown)} more (-o wide)")
    lines.append("\nNodes:")
    rows = [[n["name"], n["state"] + (",SchedulingDisabled" if n["unschedulable"] else ""),
             "yes" if n["drainable"] else "NO", "yes" if n["removable"] else "NO", n["pods"],
             ",".join(sorted({x["code"] for x in n["risks"] if not x["accepted"]})) or "-"] for n in r["nodes"]]
    lines.append(table(rows, ["node", "state", "drainable", "removable", "pods", "risks"]).rstrip() or "  no nodes")
    for n in r["nodes"]:
        if n.get("stuckPods"):
            lines.append(f"\nNode {n['name']} is {n['stateMessage']}; pods stuck there:")
            lines += [f"  {p['namespace']}/{p['name']}: {p['verdict']}"
                      + (f" [{', '.join(p['risks'])}]" if p["risks"] else "") for p in n["stuckPods"]]
        if wide and n["risks"]:
            lines.append(f"\nNode {n['name']}:")
            lines += render_risks(n["risks"])[1:]
    if r["findings"]:
        lines.append("\nFindings" + (" about what the selected nodes touch:" if s["scope"] == "pool" else ":"))
        shown = r["findings"] if wide else [f for f in r["findings"] if f["severity"] != "info"]
        rows = [[f["severity"], f["code"], f["message"]] for f in shown]
        lines.append(table(rows, ["severity", "code", "message"]).rstrip())
        hidden = len(r["findings"]) - len(shown)
        if hidden:
            lines.append(f"  ... {hidden} info finding(s) (-o wide)")
    lines += _other_findings(r.get("otherFindings") or [], wide)
    verdict = ("READY: every node can be drained now and no finding reaches --fail-on " + s["failOn"]
               if s["ready"] else
               f"NOT READY: {s['notDrainable']} node(s) not drainable, "
               + (f"{s['failing']} finding(s) at --fail-on {s['failOn']} or worse" if s["failOn"] != "none"
                  else "findings not gating (--fail-on none)") + " (exit 3)")
    lines.append(f"\n{verdict}.")
    return "\n".join(lines) + "\n"


def _other_findings(other, wide) -> list:
    """Findings that do not gate: outside the selected nodes, or ignored; by code unless wide."""
    if not other:
        return []
    outside = [f for f in other if f["reason"] == "outside"]
    ignored = [f for f in other if f["reason"] == "ignored"]
    lines = []
    for what, found in (("Elsewhere in the cluster (not gating; --scope cluster gates on them)", outside),
                        ("Ignored (--ignore-finding)", ignored)):
        if not found:
            continue
        lines.append(f"\n{what}:")
        if wide:
            lines.append(table([[f["severity"], f["code"], f["message"]] for f in found],
                               ["severity", "code", "message"]).rstrip())
            continue
        by_code = {}
        for f in found:
            by_code.setdefault((f["severity"], f["code"]), []).append(f)
        rows = [[sev, code, len(fs)] for (sev, code), fs in by_code.items()]
        lines.append(table(rows, ["severity", "code", "findings"]).rstrip())
        lines.append("  (-o wide lists them)")
    return lines


def _name(o) -> str:
    return f"{o['namespace']}/{o['name']}" if o["namespace"] else o["name"]


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


SERIALIZERS = {"kubectl_safety.analysis.plans.check.ClusterCheck": cluster_check}


def check_code(checks) -> ExitCode:
    """``check``'s (its ClusterChecks, one per context): an error when one could not be checked, OK when
    every one is ready, else UNSAFE."""
    if any(c.error is not None for c in checks):
        return ExitCode.ERROR
    return ExitCode.OK if all(c.summary.ready for c in checks) else ExitCode.UNSAFE
